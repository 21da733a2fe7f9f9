//! Where a workload's messages go as it makes them: listed, or only counted.

use std::cell::RefCell;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::super::Tag;
use super::nccl::StepCosts;
use super::qps::QpCycle;
use crate::time::Time;
use crate::topology::{Routes, Topology};
use crate::workload::{Deps, MessageSpec};

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
    /// The job's protocol and NCCL latencies, if it has either ([`super::nccl`]).
    pub costs: Option<&'a Costs>,
}

/// A job's NCCL protocol and latencies as its messages are made: each message carries its
/// protocol's bytes and waits its step's latency less its pair's idle one-way latency
/// ([`StepCosts::step`]).
pub struct Costs {
    pub step: StepCosts,
    routes: Routes,
    /// Each pair's added latency, once worked out.
    added: RefCell<FxHashMap<(u32, u32), Time>>,
    /// Each host's latest call: its iteration and message ([`Out::call`]).
    calls: RefCell<FxHashMap<u32, (u32, u32)>>,
}

impl Costs {
    pub fn new(topo: &Arc<Topology>, step: StepCosts) -> Costs {
        Costs { step, routes: Routes::new(topo.clone()), added: RefCell::default(), calls: RefCell::default() }
    }

    /// What a step from host node `src` to `dst` adds to its message's release.
    fn added(&self, src: u32, dst: u32) -> Time {
        if self.step.net == 0 && self.step.nvlink == 0 {
            return 0;
        }
        *self.added.borrow_mut().entry((src, dst)).or_insert_with(|| {
            let scale_up = self.routes.topology().scale_up_between(src, dst).is_some();
            self.step.step(scale_up, self.routes.notice_latency(src, dst))
        })
    }

    /// Compute tasks its calls add: one a rank and iteration with NCCL's latencies.
    pub fn calls(&self, ranks: usize) -> u64 {
        if self.step.base > 0 {
            ranks as u64
        } else {
            0
        }
    }
}

impl<'a> Out<'a> {
    /// Messages going to `sink`, starting at 0, in class 0, untagged.
    pub fn to(sink: &'a mut dyn Sink) -> Out<'a> {
        Out { sink, start: 0, class: 0, tag: Tag::NONE, qp: 0, qps: None, step: None, costs: None }
    }
}

impl Out<'_> {
    /// Adds a message from host `src` to host `dst` of `bytes` (0 with `src == dst`: a compute
    /// task), released `delay` after `after` are done, in step `step`; its id. Where the job
    /// has NCCL costs and it crosses from one host to another, it carries its protocol's bytes
    /// and waits its step's latency more ([`Costs`]).
    pub fn push(&mut self, src: u32, dst: u32, bytes: u64, delay: Time, after: &[u32], step: u32) -> u32 {
        let (bytes, delay) = match self.costs {
            Some(c) if src != dst => {
                let added = c.added(src, dst);
                debug_assert!(added == 0 || !after.is_empty(), "a step's latency runs from a call or a step");
                (c.step.protocol.wire(bytes), delay + added)
            }
            _ => (bytes, delay),
        };
        let qp = match &mut self.qps {
            Some(cycle) if src != dst => cycle.next(src, dst, self.qp),
            _ => self.qp,
        };
        let spec = MessageSpec { delay, qp, ..MessageSpec::new(src, dst, bytes, self.start, self.class) };
        self.sink.push(spec, after, Tag { step: self.step.unwrap_or(step), ..self.tag })
    }

    /// Whether the job counts NCCL's latencies: each rank's launches wait for its call.
    pub fn launches(&self) -> bool {
        self.costs.is_some_and(|c| c.step.base > 0)
    }

    /// NCCL's base latency of a collective call where the job counts NCCL's latencies (else 0).
    pub fn base_latency(&self) -> Time {
        self.costs.map_or(0, |c| c.step.base)
    }

    /// Host `host`'s call of the collective in this iteration: a compute task of no work,
    /// released `delay` after `after` are done, in step 0; made once a host and iteration
    /// (the channels' launches share it).
    pub fn call(&mut self, host: u32, after: &[u32], delay: Time) -> u32 {
        let iteration = self.tag.iteration;
        let Some(costs) = self.costs else { return self.push(host, host, 0, delay, after, 0) };
        if let Some(&(it, id)) = costs.calls.borrow().get(&host) {
            if it == iteration {
                return id;
            }
        }
        let id = self.push(host, host, 0, delay, after, 0);
        costs.calls.borrow_mut().insert(host, (iteration, id));
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
