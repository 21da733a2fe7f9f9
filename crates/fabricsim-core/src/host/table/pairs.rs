//! Long-lived connections (`transport.connections = "per_pair"`): a host's messages to one
//! host, of one class, go one after another through one queue pair, as an RDMA NIC's do.
//!
//! NCCL's network transport connects each pair of peers once per channel, when the connection
//! is first needed, and sends every later operation of the communicator over those queue
//! pairs (NCCL's `src/transport/net_ib.cc`). Here the pair's state outlives its messages, and
//! its messages follow each other as work requests posted on one queue pair do:
//!
//! - a message released while the pair's message before it still has packets it never sent
//!   waits; once that message has sent its last new packet, the next one starts, with a copy
//!   of its congestion window, load balancer (ARCANE's cache, PRIME's penalties, ECMP's
//!   entropy) and RTO estimator as they are at that moment (the messages pipeline, as a queue
//!   pair sends its work requests back to back);
//! - one window covers the pair: what the earlier messages still have in flight counts against
//!   a later one's window (`Sender::debt`), until they are acknowledged;
//! - when the pair's latest message has everything acknowledged, its state waits in the pair
//!   for the next message (an earlier message's state, once a later one has started, is
//!   dropped: what it learns from its last ACKs does not reach the later one).
//!
//! What stays per message: its packets and PSNs (from 0), its receiver's state, its results
//! row. Owned by the source host: only its piece touches it.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::{ConnTable, End};
use crate::host::cc::Cwnd;
use crate::host::connection::SendHalf;
use crate::host::rto::RtoTimer;
use crate::lb::HostLb;
use crate::workload::MessageSpec;

/// What a pair keeps between its messages.
#[derive(Clone)]
pub struct Carried {
    pub window: Cwnd,
    pub lb: HostLb,
    pub rto: RtoTimer,
}

impl Carried {
    pub fn of(half: &SendHalf) -> Carried {
        Carried { window: half.tx.window.clone(), lb: half.tx.lb.clone(), rto: half.tx.rto.clone() }
    }
}

#[derive(Default)]
struct Pair {
    /// The message posting new packets, or the one it handed the pair to (which has not
    /// started yet): others wait.
    posting: Option<u32>,
    /// The queue pair's id: its first connection's.
    flow: u32,
    /// Started and not done, in start order.
    live: Vec<u32>,
    /// The most recently started connection.
    last: Option<u32>,
    /// Connections of messages released meanwhile, in release order.
    waiting: VecDeque<u32>,
    /// The last message's state once it is done.
    state: Option<Box<Carried>>,
}

/// Where a starting message's state comes from.
pub enum Source {
    /// Fresh: the pair's first message.
    Fresh,
    /// The pair's previous message, still live: a copy of its state now.
    Live(u32),
    /// The state the pair kept.
    Kept(Box<Carried>),
}

/// The pairs of a piece's source hosts (nothing with `per_message`).
#[derive(Default)]
pub struct Pairs {
    on: bool,
    /// Keyed by (source, destination, class, queue pair), hashed with FxHash: std's SipHash
    /// was half of what the pairs cost a ring allreduce (a lookup per message start, post and
    /// finish).
    map: FxHashMap<(u32, u32, u8, u16), Pair>,
}

fn key(spec: &MessageSpec) -> (u32, u32, u8, u16) {
    (spec.src, spec.dst, spec.class, spec.qp)
}

impl Pairs {
    pub fn new(on: bool) -> Pairs {
        Pairs { on, map: FxHashMap::default() }
    }

    pub fn on(&self) -> bool {
        self.on
    }

    /// Whether connection `c` of `spec`'s message may start now; if not, it waits for the
    /// pair (it is handed back by [`Pairs::posted`]).
    pub fn claim(&mut self, spec: &MessageSpec, c: u32) -> bool {
        if !self.on {
            return true;
        }
        let pair = self.map.entry(key(spec)).or_insert_with(|| Pair { flow: c, ..Pair::default() });
        match pair.posting {
            Some(x) if x != c => {
                pair.waiting.push_back(c);
                false
            }
            _ => {
                pair.posting = Some(c);
                true
            }
        }
    }

    /// The queue pair connection `c` of `spec`'s message travels (or travelled) on: its
    /// pair's first connection, or itself.
    pub fn flow(&self, spec: &MessageSpec, c: u32) -> u32 {
        self.map.get(&key(spec)).map_or(c, |p| p.flow)
    }

