//! The simulation: one value that owns the clock, the event queue and the components, and
//! dispatches each event to the component it concerns. No globals; two simulations never
//! share anything.
//!
//! The packet path, per hop: a packet reaches an egress port (or, at a host, is pulled from a
//! connection when the NIC is free: line-rate pacing with no NIC queue). If the port is free
//! it goes on the wire at once; otherwise it queues (or is trimmed, dropped, ECN-marked) and
//! the port wakes (`PortFree`) when its wire frees to send the next one. On the wire it
//! travels the link's pipe (`PipeArrive` when its last bit reaches the far end, plus the
//! switch traversal latency there) and is forwarded to the next egress port ([`Fabric`]) or
//! handed to the host ([`Nics`]). The queue holds at most one wake-up per port and one
//! pipe-head event per link.

mod duties;
mod generate;
mod made;
mod parallel;
pub(crate) mod piece;
pub mod ranks;
mod results;
pub mod session;
pub mod threads;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::Instant;

use crate::budget;
use crate::engine::rng::{Rng, Stream};
use crate::engine::watchdog::Watchdog;
use crate::engine::{Event, EventQueue, Status, FAULT_UNIT, RECORD_UNIT};
use crate::error::ScenarioError;
use crate::faults::{self, Timeline};
use crate::host::cc::CcContext;
use crate::host::factory::ConnFactory;
use crate::host::message::Message;
use crate::host::nic::{Nics, UpPorts};
use crate::host::table::{ConnCatalog, ConnTable};
use crate::scenario::{Model, Scenario};
use crate::stats::sampler::Sampler;
use crate::stats::RunResult;
use crate::switch::forward::Fabric;
use crate::switch::links::Links;
use crate::switch::Overflow;
use crate::time::{serialization, Time};
use crate::topology::{Cut, Routes, Topology};
use piece::{partition, Pause, Piece};

/// A fabric, its workload and the clock.
pub struct Simulation {
    scenario: Scenario,
    model: Model,
    /// The run's hosts and switches with their state and events, in pieces ([`piece`]), and
    /// the piece of each node. Boxed: the pieces move to the threads' cells and back at every
    /// parallel window, a pointer each rather than 2 KB (`sim::parallel`).
    #[allow(clippy::vec_box, reason = "a window moves every piece twice: a pointer each, not 2 KB")]
    pieces: Vec<Box<Piece>>,
    cut: Arc<Cut>,
    /// The ports routing has excluded (empty until a fault converges).
    excluded: Vec<bool>,
    /// The threads the pieces run on (1 runs them in turns), the least latency
    /// of anything between two pieces (a link, a release notice), and why the run uses fewer
    /// threads than asked, if it does.
    threads: usize,
    lookahead: Time,
    thread_note: Option<String>,
    /// An auto run's choice, window by window, of all its threads or the driver's alone
    /// (`None`: every window on all threads).
    chooser: Option<threads::Chooser>,
    /// The parallel windows' wall time, a moving average (how long a waiting thread spins).
    window_wall: std::time::Duration,
    /// The driver's wall time in parallel windows, and the worker threads' waits between and
    /// within them (`Simulation::window_profile`).
    window_time: std::time::Duration,
    thread_waits: [std::time::Duration; 2],
    /// Windows run in parallel, and the events they held.
    windows: (u64, u64),
    /// The most events a span of one lookahead held so far, in a window or in turns (`None`
    /// until the first span ran): the event guard lets a window run only while more than
    /// `GUARD_SPANS` such spans are left (`sim::parallel`).
    widest: Option<u64>,
    /// A time before which the run cannot have completed every message, found at a window
    /// (`parallel.rs`): a lower bound stays one as the run goes on, so it is found again only
    /// where a window would reach it.
    ends_after: Time,
    /// The events the run was expected to make, from its messages ([`threads::expected_events`]).
    expected_events: u64,
    /// When the duties of the whole run that are scheduled fall (they wait in the first
    /// piece's queue; a window of the parallel engine ends at the next).
    duty_times: BinaryHeap<Reverse<Time>>,
    faults: Timeline,
    sampler: Option<Sampler>,
    /// Legal but probably unintended settings: the scenario's and the run's.
    warnings: Vec<String>,
    events: u64,
    /// The time of the last event run.
    now: Time,
    /// Messages completed, counted over the pieces.
    done: u32,
    status: Status,
    watchdog: Watchdog,
    /// The loop stops once this many messages are done: all of them, or 0 when the watchdog
    /// stops the run (one comparison per event serves both) ...
    stop_at: u32,
    /// ... at the end of the picosecond in which that happened: every event of that instant
    /// runs, whichever unit it belongs to.
    finish_at: Option<Time>,
    wall: std::time::Duration,
    /// Payload a trace's messages had delivered when its window's second half began and when
    /// it ended.
    window_bytes: [Option<u64>; 2],
    /// A session's state (`None` for a closed run: every message given up front).
    open: Option<Box<session::Open>>,
    /// This run's rank and the ranks of a run across them ([`ranks`]; `None` in one process).
    across: Option<(usize, usize)>,
    /// A run across ranks: the ports' pauses as the ranks last told each other
    /// (`ranks/pauses.rs`), which the deadlock check reads where this rank's copies of other
    /// ranks' pieces are not theirs.
    pauses_told: Option<Vec<crate::switch::pfc::deadlock::Fragment>>,
}

