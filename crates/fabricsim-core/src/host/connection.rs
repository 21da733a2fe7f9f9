//! A connection's two halves: the sending half ([`SendHalf`]: window, PSN states, send log for
//! the RTO, pacing, its load balancer) here, kept by the source host, and the receiving half
//! ([`RecvHalf`], [`super::receiver`]), kept by the destination host. Neither reads the other:
//! what one learns of the other is what a packet carries (data packets, and ACKs and NACKs
//! with their cumulative PSN and bounded SACK). The transports (`super::transport`) use both.
//!
//! A message is split into packets of `mtu` wire bytes (the last one shorter); packet
//! sequence numbers (PSNs) count from 0. The sender sends retransmissions first, then new
//! packets, while the bytes in flight fit the window; the NIC serializes at line rate.

use std::collections::VecDeque;

use super::cc::{CongestionControl, Cwnd};
use super::receiver::bits_from;
pub use super::receiver::{sack_base, AckPolicy, Arrival, Receiver, RecvHalf, REORDER_BUCKETS, SACK_BITS_ALL};
use super::rto::RtoTimer;
use crate::lb::HostLb;
use crate::packet::Ev;
use crate::time::{serialization, Time};
use crate::workload::MessageSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PsnState {
    Unsent,
    InFlight,
    /// Declared lost (NACK or RTO), waiting to be resent.
    Lost,
    Acked,
}

/// A transmission in send order, for the RTO scan.
#[derive(Debug, Clone, Copy)]
pub struct SendRecord {
    pub psn: u32,
    pub tx: u16,
    pub ev: Ev,
    pub at: Time,
}

/// A connection's counters. Each half counts its own (the sender: data packets, retransmits,
/// ECN echoes, timeouts; the receiver: discards, path-ID NACKs, CNPs); the results add them.
#[derive(Debug, Clone, Default)]
pub struct ConnStats {
    /// Data packets the Go-back-N receiver threw away for arriving out of order.
    pub discarded: u64,
    /// NACKs of path-ID-assisted loss detection.
    pub fast_nacks: u64,
    pub data_packets: u64,
    pub retransmits: u64,
    pub ecn_acks: u64,
    pub timeouts: u64,
    /// Congestion notification packets the receiver sent (DCQCN).
    pub cnps: u64,
}

impl ConnStats {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &ConnStats) {
        self.discarded += o.discarded;
        self.fast_nacks += o.fast_nacks;
        self.data_packets += o.data_packets;
        self.retransmits += o.retransmits;
        self.ecn_acks += o.ecn_acks;
        self.timeouts += o.timeouts;
        self.cnps += o.cnps;
    }
}

#[derive(Debug, Clone)]
pub struct Sender {
    pub state: Vec<PsnState>,
    pub tx_count: Vec<u16>,
    pub next_new: u32,
    pub retx: VecDeque<u32>,
    pub in_flight: u64,
    /// `per_pair`: bytes the pair's earlier messages still have in flight; they count against
    /// this window too, as one queue pair's window covers all its messages (`table/pairs.rs`).
    pub debt: u64,
    /// `per_pair`: another message of its pair was live beside it: its ACKs re-share the
    /// pair's window (`ConnTable::share_window`); never set otherwise, which spares a lookup.
    pub shared: bool,
    pub window: Cwnd,
    /// The queue pair its packets travel on ([`crate::packet::Packet::flow`]).
    pub flow: u32,
    pub send_log: VecDeque<SendRecord>,
    pub rto_armed: bool,
    /// The highest cumulative PSN an ACK has reported.
    pub cum: u32,
    /// One bit per PSN, set once it is acknowledged: an ACK's bitmap is masked with it, so
    /// that only newly acknowledged PSNs are visited.
    pub acked_bits: Vec<u64>,
    pub acked: u32,
    pub lb: HostLb,
    pub first_send: Option<Time>,
    /// The retransmission timer (fixed or RFC 6298).
    pub rto: RtoTimer,
    /// When each PSN was last sent, kept only when the RTO or the window reads RTT samples
    /// (empty otherwise).
    pub sent_at: Vec<Time>,
    /// With `ack_evs = "all"`: the EV each PSN was last sent on (empty otherwise).
    pub sent_ev: Vec<Ev>,
    /// With a pacing rate (`transport.rate_cap`, a rate-based window): the earliest time the
    /// next packet may start, and the start and size of the last one.
    pub next_send: Time,
    pub last_start: Time,
    pub last_size: u64,
}

