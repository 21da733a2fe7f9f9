//! The connections of every host, held only while they are under way.
//!
//! A connection id names one connection for the whole run (packets and timers carry it), but
//! its state lives in parts with their own lifetimes: *pending* until its message starts (a
//! results row of zeros); a *sending half* ([`SendHalf`]) built when its message starts and
//! dropped once the sender has everything acknowledged; a *receiving half* ([`RecvHalf`])
//! built by the first packet that reaches the receiver and dropped once it has every packet
//! (which comes first: nothing is acknowledged before it arrives). Each half lives in a slab
//! whose slots are reused; what it leaves behind goes into a 64-byte stored row: what the
//! results report and the little that a late packet still reads ([`ConnRow`] is that row read
//! back, with the live halves' counts added). Memory follows the connections under way, not
//! the workload's size: a 2.1 M-message ring allreduce has about 2 000 live at once.
//!
//! A half that is gone still meets packets that were in flight: duplicates of data the
//! receiver has (a spurious retransmission), trimmed headers, ACKs and NACKs. The NIC answers
//! them from the row exactly as the half would have ([`super::nic`]), so results do not
//! depend on when the state was dropped.

use std::collections::HashMap;

use slab::Slab;

use crate::engine::rng::Rng;
use crate::host::cc::dcqcn::Notifier;
use crate::host::connection::{ConnStats, RecvHalf, SendHalf, REORDER_BUCKETS};
use crate::host::factory::ConnFactory;
use crate::host::receiver::complete_ack_fields;
use crate::lb::LoadBalancer;
use crate::packet::Ev;
use crate::time::Time;
use crate::workload::MessageSpec;

/// No slot: the half does not exist (not started, or done).
const NONE: u32 = u32::MAX;

/// A connection's results so far (built when read, from its stored row and live halves).
#[derive(Debug, Clone)]
pub struct ConnRow {
    pub n_pkts: u32,
    pub max_reorder: u32,
    first_send: Time,
    /// When the receiver had every packet.
    end: Time,
    pub delivered_bytes: u64,
    pub stats: ConnStats,
}

/// No time yet (`first_send`, `end`).
const NEVER: Time = Time::MAX;

impl ConnRow {
    /// Adds the other part of the connection's row (held by another piece: its other end's).
    pub fn merge(&mut self, o: &ConnRow) {
        (self.first_send, self.end) = (self.first_send.min(o.first_send), self.end.min(o.end));
        self.max_reorder = self.max_reorder.max(o.max_reorder);
        self.delivered_bytes += o.delivered_bytes;
        self.stats.add(&o.stats);
    }

    pub fn first_send(&self) -> Option<Time> {
        (self.first_send != NEVER).then_some(self.first_send)
    }

    pub fn end(&self) -> Option<Time> {
        (self.end != NEVER).then_some(self.end)
    }
}

/// What the table keeps of a connection (64 bytes: a run keeps one per connection): zeros
/// until it starts; what each half left once it is done (its results, the counts of the late
/// packets it met, and the little a late packet still reads). Its counters take 4 bytes each; a connection whose counts outgrow them keeps
/// them in the table's `wide` map instead (exact, never clipped).
#[derive(Debug, Clone)]
struct Stored {
    first_send: Time,
    end: Time,
    /// Payload bytes the connection carries: all of them were delivered once the receiver is done.
    bytes: u64,
    /// discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps.
    counts: [u32; 7],
    max_reorder: u32,
    /// Where its reorder histogram lies in the table's store once the receiver is done.
    reorder_at: u32,
    reorder_len: u8,
    flags: u8,
}

/// Bytes the table keeps per connection for the whole run (for the memory estimate).
pub const STORED_ROW_BYTES: u64 = std::mem::size_of::<Stored>() as u64;

/// `Stored::flags`: the receiver has every packet and its half is gone ...
const RX_DONE: u8 = 1;
/// ... Go-back-N NAKed the end of the message (a trimmed late header is NAKed once) ...
const NAKED_END: u8 = 2;
/// ... its counters live in the `wide` map.
const WIDE: u8 = 4;

impl Stored {
    fn pending(bytes: u64) -> Stored {
        Stored { first_send: NEVER, end: NEVER, bytes, counts: [0; 7], max_reorder: 0, reorder_at: 0, reorder_len: 0, flags: 0 }
    }