impl Simulation {
    /// Checks the scenario and builds the fabric; nothing runs yet.
    pub fn new(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
        Self::in_pieces(scenario, 1)
    }

    /// [`Simulation::new`], with the run cut into `pieces` pieces (a leaf with its hosts, the
    /// switches above dealt out), each with its own state and queue, run one event at a time
    /// in key order: the same results as one piece, by construction; the tests check it.
    pub fn in_pieces(scenario: &Scenario, pieces: usize) -> Result<Simulation, ScenarioError> {
        Self::cut_by(scenario, |topo| partition(topo, pieces))
    }

    /// The threads the run uses.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The pieces the run is cut into (for its threads, and for the cache: `blocks` in
    /// `sim/piece.rs`).
    pub fn pieces(&self) -> usize {
        self.pieces.len()
    }

    /// Windows the parallel engine ran on every thread so far, and the events they held (the
    /// rest ran in turns on one).
    pub fn parallel_windows(&self) -> (u64, u64) {
        self.windows
    }

    /// Windows an auto run ([`Simulation::auto`]) ran on the driver's thread alone, after a
    /// window with few events (0 for any other run).
    pub fn solo_windows(&self) -> u64 {
        self.chooser.as_ref().map_or(0, |c| c.counts[0])
    }

    /// Why the run uses fewer threads than [`Simulation::with_threads`] asked, if it does, and
    /// whether it uses more than the CPUs available to the process.
    pub fn thread_note(&self) -> Option<&str> {
        self.thread_note.as_deref()
    }

    /// [`Simulation::in_pieces`] with the cut given by hand: `cut(topology)[node]` is the
    /// piece of each node (any cut gives the same results; the tests try random ones). A cut
    /// that does not give every node a piece is refused.
    pub fn cut_by(scenario: &Scenario, cut: impl FnOnce(&Topology) -> Vec<u16>) -> Result<Simulation, ScenarioError> {
        Self::build(scenario, |topo, _, _| cut(topo), false, None)
    }

