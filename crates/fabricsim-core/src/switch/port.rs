//! One egress port: the sender side of a link direction, with its queues and its scheduler.
//! What it has put on the wire belongs to the far end ([`super::wire::Wire`]).
//!
//! See the [`super`] module doc for the queueing rules.

use std::collections::{BTreeMap, VecDeque};

use crate::faults::link::LinkFault;
use crate::packet::{Kind, Packet};
use crate::time::{serialization, Time};

/// Counters of one egress port.
#[derive(Debug, Clone, Default)]
pub struct PortStats {
    pub bytes: u64,
    /// Time spent serializing the packets counted in `bytes` (a dead link's are not), and
    /// when the last of them is fully out: busy time up to `t` is
    /// `busy - busy_end.saturating_sub(t)`.
    pub busy: Time,
    pub busy_end: Time,
    pub packets: u64,
    pub data_packets: u64,
    pub max_queue: u64,
    /// Integral of data-queue bytes over time (byte-picoseconds).
    pub queue_area: u128,
    pub last_change: Time,
    pub ecn_marks: u64,
    pub trims: u64,
    pub drops: u64,
}

/// Data packets a connection lost in the fabric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnLosses {
    pub trims: u64,
    pub drops: u64,
}

/// What one port lost, by fate, and of which connections (only those that lost something
/// here). The port owns it; a run's totals and a connection's losses are sums over the ports,
/// taken when read.
#[derive(Debug, Clone, Default)]
pub struct PortLosses {
    /// Whole data packets dropped (a full queue, a dead or lossy link).
    pub data_dropped: u64,
    /// Trimmed headers dropped (a full control queue, a dead or lossy link).
    pub headers_dropped: u64,
    pub conn: BTreeMap<u32, ConnLosses>,
}

/// One data class's queue at a port.
#[derive(Debug, Clone, Default)]
pub struct ClassQueue {
    pub q: VecDeque<Packet>,
    pub bytes: u64,
    /// Deficit round robin: bytes this class may still send in the current round.
    deficit: u64,
}

/// A port's data class queues, the first held in the port itself: a port of one class (every
/// scenario that sets no `switch.classes`) reaches its queue's ring without first loading a list
/// of queues from elsewhere in memory, one miss less per packet queued or sent on a fabric
/// larger than the caches.
#[derive(Debug, Clone)]
pub struct Classes {
    first: ClassQueue,
    rest: Vec<ClassQueue>,
}

impl Classes {
    fn new(n: usize) -> Classes {
        Classes { first: ClassQueue::default(), rest: vec![ClassQueue::default(); n - 1] }
    }

    #[inline]
    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn iter(&self) -> impl Iterator<Item = &ClassQueue> {
        std::iter::once(&self.first).chain(&self.rest)
    }
}

impl std::ops::Index<usize> for Classes {
    type Output = ClassQueue;
    #[inline]
    fn index(&self, c: usize) -> &ClassQueue {
        if c == 0 {
            &self.first
        } else {
            &self.rest[c - 1]
        }
    }
}

impl std::ops::IndexMut<usize> for Classes {
    #[inline]
    fn index_mut(&mut self, c: usize) -> &mut ClassQueue {
        if c == 0 {
            &mut self.first
        } else {
            &mut self.rest[c - 1]
        }
    }
}

/// How a port shares its wire among data classes (below the control class).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheduler {
    /// Class 0 first, then 1, ...
    Strict,
    /// Deficit round robin: per round, class c may send `quanta[c]` bytes.
    Drr { quanta: Vec<u64> },
}

