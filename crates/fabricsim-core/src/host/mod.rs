//! Host NIC state: per-flow sender and receiver of the out-of-order (SACK) transport.
//!
//! A message is split into packets of `mtu` wire bytes (the last one shorter); packet
//! sequence numbers (PSNs) count from 0. The sender sends retransmissions first, then new
//! packets, while the bytes in flight fit the window; the NIC serializes at line rate.
//!
//! The receiver accepts any arrival order. For every data packet it records the PSN in a
//! SACK log; every `ack_every`-th data packet (and the one that completes the message, and
//! any duplicate) triggers an ACK that echoes that packet's EV and ECN bit and covers the
//! SACK log up to that point, i.e. it selectively acknowledges every PSN received since the
//! previous ACK. A trimmed packet triggers a NACK at once. The sender retransmits on NACK and
//! on RTO (a packet unacknowledged for `rto` since it was last sent).

pub mod cc;

use std::collections::VecDeque;

use crate::lb::{Ev, HostLb};
use crate::time::Time;
use crate::workload::FlowSpec;
use cc::Window;

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

#[derive(Debug, Clone, Default)]
pub struct FlowStats {
    pub data_packets: u64,
    pub retransmits: u64,
    pub trims: u64,
    pub drops: u64,
    pub ecn_acks: u64,
    pub timeouts: u64,
}

#[derive(Debug, Clone)]
pub struct Sender {
    pub state: Vec<PsnState>,
    pub tx_count: Vec<u16>,
    pub next_new: u32,
    pub retx: VecDeque<u32>,
    pub in_flight: u64,
    pub window: Window,
    pub send_log: VecDeque<SendRecord>,
    pub rto_armed: bool,
    pub sack_cursor: u32,
    pub acked: u32,
    pub lb: HostLb,
    pub first_send: Option<Time>,
}

#[derive(Debug, Clone, Default)]
pub struct Receiver {
    received: Vec<u64>,
    pub count: u32,
    pub delivered_bytes: u64,
    highest: Option<u32>,
    pub max_reorder: u32,
    pub pending_acks: u32,
    pub sack_log: Vec<u32>,
    pub end: Option<Time>,
}

/// What the receiver does with an arriving data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub send_ack: bool,
    /// This arrival completed the message.
    pub completed: bool,
}

impl Receiver {
    fn new(n_pkts: u32) -> Receiver {
        Receiver { received: vec![0; (n_pkts as usize).div_ceil(64)], ..Default::default() }
    }

    pub fn on_data(&mut self, now: Time, psn: u32, payload: u64, n_pkts: u32, ack_every: u32) -> Arrival {
        let (w, b) = ((psn / 64) as usize, psn % 64);
        let duplicate = self.received[w] >> b & 1 == 1;
        let mut completed = false;
        if !duplicate {
            self.received[w] |= 1 << b;
            self.count += 1;
            self.delivered_bytes += payload;
            self.sack_log.push(psn);
            match self.highest {
                Some(h) if psn < h => self.max_reorder = self.max_reorder.max(h - psn),
                _ => self.highest = Some(psn),
            }
            if self.count == n_pkts {
                self.end = Some(now);
                completed = true;
            }
        }
        self.pending_acks += 1;
        let send_ack = duplicate || completed || self.pending_acks >= ack_every;
        if send_ack {
            self.pending_acks = 0;
        }
        Arrival { send_ack, completed }
    }
}

/// A message of the workload, carried by one connection or (MPTCP) several.
#[derive(Debug, Clone, Copy)]
pub struct Message {
    pub spec: FlowSpec,
    /// Its connections: `first..first + count` in the flow table.
    pub first: u32,
    pub count: u32,
    /// Connections that have received all their bytes.
    pub done: u32,
}

impl Message {
    pub fn connections(&self) -> std::ops::Range<usize> {
        self.first as usize..(self.first + self.count) as usize
    }
}

/// One connection from `spec.src` to `spec.dst`: both ends of it.
#[derive(Debug, Clone)]
pub struct Flow {
    pub spec: FlowSpec,
    pub n_pkts: u32,
    /// Payload bytes of a full packet.
    pub payload: u64,
    pub header: u64,
    pub tx: Sender,
    pub rx: Receiver,
    pub stats: FlowStats,
}

impl Flow {
    pub fn new(spec: FlowSpec, mtu: u64, header: u64, window: Window, lb: HostLb) -> Flow {
        let payload = mtu - header;
        let n_pkts = spec.bytes.div_ceil(payload) as u32;
        Flow {
            spec,
            n_pkts,
            payload,
            header,
            tx: Sender {
                state: vec![PsnState::Unsent; n_pkts as usize],
                tx_count: vec![0; n_pkts as usize],
                next_new: 0,
                retx: VecDeque::new(),
                in_flight: 0,
                window,
                send_log: VecDeque::new(),
                rto_armed: false,
                sack_cursor: 0,
                acked: 0,
                lb,
                first_send: None,
            },
            rx: Receiver::new(n_pkts),
            stats: FlowStats::default(),
        }
    }

