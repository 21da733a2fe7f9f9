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
pub use support::out::{each_round, Costs, Listed, MakeRound, Out, Sink};
pub use support::qps::QpCycle;
pub use support::{expand, nccl, tuner};

use serde::{Deserialize, Serialize};

use super::{Deps, MessageSpec};
use crate::registry::named_kinds;
use crate::time::Time;

/// The collective operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

    /// The server of host `h` (host `h` is GPU `h % per_server` of server `h / per_server`).
    pub fn server(&self, h: u32) -> u32 {
        h / self.per_server.max(1)
    }

    /// The first rank's host on another server than rank 0's (`None`: every rank shares one).
    pub fn off_server(&self) -> Option<u32> {
        let first = self.server(*self.hosts.first()?);
        self.hosts.iter().copied().find(|&h| self.server(h) != first)
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
    /// A ring step's message cut into slices of at most this many bytes, each forwarded as
    /// it arrives (0: a step is one message).
    pub slice: u64,
    pub out: Out<'a>,
}

impl Builder<'_> {
    /// Ranks.
    pub fn n(&self) -> usize {
        self.ranks.len()
    }

    /// Rank `from` sends `bytes` to rank `to` in `step`, once the messages `after` have been
    /// received. With `first`, it is one of `from`'s first messages of the iteration: it
    /// also waits for `from`'s part of the previous iteration, then the compute time. With
    /// NCCL's latencies, one that waits for no message of the iteration waits for the rank's
    /// call ([`Builder::launch`]) and NCCL's base latency instead.
    pub fn send(&mut self, from: usize, to: usize, bytes: u64, step: u32, after: &[u32], first: bool) -> u32 {
        let (src, dst) = (self.ranks[from], self.ranks[to]);
        if after.is_empty() && self.out.launches() {
            let call = self.launch(from);
            let base = self.out.base_latency();
            return self.out.push(src, dst, bytes.max(1), base, &[call], step);
        }
        match self.entered(from, after, first) {
            Some((after, delay)) => self.out.push(src, dst, bytes.max(1), delay, &after, step),
            None => self.out.push(src, dst, bytes.max(1), 0, after, step),
        }
    }

    /// With NCCL's latencies: rank `rank`'s call of the collective this iteration, a compute
    /// task of no work released when its part of the previous iteration is done and the
    /// compute time has passed (at the job's start in the first), made once a rank and
    /// iteration for all its channels. The jobs tables start the iteration there.
    pub fn launch(&mut self, rank: usize) -> u32 {
        let (after, delay) = self.entered(rank, &[], true).unwrap_or_default();
        self.out.call(self.ranks[rank], &after, delay)
    }

    /// With `first`, `after` and rank `rank`'s part of the previous iteration, and the compute
    /// time that follows it (`None`: `after` alone, no delay; so in the first iteration).
    fn entered(&self, rank: usize, after: &[u32], first: bool) -> Option<(Vec<u32>, Time)> {
        (first && !self.entry[rank].is_empty()).then(|| ([after, &self.entry[rank]].concat(), self.compute))
    }

    /// A compute task of no time on rank `rank`, done once the messages `after` have been
    /// received (with `first`, also `rank`'s part of the previous iteration, as
    /// [`Builder::send`] waits), tagged `step`: what many messages of the rank wait for,
    /// joined once ([`Builder::send_joined`] sends after it). With the delay those messages
    /// then take: the compute time where it joined the previous iteration. A collective has no
    /// other compute task: the job tables leave it out of the iteration's and step's spans.
    /// With NCCL's latencies, a launch's join is the rank's call ([`Builder::launch`]), and
    /// its messages wait NCCL's base latency.
    pub fn join(&mut self, rank: usize, after: &[u32], first: bool, step: u32) -> (u32, Time) {
        let host = self.ranks[rank];
        if after.is_empty() && self.out.launches() {
            return (self.launch(rank), self.out.base_latency());
        }
        match self.entered(rank, after, first) {
            Some((after, delay)) => (self.out.push(host, host, 0, 0, &after, step), delay),
            None => (self.out.push(host, host, 0, 0, after, step), 0),
        }
    }

    /// Rank `from` sends `bytes` to rank `to` in `step` once the join [`Builder::join`] made
    /// is done, then its delay: when [`Builder::send`] with the join's list would.
    pub fn send_joined(&mut self, from: usize, to: usize, bytes: u64, step: u32, (join, delay): (u32, Time)) -> u32 {
        self.out.push(self.ranks[from], self.ranks[to], bytes.max(1), delay, &[join], step)
    }

    /// Rounds of sends after the round `last` ([`Out::rounds`]): `make(s, i)` gives message i
    /// of round s's ranks, bytes and step, each sent as [`Builder::send`] sends after one
    /// message of the round before (`reads[i]`).
    pub fn send_rounds(
        &mut self,
        last: &[u32],
        rounds: usize,
        reads: &[usize],
        make: &mut dyn FnMut(usize, usize) -> (usize, usize, u64, u32),
    ) -> Vec<u32> {
        let ranks = self.ranks;
        self.out.rounds(last, rounds, reads, &mut |s, i| {
            let (from, to, bytes, step) = make(s, i);
            (ranks[from], ranks[to], bytes.max(1), step)
        })
    }

    /// The bytes of chunk `c` of the buffer cut into `parts` as evenly as possible.
    pub fn chunk(&self, parts: usize, c: usize) -> u64 {
        share(self.size, parts as u64, c as u64)
    }
}