/// Queues and counters of one link direction, at its sending end.
#[derive(Debug, Clone)]
pub struct EgressPort {
    /// Its id (the topology's), and its sending and receiving node.
    pub id: u32,
    pub from: u32,
    /// The counter of the sending node's unit in its piece's queue (`topology::Cut::units`).
    pub from_at: u32,
    pub to: u32,
    pub rate: u64,
    /// Propagation latency, plus the traversal latency of the switch at the far end.
    pub delay: Time,
    /// What faults did to this link (dead, lossy, nominal rate and latency); `None` while
    /// no fault has touched it.
    pub fault: Option<Box<LinkFault>>,
    /// When the packet on the wire has been fully serialized.
    pub busy_until: Time,
    /// A wake-up (`PortFree`) is scheduled at `busy_until`.
    pub wake_pending: bool,
    pub control: VecDeque<Packet>,
    pub control_bytes: u64,
    /// One queue per data class (at least one; the first inline).
    pub classes: Classes,
    /// Data bytes queued over all classes.
    pub data_bytes: u64,
    /// Deficit round robin: the class whose turn it is, and whether its round just began.
    drr_at: usize,
    drr_fresh: bool,
    /// When the last packet this port put on its wire reaches the far end (a wire never
    /// reorders).
    pub wire_last: Time,
    /// Where the piece of the far end keeps the port's wire (`topology::Cut::wire`), and that
    /// piece when it is another ([`EgressPort::HERE`] when it is this port's own): what the port
    /// puts on such a wire is handed over through its piece's outbox, addressed so that
    /// neither piece looks the port up again.
    pub wire: u32,
    pub far: u16,
    pub stats: PortStats,
    /// What it lost; `None` until it loses something.
    pub lost: Option<Box<PortLosses>>,
}

impl EgressPort {
    /// [`EgressPort::far`] of a port whose far end is in its own piece.
    pub const HERE: u16 = u16::MAX;

    /// Loses `pkt` (a full queue, a dead or lossy link), counted by its kind: a data packet
    /// against its connection, a trimmed header not again (its packet was counted when
    /// trimmed), an ACK or NACK only in `stats.drops`.
    #[cold]
    pub fn lose(&mut self, pkt: &Packet) {
        self.stats.drops += 1;
        match (pkt.kind, pkt.trimmed) {
            (Kind::Data, false) => {
                let l = self.lost.get_or_insert_with(Box::default);
                l.data_dropped += 1;
                l.conn.entry(pkt.conn).or_default().drops += 1;
            }
            (Kind::Data, true) => self.lost.get_or_insert_with(Box::default).headers_dropped += 1,
            _ => {}
        }
    }

    /// Counts `pkt`'s trimming to a header here.
    #[cold]
    pub fn count_trim(&mut self, pkt: &Packet) {
        self.stats.trims += 1;
        self.lost.get_or_insert_with(Box::default).conn.entry(pkt.conn).or_default().trims += 1;
    }

    pub fn new(from: u32, to: u32, rate: u64, delay: Time, classes: usize) -> Self {
        EgressPort {
            id: 0,
            from,
            from_at: 0,
            to,
            rate,
            delay,
            fault: None,
            busy_until: 0,
            wake_pending: false,
            control: VecDeque::new(),
            control_bytes: 0,
            classes: Classes::new(classes.max(1)),
            data_bytes: 0,
            drr_at: 0,
            drr_fresh: true,
            wire_last: 0,
            wire: u32::MAX,
            far: EgressPort::HERE,
            stats: PortStats::default(),
            lost: None,
        }
    }

    /// Serializes `pkt` from `now` (the port is free): the port is busy until it is done
    /// (returned) and its counters count it.
    #[inline]
    pub fn serialize(&mut self, now: Time, pkt: &Packet) -> Time {
        debug_assert!(self.busy_until <= now);
        let ser = serialization(pkt.size as u64, self.rate);
        let done = now + ser;
        self.busy_until = done;
        self.stats.bytes += pkt.size as u64;
        self.stats.busy += ser;
        self.stats.busy_end = done;
        self.stats.packets += 1;
        if pkt.kind == Kind::Data && !pkt.trimmed {
            self.stats.data_packets += 1;
        }
        done
    }

