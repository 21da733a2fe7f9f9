//! How many threads a run uses when the user leaves it to the engine (`threads = "auto"`,
//! the front ends' default), and how such a run keeps its threads from costing more than
//! they give (issue 46).
//!
//! Two decisions:
//! - **Before the run** ([`auto`]): one thread for a small run (fewer than [`MIN_EVENTS`]
//!   events expected: starting threads, cutting the fabric and meeting at barriers would
//!   cost more than they could save); otherwise one thread per CPU this process may really
//!   use ([`available_cpus`]: its affinity mask and its cgroup's CPU quota, as
//!   `std::thread::available_parallelism` reads them, not the machine's core count), and at
//!   most one per piece the fabric cuts into (a leaf with its hosts).
//! - **During the run** ([`Chooser`]): a window with few events (a trace's compute gap, a
//!   run's tail) costs more in barriers than its threads save. An auto run runs a window on
//!   the driver's thread alone (every piece in turn, the other threads asleep) where the last
//!   window held fewer than [`SPARSE_EVENTS`] events per thread. The results are the same
//!   either way, and so is the choice, which depends only on the events.
//!
//! Why not more: on a machine whose cores other work also uses, the threads of a window wait
//! for each other, but a waiting thread parks (`parallel.rs`, `Barrier`) and gives its core
//! to the others. Measured with `fabricsim bench --contended` (docs/performance.md, "Threads
//! on a busy machine"), two threads then took 0.70-1.17x the one-thread time with 2 busy
//! loops on 2 cores, and 0.92x with 12. A chooser that timed windows both ways and ran the
//! faster was tried and dropped: a busy machine's timings are noise, and it took 1.05-1.3x
//! the time of plain threads.
//!
//! An explicit thread count is used as asked (a scaling measurement needs it), with a
//! `thread_note` where it exceeds the CPUs available.

use super::piece::{blocks, partition};
use super::Simulation;
use crate::error::ScenarioError;
use crate::scenario::{Model, Scenario};
use crate::time::Time;
use crate::topology::{Cut, Topology};

/// Events expected below which an auto run uses one thread: about 0.2 s of work on one
/// thread (5-10 M events/s on the benchmarks), less than a parallel run could gain.
pub const MIN_EVENTS: u64 = 2_000_000;

pub use crate::budget::EVENTS_PER_PACKET_TIER;

/// The CPUs this process may run on: its affinity mask and its cgroup's CPU quota (what
/// `std::thread::available_parallelism` reads on Linux), at least 1.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The events a run is expected to make, roughly: its data packets through the fabric (each
/// message's size in MTU payloads) times [`EVENTS_PER_PACKET_TIER`] per switch tier its path
/// climbs (1 under one leaf); a compute task or a message on a server's scale-up network makes
/// a few events, counted as one packet. Measured against the shipped scenarios: they make 0.76
/// to 0.97 of it (docs/performance.md, "How long a run takes").
pub fn expected_events(model: &Model) -> u64 {
    let mss = model.transport.mtu.saturating_sub(model.transport.header).max(1);
    let mut events = 0u64;
    model.each_message(|m| events = events.saturating_add(crate::budget::events(&model.topo, mss, m)));
    // (jobs made as the run goes: their survey's count)
    events.saturating_add(model.making.as_ref().map_or(0, |m| m.events))
}

/// The threads an auto run asks for, from its work (`events`, [`expected_events`]) and the CPUs available (see the module
/// doc); the pieces it cuts into may lower it further ([`super::Simulation::on_threads`]).
pub fn auto(topo: &Topology, events: u64, cpus: usize) -> usize {
    if cpus <= 1 || events < MIN_EVENTS {
        return 1;
    }
    cpus.min(topo.tables.classes().max(1))
}

impl Simulation {
    /// The least latency of anything that goes from one piece to another: a link between
    /// them (its nominal latency: faults only lengthen it), a release notice between their
    /// hosts (which follows a path over such links, and is at least as long), a server's
    /// scale-up network between its GPUs, or none between a multi-plane host's ports.
    pub(super) fn lookahead(&self) -> Time {
        let topo = self.topology();
        let far = topo.ports.iter().filter(|p| self.cut.home(p.from) != self.cut.home(p.to));
        let links = far.map(|p| p.delay).min().unwrap_or(Time::MAX);
        let split = |up: crate::topology::ScaleUp| {
            // a server whose GPUs are in different pieces
            let n = topo.nics();
            let piece = |h: u32| self.cut.home(topo.slot(h));
            (0..topo.gpus()).any(|h| h % n != 0 && piece(h) != piece(h - h % n)).then_some(up.latency)
        };
        // a multi-plane host whose ports are in different pieces tells itself at once
        let (gpus, planes) = (topo.gpus(), topo.planes());
        let apart = (0..gpus).any(|h| (1..planes).any(|p| self.cut.home(topo.slot_on(h, p)) != self.cut.home(topo.slot(h))));
        let planes = if apart { 0 } else { Time::MAX };
        links.min(topo.scale_up().and_then(split).unwrap_or(Time::MAX)).min(planes)
    }