/// Part `i` of `total` bytes cut into `parts` as evenly as possible: the first `total mod
/// parts` parts take one byte more.
pub(crate) fn share(total: u64, parts: u64, i: u64) -> u64 {
    total / parts + u64::from(i < total % parts)
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
    Nvls => nvls::Nvls,
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
pub struct Hearing<'a> {
    pub ack_flight: &'a dyn Fn(u32, u32) -> Time,
    pub notice: &'a dyn Fn(u32, u32) -> Time,
}

/// What a message's bytes cross when it is sent, for the bound its sender's busy time sets
/// ([`nic_bounds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Its sender's NIC.
    Nic,
    /// Its sender's port on the scale-up network.
    ScaleUp,
    /// Left out of that bound: a training job's messages (their critical path is the bound)
    /// and compute tasks.
    Alone,
}

/// A lower bound of when the last of a set of messages of one NIC (or scale-up port) finishes:
/// none of them is released before the earliest ideal release, the NIC sends their packets
/// at most at line rate (`wire[i]` each: their sum), and the last packet to leave still takes
/// at least the least time any of them takes to arrive after leaving (`tail[i]`: its smallest
/// packet alone on its path; not the message-alone `ideal - wire`, whose last packet queues
/// behind its own: where the NIC interleaves messages it need not). Returns, per key of
/// `key(i)` (messages with `None` are left out), that bound.
pub fn nic_bounds<K: std::hash::Hash + Eq>(
    schedule: &[(Time, Time)],
    wire: &[Time],
    tail: &[Time],
    key: impl Fn(usize) -> Option<K>,
) -> std::collections::HashMap<K, Time> {
    let mut acc: std::collections::HashMap<K, (Time, Time, Time)> = std::collections::HashMap::new();
    for i in 0..schedule.len() {
        let Some(k) = key(i) else { continue };
        let tail = tail[i];
        let e = acc.entry(k).or_insert((Time::MAX, 0, Time::MAX));
        *e = (e.0.min(schedule[i].0), e.1.saturating_add(wire[i]), e.2.min(tail));
    }
    acc.into_iter().map(|(k, (first, busy, tail))| (k, first.saturating_add(busy).saturating_add(tail))).collect()
}

/// When a message that waits for nothing is released: its start, after its computation for a
/// compute task.
pub fn first_release(m: &MessageSpec) -> Time {
    m.start.saturating_add(if m.is_compute() { m.delay } else { 0 })
}

/// When the sender of a message `by` sends hears that a message between `from` (its source and
/// destination) finished at `finish`: at once if it is that message's receiver, by the final
/// ACK's flight if its sender, by a notice otherwise ([`Hearing`]).
pub fn heard(hearing: &Hearing<'_>, (src, dst): (u32, u32), by: u32, finish: Time) -> Time {
    match by {
        by if by == dst => finish,
        by if by == src => finish + (hearing.ack_flight)(dst, src),
        by => finish + (hearing.notice)(dst, by),
    }
}

/// When message `m` is released, once it has heard of the last of what it waits for at
/// `after` (`None`: it waits for none): after its delay, not before its start.
pub fn released(m: &MessageSpec, after: Option<Time>) -> Time {
    match after {
        None => first_release(m),
        Some(after) => m.start.max(after.saturating_add(m.delay)),
    }
}

/// Ideal release and finish of every message on an idle fabric: a lower bound of each
/// message's release and finish in the run. A message is released at its start, or once it
/// has heard of its dependencies' ideal finishes, plus its delay. Its source hears of a finish
/// at once if it is that message's receiver, when the final ACK arrives if it is its sender,
/// after a notice otherwise ([`Hearing`]). The message takes its ideal FCT (`ideal[i]`) from
/// its release, as if alone on the fabric. The final ACK a receiver's NIC sends when a
/// message finishes (64 B) is not counted against the data that NIC sends next: the run
/// sends it before or after a message released at that instant (both happen), so counting
/// it would not be a bound. Messages of one NIC are not queued one after another: the run interleaves their packets,
/// and a queue in release order is not a bound (its last message may be a far peer's where
/// the run's is a near one's). What their NIC must carry bounds them instead: [`nic_bounds`].
/// A compute task with no dependency is released after its delay (the computation) from its
/// start.
pub fn ideal_finish<M: AsRef<MessageSpec>>(messages: &[M], deps: &Deps, ideal: &[Time], hearing: &Hearing<'_>) -> Vec<(Time, Time)> {
    let backward = (0..messages.len()).all(|i| deps.of(i).iter().all(|&d| (d as usize) < i));
    schedule(messages, deps, ideal, hearing, backward)
}