    /// [`Simulation::cut_by`], the cut chosen knowing the run's model (its messages, its
    /// memory) and the events it is expected to make; `open`: a session's run, which may have
    /// no workload and takes messages while it runs; `rank`: (rank, ranks) of a run across
    /// ranks, which builds the pieces other ranks run hollow: their links, switches and hosts,
    /// but none of their messages' or connections' state, which rank 0 hears at the end.
    fn build(
        scenario: &Scenario,
        cut: impl FnOnce(&Topology, &Model, u64) -> Vec<u16>,
        open: bool,
        rank: Option<(usize, usize)>,
    ) -> Result<Simulation, ScenarioError> {
        let mut model = scenario.resolve_run(open, rank.is_none())?;
        if rank.is_some() {
            model.draw_whole(); // each process holds every message (`ranks`)
        }
        let topo = model.topo.clone();
        let expected_events = threads::expected_events(&model);
        let home: Arc<[u16]> = cut(&topo, &model, expected_events).into();
        if home.len() != topo.nodes.len() {
            let allowed = format!("one piece for each of the {} nodes", topo.nodes.len());
            return Err(ScenarioError::new("cut", format!("{} pieces", home.len()), allowed));
        }
        let faults = faults::timeline(&scenario.faults, &topo, model.seed, model.max_time)?;
        let sampler = scenario.samples.as_ref().map(|cfg| cfg.resolve(&topo)).transpose()?;
        let mut warnings = model.warnings.clone();
        let mut need = model.need;
        if let Some(s) = &sampler {
            need = budget::with_samples(need, s.rows_until(model.max_time));
            budget::check(&need, model.max_memory)?;
            warnings.extend(s.warning(model.max_time));
        }
        // the duties that read or change the whole run wait in the first piece's queue: the
        // fault timeline (unit 0), the recorders and the no-progress guard (unit 1)
        let mut duties = Vec::new();
        if let Some(at) = faults.next_time() {
            duties.push((FAULT_UNIT, at, Event::Faults)); // first at `at`
        }
        if sampler.is_some() {
            duties.push((RECORD_UNIT, 0, Event::Sample));
        }
        if let Some(w) = &model.load_window {
            duties.push((RECORD_UNIT, w.half, Event::Window));
            duties.push((RECORD_UNIT, w.end, Event::Window));
        }
        let watchdog = Watchdog::new(model.transport.rto);
        duties.push((RECORD_UNIT, watchdog.every(), Event::Watch));
        let cut = Arc::new(Cut::new(&topo, home.clone()));
        let count = cut.pieces();
        // a run in pieces runs a window at once: no piece can pause for the driver to take more
        if count > 1 {
            model.make_whole();
        }
        // the calendar's ring should cover a hop, the longest link delay plus a packet: every
        // packet event falls within it (timers go beyond). Its memory grows with its span.
        let mtu = model.transport.mtu;
        let hop = topo.ports.iter().map(|p| p.delay + serialization(mtu, p.rate)).max().unwrap_or(0);
        let factory = Self::factory(&model);
        // the pieces share the messages and their connections' catalog from here on (the
        // model's copy would double them); each holds the rows of its hosts' connections
        let mut specs = std::mem::take(&mut model.messages);
        let rngs: Vec<Rng> = (0..topo.hosts()).map(|h| Rng::stream(model.seed, Stream::Host, h.into())).collect();
        let mut layout = ConnCatalog::build(&factory, &specs, rngs.len(), (count > 1).then_some((&home[..], count)));
        let drawn_conns = model.count_drawn(&factory, &mut layout.incoming);
        let messages = Arc::new(Message::list(&mut specs, &layout.ids));
        if count > 1 {
            need.pieces = budget::pieces(
                count as u64 - 1,
                &topo.size(),
                (messages.len() + model.message_count()) as u64,
                layout.ids.last().map_or(0, |r| u64::from(r.end)) + drawn_conns,
            );
            budget::check(&need, model.max_memory)?;
        }
        let dependents = Arc::new(model.deps.dependents(messages.len()));
        let mut built = Vec::with_capacity(count);
        let own = rank.map(|(r, n)| ranks::owned(count, n, r));
        for me in 0..count {
            // another rank's piece: what its messages and connections count is its rank's
            // alone, and reaches rank 0 at the end (`ranks/gather.rs`)
            let hollow = own.as_ref().is_some_and(|own| !own.contains(&me));
            let share = cut.share(me as u16);
            let units = 2 + (share.hosts + share.switches) as usize;
            let mut queue = EventQueue::with_horizon(hop + hop / 8).with_units(cut.units().clone(), units);
            if me == 0 {
                for &(unit, at, event) in &duties {
                    queue.schedule(queue.origin(unit), at, event);
                }
            }
            let bytes = if hollow { &[][..] } else { &layout.bytes[me][..] };
            let conns = ConnTable::new(factory.clone(), model.transport.cc.sends_cnps(), layout.catalog.clone(), me as u16, bytes);
            let mut links = Links::piece(topo.clone(), model.switch.classes as usize, model.switch.pfc, model.seed, cut.clone(), me as u16);
            let (fabric, switches) = Fabric::piece(topo.clone(), model.switch.clone(), model.seed, cut.clone(), me as u16, &links);
            let hosts = (&rngs[..], &layout.incoming[..]);
            let held = if hollow { 0 } else { layout.messages[me] };
            let (mut nics, mut hosts) = Nics::new(model.transport.clone(), conns, messages.clone(), hosts, held, &links);
            nics.up = UpPorts::new(model.topo.scale_up(), share.hosts as usize);
            if !hollow {
                nics.schedule_starts(&mut hosts, &mut queue, &mut links, &model.deps, dependents.clone());
            }
            built.push(Box::new(Piece { queue, links, switches, fabric, hosts, nics, counted: 0, ran: 0 }));
        }
        // what each message waits for is read by nothing once the pieces hold their counts and
        // the reverse lists (the jobs' bounds were computed at resolve): about 17 bytes a
        // message for the rest of the run
        model.deps = Default::default();
        // (the model's list is the pieces' now: what it counts is a trace's not drawn yet)
        let stop_at = if open { u32::MAX } else { (built[0].nics.messages().len() + model.message_count()) as u32 };
        let duty_times = duties.iter().map(|&(_, at, _)| Reverse(at)).collect();
        let mut sim = Simulation {
            scenario: scenario.filled(),
            model,
            pieces: built,
            cut,
            excluded: Vec::new(),
            threads: 1,
            lookahead: 0,
            thread_note: None,
            chooser: None,
            window_wall: parallel::MAX_SPIN,
            window_time: std::time::Duration::ZERO,
            thread_waits: [std::time::Duration::ZERO; 2],
            windows: (0, 0),
            widest: None,
            ends_after: 0,
            expected_events,
            duty_times,
            faults,
            sampler,
            warnings,
            events: 0,
            now: 0,
            done: 0,
            status: Status::Running,
            watchdog,
            stop_at,
            // nothing to complete: the run is done with instant 0, whatever runs first
            finish_at: (stop_at == 0).then_some(0),
            wall: std::time::Duration::ZERO,
            window_bytes: [None; 2],
            open: open.then(|| Box::new(session::Open::new())),
            across: None,
            pauses_told: None,
        };
        sim.draw(false);
        sim.begin_jobs();
        Ok(sim)
    }