    /// Payload bytes carried by `psn`.
    #[inline]
    pub fn payload_of(&self, psn: u32) -> u64 {
        (self.spec.bytes - psn as u64 * self.payload).min(self.payload)
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
        let psn = match tx.retx.front() {
            Some(&p) => p,
            None if tx.next_new < self.n_pkts => tx.next_new,
            None => return None,
        };
        let size = self.wire_size(psn);
        let tx = &mut self.tx;
        if tx.in_flight > 0 && tx.in_flight + size > tx.window.cwnd() {
            return None;
        }
        if tx.retx.front() == Some(&psn) {
            tx.retx.pop_front();
            self.stats.retransmits += 1;
        } else {
            tx.next_new += 1;
        }
        Some(psn)
    }

    /// Records that `psn` went out on `ev` at `now`.
    pub fn on_sent(&mut self, psn: u32, ev: Ev, now: Time) {
        let size = self.wire_size(psn);
        let tx = &mut self.tx;
        tx.state[psn as usize] = PsnState::InFlight;
        tx.tx_count[psn as usize] = tx.tx_count[psn as usize].wrapping_add(1);
        tx.in_flight += size;
        tx.send_log.push_back(SendRecord { psn, tx: tx.tx_count[psn as usize], ev, at: now });
        tx.first_send.get_or_insert(now);
        self.stats.data_packets += 1;
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
                tx.acked += 1;
                size
            }
        }
    }

    /// An ACK covering the receiver's SACK log up to `sack_end`; returns newly acked bytes.
    pub fn on_ack(&mut self, sack_end: u32) -> u64 {
        let mut newly = 0;
        while self.tx.sack_cursor < sack_end {
            let psn = self.rx.sack_log[self.tx.sack_cursor as usize];
            self.tx.sack_cursor += 1;
            newly += self.ack_psn(psn);
        }
        newly
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

    /// Pops the send records that timed out by `now` (and stale ones); returns them.
    pub fn expired(&mut self, now: Time, rto: Time, out: &mut Vec<SendRecord>) {
        while let Some(&r) = self.tx.send_log.front() {
            let live = self.tx.state[r.psn as usize] == PsnState::InFlight && self.tx.tx_count[r.psn as usize] == r.tx;
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
mod tests {
    use super::*;
    use crate::engine::rng::{Rng, Stream};
    use crate::lb::LbConfig;
    use crate::scenario::CcKind;

    fn flow(bytes: u64) -> Flow {
        let ctx = crate::lb::LbContext {
            bdp_packets: 3,
            base_rtt: 1,
            mtu: 1064,
            mp_ev: crate::switch::routing::MpEvLayout::new(&[2]),
            kmin_packets: 1,
            buffer_packets: 3,
        };
        let lb = HostLb::new(&LbConfig::default(), &ctx, &mut Rng::stream(1, Stream::Host, 0));
        Flow::new(FlowSpec { src: 0, dst: 1, bytes, start: 0 }, 1064, 64, Window::new(CcKind::None, 3 * 1064, 3 * 1064, 1064), lb)
    }

    #[test]
    fn packetization_and_window() {
        let mut f = flow(4500); // 1000 + 1000 + 1000 + 1000 + 500
        assert_eq!(f.n_pkts, 5);
        assert_eq!(f.wire_size(4), 564);
        let sent: Vec<u32> = std::iter::from_fn(|| f.next_psn().inspect(|&p| f.on_sent(p, 0, 0))).collect();
        assert_eq!(sent, vec![0, 1, 2], "window of 3 packets");
        assert!(f.declare_lost(1));
        assert!(!f.declare_lost(1), "already lost");
        assert_eq!(f.next_psn(), Some(1), "retransmission first");
    }

    #[test]
    fn receiver_acks_every_n_and_tracks_reorder() {
        let mut r = Receiver::new(6);
        let acks: Vec<bool> = [0, 3, 1, 2, 5, 4].iter().map(|&p| r.on_data(0, p, 10, 6, 2).send_ack).collect();
        assert_eq!(acks, vec![false, true, false, true, false, true]);
        assert_eq!(r.max_reorder, 2, "psn 1 arrived after psn 3");
        assert_eq!(r.count, 6);
        assert!(r.on_data(5, 0, 10, 6, 2).send_ack, "duplicates are acked at once");
        assert_eq!(r.delivered_bytes, 60);
    }

    #[test]
    fn acks_cover_the_sack_log() {
        let mut f = flow(4500);
        while let Some(p) = f.next_psn() {
            f.on_sent(p, 0, 0);
        }
        f.rx.on_data(1, 2, 1000, 5, 1);
        f.rx.on_data(1, 0, 1000, 5, 1);
        assert_eq!(f.on_ack(2), 2 * 1064);
        assert_eq!(f.tx.in_flight, 1064);
        assert_eq!(f.on_ack(2), 0, "a reordered older ACK adds nothing");
    }
}