    /// When a packet whose last bit leaves at `done` reaches the far end: a wire never
    /// reorders, even when its latency drops (a `delay` fault ending).
    #[inline]
    pub fn arrival(&mut self, done: Time) -> Time {
        let arrive = (done + self.delay).max(self.wire_last);
        self.wire_last = arrive;
        arrive
    }

    /// Time this port spent putting packets on a live wire up to `now` (counting the packet on
    /// the wire at `now` only for its part already sent).
    pub fn busy_time(&self, now: Time) -> Time {
        self.stats.busy - self.stats.busy_end.saturating_sub(now)
    }

    /// Accumulates the queue-occupancy integral up to `now`; call before the data queue changes.
    #[inline]
    pub fn account(&mut self, now: Time) {
        let s = &mut self.stats;
        s.queue_area += self.data_bytes as u128 * (now - s.last_change) as u128;
        s.last_change = now;
    }

    #[inline]
    pub fn push_data(&mut self, now: Time, pkt: Packet) {
        self.account(now);
        self.data_bytes += pkt.size as u64;
        let c = &mut self.classes[pkt.class as usize];
        c.bytes += pkt.size as u64;
        c.q.push_back(pkt);
        self.stats.max_queue = self.stats.max_queue.max(self.data_bytes);
    }

    /// Queues a control packet (ACK, NACK, trimmed header).
    #[inline]
    pub fn push_control(&mut self, pkt: Packet) {
        self.control_bytes += pkt.size as u64;
        self.control.push_back(pkt);
    }

    /// Whether a control packet waits.
    #[inline]
    pub fn has_control(&self) -> bool {
        !self.control.is_empty()
    }

    /// Whether a data packet waits.
    #[inline]
    pub fn has_data(&self) -> bool {
        self.data_bytes > 0
    }

    /// Takes the control packet waiting first (control goes before data); one waits
    /// ([`EgressPort::has_control`]). Packets are taken this way, copied from the head, not
    /// popped as an `Option`: that one was tested through a flag inside the packet and copied
    /// in parts, and the next reads of it stalled (docs/performance.md, "Stalls on copies").
    #[inline]
    pub fn take_control(&mut self) -> Packet {
        let &pkt = self.control.front().expect("a control packet waits");
        self.control.pop_front();
        self.control_bytes -= pkt.size as u64;
        pkt
    }

    /// The next data packet by the scheduler, if any is queued.
    #[cfg(test)]
    pub fn pop_data(&mut self, now: Time, scheduler: &Scheduler) -> Option<Packet> {
        self.has_data().then(|| self.take_data(now, scheduler, 0))
    }

    /// Whether a data packet of a class not in `paused` (a bit a class: those the far end
    /// paused, `switch.overflow = "pfc"`) waits.
    #[inline]
    pub fn has_sendable(&self, paused: u8) -> bool {
        self.data_bytes > 0 && (paused == 0 || self.classes.iter().enumerate().any(|(c, q)| paused >> c & 1 == 0 && q.bytes > 0))
    }

    /// Takes the next data packet by the scheduler from the classes not in `paused`; one
    /// waits ([`EgressPort::has_sendable`]).
    #[inline(always)]
    pub fn take_data(&mut self, now: Time, scheduler: &Scheduler, paused: u8) -> Packet {
        let c = if self.classes.len() == 1 {
            0
        } else {
            let open = |c: usize, q: &ClassQueue| paused >> c & 1 == 0 && !q.q.is_empty();
            match scheduler {
                Scheduler::Strict => self.classes.iter().enumerate().position(|(c, q)| open(c, q)).expect("a data packet waits"),
                Scheduler::Drr { quanta } => self.drr_next(quanta, paused),
            }
        };
        let class = &mut self.classes[c];
        let &p = class.q.front().expect("a data packet waits in its class");
        class.q.pop_front();
        class.bytes -= p.size as u64;
        self.account(now);
        self.data_bytes -= p.size as u64;
        p
    }