    /// [`Simulation::new`], run on `threads` threads (the parallel engine): the
    /// fabric is cut into as many pieces, a leaf with its hosts in one, that run in windows
    /// no longer than the least latency between two pieces. The results are those of one
    /// thread, exactly. Where windows cannot pay (a link of no latency between two pieces,
    /// fewer leaves than threads), or the pieces would need more than `stop.max_memory`, the
    /// run uses fewer threads and says why ([`Simulation::thread_note`]). A large fabric is
    /// cut into more pieces than threads where that pays (`sim/piece.rs`, `blocks`): each
    /// thread runs its pieces one after another in each window, which keeps what a piece
    /// touches in the cache.
    pub fn with_threads(scenario: &Scenario, threads: usize) -> Result<Simulation, ScenarioError> {
        let mut sim = Self::threaded(scenario, Some(threads.max(1)), false, None)?;
        let cpus = available_cpus();
        if sim.threads > cpus {
            // a remark on this machine, not a result: the results' warnings do not depend on it
            let more = format!(
                "{} threads run with {cpus} CPUs available to this process: threads beyond them wait for a core (threads = \"auto\" stays within them)",
                sim.threads
            );
            sim.thread_note = Some(sim.thread_note.map_or(more.clone(), |note| format!("{note}; {more}")));
        }
        Ok(sim)
    }

    /// [`Simulation::with_threads`] with the count chosen by the engine (`threads = "auto"`,
    /// [`threads`](self)): one thread for a small run, else one per CPU available to the process
    /// (at most one per piece); a window after one with few events runs on the driver's
    /// thread alone.
    pub fn auto(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
        let mut sim = Self::threaded(scenario, None, false, None)?;
        if sim.threads > 1 {
            sim.chooser = Some(Chooser::new(sim.threads));
        }
        Ok(sim)
    }

    /// [`Simulation::with_threads`] (`Some`) or [`Simulation::auto`] (`None`); `open`: a
    /// session's run, which messages may be sent into (`sim::session`).
    pub(super) fn threaded(
        scenario: &Scenario,
        ask: Option<usize>,
        open: bool,
        rank: Option<(usize, usize)>,
    ) -> Result<Simulation, ScenarioError> {
        let cpus = available_cpus();
        let mut most = usize::MAX; // pieces at most: halved while they need too much memory
        loop {
            let (mut pieces, mut threads) = (1, 1);
            let cut = |topo: &Topology, model: &Model, events: u64| {
                threads = ask.unwrap_or_else(|| auto(topo, events, cpus));
                let home = partition(topo, threads.max(blocks(topo, model)).min(most));
                pieces = Cut::count(&home);
                home
            };
            match Self::build(scenario, cut, open, rank) {
                Ok(sim) => {
                    let mut sim = sim.on_threads(threads);
                    if sim.lookahead == 0 && pieces > threads {
                        // no window can run: the blocks would only run in turns
                        most = threads;
                        continue;
                    }
                    // memory is the reason whenever the pieces were halved below the threads
                    // (a note about that count, fewer than asked, would misquote the ask),
                    // unless no window runs at all
                    if most < threads && sim.lookahead > 0 {
                        let used = sim.threads;
                        sim.thread_note =
                            Some(format!("{threads} threads asked, {used} used: more pieces would need more than stop.max_memory"));
                    }
                    if ask.is_none() && sim.thread_note.is_some() {
                        // the engine's own choice, not an ask to explain
                        sim.thread_note = None;
                    }
                    return Ok(sim);
                }
                // each piece holds its calendar, and counts per message crossing pieces: fewer may fit
                Err(e) if pieces > 1 && e.field == "stop.max_memory" => most = pieces / 2,
                Err(e) => return Err(e),
            }
        }
    }

    /// This run's pieces on `threads` threads (at most one per piece; pieces are dealt out to
    /// the threads in turn). Pieces run in windows, even on one thread, where a window can
    /// hold anything (the least latency between two pieces is not zero); in turns otherwise.
    pub fn on_threads(mut self, threads: usize) -> Simulation {
        let count = self.pieces.len();
        (self.threads, self.thread_note) = (1, None);
        self.lookahead = if count > 1 { self.lookahead() } else { 0 };
        if threads > 1 {
            self.threads = if self.lookahead == 0 { 1 } else { threads.min(count) };
            self.thread_note = if self.lookahead == 0 {
                Some(format!("{threads} threads asked, 1 used: a link between two pieces has no latency, so no window can run them apart"))
            } else if count < threads {
                Some(format!("{threads} threads asked, {count} used: the fabric cuts into {count} pieces"))
            } else {
                None
            };
        }
        self
    }
}

/// Events per thread a window must hold for an auto run to run the next one on all its
/// threads: below it, the window's three barriers and its mail cost more than the threads
/// save (an event takes 100-150 ns; a barrier at which a thread slept costs a wake-up,
/// microseconds on an idle machine and more on a busy one).
pub const SPARSE_EVENTS: u64 = 1024;

/// Chooses whether an auto run's next window runs on all its threads or on the driver's
/// alone, from the events of the last window: deterministic, since a window's events do not
/// depend on the threads that ran it.
#[derive(Debug, Clone)]
pub struct Chooser {
    threads: u64,
    parallel: bool,
    /// Windows run each way (solo, parallel).
    pub counts: [u64; 2],
}

impl Chooser {
    pub fn new(threads: usize) -> Chooser {
        Chooser { threads: threads as u64, parallel: true, counts: [0; 2] }
    }

    /// Whether the next window runs on every thread.
    pub fn parallel(&self) -> bool {
        self.parallel
    }

    /// A window ran, with `events` events.
    pub fn ran(&mut self, events: u64) {
        self.counts[usize::from(self.parallel)] += 1;
        self.parallel = events >= SPARSE_EVENTS * self.threads;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_window_sends_the_next_to_one_thread() {
        let mut c = Chooser::new(2);
        assert!(c.parallel());
        c.ran(2 * SPARSE_EVENTS - 1);
        assert!(!c.parallel());
        c.ran(2 * SPARSE_EVENTS);
        assert!(c.parallel());
        assert_eq!(c.counts, [1, 1]);
    }
}
