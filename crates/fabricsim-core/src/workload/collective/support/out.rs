//! Where a workload's messages go as it makes them: listed, or only counted.

use super::super::Tag;
use super::qps::QpCycle;
use crate::time::Time;
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
}

impl<'a> Out<'a> {
    /// Messages going to `sink`, starting at 0, in class 0, untagged.
    pub fn to(sink: &'a mut dyn Sink) -> Out<'a> {
        Out { sink, start: 0, class: 0, tag: Tag::NONE, qp: 0, qps: None, step: None }
    }
}

impl Out<'_> {
    /// Adds a message from host `src` to host `dst` of `bytes` (0 with `src == dst`: a compute
    /// task), released `delay` after `after` are done, in step `step`; its id.
    pub fn push(&mut self, src: u32, dst: u32, bytes: u64, delay: Time, after: &[u32], step: u32) -> u32 {
        let qp = match &mut self.qps {
            Some(cycle) if src != dst => cycle.next(src, dst, self.qp),
            _ => self.qp,
        };
        let spec = MessageSpec { delay, qp, ..MessageSpec::new(src, dst, bytes, self.start, self.class) };
        self.sink.push(spec, after, Tag { step: self.step.unwrap_or(step), ..self.tag })
    }

    /// The same sink, borrowed again (for a builder of part of the iteration).
    pub fn reborrow(&mut self) -> Out<'_> {
        let qps = self.qps.as_deref_mut();
        Out { sink: &mut *self.sink, start: self.start, class: self.class, tag: self.tag, qp: self.qp, qps, step: self.step }
    }

    /// Messages so far.
    pub fn len(&self) -> usize {
        self.sink.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sink.is_empty()
    }
}
