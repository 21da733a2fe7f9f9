//! The connections of every host, held only while they are under way.
//!
//! A connection id names one connection for the whole run (packets and timers carry it), but
//! its state lives in three forms: *pending* until its message starts (a results row of
//! zeros), *live* while it sends and receives (the full [`Connection`], in a slab whose slots
//! are reused), and *done* once its sender has everything acknowledged (which implies its
//! receiver has everything): the per-packet state is dropped and a 64-byte stored row keeps what
//! the results report and the little that a late packet still reads ([`ConnRow`] is that row
//! read back, or the live state's). Memory follows the
//! connections under way, not the workload's size: a 2.1 M-message ring allreduce has about
//! 2 000 live at once.
//!
//! A done connection still meets packets that were in flight: duplicates of data it already
//! has (a spurious retransmission), trimmed headers, ACKs and NACKs. The NIC answers them from
//! the row exactly as the full state would have ([`super::nic`]), so results do not depend on
//! when the state was dropped.

use crate::engine::rng::Rng;
use crate::host::cc::dcqcn::Notifier;
use crate::host::connection::{ConnStats, Connection, REORDER_BUCKETS};
use crate::host::factory::ConnFactory;
use crate::lb::LoadBalancer;
use crate::packet::Ev;
use crate::time::Time;
use crate::workload::MessageSpec;

/// No slot: the connection has not started or is done.
const NONE: u32 = u32::MAX;

/// A connection's results so far (built when read, from its live state or its stored row).
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
    /// The row of a connection's current state.
    fn of(c: &Connection) -> ConnRow {
        ConnRow {
            n_pkts: c.n_pkts,
            max_reorder: c.rx.max_reorder,
            first_send: c.tx.first_send.unwrap_or(NEVER),
            end: c.rx.end.unwrap_or(NEVER),
            delivered_bytes: c.rx.delivered_bytes,
            stats: c.stats.clone(),
        }
    }

    pub fn first_send(&self) -> Option<Time> {
        (self.first_send != NEVER).then_some(self.first_send)
    }

    pub fn end(&self) -> Option<Time> {
        (self.end != NEVER).then_some(self.end)
    }
}

/// What the table keeps of a connection that is not live (64 bytes: a run keeps one per
/// connection): zeros until it starts; once done, its results and the little a late packet
/// still reads. Its counters take 4 bytes each; a connection whose counts outgrow them keeps
/// them in the table's `wide` map instead (exact, never clipped).
#[derive(Debug, Clone)]
struct Stored {
    first_send: Time,
    end: Time,
    /// Payload bytes the connection carries: all of them were delivered once it is done.
    bytes: u64,
    /// discarded, fast_nacks, data_packets, retransmits, ecn_acks, timeouts, cnps.
    counts: [u32; 7],
    max_reorder: u32,
    /// Where its reorder histogram lies in the table's store once it is done.
    reorder_at: u32,
    reorder_len: u8,
    flags: u8,
}

/// Bytes the table keeps per connection for the whole run (for the memory estimate).
pub const STORED_ROW_BYTES: u64 = std::mem::size_of::<Stored>() as u64;

/// `Stored::flags`: the sender has everything acknowledged and the state is gone ...
const DONE: u8 = 1;
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

/// Every connection of the run, by id.
pub struct ConnTable {
    factory: ConnFactory,
    /// The live connections; `slot[id]` is an index into it (or [`NONE`]).
    live: Vec<Connection>,
    free: Vec<u32>,
    slot: Vec<u32>,
    rows: Vec<Stored>,
    /// Counters of the done connections whose counts outgrew 4 bytes.
    wide: std::collections::HashMap<u32, ConnStats>,
    /// The message of each connection, and its source host's stream as the message's load
    /// balancers will draw from it (one per message).
    conn_msg: Vec<u32>,
    seeds: Vec<Rng>,
    /// Reorder histograms of done connections, sparse: distance << 56 | arrivals.
    reorder: Vec<u64>,
    /// With DCQCN, the notification point of each done connection (a late marked duplicate
    /// may still trigger a CNP); empty otherwise.
    cnp: Vec<Notifier>,
    keep_cnp: bool,
    /// The most connections live at once.
    peak_live: usize,
}

impl ConnTable {
    /// `keep_cnp`: connections send CNPs (DCQCN), whose notification point outlives them.
    pub fn new(factory: ConnFactory, keep_cnp: bool) -> ConnTable {
        ConnTable {
            cnp: Vec::new(),
            keep_cnp,
            factory,
            live: Vec::new(),
            free: Vec::new(),
            slot: Vec::new(),
            rows: Vec::new(),
            wide: std::collections::HashMap::new(),
            conn_msg: Vec::new(),
            seeds: Vec::new(),
            reorder: Vec::new(),
            peak_live: 0,
        }
    }

    /// Adds the connections of message `m` (the next one), whose load balancers draw from
    /// `rng` (its source host's stream, advanced past them now); returns their ids.
    pub fn add(&mut self, m: u32, spec: &MessageSpec, rng: &mut Rng) -> std::ops::Range<u32> {
        debug_assert_eq!(m as usize, self.seeds.len());
        self.seeds.push(rng.clone());
        self.factory.draw(spec, rng);
        let first = self.slot.len() as u32;
        for bytes in self.factory.shares(spec.bytes) {
            self.rows.push(Stored::pending(bytes));
            self.slot.push(NONE);
            self.conn_msg.push(m);
        }
        first..self.slot.len() as u32
    }

