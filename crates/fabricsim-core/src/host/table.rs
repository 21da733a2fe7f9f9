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
//! In a run cut into pieces, each piece holds the halves and rows of the connections one of
//! whose ends is its host, indexed apart ([`Side`]); what no piece changes (which message a
//! connection carries, the streams its load balancers draw from) is one [`ConnCatalog`] that
//! they share. Memory grows with the connections, not with the pieces.
//!
//! A half that is gone still meets packets that were in flight: duplicates of data the
//! receiver has (a spurious retransmission), trimmed headers, ACKs and NACKs. The NIC answers
//! them from the row exactly as the half would have ([`super::nic`]), so results do not
//! depend on when the state was dropped.

use std::collections::HashMap;

use slab::Slab;

pub use crate::host::catalog::{ConnCatalog, End, Layout, Side};
use crate::host::cc::dcqcn::Notifier;
use crate::host::connection::{ConnStats, RecvHalf, SendHalf};
use crate::host::factory::ConnFactory;
use crate::host::receiver::complete_ack_fields;
use crate::lb::LoadBalancer;
use crate::packet::Ev;
use crate::time::Time;
use crate::workload::MessageSpec;
use pairs::Pairs;

mod grow;
mod pairs;
mod read;

/// No slot: the half does not exist (not started, or done).
const NONE: u32 = u32::MAX;

/// A connection's results so far (built when read, from its stored row and live halves).
#[derive(Debug, Clone)]
pub struct ConnRow {
    pub n_pkts: u32,
    pub max_reorder: u32,
    pub(crate) first_send: Time,
    /// When the receiver had every packet.
    pub(crate) end: Time,
    pub delivered_bytes: u64,
    pub stats: ConnStats,
}

/// No time yet (`first_send`, `end`).
const NEVER: Time = Time::MAX;

impl ConnRow {
    /// Adds the other part of the connection's row (held by another piece: its other end's).
    pub fn merge(&mut self, o: &ConnRow) {
        (self.first_send, self.end) = (self.first_send.min(o.first_send), self.end.min(o.end));
        self.n_pkts = self.n_pkts.max(o.n_pkts);
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

/// What the table keeps of a connection (48 bytes: a run keeps one per connection): zeros
/// until it starts; what each half left once it is done (its results, the counts of the late
/// packets it met, and the little a late packet still reads). Its counters take 2 bytes each
/// (a connection of up to 65 535 packets, 256 MiB at a 4 KiB MTU, counts within them); a
/// connection whose counts outgrow them keeps them in the table's `wide` map instead (exact,
/// never clipped; [`WIDE_ROW_BYTES`] more).
#[derive(Debug, Clone)]
struct Stored {
    first_send: Time,
    end: Time,
    /// Payload bytes the connection carries: all of them were delivered once the receiver is done.
    bytes: u64,
    /// discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps.
    counts: [u16; 7],
    max_reorder: u32,
    /// Where its reorder histogram lies in the table's store once the receiver is done.
    reorder_at: u32,
    reorder_len: u8,
    flags: u8,
}

/// Bytes the table keeps per connection for the whole run (for the memory estimate).
pub const STORED_ROW_BYTES: u64 = std::mem::size_of::<Stored>() as u64;

/// Bytes a connection whose counts outgrew its row keeps in the `wide` map, beside its row
/// (its counters, its key and the map's share of slack).
pub const WIDE_ROW_BYTES: u64 = std::mem::size_of::<ConnStats>() as u64 + 4 + 20;

/// The most packets a connection's counts fit its stored row for (2 bytes a counter).
pub const NARROW_PACKETS: u64 = u16::MAX as u64;

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

    /// The counters in 2 bytes each, if they fit.
    fn narrow(s: &ConnStats) -> Option<[u16; 7]> {
        let all = [s.discarded, s.fast_nacks, s.data_packets, s.retransmits, s.ecn_acks, s.timeouts, s.cnps];
        let mut out = [0u16; 7];
        for (o, v) in out.iter_mut().zip(all) {
            *o = u16::try_from(v).ok()?;
        }
        Some(out)
    }

    fn widen(c: &[u16; 7]) -> ConnStats {
        let [discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps] = c.map(u64::from);
        ConnStats { discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps }
    }
}

/// The connections of a piece of the run (all of them, in one piece), by id: the sending
/// halves its source hosts keep while they send, the receiving halves its destination hosts
/// keep while they receive, and the stored rows.
pub struct ConnTable {
    factory: ConnFactory,
    catalog: ConnCatalog,
    /// The piece this table belongs to.
    me: u16,
    /// The live sending halves; `tx_slot[at]` is an index into it (or [`NONE`]), `at` the
    /// connection's index here ([`ConnTable::at`]) ...
    senders: Slab<SendHalf>,
    tx_slot: Vec<u32>,
    /// ... and the receiving halves, `rx_slot[at]`.
    receivers: Slab<RecvHalf>,
    rx_slot: Vec<u32>,
    rows: Vec<Stored>,
    /// Counters of the done connections whose counts outgrew 2 bytes, by row.
    wide: HashMap<u32, ConnStats>,
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
    /// Long-lived connections: the state each pair of hosts keeps between its messages.
    pairs: Pairs,
    /// What the process that ran this piece told the one that reads the results (a run across
    /// ranks, `sim::ranks`), read instead of the rows above.
    told: Option<Box<Told>>,
}

/// A piece's connections as the process that ran them tells another: each row this table
/// holds (by its index here), with its reorder histogram's buckets that are not empty
/// (`distance << 56 | arrivals`), and the most connections live at once.
#[derive(Debug, Clone, Default)]
pub struct Told {
    pub rows: Vec<ConnRow>,
    pub reorder: Vec<Vec<u64>>,
    pub peak_live: usize,
}

impl ConnTable {
    /// Piece `me`'s table of the connections of `catalog`, whose stored rows start as `bytes`
    /// gives (what each connection carries, in the order [`ConnCatalog::build`] gave them);
    /// `keep_cnp`: connections send CNPs (DCQCN), whose notification point outlives them.
    pub fn new(factory: ConnFactory, keep_cnp: bool, catalog: ConnCatalog, me: u16, bytes: &[u64]) -> ConnTable {
        let per_pair = factory.transport().per_pair;
        ConnTable {
            cnp: Vec::new(),
            keep_cnp,
            factory,
            catalog,
            me,
            senders: Slab::new(),
            tx_slot: vec![NONE; bytes.len()],
            receivers: Slab::new(),
            rx_slot: vec![NONE; bytes.len()],
            rows: bytes.iter().map(|&b| Stored::pending(b)).collect(),
            wide: HashMap::new(),
            reorder: Vec::new(),
            marks: HashMap::new(),
            peak_live: 0,
            pairs: Pairs::new(per_pair),
            told: None,
        }
    }