/// The pacing rate of a connection: the lower of the window's rate and the cap (0 = none).
#[inline]
fn pacing(cap: u64, rate: u64) -> u64 {
    match (cap, rate) {
        (0, r) | (r, 0) => r,
        (c, r) => c.min(r),
    }
}

impl Sender {
    /// A packet of `size` bytes left at `now`: the window counts it, and the next packet waits
    /// `size / rate` for the pacing rate (the window's, bounded by `cap`; 0 = no cap).
    #[inline]
    pub fn paced(&mut self, now: Time, size: u64, cap: u64) {
        let rate = pacing(cap, self.window.on_send(now, size));
        if rate != 0 {
            (self.last_start, self.last_size) = (now, size);
            self.next_send = now + serialization(size, rate);
        }
    }

    /// The window's rate changed: the next packet waits `size / rate` after the last one
    /// started, at the new rate.
    pub fn repace(&mut self, cap: u64) {
        let rate = pacing(cap, self.window.rate());
        if rate != 0 && self.last_size != 0 {
            self.next_send = self.last_start + serialization(self.last_size, rate);
        }
    }

    /// Keeps send times for RTT samples (a message of `n_pkts` packets).
    pub fn keep_send_times(&mut self, n_pkts: u32) {
        self.sent_at = vec![0; n_pkts as usize];
    }

    /// Keeps the EV of each PSN's last transmission (a message of `n_pkts` packets).
    pub fn keep_evs(&mut self, n_pkts: u32) {
        self.sent_ev = vec![0; n_pkts as usize];
    }

    /// The RTT of `psn`, whose ACK arrived at `now`, if send times are kept and it was sent
    /// once (Karn's algorithm: a retransmission's ACK is ambiguous).
    #[inline]
    pub fn rtt_sample(&self, psn: u32, now: Time) -> Option<Time> {
        let at = *self.sent_at.get(psn as usize)?;
        (self.tx_count[psn as usize] == 1).then(|| now.saturating_sub(at))
    }
}

/// Payload bytes carried by `psn` of a connection of `bytes` in packets of `payload` (the
/// last one shorter): both halves cut a message the same way.
#[inline]
pub fn payload_of(bytes: u64, payload: u64, psn: u32) -> u64 {
    (bytes - psn as u64 * payload).min(payload)
}

/// The sending half of one connection from `spec.src` to `spec.dst` (kept by `spec.src`).
#[derive(Debug, Clone)]
pub struct SendHalf {
    pub spec: MessageSpec,
    pub n_pkts: u32,
    /// Payload bytes of a full packet.
    pub payload: u64,
    pub header: u64,
    pub tx: Sender,
    /// The sender's counters.
    pub stats: ConnStats,
}

impl SendHalf {
    pub fn new(spec: MessageSpec, mtu: u64, header: u64, window: Cwnd, lb: HostLb) -> SendHalf {
        let payload = mtu - header;
        let n_pkts = spec.bytes.div_ceil(payload) as u32;
        SendHalf {
            spec,
            n_pkts,
            payload,
            header,
            tx: Sender {
                state: vec![PsnState::Unsent; n_pkts as usize],
                tx_count: vec![0; n_pkts as usize],
                acked_bits: vec![0; (n_pkts as usize).div_ceil(64)],
                next_new: 0,
                retx: VecDeque::new(),
                in_flight: 0,
                debt: 0,
                shared: false,
                window,
                flow: 0,
                send_log: VecDeque::new(),
                rto_armed: false,
                cum: 0,
                acked: 0,
                lb,
                first_send: None,
                rto: RtoTimer::default(),
                sent_at: Vec::new(),
                sent_ev: Vec::new(),
                next_send: 0,
                last_start: 0,
                last_size: 0,
            },
            stats: ConnStats::default(),
        }
    }

    /// Payload bytes carried by `psn`.
    #[inline]
    pub fn payload_of(&self, psn: u32) -> u64 {
        payload_of(self.spec.bytes, self.payload, psn)
    }

