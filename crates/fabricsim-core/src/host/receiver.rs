//! The receiving end of a connection: what arrived, the ACK policy and what an ACK carries,
//! the reorder window and distances, path-ID loss detection and DCQCN's notification point.
//! The transports (`super::transport`) decide with it what each arrival triggers.
//!
//! An ACK carries what it reports, as the reference simulator's and a real NIC's do: the
//! cumulative PSN (the lowest PSN not received; Go-back-N: the next PSN it accepts) and a
//! bounded selective ACK, a bitmap of [`SACK_BITS`] PSNs from
//! `max(psn - 63, cumulative + 1)` (`psn`: the packet that triggered the ACK; the reference's
//! `sackBitmapBase`). Go-back-N's ACKs are cumulative only (no bitmap). With
//! `ack_evs = "all"` the bitmap covers the 32 PSNs up to the trigger, `psn - 31..=psn`, and
//! the other 32 bits say which of them arrived ECN-marked: the sender feeds each packet it
//! learns is acknowledged to its load balancer and window, with the EV it last sent that
//! packet on and the mark the ACK reports (none for a packet acknowledged only by the
//! cumulative PSN, below the window). An ACK lost or overtaken costs nothing while a later
//! one still covers its packets: the cumulative PSN covers everything below it, the bitmap
//! the 64 PSNs near the trigger; a packet received beyond both stays in flight at the sender
//! until a later ACK covers it (or its timer resends it).

use super::cc::dcqcn::Notifier;
use super::connection::ConnStats;
use crate::time::Time;

/// The receiving half of one connection, kept by its destination host from the first packet
/// of it that arrives until the last one it lacked: then a stored row answers what still
/// arrives, exactly as this state would have (`super::table`, `super::nic`'s late path).
#[derive(Debug, Clone)]
pub struct RecvHalf {
    pub rx: Receiver,
    /// Payload bytes the connection carries, and of a full packet.
    bytes: u64,
    payload: u64,
    /// Distinct paths between the two hosts (for path-ID loss detection).
    pub n_paths: usize,
    /// The receiver's counters.
    pub stats: ConnStats,
}

impl RecvHalf {
    pub fn new(bytes: u64, payload: u64, n_paths: usize, policy: AckPolicy) -> RecvHalf {
        let n_pkts = bytes.div_ceil(payload) as u32;
        RecvHalf { rx: Receiver::new(n_pkts, policy), bytes, payload, n_paths, stats: ConnStats::default() }
    }

