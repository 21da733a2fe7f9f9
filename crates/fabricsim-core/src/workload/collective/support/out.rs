//! Where a workload's messages go as it makes them: listed, or only counted.

use std::cell::RefCell;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::super::Tag;
use super::super::{AlgorithmKind, Op};
use super::nccl::{Protocol, ProtocolChoice, StepCosts};
use super::qps::QpCycle;
use super::tuner;
use crate::time::Time;
use crate::topology::{Routes, Topology};
use crate::workload::{Deps, MessageSpec, Via};

/// What makes message i of round s of [`Sink::rounds`]: the message and its tag.
pub type MakeRound<'a> = dyn FnMut(usize, usize) -> (MessageSpec, Tag) + 'a;

/// Where messages go as a workload makes them, in order, each with what it waits for and its
/// tag: listed for a run ([`Listed`]), or only counted (a scenario's survey: what a run of
/// them will take, without holding them).
pub trait Sink {
    /// Adds a message that waits for `after` (ids this sink returned); returns its id.
    fn push(&mut self, spec: MessageSpec, after: &[u32], tag: Tag) -> u32;
    /// Messages made so far.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `rounds` rounds of `last.len()` messages after the round `last` (ids this sink
    /// returned): message i of round s is `make(s, i)` and waits for message `reads[i]` of the
    /// round before; returns the last round's ids. The messages and their order are those of
    /// [`Sink::push`] called for each in turn (what this does); a sink that only counts may
    /// count them faster (a ring's steps: [`crate::workload::collective::ring`]), calling
    /// `make` for some messages more than once or not at all, in any order: `make` gives the
    /// same message for the same `(s, i)` but for its queue pair, which no count reads.
    fn rounds(&mut self, last: &[u32], rounds: usize, reads: &[usize], make: &mut MakeRound<'_>) -> Vec<u32> {
        each_round(self, last, rounds, reads, make)
    }
}

/// [`Sink::rounds`] as [`Sink::push`] of each message in turn.
pub fn each_round<S: Sink + ?Sized>(sink: &mut S, last: &[u32], rounds: usize, reads: &[usize], make: &mut MakeRound<'_>) -> Vec<u32> {
    let mut last = last.to_vec();
    for s in 0..rounds {
        last = (0..last.len())
            .map(|i| {
                let (spec, tag) = make(s, i);
                sink.push(spec, &[last[reads[i]]], tag)
            })
            .collect();
    }
    last
}

/// Messages listed as they are made, numbered from `base`.
#[derive(Debug, Default)]
pub struct Listed {
    pub base: u32,
    pub messages: Vec<MessageSpec>,
    /// What each waits for, one compressed list a message (a `Vec` a message took 80 bytes a
    /// message more at the peak of a resolve: 645 MB for Llama 3 405B on 1 024 GPUs).
    pub deps: Deps,
    pub tags: Vec<Tag>,
}

impl Sink for Listed {
    fn push(&mut self, spec: MessageSpec, after: &[u32], tag: Tag) -> u32 {
        let id = self.base + self.messages.len() as u32;
        self.messages.push(spec);
        self.deps.push(after);
        self.tags.push(tag);
        id
    }

    fn len(&self) -> usize {
        self.messages.len()
    }
}

/// Where a job's messages go ([`Sink`]), and what all of one iteration's share: their start,
/// class and tag.
pub struct Out<'a> {
    pub sink: &'a mut dyn Sink,
    pub start: Time,
    pub class: u8,
    pub tag: Tag,
    /// Their channel (its queue pair: [`MessageSpec::qp`]) ...
    pub qp: u16,
    /// ... or, with several queue pairs a connection, which of the channel's each takes.
    pub qps: Option<&'a mut QpCycle>,
    /// Every message's step, whatever step it is pushed with (a training job's kind of work).
    pub step: Option<u32>,
    /// The job's protocol and NCCL latencies, if it has either ([`super::nccl`]), and what
    /// they make of the collective (or send) being made.
    pub costs: Option<(&'a Costs, StepCosts)>,
    /// Each host's call of that collective, once made ([`Out::call`]).
    pub(crate) calls: FxHashMap<u32, u32>,
    /// How the messages pushed now travel (a scale-up switch's legs: [`super::super::nvls`]).
    pub via: Via,
}