    /// The counters in 4 bytes each, if they fit.
    fn narrow(s: &ConnStats) -> Option<[u32; 7]> {
        let all = [s.discarded, s.fast_nacks, s.data_packets, s.retransmits, s.ecn_acks, s.timeouts, s.cnps];
        let mut out = [0u32; 7];
        for (o, v) in out.iter_mut().zip(all) {
            *o = u32::try_from(v).ok()?;
        }
        Some(out)
    }

    fn widen(c: &[u32; 7]) -> ConnStats {
        let [discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps] = c.map(u64::from);
        ConnStats { discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps }
    }
}

/// Every connection of the run, by id: the sending halves its source hosts keep while they
/// send, the receiving halves its destination hosts keep while they receive, and the stored
/// rows.
pub struct ConnTable {
    factory: ConnFactory,
    /// The live sending halves; `tx_slot[id]` is an index into it (or [`NONE`]) ...
    senders: Slab<SendHalf>,
    tx_slot: Vec<u32>,
    /// ... and the receiving halves, `rx_slot[id]`.
    receivers: Slab<RecvHalf>,
    rx_slot: Vec<u32>,
    rows: Vec<Stored>,
    /// Counters of the done connections whose counts outgrew 4 bytes.
    wide: HashMap<u32, ConnStats>,
    /// The message of each connection, and its source host's stream as the message's load
    /// balancers will draw from it (one per message).
    conn_msg: Vec<u32>,
    seeds: Vec<Rng>,
    /// Reorder histograms of complete receivers, sparse: distance << 56 | arrivals.
    reorder: Vec<u64>,
    /// With DCQCN, the notification point of each complete receiver (a late marked duplicate
    /// may still trigger a CNP); empty otherwise.
    cnp: Vec<Notifier>,
    keep_cnp: bool,
    /// With `ack_evs = "all"`: which packets of a complete receiver arrived marked (its late
    /// ACKs report them).
    marks: HashMap<u32, Vec<u64>>,
    /// The most connections sending at once.
    peak_live: usize,
}

impl ConnTable {
    /// `keep_cnp`: connections send CNPs (DCQCN), whose notification point outlives them.
    pub fn new(factory: ConnFactory, keep_cnp: bool) -> ConnTable {
        ConnTable {
            cnp: Vec::new(),
            keep_cnp,
            factory,
            senders: Slab::new(),
            tx_slot: Vec::new(),
            receivers: Slab::new(),
            rx_slot: Vec::new(),
            rows: Vec::new(),
            wide: HashMap::new(),
            conn_msg: Vec::new(),
            seeds: Vec::new(),
            reorder: Vec::new(),
            marks: HashMap::new(),
            peak_live: 0,
        }
    }

    /// Adds the connections of message `m` (the next one), whose load balancers draw from
    /// `rng` (its source host's stream, advanced past them now); returns their ids.
    pub fn add(&mut self, m: u32, spec: &MessageSpec, rng: &mut Rng) -> std::ops::Range<u32> {
        debug_assert_eq!(m as usize, self.seeds.len());
        self.seeds.push(rng.clone());
        self.factory.draw(spec, rng);
        let first = self.tx_slot.len() as u32;
        for bytes in self.factory.shares(spec.bytes) {
            self.rows.push(Stored::pending(bytes));
            self.tx_slot.push(NONE);
            self.rx_slot.push(NONE);
            self.conn_msg.push(m);
        }
        first..self.tx_slot.len() as u32
    }

    /// Frees every connection's state and row (the table is empty afterwards; see
    /// `Nics::free_connections`).
    pub fn free_all(&mut self) {
        let keep_cnp = self.keep_cnp;
        *self = ConnTable::new(self.factory.clone(), keep_cnp);
    }

    /// Frees the messages' copies of their streams but the first (which
    /// [`ConnTable::lb_state_bytes`] reads): no connection can start afterwards.
    pub fn free_streams(&mut self) {
        self.seeds.truncate(1);
        self.seeds.shrink_to_fit();
    }

    /// See [`ConnFactory::notify_latency`].
    pub fn notify_latency(&self, from: u32, to: u32) -> Time {
        self.factory.notify_latency(from, to)
    }

    /// Connections in the run.
    pub fn len(&self) -> usize {
        self.tx_slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tx_slot.is_empty()
    }

