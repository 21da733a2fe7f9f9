//! A server's scale-up network (`topology.scale_up_rate`): a message between two GPUs of one
//! server crosses it and never touches a NIC or the fabric.
//!
//! The network is a non-blocking switch (an NVSwitch, say) with one port per GPU, each of the
//! same rate `R`, and a latency `L` from one GPU to another; it carries a message's payload at
//! `R` (no packets, no loss: its flow control is credit-based). A message moves as a whole,
//! through two ports, each of which sends one message at a time:
//! - its source GPU's port sends the messages released at that GPU in turn by *stream* (the
//!   messages of one destination, channel and kind of leg, in release order), by start-time
//!   fair queueing ([`Turns`]): a message released while the port is idle and nothing waits
//!   starts at once; otherwise it waits in its stream, and each time the port is done with a
//!   message (`UpFree`) it takes the waiting one of least start tag, so that streams take
//!   turns byte for byte. A GPU's copy engines and SMs write to several peers at once and
//!   share its link, which the streams' turns stand for, a message at a time. A message of `B`
//!   bytes holds the port for `B / R` from its start `s`;
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
//! message does. A leg that cuts through (`workload::Pass::Through`: the switch passes the
//! bytes on as they come) is released once the first bit of each leg it waits for is through:
//! a leg into the switch at its arrival (`UpArrive`), a leg out of it when its destination's
//! port starts it (`UpBegin` if that is later than its arrival); from another GPU, `L` later;
//! a leg shorter than one it waits for, as much later as it is shorter. Every leg runs at `R`
//! from its start to its end, so one released by another's first bit ends no sooner than it.
//!
//! Alone, a message takes exactly `L + B / R`: its ideal. Two messages into one GPU at once
//! take `L + B / R` and `L + 2 B / R` (max-min fair sharing would finish both at the later
//! time; the total is the same). Each port belongs to its GPU's host: the source's only by
//! its source, the destination's only by its destination, and what one tells the other takes
//! `L` (the first bit's arrival; the source hearing of the delivery, `UpAck`; a leg that cuts
//! through hearing of another GPU's first bit), so a run cut into pieces keeps its results.

use std::collections::{BTreeMap, VecDeque};

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

/// A stream of a sending port: its messages' destination, channel (`MessageSpec::qp`) and
/// kind of leg ([`kind`]).
type Stream = (u32, u16, u8);

/// The kind of leg a message is, as its port's streams tell them apart: a message, a leg into
/// the switch (a contribution), one that cuts through (a store), a leg out of it.
fn kind(via: Via) -> u8 {
    match via {
        Via::Lb | Via::Pinned => 0,
        Via::IntoSwitch => 1,
        Via::IntoSwitchThrough => 2,
        Via::OutOfSwitch | Via::OutOfSwitchThrough => 3,
    }
}

fn stream(spec: &MessageSpec) -> Stream {
    (spec.dst, spec.qp, kind(spec.via))
}

/// A sending port's turns: start-time fair queueing over its streams (Goyal, Vin and Cheng,
/// "Start-time Fair Queueing", SIGCOMM 1996, sec. 2), a message at a time, every stream of
/// equal weight. A message gets a start tag, the larger of the port's virtual time and its
/// stream's last finish tag, and a finish tag, its start tag plus its bytes; the port sends the
/// waiting message of least start tag (ties: the stream's order), and its virtual time is the
/// start tag of the message it sends (after an idle spell, the largest finish tag it sent). So
/// streams that wait take turns byte for byte, and a stream that was idle goes before those
/// that had their share.
#[derive(Debug, Clone, Default)]
struct Turns {
    /// Per stream: its waiting messages (start tag, message) and its last finish tag; a stream
    /// with nothing waiting is kept while its finish tag is ahead of the virtual time.
    streams: BTreeMap<Stream, (VecDeque<(u64, u32)>, u64)>,
    waiting: usize,
    virtual_time: u64,
    /// The largest finish tag sent.
    sent: u64,
}

impl Turns {
    /// Message `m` of `bytes` joins `stream`'s queue.
    fn push(&mut self, stream: Stream, m: u32, bytes: u64) {
        let (queue, finish) = self.streams.entry(stream).or_default();
        let start = self.virtual_time.max(*finish);
        *finish = start + bytes;
        queue.push_back((start, m));
        self.waiting += 1;
    }

    /// The next message to send, of `bytes(m)` bytes: the waiting one of least start tag.
    fn next(&mut self, bytes: impl Fn(u32) -> u64) -> Option<u32> {
        let (&key, _) = self.streams.iter().filter_map(|(k, (q, _))| q.front().map(|f| (k, f.0))).min_by_key(|&(k, start)| (start, *k))?;
        let (start, m) = self.streams.get_mut(&key)?.0.pop_front()?;
        self.sent = self.sent.max(start + bytes(m));
        self.virtual_time = start;
        self.waiting -= 1;
        self.forget_idle();
        Some(m)
    }