    /// Connection `c`'s index in this table, for its `end` (which this piece must hold).
    #[inline]
    fn at(&self, c: u32, end: End) -> usize {
        match self.catalog.sides.get(c as usize) {
            Some(side) => side.at[end as usize] as usize,
            None => c as usize,
        }
    }

    /// Where message `m`'s counts lie for its `end` (which this piece must hold): an index
    /// into this piece's `MsgState`s.
    #[inline]
    pub fn msg_at(&self, m: usize, end: End) -> usize {
        match self.catalog.msg_sides.get(m) {
            Some(side) => side.at[end as usize] as usize,
            None => m,
        }
    }

    /// Where message `m`'s counts lie in a run of several pieces (`None` in one piece: at
    /// index `m`).
    pub fn message_side(&self, m: usize) -> Option<Side> {
        self.catalog.msg_sides.get(m).copied()
    }

    /// Connection `c`'s index in this table if this piece holds an end of it.
    fn held(&self, c: u32) -> Option<usize> {
        match self.catalog.sides.get(c as usize) {
            None => Some(c as usize),
            Some(side) => side.piece.iter().position(|&p| p == self.me).map(|end| side.at[end] as usize),
        }
    }

    /// Frees every connection's state and row (the table is empty afterwards; see
    /// `Nics::free_connections`).
    pub fn free_all(&mut self) {
        *self = self.emptied();
    }

    /// A table of no connection, for the same run and piece.
    pub fn emptied(&self) -> ConnTable {
        ConnTable::new(self.factory.clone(), self.keep_cnp, ConnCatalog::default(), self.me, &[])
    }

    /// See [`ConnFactory::notify_latency`].
    pub fn notify_latency(&self, from: u32, to: u32) -> Time {
        self.factory.notify_latency(from, to)
    }

