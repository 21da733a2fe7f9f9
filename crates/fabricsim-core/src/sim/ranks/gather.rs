//! A run across ranks' results, on rank 0: each other rank tells it what its pieces hold that
//! the results read, and rank 0 writes that into its own copies of those pieces (which it
//! built and never ran), so that the results are read as in one process: what each host
//! counted (`Host::tallies`), each message end's counts, the scale-up network's times, each
//! connection's row and reorder histogram (`ConnTable::tell`), each egress port's counters,
//! queue and losses, its PFC pauses and frames, and the data packets the links still hold. Everything else the results
//! read (the messages, the topology, the faults' state of each link, the run's clock and
//! counts) every rank already holds alike.

use std::collections::BTreeMap;

use super::codec::{Reader, Writer};
use super::{owned, Exchange};
use crate::host::connection::{ConnStats, REORDER_BUCKETS};
use crate::host::message::MsgState;
use crate::host::table::{ConnRow, Told};
use crate::sim::piece::Piece;
use crate::sim::Simulation;
use crate::switch::port::{ConnLosses, PortLosses, PortStats};

impl Simulation {
    /// After [`Simulation::run_ranked`], on every rank: the other ranks tell rank 0 what their
    /// pieces hold for the results. Returns whether this rank holds the run's results now
    /// (rank 0: its [`Simulation::results`] and [`Simulation::into_results`] are the run's);
    /// another rank's pieces are left as they ran.
    pub fn gather(&mut self, ex: &dyn Exchange) -> bool {
        let (rank, ranks) = self.across.expect("a rank's run: built by Simulation::ranked");
        let n = self.pieces.len();
        let mut out = vec![Vec::new(); ranks];
        if rank != 0 {
            let mut w = Writer::default();
            for i in owned(n, ranks, rank) {
                tell(&self.pieces[i], &mut w);
            }
            out[0] = w.0;
        }
        let got = ex.all_to_all(out);
        if rank != 0 {
            return false;
        }
        for (r, bytes) in got.iter().enumerate().skip(1) {
            let mut rd = Reader::new(bytes);
            for i in owned(n, ranks, r) {
                hear(&mut self.pieces[i], &mut rd);
            }
            assert!(rd.done(), "rank {r} told more than its pieces");
        }
        self.across = None;
        true
    }
}

/// Writes what piece `p` holds for the results.
fn tell(p: &Piece, w: &mut Writer) {
    let states = p.nics.states();
    w.u32(states.len() as u32);
    for s in states {
        w.u32(s.done);
        w.u32(s.acked);
        w.u64(s.released);
    }
    w.u32(p.nics.up.times.len() as u32);
    for (&m, &[sent, done]) in &p.nics.up.times {
        w.u32(m);
        w.u64(sent);
        w.u64(done);
    }
    for h in &p.hosts {
        h.tallies().into_iter().for_each(|v| w.u64(v));
    }
    let t = p.nics.connections();
    w.u32(t.held_rows() as u32);
    for at in 0..t.held_rows() {
        let r = t.row_at(at);
        w.u32(r.n_pkts);
        w.u32(r.max_reorder);
        w.u64(r.first_send);
        w.u64(r.end);
        w.u64(r.delivered_bytes);
        let s = &r.stats;
        [s.discarded, s.fast_nacks, s.data_packets, s.retransmits, s.ecn_acks, s.timeouts, s.cnps].into_iter().for_each(|v| w.u64(v));
        let mut hist = [0; REORDER_BUCKETS];
        t.add_reorder_at(at, &mut hist);
        let buckets: Vec<(usize, u64)> = hist.into_iter().enumerate().filter(|&(_, n)| n > 0).collect();
        w.u8(buckets.len() as u8);
        for (d, n) in buckets {
            w.u64((d as u64) << 56 | n);
        }
    }
    w.u64(t.peak_live() as u64);
    for port in p.links.ports() {
        let s = &port.stats;
        for v in [s.bytes, s.busy, s.busy_end, s.packets, s.data_packets, s.max_queue, s.last_change, s.ecn_marks, s.trims, s.drops] {
            w.u64(v);
        }
        w.u128(s.queue_area);
        w.u64(port.data_bytes);
        match &port.lost {
            None => w.u8(0),
            Some(l) => {
                w.u8(1);
                w.u64(l.data_dropped);
                w.u64(l.headers_dropped);
                w.u32(l.conn.len() as u32);
                for (&c, l) in &l.conn {
                    w.u32(c);
                    w.u64(l.trims);
                    w.u64(l.drops);
                }
            }
        }
    }
    if let Some(f) = &p.links.pfc {
        for at in 0..p.links.ports().len() {
            let (paused, since, paused_ps, frames) = f.port_state(at);
            w.u8(paused);
            [since, paused_ps, frames].into_iter().for_each(|v| w.u64(v));
        }
    }
    let (whole, headers) = p.links.data_in_flight();
    w.u64(whole);
    w.u64(headers);
}

/// Reads what [`tell`] wrote into piece `p`, this rank's copy of another's piece.
fn hear(p: &mut Piece, rd: &mut Reader) {
    let states = (0..rd.u32()).map(|_| MsgState { done: rd.u32(), acked: rd.u32(), released: rd.u64() }).collect();
    p.nics.set_states(states);
    let times: BTreeMap<u32, [u64; 2]> = (0..rd.u32()).map(|_| (rd.u32(), [rd.u64(), rd.u64()])).collect();
    p.nics.up.times = times;
    for h in &mut p.hosts {
        h.set_tallies(std::array::from_fn(|_| rd.u64()));
    }
    let rows = rd.u32() as usize;
    let mut told = Told { rows: Vec::with_capacity(rows), reorder: Vec::with_capacity(rows), peak_live: 0 };
    for _ in 0..rows {
        let (n_pkts, max_reorder, first_send, end, delivered_bytes) = (rd.u32(), rd.u32(), rd.u64(), rd.u64(), rd.u64());
        let [discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps] = std::array::from_fn(|_| rd.u64());
        let stats = ConnStats { discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps };
        told.rows.push(ConnRow { n_pkts, max_reorder, first_send, end, delivered_bytes, stats });
        told.reorder.push((0..rd.u8()).map(|_| rd.u64()).collect());
    }
    told.peak_live = rd.u64() as usize;
    p.nics.connections_mut().tell(told);
    for port in &mut p.links.ports {
        let [bytes, busy, busy_end, packets, data_packets, max_queue, last_change, ecn_marks, trims, drops] =
            std::array::from_fn(|_| rd.u64());
        let queue_area = rd.u128();
        port.stats =
            PortStats { bytes, busy, busy_end, packets, data_packets, max_queue, queue_area, last_change, ecn_marks, trims, drops };
        port.data_bytes = rd.u64();
        port.lost = (rd.u8() == 1).then(|| {
            let (data_dropped, headers_dropped) = (rd.u64(), rd.u64());
            let conn = (0..rd.u32()).map(|_| (rd.u32(), ConnLosses { trims: rd.u64(), drops: rd.u64() })).collect();
            Box::new(PortLosses { data_dropped, headers_dropped, conn })
        });
    }
    if let Some(f) = &mut p.links.pfc {
        for at in 0..p.links.ports.len() {
            f.set_port_state(at, (rd.u8(), rd.u64(), rd.u64(), rd.u64()));
        }
    }
    p.links.told_in_flight = (rd.u64(), rd.u64());
}
