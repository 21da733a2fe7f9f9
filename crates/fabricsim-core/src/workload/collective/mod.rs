//! Collectives turned into dependent messages: one file per algorithm, one line each in the
//! list below. An algorithm writes one iteration of a collective over the job's ranks through
//! a [`Builder`]: each message it adds names the messages it waits for, so a rank moves to
//! its next step when its own previous step is done (per rank, never a global barrier).
//!
//! Sizes are per-rank buffers as nccl-tests counts them (`size` in its output): the buffer
//! reduced (allreduce), the input split into n chunks (reduce_scatter), the output gathered
//! from n chunks (allgather), the send buffer split over n peers (alltoall), the buffer sent
//! (broadcast). Bus bandwidth is nccl-tests' (its doc/PERFORMANCE.md): algbw = size / time,
//! busbw = algbw x 2(n-1)/n for allreduce, (n-1)/n for reduce_scatter, allgather and
//! alltoall, 1 for broadcast.

mod support;
pub use support::expand;

use serde::{Deserialize, Serialize};

use super::{Deps, MessageSpec};
use crate::registry::named_kinds;
use crate::time::Time;

/// The collective operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Allreduce,
    ReduceScatter,
    Allgather,
    Alltoall,
    Broadcast,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Allreduce => "allreduce",
            Op::ReduceScatter => "reduce_scatter",
            Op::Allgather => "allgather",
            Op::Alltoall => "alltoall",
            Op::Broadcast => "broadcast",
        }
    }

    /// nccl-tests' bus bandwidth factor for `n` ranks.
    pub fn bus_factor(self, n: u32) -> f64 {
        let n = n as f64;
        match self {
            Op::Allreduce => 2.0 * (n - 1.0) / n,
            Op::ReduceScatter | Op::Allgather | Op::Alltoall => (n - 1.0) / n,
            Op::Broadcast => 1.0,
        }
    }
}

/// Where a message belongs: its job, iteration and step (`u32::MAX` job: not a job's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    pub job: u32,
    pub iteration: u32,
    pub step: u32,
}

impl Tag {
    pub const NONE: Tag = Tag { job: u32::MAX, iteration: 0, step: 0 };
}

/// A job's ranks: the host of each, and the GPUs (NICs) per server of the fabric (host `h`
/// is GPU `h % per_server` of server `h / per_server`).
#[derive(Debug, Clone, Copy)]
pub struct Ranks<'a> {
    pub hosts: &'a [u32],
    pub per_server: u32,
}

impl Ranks<'_> {
    pub fn n(&self) -> usize {
        self.hosts.len()
    }

    /// The ranks by server, as `grid[s][j]`: the j-th rank (in rank order) of the s-th server
    /// to hold one; an error text unless every such server holds as many.
    pub fn grid(&self) -> Result<Vec<Vec<usize>>, String> {
        let mut grid: Vec<Vec<usize>> = Vec::new();
        let mut row: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        for (r, &h) in self.hosts.iter().enumerate() {
            let s = *row.entry(h / self.per_server.max(1)).or_insert_with(|| {
                grid.push(Vec::new());
                grid.len() - 1
            });
            grid[s].push(r);
        }
        let g = grid.first().map_or(0, Vec::len);
        if let Some(other) = grid.iter().find(|s| s.len() != g) {
            let server = |s: &Vec<usize>| self.hosts[s[0]] / self.per_server.max(1);
            return Err(format!(
                "needs as many ranks on every server it uses, got {g} on server {} and {} on server {}",
                server(&grid[0]),
                other.len(),
                server(other)
            ));
        }
        Ok(grid)
    }
}

/// Where a job's messages go (each with what it waits for and its tag), and what all of one
/// iteration's share: their start, class and tag.
pub struct Out<'a> {
    pub messages: &'a mut Vec<MessageSpec>,
    pub deps: &'a mut Vec<Vec<u32>>,
    pub tags: &'a mut Vec<Tag>,
    pub start: Time,
    pub class: u8,
    pub tag: Tag,
}

impl Out<'_> {
    /// Adds a message from host `src` to host `dst` of `bytes` (0 with `src == dst`: a compute
    /// task), released `delay` after `after` are done, in step `step`; its id.
    pub fn push(&mut self, src: u32, dst: u32, bytes: u64, delay: Time, after: Vec<u32>, step: u32) -> u32 {
        let id = self.messages.len() as u32;
        self.messages.push(MessageSpec { delay, ..MessageSpec::new(src, dst, bytes, self.start, self.class) });
        self.deps.push(after);
        self.tags.push(Tag { step, ..self.tag });
        id
    }

    /// The same sink, borrowed again (for a builder of part of the iteration).
    pub fn reborrow(&mut self) -> Out<'_> {
        Out { messages: self.messages, deps: self.deps, tags: self.tags, start: self.start, class: self.class, tag: self.tag }
    }

    /// Messages so far.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