    /// Payload bytes carried by `psn`.
    #[inline]
    pub fn payload_of(&self, psn: u32) -> u64 {
        super::connection::payload_of(self.bytes, self.payload, psn)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Receiver {
    received: Vec<u64>,
    pub count: u32,
    pub delivered_bytes: u64,
    highest: Option<u32>,
    pub max_reorder: u32,
    pub pending_acks: u32,
    /// With `ack_evs = "all"`: which received PSNs arrived ECN-marked (a bitset like
    /// `received`; empty otherwise).
    marks: Vec<u64>,
    pub end: Option<Time>,
    /// ACK policy: every n-th packet, at once on an ECN mark, keep every EV for the ACK.
    pub policy: AckPolicy,
    n_pkts: u32,
    /// Go-back-N: the next PSN accepted, and the PSN a NAK was last sent for.
    pub expected: u32,
    pub(crate) nak_for: Option<u32>,
    /// Path-ID loss detection: highest PSN received per path, lowest PSN not received, and
    /// the PSN below which holes were already NACKed.
    paths: Vec<(u16, u32)>,
    cum: u32,
    nacked_below: u32,
    /// Histogram of reorder distances: `reorder_hist[d]` arrivals trailed the highest PSN
    /// received before them by `d` (0 = in order); the last bucket collects the rest.
    pub reorder_hist: Vec<u64>,
    /// DCQCN's notification point: when to send CNPs.
    pub cnp: Notifier,
}

/// The receiver's policy: when it ACKs, what an ACK reports, and (Go-back-N) how far ahead
/// of the next expected PSN it may place packets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckPolicy {
    pub every: u32,
    /// ACK at once when a data packet arrives ECN-marked.
    pub on_ecn: bool,
    /// The ACK reports the EV and mark of every packet since the previous ACK, not only the
    /// triggering one.
    pub all_evs: bool,
    /// Go-back-N: packets with a PSN in `(expected, expected + reorder_window]` are held
    /// rather than discarded (`transport.reorder_buffer` / payload); 0 = strict.
    /// rather than discarded (`transport.reorder_buffer` / payload); 0 = strict.
    pub reorder_window: u32,
    /// Out-of-order receiver: PSNs more than this beyond the first missing one are discarded
    /// (`transport.reorder_limit`); `None` = any order.
    pub reorder_limit: Option<u32>,
}

/// PSNs an ACK's selective bitmap covers.
pub const SACK_BITS: u32 = 64;
/// With `ack_evs = "all"`: PSNs the bitmap covers (the other half carries their marks).
pub const SACK_BITS_ALL: u32 = 32;

/// The first PSN of an ACK's selective bitmap, from what the ACK carries: the triggering
/// `psn` and the cumulative PSN `cum`.
#[inline]
pub fn sack_base(psn: u32, cum: u32, all_evs: bool) -> u32 {
    if all_evs {
        psn.saturating_sub(SACK_BITS_ALL - 1)
    } else {
        psn.saturating_sub(SACK_BITS - 1).max(cum.saturating_add(1))
    }
}

/// The 64 bits of bitset `bits` from bit `base` on (bits beyond it read as 0).
#[inline]
pub(crate) fn bits_from(bits: &[u64], base: u32) -> u64 {
    let (w, o) = ((base / 64) as usize, base % 64);
    let lo = bits.get(w).map_or(0, |&x| x >> o);
    let hi = if o == 0 { 0 } else { bits.get(w + 1).map_or(0, |&x| x << (64 - o)) };
    lo | hi
}

/// What an ACK carries, from its cumulative PSN, its selective bits from `base` on and (with
/// `all_evs`) the marks bitset.
#[inline]
fn pack(cum: u32, sack: u64, marks: &[u64], base: u32, all_evs: bool) -> (u32, u64) {
    if all_evs {
        let half = u64::from(u32::MAX);
        (cum, (sack & half) | (bits_from(marks, base) & half) << 32)
    } else {
        (cum, sack)
    }
}

/// What an ACK triggered by `psn` carries once the receiver has all `n_pkts` packets (`marks`
/// with `all_evs`: which arrived marked): exactly what [`Receiver::ack_fields`] would return,
/// the cumulative PSN the end of the message for either transport.
pub(crate) fn complete_ack_fields(n_pkts: u32, psn: u32, cumulative_only: bool, all_evs: bool, marks: &[u64]) -> (u32, u64) {
    let base = sack_base(psn, n_pkts, all_evs);
    let ones = match n_pkts.saturating_sub(base) {
        0 => 0,
        k if k >= 64 => u64::MAX,
        k => (1u64 << k) - 1,
    };
    pack(n_pkts, if cumulative_only { 0 } else { ones }, marks, base, all_evs)
}

/// Reorder distances tracked one by one; larger ones share the last bucket.
pub const REORDER_BUCKETS: usize = 64;

/// What the receiver does with an arriving data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub send_ack: bool,
    /// This arrival completed the message.
    pub completed: bool,
    /// Send a NAK for this PSN (Go-back-N's gap, or a packet beyond the reorder limit).
    pub nak: Option<u32>,
    /// The packet was discarded (out of order for Go-back-N, beyond the reorder limit).
    pub discarded: bool,
}

impl Receiver {
    pub(crate) fn new(n_pkts: u32, policy: AckPolicy) -> Receiver {
        let words = (n_pkts as usize).div_ceil(64);
        Receiver {
            received: vec![0; words],
            marks: if policy.all_evs { vec![0; words] } else { Vec::new() },
            reorder_hist: vec![0; REORDER_BUCKETS],
            policy,
            n_pkts,
            ..Default::default()
        }
    }

    /// Packets in the message.
    pub(crate) fn n_pkts(&self) -> u32 {
        self.n_pkts
    }

    pub(crate) fn has(&self, psn: u32) -> bool {
        self.received[(psn / 64) as usize] >> (psn % 64) & 1 == 1
    }

    /// Reorder distance of an arrival (Juniper's metric): how far it trails the highest PSN
    /// that arrived before it.
    pub(crate) fn note_order(&mut self, psn: u32) {
        let d = match self.highest {
            Some(h) if psn < h => h - psn,
            _ => {
                self.highest = Some(psn);
                0
            }
        };
        self.max_reorder = self.max_reorder.max(d);
        self.reorder_hist[(d as usize).min(REORDER_BUCKETS - 1)] += 1;
    }