    /// The port went idle: its virtual time moves to the largest finish tag it sent.
    fn idle(&mut self) {
        self.virtual_time = self.virtual_time.max(self.sent);
        self.forget_idle();
    }

    /// Drops the streams with nothing waiting whose finish tag the virtual time has reached.
    fn forget_idle(&mut self) {
        let now = self.virtual_time;
        self.streams.retain(|_, (q, f)| !q.is_empty() || *f > now);
    }
}

/// Each host's two ports on its server's scale-up network, and when its messages were sent
/// and received on it.
#[derive(Debug, Clone, Default)]
pub struct UpPorts {
    pub net: Option<ScaleUp>,
    /// Per host of the piece (at its index there): when its sending port and its receiving
    /// port are free, and what waits for its sending port (while anything does, an `UpFree`
    /// is due when the port is free).
    out_free: Vec<Time>,
    in_free: Vec<Time>,
    waiting: Vec<Turns>,
    /// Per message this piece's hosts sent or received on it: when its source's port started
    /// it, and when it was delivered (`Time::MAX`: not yet, or not by this piece); per compute
    /// task, when it was done (the second).
    pub times: BTreeMap<u32, [Time; 2]>,
}

impl UpPorts {
    /// The scale-up ports of `hosts` hosts (a piece's).
    pub fn new(net: Option<ScaleUp>, hosts: usize) -> UpPorts {
        let n = if net.is_some() { hosts } else { 0 };
        UpPorts { net, out_free: vec![0; n], in_free: vec![0; n], waiting: vec![Turns::default(); n], times: BTreeMap::new() }
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

    /// `UpSend`: message `m` was released at its source: the source's port starts it now if
    /// it is idle and nothing waits for it, else it waits for its turn (`UpFree`).
    pub(super) fn up_send(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        let spec = self.messages[m as usize].spec;
        h.pending -= 1;
        h.up_sent += 1;
        if spec.via.is_out_of_switch() {
            // no port of the source's
            return self.up_start(out, now, m, &spec);
        }
        let at = self.slot.of(spec.src);
        let (turns, free) = (&mut self.up.waiting[at], self.up.out_free[at]);
        if free <= now && turns.waiting == 0 {
            turns.idle();
        }
        turns.push(stream(&spec), m, spec.bytes);
        if turns.waiting > 1 {
            // an `UpFree` is due
            return;
        }
        if free > now {
            out.schedule(free, Event::UpFree(spec.src));
            return;
        }
        self.up_free(out, now, spec.src);
    }

    /// `UpFree`: `host`'s sending port is done with its message and messages wait for it: it
    /// starts the next in turn.
    pub(super) fn up_free(&mut self, out: &mut Sink, now: Time, host: u32) {
        let at = self.slot.of(host);
        let messages = &self.messages;
        let m = self.up.waiting[at].next(|m| messages[m as usize].spec.bytes).expect("a port woken with a message waiting");
        let spec = self.messages[m as usize].spec;
        let net = self.up.net.expect("a scale-up message needs a scale-up network");
        self.up.out_free[at] = now + serialization(spec.bytes, net.rate);
        if self.up.waiting[at].waiting > 0 {
            out.schedule(self.up.out_free[at], Event::UpFree(host));
        }
        self.up_start(out, now, m, &spec);
    }

    /// Message `m` (`spec`) starts now: its first bit reaches its destination `L` later.
    fn up_start(&mut self, out: &mut Sink, now: Time, m: u32, spec: &MessageSpec) {
        let net = self.up.net.expect("a scale-up message needs a scale-up network");
        self.up.time(m, 0, now);
        out.tell(spec.dst, now + latency(net, spec), Event::UpArrive(m));
    }

    /// `UpArrive`: message `m`'s first bit reached its destination's port, which delivers it
    /// after the messages that reached it before (a leg into the switch: the switch has it).
    pub(super) fn up_arrive(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        let spec = self.messages[m as usize].spec;
        let net = self.up.net.expect("a scale-up message needs a scale-up network");
        let wire = serialization(spec.bytes, net.rate);
        let begin = if spec.via.is_into_switch() {
            // the switch takes it: no port of the destination's
            out.schedule(now + wire, Event::UpDone(m));
            now
        } else {
            let port = &mut self.up.in_free[self.slot.of(spec.dst)];
            let begin = now.max(*port);
            *port = begin + wire;
            out.schedule(*port, Event::UpDone(m));
            begin
        };
        if spec.via.switch_leg() && self.cut_through_waits(m) {
            if begin == now {
                self.up_begin(h, out, now, m);
            } else {
                out.schedule(begin, Event::UpBegin(m));
            }
        }
    }

    /// Whether a leg that cuts through waits for message `m`.
    fn cut_through_waits(&self, m: u32) -> bool {
        (0..self.waiters(m as usize)).any(|k| self.messages[self.waiter(m as usize, k)].spec.via.through())
    }

    /// `UpBegin`: leg `m`'s first bit is through the switch (at its destination): the legs
    /// that cut through and wait for it hear of it, at once from their source, `L` later from
    /// another GPU's (a `Release` notice: the switch's first bytes reach it then). A leg
    /// shorter than `m` hears of it as much later as it is shorter, so that its last bit
    /// follows `m`'s (the legs of `nvls::iteration` are all as long as each other).
    pub(super) fn up_begin(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        let net = self.up.net.expect("a scale-up leg needs a scale-up network");
        let wire = serialization(self.messages[m as usize].spec.bytes, net.rate);
        for k in 0..self.waiters(m as usize) {
            let d = self.waiter(m as usize, k);
            let spec = self.messages[d].spec;
            if !spec.via.through() {
                continue;
            }
            let mut at = now + wire.saturating_sub(serialization(spec.bytes, net.rate));
            if spec.src != h.node {
                at += net.latency;
            }
            if at == now {
                self.heard(h, out, now, d);
            } else {
                h.notices_sent += 1;
                out.tell(spec.src, at, Event::Release(d as u32));
            }
        }
    }

    /// `UpDone`: message `m` is delivered: its destination counts it, the messages waiting
    /// for it hear of it (its source `L` later, `UpAck`).
    pub(super) fn up_done(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        let spec = self.messages[m as usize].spec;
        (h.done, h.up_done, h.progress) = (h.done + 1, h.up_done + 1, h.progress + 1);
        self.report(m as usize, now);
        self.up.time(m, 1, now);
        if !self.has_waiters() {
            return;
        }
        self.completed(h, out, now, m as usize);
        // (a leg from a GPU to itself was heard at once, above)
        // (a leg that cuts through heard of it at its first bit)
        let waits = |d: usize| self.messages[d].spec.src == spec.src && !self.messages[d].spec.via.through();
        if spec.src != spec.dst && (0..self.waiters(m as usize)).any(|k| waits(self.waiter(m as usize, k))) {
            let latency = self.up.net.map_or(0, |n| latency(n, &spec));
            h.notices_sent += 1;
            out.tell(spec.src, now + latency, Event::UpAck(m));
        } else {
            self.forget(m as usize); // (its source hears of it at `UpAck` otherwise)
        }
    }

    /// `Computed`: compute task `m` is done (it was released now: its dependencies plus its
    /// computation): its host counts it, the tasks and messages waiting for it hear of it.
    pub(super) fn computed(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        (h.pending, h.done, h.progress) = (h.pending - 1, h.done + 1, h.progress + 1);
        self.report(m as usize, now);
        self.up.time(m, 1, now);
        if self.has_waiters() {
            self.completed(h, out, now, m as usize);
            self.forget(m as usize);
        }
    }

    /// `UpAck`: message `m`'s source hears that it was delivered.
    pub(super) fn up_ack(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: u32) {
        h.notices_taken += 1;
        self.acknowledged(h, out, now, m as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::Turns;

    /// The order a port with `Turns` sends `pushed` (stream, message, bytes) in, all waiting at
    /// once.
    fn order(pushed: &[(u32, u32, u64)]) -> Vec<u32> {
        let mut t = Turns::default();
        let bytes = |m: u32| pushed.iter().find(|p| p.1 == m).unwrap().2;
        for &(s, m, b) in pushed {
            t.push((s, 0, 0), m, b);
        }
        std::iter::from_fn(|| t.next(bytes)).collect()
    }

    #[test]
    fn streams_take_turns_byte_for_byte_and_ties_go_in_the_streams_order() {
        // stream 1 with four 1 KB messages, stream 2 with one 3 KB message, stream 0 with two
        // 1 KB: start tags 0,1,2,3 K / 0 / 0,1 K
        let pushed = [(1, 10, 1000), (1, 11, 1000), (1, 12, 1000), (1, 13, 1000), (2, 20, 3000), (0, 30, 1000), (0, 31, 1000)];
        assert_eq!(order(&pushed), [30, 10, 20, 31, 11, 12, 13]);
    }

    #[test]
    fn a_stream_that_was_idle_goes_before_those_that_had_their_share() {
        let mut t = Turns::default();
        let bytes = |_: u32| 1000;
        for m in 0..4 {
            t.push((1, 0, 0), m, 1000);
        }
        assert_eq!(t.next(bytes), Some(0));
        assert_eq!(t.next(bytes), Some(1));
        // a second stream joins while the first has sent two: its start tag is the port's
        // virtual time (1 K), below the first's next (2 K)
        t.push((2, 0, 0), 9, 1000);
        assert_eq!(t.next(bytes), Some(9));
        assert_eq!(t.next(bytes), Some(2));
        assert_eq!(t.next(bytes), Some(3));
        assert_eq!((t.next(bytes), t.waiting), (None, 0));
        // after an idle spell every stream starts level with the largest finish tag sent
        t.idle();
        t.push((2, 0, 0), 7, 1000);
        t.push((1, 0, 0), 8, 1000);
        assert_eq!(t.next(bytes), Some(8), "equal start tags: the streams' order");
    }
}
