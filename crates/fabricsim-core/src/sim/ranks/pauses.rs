//! Priority flow control across ranks. A PFC frame crosses ranks as any packet does; what
//! reads every port is the deadlock check (`switch::pfc::deadlock`), which the no-progress
//! guard runs at its checks and the run's end reads for its status. Before each, every rank
//! tells the others its pieces' part of the ports' pauses (each paused port, and what the
//! packets queued at its switches came in on: a `Fragment` a piece), and each rank checks the
//! whole, so that all decide alike and rank 0's stop detail names the cycle one process names.
//! The ports' PFC counters reach rank 0 with the other results (`gather.rs`).

use super::codec::{Reader, Writer};
use super::Rank;
use crate::sim::Simulation;
use crate::switch::pfc::deadlock::{fragment, Fragment};

impl Simulation {
    /// Every rank tells the others the pauses of its pieces' ports (nothing without PFC).
    pub(super) fn tell_pauses(&mut self, r: &Rank) {
        if self.model.switch.pfc.is_none() {
            return;
        }
        let mut w = Writer::default();
        for i in r.own.clone() {
            let f = fragment(&self.pieces[i].links);
            w.u32(f.paused.len() as u32);
            for (port, mask) in f.paused {
                w.u32(port);
                w.u8(mask);
            }
            w.u32(f.waits.len() as u32);
            for (class, wire, on) in f.waits {
                w.u8(class);
                w.u32(wire);
                w.u32(on.len() as u32);
                on.into_iter().for_each(|q| w.u32(q));
            }
        }
        let mut told = Vec::new();
        for bytes in r.ex.all_gather(w.0) {
            let mut rd = Reader::new(&bytes);
            while !rd.done() {
                let paused = (0..rd.u32()).map(|_| (rd.u32(), rd.u8())).collect();
                let waits = (0..rd.u32()).map(|_| (rd.u8(), rd.u32(), (0..rd.u32()).map(|_| rd.u32()).collect())).collect();
                told.push(Fragment { paused, waits });
            }
        }
        self.pauses_told = Some(told);
    }
}
