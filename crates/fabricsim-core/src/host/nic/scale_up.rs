//! A server's scale-up network (`topology.scale_up_rate`): a message between two GPUs of one
//! server crosses it and never touches a NIC or the fabric.
//!
//! The network is a non-blocking switch (an NVSwitch, say) with one port per GPU, each of the
//! same rate `R`, and a latency `L` from one GPU to another; it carries a message's payload at
//! `R` (no packets, no loss: its flow control is credit-based). A message moves as a whole,
//! through two ports, each of which serves one message at a time, first come first served:
//! - its source GPU's port sends the messages released at that GPU one after another, in
//!   release order (as a NIC sends one message at a time on an idle fabric): message of `B`
//!   bytes starts at `s = max(release, port free)` and holds the port for `B / R`;
//! - its first bit reaches the destination's port `L` later (`UpArrive`); that port passes
//!   the messages arriving at it in arrival order: it starts at `o = max(s + L, port free)`
//!   and the last bit is delivered at `o + B / R` (`UpDone`). Both ports run at `R`, so the
//!   bytes never wait inside the switch unless two sources send to one destination at once.
//!
//! NVLink SHARP (NVLS, `workload::collective::nvls`) reduces and multicasts inside the switch;
//! its messages are legs between a GPU and the switch (`workload::Via`), each holding one port:
//! a leg *into* the switch holds only its source's port and is counted by its destination (the
//! GPU the switch reduces for, or the source itself) `L` after it starts, plus `B / R`; a leg
//! *out of* it holds only its destination's port, which it reaches `L` after its release. A
//! leg between a GPU and itself (its own contribution, its own result or copy) has no latency:
//! its other end is the switch. So a reduction or multicast takes one `L` from GPU to GPU, as a
//! message does.
//!
//! Alone, a message takes exactly `L + B / R`: its ideal. Two messages into one GPU at once
//! take `L + B / R` and `L + 2 B / R` (max-min fair sharing would finish both at the later
//! time; the total is the same). Each port belongs to its GPU's host: the source's only by
//! its source, the destination's only by its destination, and what one tells the other takes
//! `L` (the first bit's arrival; the source hearing of the delivery, `UpAck`), so a run cut
//! into pieces keeps its results.

use std::collections::BTreeMap;

use super::{Host, Nics};
use crate::engine::Event;
use crate::switch::links::Sink;
use crate::time::{serialization, Time};
use crate::topology::ScaleUp;
use crate::workload::{MessageSpec, Via};

/// The latency of `spec`'s message on `net`: none from a GPU to itself (a leg between it and
/// the switch), `L` otherwise.
fn latency(net: ScaleUp, spec: &MessageSpec) -> Time {
    if spec.src == spec.dst {
        0
    } else {
        net.latency
    }
}

/// Each host's two ports on its server's scale-up network, and when its messages were sent
/// and received on it.
#[derive(Debug, Clone, Default)]
pub struct UpPorts {
    pub net: Option<ScaleUp>,
    /// Per host of the piece (at its index there): when its sending port and its receiving
    /// port are free.
    out_free: Vec<Time>,
    in_free: Vec<Time>,
    /// Per message this piece's hosts sent or received on it: when its source's port started
    /// it, and when it was delivered (`Time::MAX`: not yet, or not by this piece); per compute
    /// task, when it was done (the second).
    pub times: BTreeMap<u32, [Time; 2]>,
}

impl UpPorts {
    /// The scale-up ports of `hosts` hosts (a piece's).
    pub fn new(net: Option<ScaleUp>, hosts: usize) -> UpPorts {
        let n = if net.is_some() { hosts } else { 0 };
        UpPorts { net, out_free: vec![0; n], in_free: vec![0; n], times: BTreeMap::new() }
    }

    /// A time before which the host its piece keeps at `at` cannot have received every
    /// message sent to it on the scale-up network: the end of the last one its port has taken,
    /// and of the last its own port has sent, `L` on (no message ends earlier than either; both
    /// are in the past once it has).
    fn bound(&self, at: usize) -> Time {
        match self.net {
            Some(net) => {
                let sent = self.out_free[at];
                self.in_free[at].max(if sent == 0 { 0 } else { sent + net.latency })
            }
            None => 0,
        }
    }

    fn time(&mut self, m: u32, which: usize, at: Time) {
        self.times.entry(m).or_insert([Time::MAX; 2])[which] = at;
    }
}

impl Nics {
    /// When `host` (one of this piece's) can have received every message sent to it on the
    /// scale-up network, at the earliest (`UpPorts::bound`).
    pub fn up_bound(&self, host: u32) -> Time {
        self.up.bound(self.slot.of(host))
    }

    /// `UpSend`: message `m` was released at its source: the source's port starts it after
    /// the messages it took before.
    pub(super) fn up_send(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        let spec = self.messages[m as usize].spec;
        let net = self.up.net.expect("a scale-up message needs a scale-up network");
        h.pending -= 1;
        h.up_sent += 1;
        let start = if spec.via == Via::OutOfSwitch {
            now
        } else {
            let port = &mut self.up.out_free[self.slot.of(spec.src)];
            let start = now.max(*port);
            *port = start + serialization(spec.bytes, net.rate);
            start
        };
        self.up.time(m, 0, start);
        out.tell(spec.dst, start + latency(net, &spec), Event::UpArrive(m));
    }

    /// `UpArrive`: message `m`'s first bit reached its destination's port, which delivers it
    /// after the messages that reached it before.
    pub(super) fn up_arrive(&mut self, _h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        let spec = self.messages[m as usize].spec;
        let net = self.up.net.expect("a scale-up message needs a scale-up network");
        let wire = serialization(spec.bytes, net.rate);
        if spec.via == Via::IntoSwitch {
            // the switch takes it: no port of the destination's
            out.schedule(now + wire, Event::UpDone(m));
            return;
        }
        let port = &mut self.up.in_free[self.slot.of(spec.dst)];
        *port = now.max(*port) + wire;
        out.schedule(*port, Event::UpDone(m));
    }

    /// `UpDone`: message `m` is delivered: its destination counts it, the messages waiting
    /// for it hear of it (its source `L` later, `UpAck`).
    pub(super) fn up_done(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        let spec = self.messages[m as usize].spec;
        (h.done, h.up_done, h.progress) = (h.done + 1, h.up_done + 1, h.progress + 1);
        self.report(m as usize, now);
        self.up.time(m, 1, now);
        if self.dependents.is_empty() {
            return;
        }
        self.completed(h, out, now, m as usize);
        // (a leg from a GPU to itself was heard at once, above)
        if spec.src != spec.dst && self.dependents.of(m as usize).iter().any(|&d| self.messages[d as usize].spec.src == spec.src) {
            let latency = self.up.net.map_or(0, |n| latency(n, &spec));
            h.notices_sent += 1;
            out.tell(spec.src, now + latency, Event::UpAck(m));
        }
    }

    /// `Computed`: compute task `m` is done (it was released now: its dependencies plus its
    /// computation): its host counts it, the tasks and messages waiting for it hear of it.
    pub(super) fn computed(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        (h.pending, h.done, h.progress) = (h.pending - 1, h.done + 1, h.progress + 1);
        self.report(m as usize, now);
        self.up.time(m, 1, now);
        if !self.dependents.is_empty() {
            self.completed(h, out, now, m as usize);
        }
    }

    /// `UpAck`: message `m`'s source hears that it was delivered.
    pub(super) fn up_ack(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        h.notices_taken += 1;
        self.acknowledged(h, out, now, m as usize);
    }
}