/// A job's NCCL protocol and latencies as its messages are made: each message carries its
/// protocol's bytes and waits its step's latency less its pair's idle one-way latency
/// ([`StepCosts::step`]).
pub struct Costs {
    /// NCCL's latencies counted (`costs = "nccl"`) ...
    pub latencies: bool,
    /// ... and the job's protocol.
    pub protocol: ProtocolChoice,
    routes: Routes,
    /// Each pair's (scale-up network, idle one-way latency), once worked out.
    pairs: RefCell<FxHashMap<(u32, u32), (bool, Time)>>,
}

impl Costs {
    pub fn new(topo: &Arc<Topology>, latencies: bool, protocol: ProtocolChoice) -> Costs {
        Costs { latencies, protocol, routes: Routes::new(topo.clone()), pairs: RefCell::default() }
    }

    /// What `algorithm` under `protocol` costs a collective on `hosts` (the scenario's host
    /// ids, as a workload makes its messages): NCCL's latencies by its ranks a server and
    /// servers.
    pub fn of(&self, algorithm: AlgorithmKind, protocol: Protocol, hosts: &[u32]) -> StepCosts {
        let nics = self.routes.topology().nics();
        let servers: std::collections::BTreeSet<u32> = hosts.iter().map(|&h| h / nics).collect();
        let servers = servers.len().max(1) as u32;
        StepCosts::new(algorithm, protocol, self.latencies, (hosts.len() as u32).div_ceil(servers), servers)
    }

    /// What a collective `op` of `size` bytes a rank on `hosts` by `algorithm` costs, its
    /// protocol the job's or, left to the tuner, the one it picks for that algorithm.
    pub fn collective(&self, algorithm: AlgorithmKind, op: Op, size: u64, hosts: &[u32]) -> StepCosts {
        let link = tuner::Link::of(self.routes.topology(), hosts);
        let (_, protocol) = tuner::resolve(Some(algorithm), self.protocol, op, hosts.len(), size, link, 1);
        self.of(algorithm, protocol, hosts)
    }

    /// What a point-to-point send of `bytes` from `src` to `dst` costs: one step, under the
    /// job's protocol or, left to NCCL, LL up to 16 KiB and Simple above (NCCL's p2p choice
    /// on one channel); NCCL's tuner has no base latency for it, so none is charged.
    pub fn send(&self, src: u32, dst: u32, bytes: u64) -> StepCosts {
        StepCosts { base: 0, ..self.of(AlgorithmKind::Ring, self.protocol.p2p(bytes), &[src, dst]) }
    }

    /// What a step from host `src` to `dst` (the scenario's ids: a run numbers its host nodes
    /// otherwise, `Topology::slot`) under `step` adds to its message's release.
    fn added(&self, step: &StepCosts, src: u32, dst: u32) -> Time {
        if step.net == 0 && step.nvlink == 0 {
            return 0;
        }
        let (scale_up, idle) = *self.pairs.borrow_mut().entry((src, dst)).or_insert_with(|| {
            let topo = self.routes.topology();
            let (a, b) = (topo.slot(src), topo.slot(dst));
            (topo.scale_up_between(a, b).is_some(), self.routes.notice_latency(a, b))
        });
        step.step(scale_up, idle)
    }
}

