//! Long-lived connections (`transport.connections = "per_pair"`): a host's messages to one
//! host, of one class, go one after another through one queue pair, as an RDMA NIC's do.
//!
//! NCCL's network transport connects each pair of peers once per channel, when the connection
//! is first needed, and sends every later operation of the communicator over those queue
//! pairs (NCCL's `src/transport/net_ib.cc`). Here the pair's state outlives its messages:
//! when a message's sender has everything acknowledged, its congestion window, its load
//! balancer (ARCANE's cache, PRIME's penalties, ECMP's entropy) and its RTO estimator wait in
//! the pair and the pair's next message starts with them instead of fresh ones. A message
//! released while the pair still sends waits for it, as a work request waits behind the one
//! before it on its queue pair. What stays per message: its packets and PSNs (from 0), its
//! receiver's state, its results row. Owned by the source host: only its piece touches it.

use std::collections::{HashMap, VecDeque};

use crate::host::cc::Cwnd;
use crate::host::connection::SendHalf;
use crate::host::rto::RtoTimer;
use crate::lb::HostLb;
use crate::workload::MessageSpec;

/// What a pair keeps between its messages.
struct Carried {
    window: Cwnd,
    lb: HostLb,
    rto: RtoTimer,
}

#[derive(Default)]
struct Pair {
    /// A message of the pair is sending.
    busy: bool,
    /// The queue pair's id: its first connection's.
    flow: u32,
    /// Connections of messages released meanwhile, in release order.
    waiting: VecDeque<u32>,
    state: Option<Carried>,
}

/// The pairs of a piece's source hosts (nothing with `per_message`).
#[derive(Default)]
pub struct Pairs {
    on: bool,
    map: HashMap<(u32, u32, u8), Pair>,
}

fn key(spec: &MessageSpec) -> (u32, u32, u8) {
    (spec.src, spec.dst, spec.class)
}

impl Pairs {
    pub fn new(on: bool) -> Pairs {
        Pairs { on, map: HashMap::new() }
    }

    /// Whether connection `c` of `spec`'s message may start now; if not, it waits for the
    /// pair (it is handed back by [`Pairs::release`]).
    pub fn claim(&mut self, spec: &MessageSpec, c: u32) -> bool {
        if !self.on {
            return true;
        }
        let pair = self.map.entry(key(spec)).or_insert_with(|| Pair { flow: c, ..Pair::default() });
        if pair.busy {
            pair.waiting.push_back(c);
            return false;
        }
        pair.busy = true;
        true
    }

    /// The queue pair connection `c` of `spec`'s message travels (or travelled) on: its
    /// pair's first connection, or itself.
    pub fn flow(&self, spec: &MessageSpec, c: u32) -> u32 {
        self.map.get(&key(spec)).map_or(c, |p| p.flow)
    }

    /// Gives starting sender `c` its queue pair and the state its pair kept, if it kept any.
    pub fn resume(&mut self, c: u32, half: &mut SendHalf) {
        half.tx.flow = c;
        let Some(pair) = self.map.get_mut(&key(&half.spec)) else { return };
        half.tx.flow = pair.flow;
        if let Some(Carried { window, lb, rto }) = pair.state.take() {
            (half.tx.window, half.tx.lb, half.tx.rto) = (window, lb, rto);
        }
    }

    /// A sender is done: its pair keeps its state; returns the connection that waited for
    /// the pair, if any (it may start now).
    pub fn release(&mut self, half: SendHalf) -> Option<u32> {
        if !self.on {
            return None;
        }
        let pair = self.map.get_mut(&key(&half.spec)).expect("a started pair");
        pair.state = Some(Carried { window: half.tx.window, lb: half.tx.lb, rto: half.tx.rto });
        pair.busy = false;
        pair.waiting.pop_front()
    }
}
