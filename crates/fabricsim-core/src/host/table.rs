//! The connections of every host, held only while they are under way.
//!
//! A connection id names one connection for the whole run (packets and timers carry it), but
//! its state lives in three forms: *pending* until its message starts (a results row of
//! zeros), *live* while it sends and receives (the full [`Connection`], in a slab whose slots
//! are reused), and *done* once its sender has everything acknowledged (which implies its
//! receiver has everything): the per-packet state is dropped and a [`ConnRow`] keeps what the
//! results report and the little that a late packet still reads. Memory follows the
//! connections under way, not the workload's size: a 2.1 M-message ring allreduce has about
//! 2 000 live at once.
//!
//! A done connection still meets packets that were in flight: duplicates of data it already
//! has (a spurious retransmission), trimmed headers, ACKs and NACKs. The NIC answers them from
//! the row exactly as the full state would have ([`super::nic`]), so results do not depend on
//! when the state was dropped.

use std::borrow::Cow;

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

/// A connection's results, and what a done connection still answers late packets with (96
/// bytes: a run keeps one per connection).
#[derive(Debug, Clone)]
pub struct ConnRow {
    pub n_pkts: u32,
    pub max_reorder: u32,
    first_send: Time,
    /// When the receiver had every packet.
    end: Time,
    pub delivered_bytes: u64,
    pub stats: ConnStats,
    /// Where its reorder histogram lies in the table's store once it is done.
    reorder_at: u32,
    reorder_len: u8,
    /// The sender has everything acknowledged and the state is gone.
    pub done: bool,
    /// Go-back-N NAKed the end of the message (a trimmed late header is NAKed once).
    pub naked_end: bool,
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
            reorder_at: 0,
            reorder_len: 0,
            done: false,
            naked_end: c.rx.nak_for == Some(c.n_pkts),
        }
    }

    /// A connection of `n_pkts` packets that has not started.
    fn pending(n_pkts: u32) -> ConnRow {
        ConnRow {
            n_pkts,
            max_reorder: 0,
            first_send: NEVER,
            end: NEVER,
            delivered_bytes: 0,
            stats: ConnStats::default(),
            reorder_at: 0,
            reorder_len: 0,
            done: false,
            naked_end: false,
        }
    }

    pub fn first_send(&self) -> Option<Time> {
        (self.first_send != NEVER).then_some(self.first_send)
    }

    pub fn end(&self) -> Option<Time> {
        (self.end != NEVER).then_some(self.end)
    }
}

/// Every connection of the run, by id.
pub struct ConnTable {
    factory: ConnFactory,
    /// The live connections; `slot[id]` is an index into it (or [`NONE`]).
    live: Vec<Connection>,
    free: Vec<u32>,
    slot: Vec<u32>,
    rows: Vec<ConnRow>,
    /// The message of each connection, and its source host's stream as the message's load
    /// balancers will draw from it (one per message).
    conn_msg: Vec<u32>,
    seeds: Vec<Rng>,
    /// Reorder histograms of done connections, sparse: (distance, arrivals).
    reorder: Vec<(u32, u64)>,
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
            self.rows.push(ConnRow::pending(self.factory.packets(bytes)));
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

    /// The stored row of a connection that is not live (done, or not started), and with
    /// DCQCN its notification point.
    #[inline]
    pub fn row_mut(&mut self, c: u32) -> (&mut ConnRow, Option<&mut Notifier>) {
        (&mut self.rows[c as usize], self.cnp.get_mut(c as usize))
    }

    /// Connection `c`'s sender has everything acknowledged: keep its row, drop its state.
    pub fn finish(&mut self, c: u32) {
        let s = std::mem::replace(&mut self.slot[c as usize], NONE);
        let conn = &self.live[s as usize];
        debug_assert!(conn.rx.end.is_some(), "a sender is done only once its receiver is");
        let from = self.reorder.len();
        for (d, &n) in conn.rx.reorder_hist.iter().enumerate().filter(|(_, &n)| n > 0) {
            self.reorder.push((d as u32, n));
        }
        let len = (self.reorder.len() - from) as u8; // at most REORDER_BUCKETS
        self.rows[c as usize] = ConnRow { done: true, reorder_at: from as u32, reorder_len: len, ..ConnRow::of(conn) };
        if self.keep_cnp {
            if self.cnp.is_empty() {
                self.cnp = vec![Notifier::default(); self.slot.len()];
            }
            self.cnp[c as usize] = conn.rx.cnp;
        }
        self.free.push(s);
        // the slot's memory is reused by the next connection to start
    }

    /// Connection `c`'s results so far.
    pub fn row(&self, c: u32) -> Cow<'_, ConnRow> {
        match self.live.get(self.slot[c as usize] as usize) {
            Some(conn) => Cow::Owned(ConnRow::of(conn)),
            None => Cow::Borrowed(&self.rows[c as usize]),
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
                for &(d, n) in &self.reorder[at..at + r.reorder_len as usize] {
                    hist[d as usize] += n;
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