/// Collects the messages of one iteration of a collective.
pub struct Builder<'a> {
    /// The host of each rank.
    pub ranks: &'a [u32],
    /// GPUs (NICs) per server.
    pub per_server: u32,
    /// The per-rank buffer, bytes.
    pub size: u64,
    /// Per rank: the messages of the previous iteration its first messages wait for.
    pub entry: &'a [Vec<u32>],
    /// Peers a rank sends to at once (alltoall).
    pub max_connections: usize,
    /// The gap between a rank's part of the previous iteration and its first message.
    pub compute: Time,
    pub out: Out<'a>,
}

impl Builder<'_> {
    /// Ranks.
    pub fn n(&self) -> usize {
        self.ranks.len()
    }

    /// Rank `from` sends `bytes` to rank `to` in `step`, once the messages `after` have been
    /// received. With `first`, it is one of `from`'s first messages of the iteration: it
    /// also waits for `from`'s part of the previous iteration, then the compute time.
    pub fn send(&mut self, from: usize, to: usize, bytes: u64, step: u32, mut after: Vec<u32>, first: bool) -> u32 {
        let mut delay = 0;
        if first && !self.entry[from].is_empty() {
            after.extend_from_slice(&self.entry[from]);
            delay = self.compute;
        }
        self.out.push(self.ranks[from], self.ranks[to], bytes.max(1), delay, after, step)
    }

    /// The bytes of chunk `c` of the buffer cut into `parts` as evenly as possible.
    pub fn chunk(&self, parts: usize, c: usize) -> u64 {
        let (parts, c) = (parts as u64, c as u64);
        self.size / parts + u64::from(c < self.size % parts)
    }
}