    /// Deficit round robin (Shreedhar and Varghese): the class to send from; charges its
    /// deficit. Some class is non-empty. A quantum is at least one MTU, so a non-empty class
    /// sends within one round.
    fn drr_next(&mut self, quanta: &[u64], paused: u8) -> usize {
        let n = self.classes.len();
        loop {
            let at = self.drr_at;
            let class = &mut self.classes[at];
            // a paused class sits its turns out as an empty one does
            match class.q.front().filter(|_| paused >> at & 1 == 0) {
                None => {
                    class.deficit = 0;
                }
                Some(head) => {
                    if self.drr_fresh {
                        class.deficit += quanta[at];
                        self.drr_fresh = false;
                    }
                    if class.deficit >= head.size as u64 {
                        class.deficit -= head.size as u64;
                        return at;
                    }
                }
            }
            self.drr_at = (at + 1) % n;
            self.drr_fresh = true;
        }
    }

    /// Every packet queued at this port (what is on its wire, the far end holds).
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.control.iter().chain(self.classes.iter().flat_map(|c| c.q.iter()))
    }

    /// Free to start a packet now: nothing on the wire and nothing waiting to go first.
    #[inline]
    pub fn is_free(&self, now: Time) -> bool {
        self.busy_until <= now && !self.wake_pending
    }

    #[inline]
    pub fn has_queued(&self) -> bool {
        !self.control.is_empty() || self.data_bytes > 0
    }

    /// Time-averaged data-queue occupancy over `0..now`.
    pub fn mean_queue(&self, now: Time) -> f64 {
        if now == 0 {
            return 0.0;
        }
        let area = self.stats.queue_area + self.data_bytes as u128 * (now - self.stats.last_change) as u128;
        area as f64 / now as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(class: u8, size: u16) -> Packet {
        use crate::packet::Kind;
        Packet { class, size, ..Packet::control(Kind::Data, 0, 0, 1, 0) }
    }

    #[test]
    fn strict_priority_serves_class_zero_first() {
        let mut p = EgressPort::new(0, 1, 1, 0, 2);
        for i in 0..3 {
            p.push_data(0, data(1, 100 + i));
            p.push_data(0, data(0, 200 + i));
        }
        let order: Vec<u16> = std::iter::from_fn(|| p.pop_data(0, &Scheduler::Strict).map(|x| x.size)).collect();
        assert_eq!(order, vec![200, 201, 202, 100, 101, 102]);
    }

    #[test]
    fn drr_shares_bytes_by_weight() {
        // weights 3:1 with 1000 B quanta per weight unit and equal packets: 3 of class 0 per 1
        let mut p = EgressPort::new(0, 1, 1, 0, 2);
        for _ in 0..40 {
            p.push_data(0, data(0, 1000));
            p.push_data(0, data(1, 1000));
        }
        let sched = Scheduler::Drr { quanta: vec![3000, 1000] };
        let first: Vec<u8> = (0..20).map(|_| p.pop_data(0, &sched).unwrap().class).collect();
        assert_eq!(first.iter().filter(|&&c| c == 0).count(), 15);
        // a class alone gets the whole wire
        let mut q = EgressPort::new(0, 1, 1, 0, 2);
        for _ in 0..5 {
            q.push_data(0, data(1, 1000));
        }
        assert_eq!((0..5).filter_map(|_| q.pop_data(0, &sched)).count(), 5);
    }

    #[test]
    fn queue_integral_is_time_weighted() {
        let pkt = |size| data(0, size);
        let mut p = EgressPort::new(0, 1, 1, 0, 1);
        p.push_data(10, pkt(100)); // 100 B from t=10
        p.push_data(20, pkt(50)); // 150 B from t=20
        p.pop_data(40, &Scheduler::Strict); // 50 B from t=40
                                            // 100*10 + 150*20 + 50*10 over 50 ps
        assert_eq!(p.mean_queue(50), (1000 + 3000 + 500) as f64 / 50.0);
        assert_eq!(p.stats.max_queue, 150);
    }
}