    /// Starting connection `c` of `spec`'s message: its queue pair's id and where its state
    /// comes from; it becomes the pair's latest.
    pub fn resume(&mut self, spec: &MessageSpec, c: u32) -> (u32, Source) {
        let Some(pair) = self.map.get_mut(&key(spec)) else { return (c, Source::Fresh) };
        let source = match (pair.last, pair.state.take()) {
            (Some(last), None) if pair.live.contains(&last) => Source::Live(last),
            (_, Some(kept)) => Source::Kept(kept),
            _ => Source::Fresh,
        };
        pair.live.push(c);
        pair.last = Some(c);
        (pair.flow, source)
    }

    /// Connection `c` of `spec`'s message has sent its last new packet (or is done): the
    /// pair's next message, which waited, may start now.
    pub fn posted(&mut self, spec: &MessageSpec, c: u32) -> Option<u32> {
        let pair = self.map.get_mut(&key(spec))?;
        if pair.posting != Some(c) {
            return None;
        }
        pair.posting = pair.waiting.pop_front();
        pair.posting
    }

    /// A sender is done: the pair keeps its state if no later message started.
    pub fn release(&mut self, half: &SendHalf, c: u32) {
        let Some(pair) = self.map.get_mut(&key(&half.spec)) else { return };
        pair.live.retain(|&x| x != c);
        if pair.last == Some(c) {
            pair.state = Some(Box::new(Carried::of(half)));
        }
    }

    /// The pair's live connections, earliest first.
    pub fn live(&self, spec: &MessageSpec) -> &[u32] {
        self.map.get(&key(spec)).map_or(&[], |p| &p.live)
    }
}

impl ConnTable {
    /// Gives starting sender `c` of `spec`'s message its queue pair and the state its pair
    /// passes on (`per_pair`; its own id and fresh state otherwise).
    pub(super) fn resume(&mut self, spec: &MessageSpec, c: u32, half: &mut SendHalf) {
        half.tx.flow = c;
        if !self.pairs.on() {
            return;
        }
        let (flow, source) = self.pairs.resume(spec, c);
        half.tx.flow = flow;
        // every message of the pair still live (`c` included now) shares one window: their
        // ACKs must re-share it from now on. Whenever two or more are live all of them share
        // (each was marked as it started beside another, or, the one alone, when the second
        // started), so only a second live message marks the one before it: a pair of many
        // live messages (a ring in tiny slices) no longer walks them all at each start
        let live = self.pairs.live(spec).len();
        if live > 1 {
            half.tx.shared = true;
            if live == 2 {
                let earlier = self.pairs.live(spec)[0];
                self.sender_live(earlier).tx.shared = true;
            }
        }
        let carried = match source {
            Source::Fresh => None,
            Source::Live(prev) => Some(Carried::of(self.sender_live(prev))),
            Source::Kept(kept) => Some(*kept),
        };
        if let Some(Carried { window, lb, rto }) = carried {
            (half.tx.window, half.tx.lb, half.tx.rto) = (window, lb, rto);
        }
    }

    /// `per_pair`: connection `c`'s sender `half` is done: the pair's next message, if one
    /// waited for it, may start now.
    pub(super) fn pair_done(&mut self, half: &SendHalf, c: u32) -> Option<u32> {
        if !self.pairs.on() {
            return None;
        }
        let next = self.pairs.posted(&half.spec, c);
        self.pairs.release(half, c);
        if half.tx.shared {
            self.share_window(&half.spec);
        }
        next
    }

    /// `per_pair`: connection `c` of `spec`'s message has sent its last new packet; the
    /// pair's next message, which waited, may start now (`table/pairs.rs`).
    pub fn posted(&mut self, spec: &MessageSpec, c: u32) -> Option<u32> {
        self.pairs.posted(spec, c)
    }

    /// `per_pair`: each live message of `spec`'s pair counts what the ones before it have in
    /// flight against its window (after an ACK, a loss or a timeout changed it). Callers skip
    /// it for a message that never had another of its pair live beside it (`Sender::shared`).
    pub fn share_window(&mut self, spec: &MessageSpec) {
        if !self.pairs.on() {
            return;
        }
        let mut before = 0;
        for &c in self.pairs.live(spec) {
            let at = self.at(c, End::Tx);
            let tx = &mut self.senders[self.tx_slot[at] as usize].tx;
            tx.debt = before;
            before += tx.in_flight;
        }
    }
}