    /// Records `psn` as received (a Go-back-N receiver may hold it out of order: its
    /// cumulative ACK covers it once the gap before it is filled). True if it completed the
    /// message.
    pub(crate) fn place(&mut self, now: Time, psn: u32, payload: u64, ecn: bool) -> bool {
        let (w, bit) = ((psn / 64) as usize, 1u64 << (psn % 64));
        self.received[w] |= bit;
        self.count += 1;
        self.delivered_bytes += payload;
        if ecn && !self.marks.is_empty() {
            self.marks[w] |= bit;
        }
        if self.count == self.n_pkts {
            self.end = Some(now);
            return true;
        }
        false
    }

    /// What an ACK triggered by `psn` carries: the cumulative PSN (`expected`, the next PSN
    /// accepted, for a Go-back-N receiver: `cumulative_only`) and the selective bitmap
    /// (see the module's doc).
    #[inline]
    pub(crate) fn ack_fields(&mut self, psn: u32, cumulative_only: bool) -> (u32, u64) {
        let cum = if cumulative_only { self.expected } else { self.first_missing() };
        let base = sack_base(psn, cum, self.policy.all_evs);
        let sack = if cumulative_only { 0 } else { bits_from(&self.received, base) };
        pack(cum, sack, &self.marks, base, self.policy.all_evs)
    }

    /// With `ack_evs = "all"`: which PSNs arrived ECN-marked (what a complete receiver's
    /// late ACKs still report, [`complete_ack_fields`]).
    pub(crate) fn take_marks(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.marks)
    }

    pub(crate) fn ack_due(&mut self, force: bool, ecn: bool) -> bool {
        self.pending_acks += 1;
        let due = force || (ecn && self.policy.on_ecn) || self.pending_acks >= self.policy.every;
        if due {
            self.pending_acks = 0;
        }
        due
    }

    /// Path-ID-assisted loss detection: records `psn` as received on `path` and returns the
    /// PSNs now known lost: below the highest PSN received on every one of the `n_paths`
    /// paths between the two hosts, not yet received, not yet NACKed. Until every path has
    /// delivered something the receiver cannot tell a loss from a packet still on an unseen
    /// path, so it stays silent (the RTO covers that case, e.g. single-path ECMP).
    /// The lowest PSN not received yet.
    pub(crate) fn first_missing(&mut self) -> u32 {
        while (self.cum as usize) < self.received.len() * 64 && self.has(self.cum) {
            self.cum += 1;
        }
        self.cum
    }

    pub fn lost_by_path(&mut self, psn: u32, path: u16, n_paths: usize, out: &mut Vec<u32>) {
        match self.paths.iter_mut().find(|(p, _)| *p == path) {
            Some((_, max)) => *max = (*max).max(psn),
            None => self.paths.push((path, psn)),
        }
        if self.paths.len() < n_paths {
            return;
        }
        self.first_missing();
        let floor = self.paths.iter().map(|&(_, m)| m).min().unwrap_or(0);
        let from = self.cum.max(self.nacked_below);
        if floor > from {
            out.extend((from..floor).filter(|&p| !self.has(p)));
            self.nacked_below = floor;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::transport::TransportKind;

    #[test]
    fn a_complete_receivers_stored_answer_is_the_ack_its_state_would_send() {
        // every transport and ACK kind, messages shorter and longer than a bitmap, marks on
        // some packets: the row's ACK for a late duplicate equals the live receiver's
        for kind in [TransportKind::Ooo, TransportKind::Gbn] {
            for all_evs in [false, true] {
                for n in [1u32, 5, 63, 64, 65, 200] {
                    let mut rx = Receiver::new(n, AckPolicy { every: 1, all_evs, ..Default::default() });
                    // out of order where the transport takes it
                    let order: Vec<u32> = if kind == TransportKind::Gbn { (0..n).collect() } else { (0..n).rev().collect() };
                    for psn in order {
                        kind.on_data(&mut rx, 1, psn, 10, psn % 3 == 1, false);
                    }
                    assert_eq!(rx.count, n);
                    let gbn = kind == TransportKind::Gbn;
                    for psn in 0..n {
                        let live = rx.ack_fields(psn, gbn);
                        let marks = rx.marks.clone();
                        assert_eq!(complete_ack_fields(n, psn, gbn, all_evs, &marks), live, "{kind:?} all_evs={all_evs} n={n} psn={psn}");
                    }
                }
            }
        }
    }
}