    #[inline]
    pub fn wire_size(&self, psn: u32) -> u64 {
        self.payload_of(psn) + self.header
    }

    /// The next PSN the window allows, retransmissions first; `None` if blocked or done.
    pub fn next_psn(&mut self) -> Option<u32> {
        let tx = &mut self.tx;
        while let Some(&psn) = tx.retx.front() {
            if tx.state[psn as usize] == PsnState::Lost {
                break;
            }
            tx.retx.pop_front(); // acknowledged after it was declared lost
        }
        while tx.next_new < self.n_pkts && tx.state[tx.next_new as usize] == PsnState::Acked {
            tx.next_new += 1; // after a go-back, skip what was acknowledged meanwhile
        }
        let psn = match tx.retx.front() {
            Some(&p) => p,
            None if tx.next_new < self.n_pkts => tx.next_new,
            None => return None,
        };
        let size = self.wire_size(psn);
        let tx = &mut self.tx;
        let used = tx.in_flight + tx.debt;
        if used > 0 && used + size > tx.window.cwnd() {
            return None;
        }
        if tx.retx.front() == Some(&psn) {
            tx.retx.pop_front();
        } else {
            tx.next_new += 1;
        }
        if tx.tx_count[psn as usize] > 0 {
            self.stats.retransmits += 1;
        }
        Some(psn)
    }

    /// Records that `psn` went out on `ev` at `now`.
    pub fn on_sent(&mut self, psn: u32, ev: Ev, now: Time) {
        let size = self.wire_size(psn);
        if self.tx.send_log.len() == self.tx.send_log.capacity() {
            self.forget_stale();
        }
        let tx = &mut self.tx;
        tx.state[psn as usize] = PsnState::InFlight;
        tx.tx_count[psn as usize] = tx.tx_count[psn as usize].wrapping_add(1);
        tx.in_flight += size;
        tx.send_log.push_back(SendRecord { psn, tx: tx.tx_count[psn as usize], ev, at: now });
        if let Some(t) = tx.sent_at.get_mut(psn as usize) {
            *t = now;
        }
        if let Some(e) = tx.sent_ev.get_mut(psn as usize) {
            *e = ev;
        }
        tx.first_send.get_or_insert(now);
        self.stats.data_packets += 1;
    }

    /// Whether `psn`, just sent ([`Self::on_sent`]), asks for an ACK at once
    /// (`transport.ack_request`): a retransmission, the last packet there is to send, or one
    /// that fills the window, as the reference simulator's `UecSrc::sendNewPacket` and
    /// `sendRtxPacket` set UE's AR flag. "Fills" is the reference's test: what is in flight,
    /// this packet included, plus this packet's size again reaches the window
    /// (`(_in_flight + full_pkt_size) >= _cwnd`, after `_in_flight += full_pkt_size`), so a
    /// packet after which no other of its size would fit asks, not only one that leaves the
    /// window exactly full.
    pub fn asks_ack(&self, psn: u32) -> bool {
        let tx = &self.tx;
        let fills = tx.in_flight + tx.debt + self.wire_size(psn) >= tx.window.cwnd();
        tx.tx_count[psn as usize] > 1 || (tx.next_new >= self.n_pkts && tx.retx.is_empty()) || fills
    }

    /// Marks `psn` acknowledged; returns its wire size if it was news.
    fn ack_psn(&mut self, psn: u32) -> u64 {
        let size = self.wire_size(psn);
        let tx = &mut self.tx;
        match tx.state[psn as usize] {
            PsnState::Acked => 0,
            s => {
                if s == PsnState::InFlight {
                    tx.in_flight -= size;
                }
                tx.state[psn as usize] = PsnState::Acked;
                tx.acked_bits[psn as usize / 64] |= 1 << (psn % 64);
                tx.acked += 1;
                size
            }
        }
    }