    /// What builds the connections of a message.
    pub(crate) fn factory(model: &Model) -> ConnFactory {
        let t = &model.transport;
        let cc = CcContext {
            init: t.init_cwnd,
            max: t.max_cwnd,
            mtu: t.mtu,
            mss: t.mtu - t.header,
            base_rtt: model.base_rtt,
            rate: model.topo.host_rate(),
            trimming: model.switch.overflow == Overflow::Trim,
        };
        ConnFactory::new(t.clone(), model.lb.clone(), model.lb_ctx.clone(), cc, Routes::new(model.topo.clone()), model.seed)
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> RunResult {
        self.step(u64::MAX);
        self.into_results()
    }

    /// Processes at most `budget` events (on several threads, whole windows: a few more);
    /// returns the status afterwards. Call again while it is [`Status::Running`] (the front
    /// ends do this to draw progress).
    pub fn step(&mut self, budget: u64) -> Status {
        if self.status != Status::Running {
            return self.status;
        }
        let started = Instant::now();
        // the event guard folded into the budget
        let budget = budget.min(self.model.max_events.saturating_sub(self.events));
        let mut n = 0;
        self.status = if self.lookahead > 0 {
            self.windows(budget, &mut n, started)
        } else {
            self.turns(budget, &mut n, started, self.bound_key()).unwrap_or(Status::Running)
        };
        if self.status != Status::Running {
            // a trace's messages it never drew, or its jobs' never made, are rows of its tables
            self.draw(true);
            self.make_rest();
        }
        self.wall += started.elapsed();
        self.status
    }

    /// Runs the pieces in turns on this thread (`Piece::run`) until the next event's key
    /// reaches `until`: the piece with the least next key runs its events while they stay
    /// below every other piece's next key, the time guard and the end of a finished run's
    /// last instant, and pauses for what the driver must see at once (a duty of the whole
    /// run, a completion, something handed to another piece). Returns `None` once the next
    /// key reaches `until`, or the run's status when it stopped first (a guard, the budget
    /// counted in `n`, the wall clock).
    fn turns(&mut self, budget: u64, n: &mut u64, started: Instant, until: u128) -> Option<Status> {
        loop {
            let horizon = self.horizon();
            let Some((i, head, bound)) = self.turn(horizon) else {
                let next = self.next_time();
                return Some(self.guard(next));
            };
            if head >= until {
                return None;
            }
            // a parallel window may have run past the budget: it counts whole windows
            if *n >= budget {
                return Some(if self.events >= self.model.max_events { Status::EventLimit } else { Status::Running });
            }
            // the wall clock is read at least once every 2^16 events (a few ms of work)
            if self.model.max_wall.is_some_and(|limit| self.wall + started.elapsed() >= limit) {
                return Some(Status::WallLimit);
            }
            let mut left = (budget - *n).min(1 << 16);
            let before = left;
            let alone = self.pieces.len() == 1;
            let piece: &mut Piece = &mut self.pieces[i];
            let pause = if alone {
                piece.run::<{ Pause::ON_COMPLETION }>(bound.min(until), &mut left, &mut self.now)
            } else {
                piece.run::<{ Pause::ON_ALL }>(bound.min(until), &mut left, &mut self.now)
            };
            (*n, self.events) = (*n + before - left, self.events + before - left);
            match pause {
                Pause::Duty(event, by) => self.run_duty(self.now, event, by),
                Pause::Changed => self.changed(i),
                Pause::Bound => {}
            }
            if self.done >= self.stop_at && self.finish_at.is_none() {
                self.finish_at = Some(self.now);
            }
        }
    }

    /// Whose turn it is: the piece with the least next key, that key, and the key below
    /// which the piece may run (the next key of every other piece, and the last instant
    /// `horizon`); `None` when no event lies within `horizon`.
    fn turn(&mut self, horizon: Time) -> Option<(usize, u128, u128)> {
        // keys below this one have a time within the horizon
        let within = horizon.checked_add(1).map_or(u128::MAX, |t| u128::from(t) << 64);
        let (first, second) = match &mut self.pieces[..] {
            [one] => ((one.queue.peek_key()?, 0), u128::MAX),
            all => {
                // the least two heads in one pass (a run in turns asks once per turn, and a
                // turn of a busy fabric in many pieces runs a few events)
                let (mut first, mut second) = (None::<(u128, usize)>, u128::MAX);
                for (i, p) in all.iter_mut().enumerate() {
                    let Some(key) = p.queue.peek_key() else { continue };
                    match first {
                        Some((least, _)) if key >= least => second = second.min(key),
                        _ => {
                            second = first.map_or(second, |(least, _)| least);
                            first = Some((key, i));
                        }
                    }
                }
                (first?, second)
            }
        };
        (first.0 < within).then_some((first.1, first.0, second.min(within)))
    }

    /// The time of the next event of any piece.
    fn next_time(&mut self) -> Option<Time> {
        self.pieces.iter_mut().filter_map(|p| p.queue.peek_time()).min()
    }

    /// After piece `i` paused for a change: hands over what it sent to other pieces, and
    /// counts its completions.
    fn changed(&mut self, i: usize) {
        if self.pieces[i].has_outgoing() {
            Piece::hand_over(&mut self.pieces, i, self.cut.homes());
        }
        self.done += self.pieces[i].newly_done();
        self.take_asked();
    }

    /// The last instant an event may run at: the time guard's, or the end of the instant in
    /// which the run finished.
    fn horizon(&self) -> Time {
        self.finish_at.map_or(self.model.max_time, |end| end.min(self.model.max_time))
    }

    /// Why the run ends when its next event (`next`) lies beyond [`Simulation::horizon`].
    fn guard(&self, next: Option<Time>) -> Status {
        if let Some(end) = self.finish_at {
            if next.is_none_or(|t| t > end) {
                return if self.done == self.flow_count() {
                    Status::Complete
                } else if self.pfc_deadlock().is_some() {
                    Status::PfcDeadlock
                } else {
                    Status::NoProgress
                };
            }
        }
        match next {
            // a PFC deadlock stops every sender (a paused NIC sends nothing, arms no timer)
            None if self.pfc_deadlock().is_some() => Status::PfcDeadlock,
            None => Status::Stalled,
            Some(_) => Status::TimeLimit,
        }
    }
}