    /// Connections in the run.
    pub fn len(&self) -> usize {
        self.catalog.conn_msg.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The message connection `c` carries (part of).
    #[inline]
    pub fn message_of(&self, c: u32) -> u32 {
        self.catalog.conn_msg[c as usize]
    }

    /// Builds the sending halves of connections `ids` of `spec`'s message unless they are
    /// live already (the first of them to start builds them all: subflows draw in order).
    /// False when the message waits for its pair (`per_pair`, `table/pairs.rs`): it is handed back
    /// when the pair's message before it is done ([`ConnTable::finish_sender`]).
    pub fn start(&mut self, ids: std::ops::Range<u32>, spec: &MessageSpec) -> bool {
        if self.tx_slot[self.at(ids.start, End::Tx)] != NONE {
            return true;
        }
        if !self.pairs.claim(spec, ids.start) {
            return false;
        }
        let mut rng = self.factory.stream(self.message_of(ids.start));
        let mut shared = false;
        for (c, mut half) in ids.zip(self.factory.senders(spec, &mut rng)) {
            self.resume(spec, c, &mut half);
            shared |= half.tx.shared;
            let at = self.at(c, End::Tx);
            self.tx_slot[at] = self.senders.insert(half) as u32;
        }
        if shared {
            self.share_window(spec);
        }
        self.peak_live = self.peak_live.max(self.senders.len());
        true
    }

    /// The live sending half of `c` (panics if it is not live: a bug).
    #[inline]
    pub fn sender_live(&mut self, c: u32) -> &mut SendHalf {
        let at = self.at(c, End::Tx);
        &mut self.senders[self.tx_slot[at] as usize]
    }

    /// The sending half of `c`, if it is live.
    #[inline]
    pub fn sender(&mut self, c: u32) -> Option<&mut SendHalf> {
        let at = self.at(c, End::Tx);
        self.senders.get_mut(self.tx_slot[at] as usize)
    }

    /// The receiving half of `c` (of `spec`'s message), built by the first packet that
    /// reaches it; `None` once the receiver has everything (its row answers then).
    #[inline]
    pub fn receiver(&mut self, c: u32, spec: &MessageSpec) -> Option<&mut RecvHalf> {
        let at = self.at(c, End::Rx);
        let mut s = self.rx_slot[at];
        if s == NONE {
            if self.rows[at].flags & RX_DONE != 0 {
                return None;
            }
            s = self.build_receiver(at, spec);
        }
        Some(&mut self.receivers[s as usize])
    }

    /// Builds the receiving half at `at`; returns its slot.
    #[cold]
    fn build_receiver(&mut self, at: usize, spec: &MessageSpec) -> u32 {
        let s = self.receivers.insert(self.factory.receiver(spec, self.rows[at].bytes)) as u32;
        self.rx_slot[at] = s;
        s
    }

    /// The live receiving half of `c` (panics if it is not live: a bug).
    #[inline]
    pub fn receiver_live(&mut self, c: u32) -> &mut RecvHalf {
        let at = self.at(c, End::Rx);
        &mut self.receivers[self.rx_slot[at] as usize]
    }

    /// With DCQCN, the notification point of connection `c`, whose receiver has everything.
    #[inline]
    pub fn notifier_mut(&mut self, c: u32) -> Option<&mut Notifier> {
        let at = self.at(c, End::Rx);
        self.cnp.get_mut(at)
    }

    /// Packets of connection `c` (this piece holds its receiving end).
    pub fn stored_packets(&self, c: u32) -> u32 {
        self.factory.packets(self.rows[self.at(c, End::Rx)].bytes)
    }

    /// What an ACK of complete receiver `c` triggered by `psn` carries (see
    /// the receiver's `complete_ack_fields`).
    pub fn complete_ack(&self, c: u32, psn: u32, cumulative_only: bool, all_evs: bool) -> (u32, u64) {
        let marks = self.marks.get(&c).map_or(&[][..], Vec::as_slice);
        complete_ack_fields(self.stored_packets(c), psn, cumulative_only, all_evs, marks)
    }

    /// Whether Go-back-N NAKed the end of complete receiver `c`'s message; marks it so.
    pub fn nak_end_once(&mut self, c: u32) -> bool {
        let at = self.at(c, End::Rx);
        let r = &mut self.rows[at];
        let first = r.flags & NAKED_END == 0;
        r.flags |= NAKED_END;
        first
    }

    /// Counts what a packet for a connection whose half at `end` is gone caused (`f` updates
    /// the stored counters of `c`).
    pub fn count_late(&mut self, c: u32, end: End, f: impl FnOnce(&mut ConnStats)) {
        let at = self.at(c, end);
        let r = &mut self.rows[at];
        if r.flags & WIDE != 0 {
            f(self.wide.entry(at as u32).or_default());
            return;
        }
        let mut stats = Stored::widen(&r.counts);
        f(&mut stats);
        self.keep_counts(at, &stats);
    }

    /// Stores the counters of the row at `at`, in the row if they fit.
    fn keep_counts(&mut self, at: usize, stats: &ConnStats) {
        let r = &mut self.rows[at];
        match Stored::narrow(stats) {
            Some(counts) => r.counts = counts,
            None => {
                r.flags |= WIDE;
                self.wide.insert(at as u32, stats.clone());
            }
        }
    }

    /// Connection `c`'s receiver has every packet: keep what the results and late packets
    /// read in its row, drop its state.
    pub fn finish_receiver(&mut self, c: u32) {
        let at = self.at(c, End::Rx);
        let s = std::mem::replace(&mut self.rx_slot[at], NONE);
        let RecvHalf { mut rx, stats, .. } = self.receivers.remove(s as usize);
        debug_assert_eq!(rx.delivered_bytes, self.rows[at].bytes, "a complete receiver has all its connection carries");
        let from = self.reorder.len();
        for (d, &n) in rx.reorder_hist.iter().enumerate().filter(|(_, &n)| n > 0) {
            debug_assert!(n < 1 << 56, "arrivals fit 56 bits (2^56 packets)");
            self.reorder.push((d as u64) << 56 | n);
        }
        let r = &mut self.rows[at];
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
                self.cnp = vec![Notifier::default(); self.rows.len()];
            }
            self.cnp[at] = rx.cnp;
        }
        self.count_late(c, End::Rx, |s| s.add(&stats));
    }