    /// An ACK triggered by `psn` reporting the cumulative PSN `cum` and the selective bitmap
    /// `sack` (with `all_evs`, half of it the marks: see `super::receiver`); returns the
    /// bytes newly acknowledged. With `all_evs`, `out` receives each PSN newly acknowledged
    /// with its reported mark, lowest first and the trigger last.
    pub fn on_ack(&mut self, psn: u32, cum: u32, sack: u64, all_evs: bool, out: &mut Vec<(u32, bool)>) -> u64 {
        let base = sack_base(psn, cum, all_evs);
        let (bits, marks) = if all_evs { (sack & u64::from(u32::MAX), sack >> 32) } else { (sack, 0) };
        let marked = |p: u32| p >= base && p - base < SACK_BITS_ALL && marks >> (p - base) & 1 == 1;
        let mut newly = 0;
        let mut one = |conn: &mut SendHalf, p: u32| {
            let size = conn.ack_psn(p);
            if size > 0 && all_evs {
                out.push((p, marked(p)));
            }
            newly += size;
        };
        let cum = cum.min(self.n_pkts);
        while self.tx.cum < cum {
            // a word at a time: only the PSNs no selective ACK has covered yet
            let p = self.tx.cum;
            let end = cum.min((p | 63) + 1);
            let span = end - p; // 1..=64
            let range = if span == 64 { u64::MAX } else { ((1u64 << span) - 1) << (p % 64) };
            let mut b = range & !self.tx.acked_bits[p as usize / 64];
            self.tx.cum = end;
            while b != 0 {
                let q = (p & !63) + b.trailing_zeros();
                b &= b - 1;
                one(self, q);
            }
        }
        // the bitmap less what is known: two words of the sender's own bitmap
        let mut b = bits & !bits_from(&self.tx.acked_bits, base);
        while b != 0 {
            let p = base + b.trailing_zeros();
            b &= b - 1;
            if p < self.n_pkts {
                one(self, p);
            }
        }
        if let Some(k) = out.iter().position(|&(p, _)| p == psn) {
            let t = out.remove(k);
            out.push(t);
        }
        newly
    }

    /// Pops the send records at the front of the log that can never be live again (their
    /// packet acknowledged, declared lost or sent again), before the log would grow
    /// ([`Self::on_sent`]): it then holds about a window's records, not every packet sent
    /// since the timer last fired. Nothing it returns moves:
    /// [`Self::expired`] pops such records itself before the first live one it stops at, and
    /// [`Self::in_flight_on`] skips them; the timer is re-armed from the front only after
    /// `expired`, when both logs begin at the same record.
    fn forget_stale(&mut self) {
        while let Some(&r) = self.tx.send_log.front() {
            if self.is_live(&r) {
                break;
            }
            self.tx.send_log.pop_front();
        }
    }

    /// `psn` is lost (NACK or timeout): queue it for retransmission. False if already known.
    pub fn declare_lost(&mut self, psn: u32) -> bool {
        let size = self.wire_size(psn);
        let tx = &mut self.tx;
        if tx.state[psn as usize] != PsnState::InFlight {
            return false;
        }
        tx.state[psn as usize] = PsnState::Lost;
        tx.in_flight -= size;
        tx.retx.push_back(psn);
        true
    }

    /// Whether the sender has everything acknowledged.
    pub fn sender_done(&self) -> bool {
        self.tx.acked == self.n_pkts
    }

    /// The send records still in flight on any of the paths `evs`, oldest first; they stay in
    /// the log (stale once declared lost).
    pub fn in_flight_on(&self, evs: &[Ev], out: &mut Vec<SendRecord>) {
        out.extend(self.tx.send_log.iter().filter(|r| evs.contains(&r.ev) && self.is_live(r)));
    }

    /// Whether a send record is the packet's last sending and the packet is still in flight.
    #[inline]
    fn is_live(&self, r: &SendRecord) -> bool {
        self.tx.state[r.psn as usize] == PsnState::InFlight && self.tx.tx_count[r.psn as usize] == r.tx
    }

    /// Pops the send records that timed out by `now` (and stale ones); returns them.
    pub fn expired(&mut self, now: Time, rto: Time, out: &mut Vec<SendRecord>) {
        while let Some(&r) = self.tx.send_log.front() {
            let live = self.is_live(&r);
            if live && r.at + rto > now {
                break;
            }
            self.tx.send_log.pop_front();
            if live {
                out.push(r);
            }
        }
    }
}

#[cfg(test)]
mod tests;