    /// See [`ConnFactory::notify_latency`].
    pub fn notify_latency(&self, from: u32, to: u32) -> Time {
        self.factory.notify_latency(from, to)
    }

    /// Connections in the run.
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// The message connection `c` carries (part of).
    #[inline]
    pub fn message_of(&self, c: u32) -> u32 {
        self.conn_msg[c as usize]
    }

    /// Builds the connections `ids` of `spec`'s message unless they are live already (the
    /// first of them to start builds them all: subflows draw in order).
    pub fn start(&mut self, ids: std::ops::Range<u32>, spec: &MessageSpec) {
        if self.slot[ids.start as usize] != NONE {
            return;
        }
        let mut rng = self.seeds[self.conn_msg[ids.start as usize] as usize].clone();
        for (c, conn) in ids.zip(self.factory.build(spec, &mut rng)) {
            let s = match self.free.pop() {
                Some(s) => {
                    self.live[s as usize] = conn;
                    s
                }
                None => {
                    self.live.push(conn);
                    self.live.len() as u32 - 1
                }
            };
            self.slot[c as usize] = s;
        }
        self.peak_live = self.peak_live.max(self.live.len() - self.free.len());
    }

    /// The live connection `c` (panics if it is not live: a bug).
    #[inline]
    pub fn live_mut(&mut self, c: u32) -> &mut Connection {
        &mut self.live[self.slot[c as usize] as usize]
    }

    /// The live connection `c`, if it is.
    #[inline]
    pub fn get_mut(&mut self, c: u32) -> Option<&mut Connection> {
        let s = self.slot[c as usize];
        self.live.get_mut(s as usize)
    }

    /// With DCQCN, the notification point of connection `c`, which is not live.
    #[inline]
    pub fn notifier_mut(&mut self, c: u32) -> Option<&mut Notifier> {
        self.cnp.get_mut(c as usize)
    }

    /// Packets of connection `c`, which is not live.
    pub fn stored_packets(&self, c: u32) -> u32 {
        self.factory.packets(self.rows[c as usize].bytes)
    }

    /// Whether Go-back-N NAKed the end of done connection `c`'s message; marks it so.
    pub fn nak_end_once(&mut self, c: u32) -> bool {
        let r = &mut self.rows[c as usize];
        let first = r.flags & NAKED_END == 0;
        r.flags |= NAKED_END;
        first
    }

    /// Counts what a packet for done connection `c` caused (`f` updates its counters).
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

    /// Connection `c`'s sender has everything acknowledged: keep its row, drop its state.
    pub fn finish(&mut self, c: u32) {
        let s = std::mem::replace(&mut self.slot[c as usize], NONE);
        let conn = &self.live[s as usize];
        debug_assert!(conn.rx.end.is_some(), "a sender is done only once its receiver is");
        debug_assert_eq!(conn.rx.delivered_bytes, conn.spec.bytes, "a done connection delivered all it carries");
        let from = self.reorder.len();
        for (d, &n) in conn.rx.reorder_hist.iter().enumerate().filter(|(_, &n)| n > 0) {
            debug_assert!(n < 1 << 56, "arrivals fit 56 bits (2^56 packets)");
            self.reorder.push((d as u64) << 56 | n);
        }
        let len = (self.reorder.len() - from) as u8; // at most REORDER_BUCKETS
        let r = ConnRow::of(conn);
        self.rows[c as usize] = Stored {
            first_send: r.first_send,
            end: r.end,
            bytes: conn.spec.bytes,
            counts: [0; 7],
            max_reorder: r.max_reorder,
            reorder_at: from as u32,
            reorder_len: len,
            flags: DONE | if conn.rx.nak_for == Some(conn.n_pkts) { NAKED_END } else { 0 },
        };
        self.keep_counts(c, &r.stats);
        if self.keep_cnp {
            if self.cnp.is_empty() {
                self.cnp = vec![Notifier::default(); self.slot.len()];
            }
            self.cnp[c as usize] = self.live[s as usize].rx.cnp;
        }
        self.free.push(s);
        // the slot's memory is reused by the next connection to start
    }

    /// Connection `c`'s results so far.
    pub fn row(&self, c: u32) -> ConnRow {
        if let Some(conn) = self.live.get(self.slot[c as usize] as usize) {
            return ConnRow::of(conn);
        }
        let r = &self.rows[c as usize];
        let done = r.flags & DONE != 0;
        ConnRow {
            n_pkts: self.factory.packets(r.bytes),
            max_reorder: r.max_reorder,
            first_send: r.first_send,
            end: r.end,
            delivered_bytes: if done { r.bytes } else { 0 },
            stats: if r.flags & WIDE != 0 { self.wide[&c].clone() } else { Stored::widen(&r.counts) },
        }
    }

    /// Adds connection `c`'s reorder histogram to `hist`.
    pub fn add_reorder(&self, c: u32, hist: &mut [u64; REORDER_BUCKETS]) {
        match self.live.get(self.slot[c as usize] as usize) {
            Some(conn) => {
                for (h, n) in hist.iter_mut().zip(&conn.rx.reorder_hist) {
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
        if let Some(conn) = self.live.get(self.slot[c as usize] as usize) {
            return conn.tx.lb.fixed_ev();
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

    #[test]
    fn a_stored_row_keeps_counts_beyond_four_bytes_exactly() {
        let json = r#"{"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}}"#;
        let model = Scenario::from_json(json).expect("valid").resolve().expect("resolves");
        let payload = model.transport.mtu - model.transport.header;
        let mut t = ConnTable::new(Simulation::factory(&model), false);
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
}