    /// Connection `c`'s sender has everything acknowledged (its receiver had everything
    /// before): keep its row, drop its state (or, `per_pair`, leave it to its pair). Returns
    /// the connection that waited for the pair, which may start now.
    pub fn finish_sender(&mut self, c: u32) -> Option<u32> {
        let at = self.at(c, End::Tx);
        let half = self.senders.remove(std::mem::replace(&mut self.tx_slot[at], NONE) as usize);
        self.rows[at].first_send = half.tx.first_send.unwrap_or(NEVER);
        self.count_late(c, End::Tx, |s| s.add(&half.stats));
        self.pair_done(&half, c)
    }

    /// The EV every packet of connection `c` gets, for load balancers that use one (its
    /// load balancer rebuilt from the message's stream if it is not live here: under
    /// `per_pair`, from the stream of its pair's first message, whose load balancer the pair
    /// kept); `first` is the message's first connection.
    pub fn fixed_ev(&self, c: u32, first: u32, spec: &MessageSpec) -> Option<Ev> {
        if let Some(at) = self.held(c) {
            if let Some(half) = self.senders.get(self.tx_slot[at] as usize) {
                return half.tx.lb.fixed_ev();
            }
        }
        let flow = self.pairs.flow(spec, c);
        let (m, c, first) = if flow == c { (self.message_of(c), c, first) } else { (self.message_of(flow), flow, flow) };
        let lbs = self.factory.load_balancers(spec, &mut self.factory.stream(m));
        lbs.get((c - first) as usize)?.fixed_ev()
    }

    /// The queue pair connection `c` of `spec`'s message travels on (`Packet::flow`).
    pub fn flow_of(&self, c: u32, spec: &MessageSpec) -> u32 {
        self.pairs.flow(spec, c)
    }

    /// The load-balancer state of message `m`'s connections, in bytes (a fresh build: the
    /// state's size is fixed at construction).
    pub fn lb_state_bytes(&self, m: u32, spec: &MessageSpec) -> u64 {
        let lbs = self.factory.load_balancers(spec, &mut self.factory.stream(m));
        lbs.iter().map(|lb| lb.state_bytes() as u64).sum()
    }

    /// The most connections live at once so far.
    pub fn peak_live(&self) -> usize {
        self.told.as_ref().map_or(self.peak_live, |t| t.peak_live)
    }
}

#[cfg(test)]
mod tests;
