//! A survey: what a scenario's run will take (its warnings, the events it is expected to make,
//! the memory it is estimated to need), said before anything is built and without holding its
//! jobs' messages: each is counted as its job makes it ([`Counting`], a
//! [`crate::workload::collective::Sink`]) and dropped. The numbers are those of a run's
//! resolve, by construction: the same per-message counts ([`budget::Tally`],
//! [`budget::events`]) and checks (`frame.rs`), in the same order. The jobs are made twice:
//! a first pass finds the few messages a later one reads from far back
//! ([`crate::workload::window::Far`]), so that the counting pass holds what a message's
//! dependents read of it (its level in the dependency graph, which the memory estimate reads,
//! and its least time, [`crate::stats::least`]) only while one may still read it: a window
//! of the latest messages and the far ones, not 20 bytes for every message. A ring's later
//! steps come as rounds ([`Sink::rounds`]): counted in closed form where a round of them
//! passes on what the round before carried (`rounds.rs`), else message by message as a push
//! would count them; the first pass only counts them.
//!
//! Where the fabric rewrites messages after they are made (a rail-only fabric relays them
//! through a server's GPU, a multi-plane one stripes them over its planes), or `[mixed]` may
//! change the class a check reads, the survey says so (`None`) and the caller resolves.

mod rounds;

use std::sync::Arc;

use super::frame::{check_count, class_error, message_field, packets_error, too_many_packets, Frame, Given};
use super::Scenario;
use crate::budget::{self, Estimate, Tally};
use crate::engine::rng::{Rng, Stream};
use crate::error::ScenarioError;
use crate::stats::least::Least;
use crate::time::Time;
use crate::topology::{Routes, Topology};
use crate::workload::collective::{each_round, MakeRound, Sink, Tag};
use crate::workload::window::{Far, FarIds};
use crate::workload::{job, MessageSpec};

/// What a survey finds.
#[derive(Debug, Clone)]
pub struct Survey {
    /// The warnings a run's resolve gives.
    pub warnings: Vec<String>,
    /// The events the run is expected to make (a run's `expected_events`).
    pub events: u64,
    /// The memory it is estimated to need.
    pub need: Estimate,
    pub topo: Arc<Topology>,
    pub max_time: Time,
}

/// Counts each message as it is made ([`Scenario::survey`]).
struct Counting<'a> {
    topo: &'a Topology,
    /// The jobs' and the `[workload]`'s least times.
    least: Option<Least<'a>>,
    /// A packet's payload, and the switches' classes.
    payload: u64,
    classes: u32,
    /// The id of the first message pushed (the jobs' come after the `[workload]`'s), and
    /// how many were pushed.
    base: u32,
    pushed: usize,
    tally: Tally,
    subflows: u32,
    events: u64,
    /// The first message in too many packets, and the first in a class the switches lack:
    /// (its index, its job, the value).
    packets: Option<(usize, u32, u64)>,
    class: Option<(usize, u32, u8)>,
    /// Whether a ring's later steps are counted in closed form (`rounds.rs`).
    closed: bool,
}

/// What counting a message reads of the fabric, the same for every message of its source,
/// destination and bytes.
#[derive(Clone, Copy)]
struct Known {
    /// Its hosts by leaf slot.
    on: (u32, u32),
    connections: u64,
    events: u64,
    /// Its ideal FCT (0 once no least time is told).
    fct: Time,
}

/// The `[workload]`'s least time and each job's ([`Least`]).
type LeastTimes = (Time, Vec<Time>);

impl Counting<'_> {
    /// What counting `m` reads of the fabric.
    fn known(&mut self, m: &MessageSpec) -> Known {
        // the engine numbers hosts by leaf slot
        let on = m.on_slots(self.topo);
        Known {
            on: (on.src, on.dst),
            connections: budget::connections(self.topo, self.subflows, m),
            events: budget::events(self.topo, self.payload.max(1), &on),
            fct: self.least.as_mut().map_or(0, |l| l.ideal(&on)),
        }
    }

    /// Counts the next message, `m` of job `job`, which waits for `after`.
    fn count(&mut self, m: &MessageSpec, after: &[u32], job: u32) {
        let known = self.known(m);
        self.count_known(m, after, job, &known);
    }

    /// [`Counting::count`] of a message whose reads of the fabric are `known`.
    fn count_known(&mut self, m: &MessageSpec, after: &[u32], job: u32, known: &Known) {
        let i = self.base as usize + self.pushed;
        if self.packets.is_none() && too_many_packets(m, self.payload) {
            self.packets = Some((i, job, m.bytes));
            self.least = None; // refused: no least time to tell
        }
        if self.class.is_none() && u32::from(m.class) >= self.classes {
            self.class = Some((i, job, m.class));
        }
        self.tally.add(m, after, known.connections);
        self.events = self.events.saturating_add(known.events);
        if let Some(least) = &mut self.least {
            let on = MessageSpec { src: known.on.0, dst: known.on.1, ..*m };
            least.add_ideal(&on, after, job, known.fct);
        }
        self.pushed += 1;
    }
}