impl<'a> Out<'a> {
    /// Messages going to `sink`, starting at 0, in class 0, untagged.
    pub fn to(sink: &'a mut dyn Sink) -> Out<'a> {
        Out {
            sink,
            start: 0,
            class: 0,
            tag: Tag::NONE,
            qp: 0,
            qps: None,
            step: None,
            costs: None,
            calls: FxHashMap::default(),
            via: Via::Lb,
        }
    }
}

impl Out<'_> {
    /// Adds a message from host `src` to host `dst` of `bytes` (0 with `src == dst`: a compute
    /// task), released `delay` after `after` are done, in step `step`; its id. Where the job
    /// has NCCL costs and it crosses from one host to another, it carries its protocol's bytes
    /// and waits its step's latency more ([`Costs`]): after what it waits for, or, waiting for
    /// nothing (a training job's first point-to-point send, ring attention's at the iteration's
    /// start), from the job's start.
    pub fn push(&mut self, src: u32, dst: u32, bytes: u64, delay: Time, after: &[u32], step: u32) -> u32 {
        let (bytes, delay, start) = match &self.costs {
            Some((c, s)) if src != dst => {
                let added = c.added(s, src, dst);
                let (delay, start) = if after.is_empty() { (delay, self.start.saturating_add(added)) } else { (delay + added, self.start) };
                (s.protocol.wire(bytes), delay, start)
            }
            _ => (bytes, delay, self.start),
        };
        let qp = match &mut self.qps {
            Some(cycle) if src != dst => cycle.next(src, dst, self.qp),
            _ => self.qp,
        };
        let via = if bytes == 0 && src == dst { Via::Lb } else { self.via };
        let spec = MessageSpec { delay, qp, via, ..MessageSpec::new(src, dst, bytes, start, self.class) };
        self.sink.push(spec, after, Tag { step: self.step.unwrap_or(step), ..self.tag })
    }

    /// [`Sink::rounds`] of messages made as [`Out::push`] makes them: `make(s, i)` gives message
    /// i of round s's source, destination, bytes and step (its delay none, its wait the one
    /// message `rounds` names).
    pub fn rounds(
        &mut self,
        last: &[u32],
        rounds: usize,
        reads: &[usize],
        make: &mut dyn FnMut(usize, usize) -> (u32, u32, u64, u32),
    ) -> Vec<u32> {
        let Out { sink, start, class, tag, qp, qps, step: kind, costs, via, .. } = self;
        // what each message's pair adds to its release, once a pair
        let mut added: Vec<Option<(u32, u32, Time)>> = vec![None; last.len()];
        let mut spec = |s: usize, i: usize| {
            let (src, dst, bytes, step) = make(s, i);
            let (bytes, delay) = match costs {
                Some((c, st)) if src != dst => {
                    let d = match added[i] {
                        Some((a, b, d)) if (a, b) == (src, dst) => d,
                        _ => {
                            let d = c.added(st, src, dst);
                            added[i] = Some((src, dst, d));
                            d
                        }
                    };
                    (st.protocol.wire(bytes), d)
                }
                _ => (bytes, 0),
            };
            let qp = match qps {
                Some(cycle) if src != dst => cycle.next(src, dst, *qp),
                _ => *qp,
            };
            let via = if bytes == 0 && src == dst { Via::Lb } else { *via };
            let spec = MessageSpec { delay, qp, via, ..MessageSpec::new(src, dst, bytes, *start, *class) };
            (spec, Tag { step: kind.unwrap_or(step), ..*tag })
        };
        sink.rounds(last, rounds, reads, &mut spec)
    }

    /// Whether the job counts NCCL's latencies: each rank's launches wait for its call.
    pub fn launches(&self) -> bool {
        self.costs.is_some_and(|(_, s)| s.base > 0)
    }

    /// NCCL's base latency of a collective call where the job counts NCCL's latencies (else 0).
    pub fn base_latency(&self) -> Time {
        self.costs.map_or(0, |(_, s)| s.base)
    }

    /// Host `host`'s call of the collective being made: a compute task of no work, released
    /// `delay` after `after` are done, in step 0; made once a host.
    pub fn call(&mut self, host: u32, after: &[u32], delay: Time) -> u32 {
        if let Some(&id) = self.calls.get(&host) {
            return id;
        }
        let id = self.push(host, host, 0, delay, after, 0);
        self.calls.insert(host, id);
        id
    }

    /// The same sink, borrowed again (for a builder of part of the iteration).
    pub fn reborrow(&mut self) -> Out<'_> {
        let qps = self.qps.as_deref_mut();
        Out {
            sink: &mut *self.sink,
            start: self.start,
            class: self.class,
            tag: self.tag,
            qp: self.qp,
            qps,
            step: self.step,
            costs: self.costs,
            calls: FxHashMap::default(),
            via: self.via,
        }
    }

    /// Messages so far.
    pub fn len(&self) -> usize {
        self.sink.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sink.is_empty()
    }
}