    /// The message connection `c` carries (part of).
    #[inline]
    pub fn message_of(&self, c: u32) -> u32 {
        self.conn_msg[c as usize]
    }

    /// Builds the sending halves of connections `ids` of `spec`'s message unless they are
    /// live already (the first of them to start builds them all: subflows draw in order).
    pub fn start(&mut self, ids: std::ops::Range<u32>, spec: &MessageSpec) {
        if self.tx_slot[ids.start as usize] != NONE {
            return;
        }
        let mut rng = self.seeds[self.conn_msg[ids.start as usize] as usize].clone();
        for (c, half) in ids.zip(self.factory.senders(spec, &mut rng)) {
            self.tx_slot[c as usize] = self.senders.insert(half) as u32;
        }
        self.peak_live = self.peak_live.max(self.senders.len());
    }

    /// The live sending half of `c` (panics if it is not live: a bug).
    #[inline]
    pub fn sender_live(&mut self, c: u32) -> &mut SendHalf {
        &mut self.senders[self.tx_slot[c as usize] as usize]
    }

    /// The sending half of `c`, if it is live.
    #[inline]
    pub fn sender(&mut self, c: u32) -> Option<&mut SendHalf> {
        self.senders.get_mut(self.tx_slot[c as usize] as usize)
    }

    /// The receiving half of `c` (of `spec`'s message), built by the first packet that
    /// reaches it; `None` once the receiver has everything (its row answers then).
    #[inline]
    pub fn receiver(&mut self, c: u32, spec: &MessageSpec) -> Option<&mut RecvHalf> {
        let mut s = self.rx_slot[c as usize];
        if s == NONE {
            if self.rows[c as usize].flags & RX_DONE != 0 {
                return None;
            }
            s = self.build_receiver(c, spec);
        }
        Some(&mut self.receivers[s as usize])
    }

    /// Builds the receiving half of `c`; returns its slot.
    #[cold]
    fn build_receiver(&mut self, c: u32, spec: &MessageSpec) -> u32 {
        let s = self.receivers.insert(self.factory.receiver(spec, self.rows[c as usize].bytes)) as u32;
        self.rx_slot[c as usize] = s;
        s
    }

    /// The live receiving half of `c` (panics if it is not live: a bug).
    #[inline]
    pub fn receiver_live(&mut self, c: u32) -> &mut RecvHalf {
        &mut self.receivers[self.rx_slot[c as usize] as usize]
    }

    /// With DCQCN, the notification point of connection `c`, whose receiver has everything.
    #[inline]
    pub fn notifier_mut(&mut self, c: u32) -> Option<&mut Notifier> {
        self.cnp.get_mut(c as usize)
    }

    /// Bytes on the wire of connection `c`'s data packets, each once.
    pub fn wire_bytes(&self, c: u32) -> u64 {
        self.factory.wire_bytes(self.rows[c as usize].bytes)
    }

    /// Packets of connection `c`.
    pub fn stored_packets(&self, c: u32) -> u32 {
        self.factory.packets(self.rows[c as usize].bytes)
    }

    /// What an ACK of complete receiver `c` triggered by `psn` carries (see
    /// the receiver's `complete_ack_fields`).
    pub fn complete_ack(&self, c: u32, psn: u32, cumulative_only: bool, all_evs: bool) -> (u32, u64) {
        let marks = self.marks.get(&c).map_or(&[][..], Vec::as_slice);
        complete_ack_fields(self.stored_packets(c), psn, cumulative_only, all_evs, marks)
    }

    /// Whether Go-back-N NAKed the end of complete receiver `c`'s message; marks it so.
    pub fn nak_end_once(&mut self, c: u32) -> bool {
        let r = &mut self.rows[c as usize];
        let first = r.flags & NAKED_END == 0;
        r.flags |= NAKED_END;
        first
    }

    /// Counts what a packet for a connection whose half is gone caused (`f` updates the
    /// stored counters of `c`).
    pub fn count_late(&mut self, c: u32, f: impl FnOnce(&mut ConnStats)) {
        let r = &mut self.rows[c as usize];
        if r.flags & WIDE != 0 {
            f(self.wide.entry(c).or_default());
            return;
        }
        let mut stats = Stored::widen(&r.counts);
        f(&mut stats);
        self.keep_counts(c, &stats);
    }