impl Sink for Counting<'_> {
    fn push(&mut self, spec: MessageSpec, after: &[u32], tag: Tag) -> u32 {
        self.count(&spec, after, tag.job);
        self.base + self.pushed as u32 - 1
    }

    fn len(&self) -> usize {
        self.pushed
    }

    /// Counts a ring's later steps in closed form where it holds (`rounds.rs`), else each
    /// message as [`Sink::push`] does.
    fn rounds(&mut self, last: &[u32], rounds: usize, reads: &[usize], make: &mut MakeRound<'_>) -> Vec<u32> {
        if let Some(ids) = self.closed.then(|| self.rounds_closed(last, rounds, reads, make)).flatten() {
            return ids;
        }
        each_round(self, last, rounds, reads, make)
    }
}

impl Scenario {
    /// The survey of this scenario's run (see the module doc), or `None` where only resolving
    /// it tells ([`Scenario::resolve`]). Errors are the resolve's.
    pub fn survey(&self) -> Result<Option<Survey>, ScenarioError> {
        Ok(self.counted(true, None)?.map(|(survey, _)| survey))
    }

    /// [`Scenario::survey`], a ring's later steps counted in closed form or (`closed` false)
    /// one by one; with the `[workload]`'s and each job's least time, where one is told.
    /// `far`: the messages read from far on where a pass over the workload found them already
    /// (`scenario::making`'s), else the first pass finds them.
    pub(crate) fn counted(&self, closed: bool, far: Option<FarIds>) -> Result<Option<(Survey, Option<LeastTimes>)>, ScenarioError> {
        let Frame { topo, transport, switch, mut warnings, mut need, max_memory, .. } = self.frame()?;
        if topo.tables.split().is_some() || topo.planes() > 1 {
            return Ok(None);
        }
        let Given { workload, messages, lists, arrivals, .. } = self.given(&topo, false)?;
        let payload = transport.mtu - transport.header;
        let routes = Routes::new(topo.clone());
        let max_messages = max_memory / budget::message_floor(&self.keep);
        // the jobs are made twice, each pass from the same stream
        let plan = |sink: &mut dyn Sink| job::plan(&self.jobs, sink, &topo, max_messages, &mut Rng::stream(self.seed, Stream::Workload, 1));
        // a trace drawn as the run goes has no other message (`Scenario::draws_as_it_goes`)
        let given = messages.len() + arrivals.as_ref().map_or(0, |a| a.count as usize);
        // a first pass finds the messages read from far on (`workload::window`): the counting
        // pass holds each message's levels and least time only while a later one may read them
        let far = if let Some(far) = far {
            far
        } else {
            let mut far = Far::default();
            for after in &lists {
                far.see(after);
            }
            plan(&mut far)?;
            far.shared()
        };
        let mut c = Counting {
            topo: &topo,
            least: Some(Least::new(&routes, &transport, self.lb.subflows(), given, far.clone())),
            payload,
            classes: switch.classes,
            base: 0,
            pushed: 0,
            tally: Tally::new(&transport, far, &self.keep),
            subflows: self.lb.subflows(),
            events: 0,
            packets: None,
            class: None,
            closed,
        };
        if let Some(a) = &arrivals {
            a.each(|m| _ = c.push(*m, &[], Tag::NONE));
        }
        for (m, after) in messages.iter().zip(&lists) {
            c.push(*m, after, Tag::NONE);
        }
        drop(lists);
        (c.base, c.pushed) = (given as u32, 0);
        let jobs = plan(&mut c)?;
        warnings.extend(crate::workload::costless_compute(&messages));
        warnings.extend(job::small_slices(&self.jobs, payload));
        let field = |i: usize, k: &str, job: u32| message_field(i, k, job, given, workload.as_ref());
        if let Some((i, job, bytes)) = c.packets {
            return Err(packets_error(field(i, "size", job), bytes, payload));
        }
        check_count(given + c.pushed)?;
        c.tally.check_connections()?;
        need.messages = c.tally.bytes();
        budget::check(&need, max_memory)?;
        if let Some(m) = &self.mixed {
            m.check(switch.classes)?;
            if c.class.is_some() {
                return Ok(None); // the mixed share may be the messages in that class
            }
        }
        if let Some((i, job, class)) = c.class {
            return Err(class_error(field(i, "class", job), class, switch.classes));
        }
        let names: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
        warnings.extend(c.least.as_ref().map(|l| l.warnings(self.stop.max_time.0, &names)).unwrap_or_default());
        let (events, least) = (c.events, c.least.and_then(|l| l.least().cloned()));
        Ok(Some((Survey { warnings, events, need, topo, max_time: self.stop.max_time.0 }, least)))
    }
}
