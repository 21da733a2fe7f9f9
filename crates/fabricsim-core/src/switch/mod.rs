//! Egress ports: the sender side of each link direction.
//!
//! Output-queued, store-and-forward. Each port has two classes served in strict priority:
//! control (ACK, NACK, trimmed headers) above data. The data queue is byte-limited; a data
//! packet that would overflow it is trimmed to its header and moved to the control queue
//! (`overflow = "trim"`, the default) or dropped (`"drop"`). ECN marks data packets by RED on
//! the instantaneous data-queue occupancy, linearly from 0 at Kmin to 1 at Kmax: at dequeue
//! (the bytes left behind the departing packet, the default) or at enqueue (the bytes ahead of
//! the arriving packet). Following htsim's pipe, a link's in-flight packets sit in a FIFO and
//! only its head has an event pending. A packet that finds its port free and nothing queued
//! is committed to the wire at once (it leaves after its serialization time); the port needs
//! a wake-up event only when packets wait behind the one on the wire, so an uncongested hop
//! costs a single event.

pub mod routing;

use std::collections::VecDeque;

use crate::engine::rng::Rng;
use crate::packet::Packet;
use crate::time::Time;

/// Counters of one egress port.
#[derive(Debug, Clone, Default)]
pub struct PortStats {
    pub bytes: u64,
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

/// Queues, pipe and counters of one link direction.
#[derive(Debug, Clone)]
pub struct EgressPort {
    /// Sending and receiving node.
    pub from: u32,
    pub to: u32,
    /// Index of the sending switch among switches (its RNG stream); 0 for hosts.
    pub switch: u32,
    pub rate: u64,
    /// The link's rate without faults.
    pub nominal_rate: u64,
    /// A dead link: whatever is sent is lost.
    pub down: bool,
    /// Probability that a packet put on the link is lost.
    pub loss: f64,
    pub delay: Time,
    /// The link's latency without faults.
    pub nominal_delay: Time,
    /// When the packet on the wire has been fully serialized.
    pub busy_until: Time,
    /// A wake-up (`PortFree`) is scheduled at `busy_until`.
    pub wake_pending: bool,
    pub control: VecDeque<Packet>,
    pub control_bytes: u64,
    pub data: VecDeque<Packet>,
    pub data_bytes: u64,
    /// Packets on the wire with their arrival times at the far end (FIFO: constant delay).
    pub pipe: VecDeque<(Time, Packet)>,
    pub stats: PortStats,
}

impl EgressPort {
    pub fn new(from: u32, to: u32, switch: u32, rate: u64, delay: Time) -> Self {
        EgressPort {
            from,
            to,
            switch,
            rate,
            nominal_rate: rate,
            down: false,
            loss: 0.0,
            nominal_delay: delay,
            delay,
            busy_until: 0,
            wake_pending: false,
            control: VecDeque::new(),
            control_bytes: 0,
            data: VecDeque::new(),
            data_bytes: 0,
            pipe: VecDeque::new(),
            stats: PortStats::default(),
        }
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
        self.data.push_back(pkt);
        self.stats.max_queue = self.stats.max_queue.max(self.data_bytes);
    }

    #[inline]
    pub fn pop_data(&mut self, now: Time) -> Option<Packet> {
        let p = self.data.pop_front()?;
        self.account(now);
        self.data_bytes -= p.size as u64;
        Some(p)
    }

    /// Every packet this port holds: queued, or on its wire.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.control.iter().chain(self.data.iter()).chain(self.pipe.iter().map(|(_, p)| p))
    }

    /// Free to start a packet now: nothing on the wire and nothing waiting to go first.
    #[inline]
    pub fn is_free(&self, now: Time) -> bool {
        self.busy_until <= now && !self.wake_pending
    }

    #[inline]
    pub fn has_queued(&self) -> bool {
        !(self.control.is_empty() && self.data.is_empty())
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

/// RED between `kmin` and `kmax` on occupancy `q` (bytes): never below Kmin, always at or
/// above Kmax, with probability (q - Kmin) / (Kmax - Kmin) in between. Exact integer draw.
#[inline]
pub fn red_mark(q: u64, kmin: u64, kmax: u64, rng: &mut Rng) -> bool {
    if q <= kmin {
        false
    } else if q >= kmax {
        true
    } else {
        rng.below(kmax - kmin) < q - kmin
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn red_probability_is_linear_between_thresholds() {
        let mut rng = Rng::stream(1, Stream::Switch, 0);
        assert!(!red_mark(100, 100, 200, &mut rng));
        assert!(red_mark(200, 100, 200, &mut rng));
        let marks = (0..40_000).filter(|_| red_mark(125, 100, 200, &mut rng)).count();
        assert!((9_300..10_700).contains(&marks), "{marks}");
    }

    #[test]
    fn queue_integral_is_time_weighted() {
        use crate::packet::Kind;
        let pkt = |size| Packet { kind: Kind::Data, trimmed: false, ecn: false, path: 0, flow: 0, psn: 0, ev: 0, src: 0, dst: 1, size, sack_end: 0 };
        let mut p = EgressPort::new(0, 1, 0, 1, 0);
        p.push_data(10, pkt(100)); // 100 B from t=10
        p.push_data(20, pkt(50)); // 150 B from t=20
        p.pop_data(40); // 50 B from t=40
        // 100*10 + 150*20 + 50*10 over 50 ps
        assert_eq!(p.mean_queue(50), (1000 + 3000 + 500) as f64 / 50.0);
        assert_eq!(p.stats.max_queue, 150);
    }
}