    /// Stores connection `c`'s counters, in its row if they fit.
    fn keep_counts(&mut self, c: u32, stats: &ConnStats) {
        let r = &mut self.rows[c as usize];
        match Stored::narrow(stats) {
            Some(counts) => r.counts = counts,
            None => {
                r.flags |= WIDE;
                self.wide.insert(c, stats.clone());
            }
        }
    }

    /// Connection `c`'s receiver has every packet: keep what the results and late packets
    /// read in its row, drop its state.
    pub fn finish_receiver(&mut self, c: u32) {
        let s = std::mem::replace(&mut self.rx_slot[c as usize], NONE);
        let RecvHalf { mut rx, stats, .. } = self.receivers.remove(s as usize);
        debug_assert_eq!(rx.delivered_bytes, self.rows[c as usize].bytes, "a complete receiver has all its connection carries");
        let from = self.reorder.len();
        for (d, &n) in rx.reorder_hist.iter().enumerate().filter(|(_, &n)| n > 0) {
            debug_assert!(n < 1 << 56, "arrivals fit 56 bits (2^56 packets)");
            self.reorder.push((d as u64) << 56 | n);
        }
        let r = &mut self.rows[c as usize];
        (r.end, r.max_reorder) = (rx.end.unwrap_or(NEVER), rx.max_reorder);
        r.reorder_at = from as u32;
        r.reorder_len = (self.reorder.len() - from) as u8; // at most REORDER_BUCKETS
        r.flags |= RX_DONE | if rx.nak_for == Some(rx.n_pkts()) { NAKED_END } else { 0 };
        let marks = rx.take_marks();
        if !marks.is_empty() {
            self.marks.insert(c, marks);
        }
        if self.keep_cnp {
            if self.cnp.is_empty() {
                self.cnp = vec![Notifier::default(); self.tx_slot.len()];
            }
            self.cnp[c as usize] = rx.cnp;
        }
        self.count_late(c, |s| s.add(&stats));
    }

    /// Connection `c`'s sender has everything acknowledged (its receiver had everything
    /// before): keep its row, drop its state.
    pub fn finish_sender(&mut self, c: u32) {
        let half = self.senders.remove(std::mem::replace(&mut self.tx_slot[c as usize], NONE) as usize);
        self.rows[c as usize].first_send = half.tx.first_send.unwrap_or(NEVER);
        self.count_late(c, |s| s.add(&half.stats));
    }

    /// Connection `c`'s results so far.
    pub fn row(&self, c: u32) -> ConnRow {
        let r = &self.rows[c as usize];
        let mut row = ConnRow {
            n_pkts: self.factory.packets(r.bytes),
            max_reorder: r.max_reorder,
            first_send: r.first_send,
            end: r.end,
            delivered_bytes: if r.flags & RX_DONE != 0 { r.bytes } else { 0 },
            stats: if r.flags & WIDE != 0 { self.wide[&c].clone() } else { Stored::widen(&r.counts) },
        };
        if let Some(tx) = self.senders.get(self.tx_slot[c as usize] as usize) {
            row.first_send = tx.tx.first_send.unwrap_or(NEVER);
            row.stats.add(&tx.stats);
        }
        if let Some(rx) = self.receivers.get(self.rx_slot[c as usize] as usize) {
            (row.max_reorder, row.end, row.delivered_bytes) = (rx.rx.max_reorder, rx.rx.end.unwrap_or(NEVER), rx.rx.delivered_bytes);
            row.stats.add(&rx.stats);
        }
        row
    }

    /// Adds connection `c`'s reorder histogram to `hist`.
    pub fn add_reorder(&self, c: u32, hist: &mut [u64; REORDER_BUCKETS]) {
        match self.receivers.get(self.rx_slot[c as usize] as usize) {
            Some(half) => {
                for (h, n) in hist.iter_mut().zip(&half.rx.reorder_hist) {
                    *h += n;
                }
            }
            None => {
                let r = &self.rows[c as usize];
                let at = r.reorder_at as usize;
                for &e in &self.reorder[at..at + r.reorder_len as usize] {
                    hist[(e >> 56) as usize] += e & ((1 << 56) - 1);
                }
            }
        }
    }