/// What an algorithm provides.
pub trait Algorithm {
    /// Whether it implements `op` on these ranks (an error text otherwise).
    fn supports(op: Op, ranks: &Ranks<'_>) -> Result<(), String>;
    /// Messages one iteration of `op` on `n` ranks adds (checked against the memory budget
    /// before any is made).
    fn count(op: Op, ranks: &Ranks<'_>) -> u64;
    /// Adds one iteration of `op`; returns, per rank, the messages whose completion means the
    /// rank is done with the iteration.
    fn iteration(op: Op, b: &mut Builder<'_>) -> Vec<Vec<u32>>;
}

/// Declares the algorithms, one line each (`Variant => module :: Type`).
macro_rules! algorithms {
    ($($Variant:ident => $module:ident :: $Type:ident),+ $(,)?) => {
        $(pub mod $module;)+

        named_kinds! {
            /// `[[jobs]] algorithm`.
            AlgorithmKind, $($Variant => $module),+
        }

        impl AlgorithmKind {
            pub fn supports(self, op: Op, ranks: &Ranks<'_>) -> Result<(), String> {
                match self {
                    $(AlgorithmKind::$Variant => <$module::$Type as Algorithm>::supports(op, ranks)),+
                }
            }
            pub fn count(self, op: Op, ranks: &Ranks<'_>) -> u64 {
                match self {
                    $(AlgorithmKind::$Variant => <$module::$Type as Algorithm>::count(op, ranks)),+
                }
            }
            pub fn iteration(self, op: Op, b: &mut Builder<'_>) -> Vec<Vec<u32>> {
                match self {
                    $(AlgorithmKind::$Variant => <$module::$Type as Algorithm>::iteration(op, b)),+
                }
            }
        }
    };
}

algorithms! {
    Ring => ring::Ring,
    HalvingDoubling => halving_doubling::HalvingDoubling,
    Direct => direct::Direct,
    Tree => tree::Tree,
    Hierarchical => hierarchical::Hierarchical,
}

impl AlgorithmKind {
    /// The algorithm for `op` where none is named (a job's, a traced collective's): `direct`
    /// for alltoall, `ring` otherwise.
    pub fn default_for(op: Op) -> AlgorithmKind {
        if op == Op::Alltoall {
            AlgorithmKind::Direct
        } else {
            AlgorithmKind::Ring
        }
    }
}

/// The collectives' algorithms, for `fabricsim list`.
pub const ALGORITHMS: &[crate::registry::AlgorithmInfo] = AlgorithmKind::KINDS;

/// How long it takes a host to learn of another's completion on an idle fabric (the
/// simulator's rule, `host::nic::deps`): the final ACK's flight from receiver to sender
/// (`ack_flight(from, to)`, from when its NIC sends it; for a message on a scale-up network,
/// the network's latency from its delivery) and a third host's notice (`notice(from, to)`).
/// `lanes[i]`: what message i holds while it is sent.
pub struct Hearing<'a> {
    pub ack_flight: &'a dyn Fn(u32, u32) -> Time,
    pub notice: &'a dyn Fn(u32, u32) -> Time,
    pub lanes: &'a [Lane],
}

/// What a message holds in the ideal while it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Its sender's NIC (one message at a time), and its receiver's for the final ACK.
    Nic,
    /// Its sender's port on the scale-up network.
    ScaleUp,
    /// Nothing: it takes its ideal FCT from its release, whatever else its sender sends (a
    /// training job's messages, whose ideal is a lower bound of the run; compute tasks).
    Alone,
}

/// When a message that waits for nothing is released: its start, after its computation for a
/// compute task.
pub fn first_release(m: &MessageSpec) -> Time {
    m.start.saturating_add(if m.is_compute() { m.delay } else { 0 })
}

/// Ideal release and finish of every message on an idle fabric. A message is released at its
/// start, or once it has heard of its dependencies' ideal finishes, plus its delay. Its
/// source hears of a finish at once if it is that message's receiver, when the final ACK
/// arrives if it is its sender, after a notice otherwise ([`Hearing`]). Its sender's
/// NIC sends one message at a time, back to back at line rate (message i holds it for
/// `wire[i]`), in release order (then id order); the message then takes its ideal FCT
/// (`ideal[i]`) from the moment its NIC starts it. When a message finishes, its receiver's
/// NIC sends the ACK of its last packet, which holds that NIC for `ack` (at the finish, before
/// a message released at that instant). A message on a scale-up network holds its sender's
/// port there instead of its NIC, and sends no ACK; one `Alone` holds nothing. A compute
/// task with no dependency is released after its delay (the computation) from its start. Messages of different `group`s (jobs) never share a
/// NIC: each group is alone on its idle fabric. With one message at a time per rank (ring,
/// halving-doubling) this is the critical path of ideal FCTs plus the final ACKs a rank's
/// next step waits behind; where a rank has several messages out at once (a tree's sends up
/// and down, alltoall's peers) they queue instead of each running as if alone.
pub fn ideal_finish<M: AsRef<MessageSpec>>(
    messages: &[M],
    deps: &Deps,
    ideal: &[Time],
    wire: &[Time],
    ack: Time,
    group: &[u32],
    hearing: &Hearing<'_>,
) -> Vec<(Time, Time)> {
    use std::cmp::Reverse;
    const ACK: u8 = 0;
    const SEND: u8 = 1;
    let n = messages.len();
    let dependents = deps.dependents(n);
    let mut waiting: Vec<u32> = (0..n).map(|i| deps.of(i).len() as u32).collect();
    let mut latest: Vec<Option<Time>> = vec![None; n];
    // (time, ACK before SEND, message): a message's release, or its final ACK at its finish
    let mut heap: std::collections::BinaryHeap<Reverse<(Time, u8, u32)>> =
        (0..n).filter(|&i| waiting[i] == 0).map(|i| Reverse((first_release(messages[i].as_ref()), SEND, i as u32))).collect();
    // when each (group, host, scale-up port or NIC) is free
    let mut free: std::collections::HashMap<(u32, u32, bool), Time> = std::collections::HashMap::new();
    let mut out: Vec<(Time, Time)> = vec![(0, 0); n];
    let mut hear = |heap: &mut std::collections::BinaryHeap<Reverse<(Time, u8, u32)>>, j: usize, at: Time| {
        latest[j] = Some(latest[j].map_or(at, |t| t.max(at)));
        waiting[j] -= 1;
        if waiting[j] == 0 {
            let m = messages[j].as_ref();
            let after = latest[j].expect("a dependency finished");
            heap.push(Reverse((m.start.max(after.saturating_add(m.delay)), SEND, j as u32)));
        }
    };
    while let Some(Reverse((at, kind, i))) = heap.pop() {
        let i = i as usize;
        let (src, dst) = (messages[i].as_ref().src, messages[i].as_ref().dst);
        let lane = hearing.lanes[i];
        if kind == ACK {
            let leaves = if lane != Lane::Nic {
                at
            } else {
                let nic = free.entry((group[i], dst, false)).or_insert(0);
                let leaves = (*nic).max(at);
                *nic = leaves + ack;
                leaves
            };
            for &j in dependents.of(i) {
                let by = messages[j as usize].as_ref().src;
                if by == src && by != dst {
                    hear(&mut heap, j as usize, leaves + (hearing.ack_flight)(dst, src));
                }
            }
            continue;
        }
        let start = if lane == Lane::Alone {
            at
        } else {
            let nic = free.entry((group[i], src, lane == Lane::ScaleUp)).or_insert(0);
            let start = at.max(*nic);
            *nic = start + wire[i];
            start
        };
        let finish = start + ideal[i];
        out[i] = (at, finish);
        heap.push(Reverse((finish, ACK, i as u32)));
        for &j in dependents.of(i) {
            let by = messages[j as usize].as_ref().src;
            if by == dst {
                hear(&mut heap, j as usize, finish);
            } else if by != src {
                hear(&mut heap, j as usize, finish + (hearing.notice)(dst, by));
            }
        }
    }
    out
}
