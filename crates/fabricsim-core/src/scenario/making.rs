//! A run's model whose jobs are made as the run goes ([`Making`]): resolved from a survey (the
//! warnings, the events and the memory estimate a resolve gives, counted without holding the
//! messages, `survey.rs`) and a pass that finds how far ahead of each message its readers are
//! ([`Reach`]), not from the messages; the planner then runs beside the run
//! ([`Producer`], `sim::generate`), and the jobs' bounds are counted as the run takes the
//! messages ([`BoundsPass`]).

use super::{Frame, Model, Scenario};
use crate::budget;
use crate::engine::rng::{Rng, Stream};
use crate::error::ScenarioError;
use crate::stats::jobs::BoundsPass;
use crate::topology::Topology;
use crate::workload::collective::{Sink, Tag};
use crate::workload::job;
use crate::workload::making::{Producer, Reach, Reaches};
use crate::workload::window::SPAN;
use crate::workload::{Deps, MessageSpec};

#[cfg(test)]
thread_local! {
    /// Tests: how far after a message its readers are looked for before they count as far
    /// (`None`: [`SPAN`]; less, so that small runs make their jobs as they go), or `Some(0)`:
    /// the jobs are made before the run.
    pub(crate) static REACH: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// What a run whose jobs are made as it goes holds of them beyond those it took.
pub struct Making {
    pub producer: Producer,
    pub reaches: Reaches,
    /// The jobs' bounds of the messages taken so far.
    pub bounds: BoundsPass,
    /// The events the run is expected to make (the survey's count).
    pub events: u64,
    /// The next of [`Reaches::step`]'s times the run must take messages by.
    pub step: usize,
}

impl std::fmt::Debug for Making {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Making").field("taken", &self.producer.taken()).field("left", &self.producer.left()).finish()
    }
}

impl Model {
    /// Makes jobs made as the run goes whole, before the run (one that runs in pieces).
    pub(crate) fn make_whole(&mut self) {
        let Some(mut making) = self.making.take() else { return };
        let made = making.producer.take(making.producer.left());
        for (i, spec) in made.specs.iter().enumerate() {
            making.bounds.push(spec, made.deps.of(i), made.tags[i]);
        }
        self.job_bounds = making.bounds.finish();
        // after the [workload]'s, which wait for none
        let mut deps = Deps::default();
        deps.append(self.messages.len(), &made.deps, made.len());
        self.deps = deps.finish();
        self.messages.extend(made.specs);
        self.tags.extend(made.tags);
    }
}

impl Scenario {
    /// Whether a run (in one piece: `alone`) may make its jobs as it goes (`sim::made`) rather
    /// than before its first event: a closed run of jobs with no `[mixed]` share, on a fabric
    /// that does not rewrite messages (a rail-only fabric's relays, a host's NIC ports); beside
    /// a `[workload]` whose messages wait for none (they are made before the run, as always),
    /// and unless most of its messages must join at its first instant (`Reaches::front_heavy`):
    /// [`Scenario::resolve_run`] finds those. Either way the run is the same, to the picosecond.
    fn makes_jobs_as_it_goes(&self, topo: &Topology, open: bool, alone: bool) -> bool {
        alone && !open && !self.jobs.is_empty() && self.mixed.is_none() && topo.tables.split().is_none() && topo.planes() == 1
    }

    /// The model of a run: [`Scenario::resolve_as`], or, where the run makes its jobs as it
    /// goes (in one piece: `alone`), a model with none of their messages.
    pub(crate) fn resolve_run(&self, open: bool, alone: bool) -> Result<Model, ScenarioError> {
        #[cfg(test)]
        let span = REACH.get().unwrap_or(SPAN);
        #[cfg(not(test))]
        let span = SPAN;
        let frame = self.frame()?;
        if span == 0 || !self.makes_jobs_as_it_goes(&frame.topo, open, alone) {
            return self.resolve_in(frame, open);
        }
        // the [workload]'s messages, made before the run: the jobs' are numbered after them
        let given = self.given(&frame.topo, open)?;
        if given.arrivals.is_some() || given.lists.iter().any(|l| !l.is_empty()) {
            return self.resolve_in(frame, open); // (a trace job of the workload's: made whole)
        }
        let messages: Vec<MessageSpec> = given.messages.iter().map(|m| m.on_slots(&frame.topo)).collect();
        let base = messages.len() as u32;
        let max_messages = frame.max_memory / budget::message_floor(&self.keep);
        let mut reach = Reach::new(span);
        for m in &messages {
            reach.push(*m, &[], Tag::NONE);
        }
        let jobs = job::plan(&self.jobs, &mut reach, &frame.topo, max_messages, &mut Rng::stream(self.seed, Stream::Workload, 1))?;
        let reaches = reach.finish();
        if reaches.front_heavy() {
            return self.resolve_in(frame, open);
        }
        // (the reach pass found the far messages: the survey needs no pass of its own for them)
        let Some((survey, _)) = self.counted(true, Some(reaches.far.clone()))? else { return self.resolve_in(frame, open) };
        let (config, on, seed) = (self.jobs.clone(), frame.topo.clone(), self.seed);
        let plan = move |sink: &mut dyn Sink| {
            // (the same plan the passes above made: it fails as they did, which is not at all)
            let made = job::plan(&config, sink, &on, max_messages, &mut Rng::stream(seed, Stream::Workload, 1));
            debug_assert!(made.is_ok());
        };
        let (topo, transport) = (frame.topo.clone(), frame.transport.clone());
        let producer = Producer::spawn(base, reaches.total - base, topo.clone(), plan);
        let mut bounds = BoundsPass::new(topo, transport, self.lb.subflows(), jobs.clone(), reaches.far.clone());
        for m in &messages {
            bounds.push(m, &[], Tag::NONE);
        }
        let making = Making { producer, reaches, bounds, events: survey.events, step: 0 };
        let frame = Frame { warnings: survey.warnings, need: survey.need, ..frame };
        let tags = vec![Tag::NONE; messages.len()];
        let load_window = given.load_window;
        Ok(Model { messages, tags, jobs, load_window, making: Some(Box::new(making)), ..self.framed(frame) })
    }
}