    /// The EV every packet of connection `c` gets, for load balancers that use one (its
    /// load balancer rebuilt from the message's stream if it is not live); `first` is the
    /// message's first connection.
    pub fn fixed_ev(&self, c: u32, first: u32, spec: &MessageSpec) -> Option<Ev> {
        if let Some(half) = self.senders.get(self.tx_slot[c as usize] as usize) {
            return half.tx.lb.fixed_ev();
        }
        let m = self.conn_msg[c as usize];
        let lbs = self.factory.load_balancers(spec, &mut self.seeds[m as usize].clone());
        lbs.get((c - first) as usize)?.fixed_ev()
    }

    /// The load-balancer state of message `m`'s connections, in bytes (a fresh build: the
    /// state's size is fixed at construction).
    pub fn lb_state_bytes(&self, m: u32, spec: &MessageSpec) -> u64 {
        let lbs = self.factory.load_balancers(spec, &mut self.seeds[m as usize].clone());
        lbs.iter().map(|lb| lb.state_bytes() as u64).sum()
    }

    /// The most connections live at once so far.
    pub fn peak_live(&self) -> usize {
        self.peak_live
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;
    use crate::scenario::Scenario;
    use crate::sim::Simulation;

    /// An empty table of a small fabric's connections, and the payload of a full packet.
    fn table() -> (ConnTable, u64) {
        let json = r#"{"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}}"#;
        let model = Scenario::from_json(json).expect("valid").resolve().expect("resolves");
        (ConnTable::new(Simulation::factory(&model), false), model.transport.mtu - model.transport.header)
    }

    #[test]
    fn a_stored_row_keeps_counts_beyond_four_bytes_exactly() {
        let (mut t, payload) = table();
        let ids = t.add(0, &MessageSpec::new(0, 1, 10 * payload + 1, 0, 0), &mut Rng::stream(1, Stream::Host, 0));
        let c = ids.start;
        let pending = t.row(c);
        assert_eq!((pending.n_pkts, pending.delivered_bytes, pending.first_send()), (11, 0, None));
        let big = u64::from(u32::MAX) + 5;
        t.count_late(c, |s| s.cnps += 1);
        t.count_late(c, |s| s.data_packets = big);
        t.count_late(c, |s| s.cnps += 1); // once wide, it stays exact
        let r = t.row(c);
        assert_eq!((r.stats.data_packets, r.stats.cnps, r.stats.retransmits), (big, 2, 0));
        assert_eq!(Stored::narrow(&r.stats), None);
        let small = ConnStats { retransmits: 7, ..ConnStats::default() };
        assert_eq!(Stored::narrow(&small).map(|n| Stored::widen(&n).retransmits), Some(7));
    }

    #[test]
    fn each_half_lives_only_while_it_works_and_leaves_its_counts_in_the_row() {
        let (mut t, payload) = table();
        let spec = MessageSpec::new(0, 1, 3 * payload, 0, 0);
        let c = t.add(0, &spec, &mut Rng::stream(1, Stream::Host, 0)).start;
        t.start(c..c + 1, &spec);
        assert_eq!((t.senders.len(), t.receivers.len()), (1, 0), "the receiver exists from its first packet on");
        t.sender_live(c).stats.data_packets = 3;
        for psn in 0..3 {
            let half = t.receiver(c, &spec).expect("not complete yet");
            let completed = crate::host::TransportKind::Ooo.on_data(&mut half.rx, 10 + psn as Time, psn, payload, false).completed;
            if psn == 1 {
                half.stats.cnps = 2;
            }
            assert_eq!(completed, psn == 2);
        }
        assert_eq!(t.row(c).stats.cnps, 2, "a live half's counts show in the row");
        t.finish_receiver(c);
        assert!(t.receiver(c, &spec).is_none(), "a complete receiver is not rebuilt by a late packet");
        assert_eq!(t.receivers.len(), 0);
        let r = t.row(c);
        assert_eq!((r.delivered_bytes, r.end(), r.stats.cnps, r.stats.data_packets), (3 * payload, Some(12), 2, 3));
        t.finish_sender(c);
        assert_eq!(t.senders.len(), 0);
        let r = t.row(c);
        assert_eq!((r.stats.cnps, r.stats.data_packets, r.n_pkts), (2, 3, 3), "both halves' counts, once each");
        assert_eq!(t.peak_live(), 1);
    }
}