/// [`ideal_finish`]; `in_order`: every message waits only for earlier ones.
fn schedule<M: AsRef<MessageSpec>>(
    messages: &[M],
    deps: &Deps,
    ideal: &[Time],
    hearing: &Hearing<'_>,
    in_order: bool,
) -> Vec<(Time, Time)> {
    use std::cmp::Reverse;
    let n = messages.len();
    // when `to`'s sender hears that `from` (released and finished at `at`) is done; a leg of a
    // scale-up switch that cuts through goes once the first bit of `from` is through, which is
    // no sooner than `from`'s release (a bound: its latency is not counted)
    let heard = |from: &MessageSpec, to: &MessageSpec, at: (Time, Time)| match to.via.through() {
        true => at.0,
        false => heard(hearing, (from.src, from.dst), to.src, at.1),
    };
    // where every message waits only for earlier ones (a job's, always), each is scheduled in
    // turn from what it waits for: the same schedule, without the reverse lists, the counts
    // and the queue below (a tenth of the results' peak memory on a 2 M-message ring)
    if in_order {
        let mut out: Vec<(Time, Time)> = Vec::with_capacity(n);
        for (i, m) in messages.iter().enumerate() {
            let m = m.as_ref();
            let at = released(m, deps.of(i).iter().map(|&d| heard(messages[d as usize].as_ref(), m, out[d as usize])).max());
            out.push((at, at + ideal[i]));
        }
        return out;
    }
    let dependents = deps.dependents(n);
    let mut waiting: Vec<u32> = (0..n).map(|i| deps.of(i).len() as u32).collect();
    let mut latest: Vec<Option<Time>> = vec![None; n];
    // (release, message), earliest first: nothing is shared between messages (no NIC state),
    // so a message's schedule depends only on what it waits for
    let mut heap: std::collections::BinaryHeap<Reverse<(Time, u32)>> =
        (0..n).filter(|&i| waiting[i] == 0).map(|i| Reverse((released(messages[i].as_ref(), None), i as u32))).collect();
    let mut out: Vec<(Time, Time)> = vec![(0, 0); n];
    let mut hear = |heap: &mut std::collections::BinaryHeap<Reverse<(Time, u32)>>, j: usize, at: Time| {
        latest[j] = Some(latest[j].map_or(at, |t| t.max(at)));
        waiting[j] -= 1;
        if waiting[j] == 0 {
            heap.push(Reverse((released(messages[j].as_ref(), latest[j]), j as u32)));
        }
    };
    while let Some(Reverse((at, i))) = heap.pop() {
        let i = i as usize;
        // messages of one NIC are not queued one after another, as the run interleaves their
        // packets: their NIC's busy time bounds them instead ([`nic_bounds`])
        let finish = at + ideal[i];
        out[i] = (at, finish);
        for &j in dependents.of(i) {
            hear(&mut heap, j as usize, heard(messages[i].as_ref(), messages[j as usize].as_ref(), (at, finish)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Rng, Stream};

    #[test]
    fn a_schedule_in_order_is_the_schedule_by_release() {
        // random graphs of messages that wait for earlier ones, among 6 hosts, with delays,
        // starts and the three ways a sender hears
        let (ack, notice) = (|a: u32, b: u32| 100 + 10 * Time::from(a) + Time::from(b), |a: u32, b: u32| 7 * Time::from(a + 2 * b));
        let hearing = Hearing { ack_flight: &ack, notice: &notice };
        for seed in 0..20 {
            let mut rng = Rng::stream(seed, Stream::Workload, 0);
            let n = 200;
            let mut lists = Vec::new();
            let messages: Vec<MessageSpec> = (0..n)
                .map(|i| {
                    let k = if i == 0 { 0 } else { rng.below(4) as usize };
                    lists.push((0..k).map(|_| rng.below(i as u64) as u32).collect::<Vec<u32>>());
                    let (src, dst) = (rng.below(6) as u32, rng.below(6) as u32);
                    MessageSpec { delay: rng.below(50), ..MessageSpec::new(src, dst, 1 + rng.below(9000), rng.below(300), 0) }
                })
                .collect();
            let deps = Deps::from_lists(&lists);
            let ideal: Vec<Time> = (0..n).map(|_| 1 + rng.below(1000)).collect();
            assert_eq!(
                schedule(&messages, &deps, &ideal, &hearing, true),
                schedule(&messages, &deps, &ideal, &hearing, false),
                "seed {seed}"
            );
        }
    }
}
