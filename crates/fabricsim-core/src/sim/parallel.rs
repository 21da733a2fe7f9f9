//! The parallel engine: a run's pieces on threads, in conservative windows, with the same
//! results as on one thread.
//!
//! Each piece ([`super::piece`]) owns its units and their queue, and reaches another piece
//! only by a packet on a wire or a release notice, which take at least the run's *lookahead*:
//! the least latency of a link between two pieces, and of a notice between hosts of two
//! pieces. So in a window `[now, now + lookahead)` no piece can change what another does:
//! every piece runs its events of the window in its own key order on its own thread, and what
//! crosses is handed over between windows: each thread sorts its pieces' outboxes into
//! mailboxes by the piece they are for, and after a barrier takes its pieces' mail into their
//! wires and queues (the threads are created once per `step` and meet at a barrier at each
//! window's start, after its mail is posted, and at its end). Event keys
//! are (time, unit, sequence within the unit), never a global counter, so each piece makes
//! the decisions it makes on one thread.
//!
//! A window runs in parallel only where nothing in it needs the whole run at once; anything
//! else runs in turns on the driver's thread ([`Simulation::turns`], exact by construction):
//! - a duty of the whole run (faults and routing, samples, a trace's windows, the no-progress
//!   guard): a window ends where the next one falls, and the driver runs it;
//! - the run's end: it stops at the end of the instant in which its last message completes,
//!   so a window runs in parallel only if no message can complete in it. Each host knows the
//!   bytes it still misses; those not yet on its link's wire must cross the link at its
//!   nominal rate after the window's start, which bounds its last completion from below
//!   (`Piece::completion_bound`); a bound found stays one, and is read again only where a
//!   window would reach it. Near the end, the last windows run in turns;
//! - the event guard (`stop.max_events`) counts every event in one order: the first span of
//!   one lookahead runs in turns and measures how many events a span holds, and once fewer
//!   than [`GUARD_SPANS`] times the widest span so far, or than [`QUEUED_GROWTH`] events for
//!   each one queued (a burst after a quiet spell), are left, the run goes on in turns (a
//!   window that still crosses the guard is said in the warnings).
//!   Until 2026-11-30 the turns began at half the guard, and a guard smaller than twice the
//!   first window (1 000 events on 128 hosts and 2 threads) was crossed by it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use super::piece::{Mail, Piece};
use super::{threads, Simulation};
use crate::engine::Status;
use crate::time::Time;

/// How long a thread that waits at a [`Barrier`] spins before it sleeps. A window of the
/// parallel engine takes a few to a few hundred microseconds, and a sleeping thread's wake-up
/// costs a few microseconds on an idle core (a futex wake and a context switch) but a
/// scheduler quantum (milliseconds) on a busy one. So a waiting thread spins at most this
/// long, and at most as long as the last windows took (`Barrier::spin`), then parks: it never
/// holds a core that a thread still working needs for longer than that (issue 46; the barrier
/// before it spun 20 000 times, then looped on `yield_now`, which on a busy machine kept the
/// waiting thread on the core: up to 600x the one-thread wall time).
pub(super) const MAX_SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// Threads meeting between windows: each waits until all have arrived. A waiting thread
/// spins for a bounded time ([`MAX_SPIN`], or less), then sleeps (parks) until the last one
/// arrives and wakes it.
pub(super) struct Barrier {
    threads: usize,
    /// How long a waiting thread spins before it sleeps, in nanoseconds (set by the driver
    /// from the windows' measured length; 0 with more threads than CPUs).
    spin_ns: AtomicU64,
    arrived: AtomicUsize,
    /// Counts the times all arrived.
    round: AtomicUsize,
    /// Threads asleep (or about to be) in [`Barrier::wait`], counted before they look at
    /// `round` a last time; the last to arrive wakes them only where there are some, so a
    /// barrier that nobody sleeps at costs no system call.
    sleepers: AtomicUsize,
    /// The threads asleep, with the round each waits in: the last to arrive wakes its round's,
    /// each on its own (`unpark`), so that none waits for a lock another woken thread holds
    /// (a condition variable wakes them all into one mutex, which they take one by one).
    asleep: Mutex<Vec<(usize, std::thread::Thread)>>,
}

impl Barrier {
    fn new(threads: usize) -> Barrier {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let spin = if threads <= cpus { MAX_SPIN.as_nanos() as u64 } else { 0 };
        Barrier {
            threads,
            spin_ns: AtomicU64::new(spin),
            arrived: AtomicUsize::new(0),
            round: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            asleep: Mutex::new(Vec::with_capacity(threads)),
        }
    }

    /// Sets how long a waiting thread spins: the windows' length `window` (a thread that waits
    /// longer than that is waiting on one that lost its core), at most [`MAX_SPIN`].
    pub fn spin(&self, window: std::time::Duration) {
        if self.spin_ns.load(Ordering::Relaxed) > 0 {
            self.spin_ns.store(window.min(MAX_SPIN).as_nanos().max(1) as u64, Ordering::Relaxed);
        }
    }

    pub fn wait(&self) {
        let round = self.round.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.round.fetch_add(1, Ordering::SeqCst);
            // a sleeper counted itself before it looked at `round` (both SeqCst): either it
            // saw the new round, or it is counted here and waits under the lock taken below
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                // this round's (a thread let through may already sleep at the next round of a
                // barrier met again, and stays for that round's last arrival)
                let woken: Vec<std::thread::Thread> = {
                    let mut asleep = self.asleep.lock().unwrap_or_else(PoisonError::into_inner);
                    let (now, later) = std::mem::take(&mut *asleep).into_iter().partition(|&(r, _)| r == round);
                    *asleep = later;
                    self.sleepers.fetch_sub(now.len(), Ordering::SeqCst);
                    now.into_iter().map(|(_, t)| t).collect()
                };
                woken.iter().for_each(std::thread::Thread::unpark);
            }
            return;
        }
        let spin = self.spin_ns.load(Ordering::Relaxed);
        if spin > 0 {
            let started = Instant::now();
            let mut spins = 0u32;
            while self.round.load(Ordering::Acquire) == round {
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                // the clock is read once in 64 spins (a spin is a few nanoseconds)
                if spins.is_multiple_of(64) && started.elapsed().as_nanos() as u64 >= spin {
                    break;
                }
            }
        }
        if self.round.load(Ordering::Acquire) != round {
            return;
        }
        {
            let mut asleep = self.asleep.lock().unwrap_or_else(PoisonError::into_inner);
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            if self.round.load(Ordering::SeqCst) != round {
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
                return;
            }
            asleep.push((round, std::thread::current()));
        }
        // an `unpark` before the `park` is kept: the thread does not sleep through it
        while self.round.load(Ordering::Acquire) == round {
            std::thread::park();
        }
    }
}

/// What a parallel window's threads share: the pieces (moved in for the window, out after
/// it; a run across processes moves in only its own), the mailboxes (`mail[from * pieces +
/// to]`), each node's piece, the window's end key (`None`: the threads stop), the barriers,
/// and a thread's panic.
pub(super) struct Shared {
    pub cells: Vec<Mutex<Option<Box<Piece>>>>,
    pub mail: Vec<Mutex<Mail>>,
    home: std::sync::Arc<[u16]>,
    pub plan: Mutex<Option<u128>>,
    pub start: Barrier,
    pub posted: Barrier,
    /// A run across processes (`sim::ranks`): between posting and collecting, the driver
    /// swaps with the other processes what their pieces' mailboxes hold, and the threads wait
    /// here for it (`None` in one process).
    pub exchanged: Option<Barrier>,
    pub end: Barrier,
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// Nanoseconds the worker threads waited, summed over them: at `start` (for the driver's
    /// pass between windows, and its turns), and within windows (at `posted`, `exchanged` and
    /// `end`: for the slowest piece, the exchange across processes and the wake-ups).
    pub waited: [AtomicU64; 2],
}

impl Shared {
    /// What `threads` threads share to run `pieces` pieces in windows (`home`: the piece of each
    /// node; `across`: a run across processes, whose driver swaps mail between posting and
    /// collecting).
    pub fn new(pieces: usize, threads: usize, home: std::sync::Arc<[u16]>, across: bool) -> Shared {
        Shared {
            cells: (0..pieces).map(|_| Mutex::new(None)).collect(),
            mail: (0..pieces * pieces).map(|_| Mutex::new(Mail::default())).collect(),
            home,
            plan: Mutex::new(None),
            start: Barrier::new(threads),
            posted: Barrier::new(threads),
            exchanged: across.then(|| Barrier::new(threads)),
            end: Barrier::new(threads),
            panic: Mutex::new(None),
            waited: [AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    /// Counts the wait of a worker thread since `since`: between windows (0) or within (1).
    fn waited(&self, within: usize, since: Instant) {
        self.waited[within].fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// Does `f` for each piece of thread `t` (every `threads`-th from `t`), keeping a panic
    /// for the driver.
    fn each(&self, t: usize, threads: usize, f: impl Fn(usize, &mut Piece)) {
        for (i, cell) in self.cells.iter().enumerate().skip(t).step_by(threads) {
            let mut guard = cell.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(piece) = guard.as_mut() else { continue };
            if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(i, piece))) {
                self.panic.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(payload);
            }
        }
    }

    /// Runs piece `i` up to `bound`, then posts its outboxes into row `i` of the mailboxes.
    fn run_and_post(&self, i: usize, piece: &mut Piece, bound: u128) {
        piece.window(bound);
        debug_assert!(piece.links.outbox.iter().all(|h| h.at >= (bound >> 64) as Time), "packets arrive after the window");
        debug_assert!(piece.links.notices.iter().all(|n| n.at >= (bound >> 64) as Time), "notices arrive after the window");
        let n = self.cells.len();
        let mut row: Vec<_> = self.mail[i * n..(i + 1) * n].iter().map(|m| m.lock().unwrap_or_else(PoisonError::into_inner)).collect();
        piece.post(&self.home, &mut row);
    }

    /// Takes piece `j`'s mail (column `j` of the mailboxes) into its wires and queue.
    fn collect(&self, j: usize, piece: &mut Piece) {
        let n = self.cells.len();
        for i in 0..n {
            piece.take(&mut self.mail[i * n + j].lock().unwrap_or_else(PoisonError::into_inner));
        }
    }

    /// Thread `t`'s part of a window ending at `bound`: run and post, then (once every thread
    /// posted, and across processes once the driver swapped what crosses them) collect.
    fn window(&self, t: usize, threads: usize, bound: u128) {
        self.run_phase(t, threads, bound);
        let since = Instant::now();
        self.posted.wait();
        if let Some(exchanged) = &self.exchanged {
            exchanged.wait();
        }
        if t > 0 {
            self.waited(1, since);
        }
        self.collect_phase(t, threads);
    }

    /// Thread `t` runs its pieces up to `bound` and posts what they hand other pieces.
    pub fn run_phase(&self, t: usize, threads: usize, bound: u128) {
        self.each(t, threads, |i, piece| self.run_and_post(i, piece, bound));
    }

    /// Thread `t` takes its pieces' mail.
    pub fn collect_phase(&self, t: usize, threads: usize) {
        self.each(t, threads, |j, piece| self.collect(j, piece));
    }

    /// The panic a thread kept, if one did.
    pub fn panicked(&self) -> Option<Box<dyn std::any::Any + Send>> {
        self.panic.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// A worker thread: a window whenever the driver plans one, until it plans none.
    pub fn work(&self, t: usize, threads: usize) {
        loop {
            let since = Instant::now();
            self.start.wait();
            self.waited(0, since);
            let Some(bound) = *self.plan.lock().unwrap_or_else(PoisonError::into_inner) else { return };
            self.window(t, threads, bound);
            let since = Instant::now();
            self.end.wait();
            self.waited(1, since);
        }
    }
}

/// Spans of one lookahead, each as wide as the widest so far, that must be left before the
/// event guard for a window to run in parallel: past that, the run goes on in turns, so that
/// where `stop.max_events` stops it does not depend on the threads (a window holding four times
/// the events of any span before it would still cross the guard, and the run says so).
pub const GUARD_SPANS: u64 = 4;
/// Events a window is taken to make for each event queued at its start, near the guard: the
/// first window of the 8 192-host permutation made 13 for each of its 8 192 starts.
pub const QUEUED_GROWTH: u64 = 16;

impl Simulation {
    /// Runs the pieces on [`Simulation::threads`] threads in windows (see the module doc)
    /// until the run stops or `budget` events (counted in `n`) ran; returns the status.
    pub(super) fn windows(&mut self, budget: u64, n: &mut u64, started: Instant) -> Status {
        let threads = self.threads;
        let pieces = self.pieces.len();
        let shared = Shared::new(pieces, threads, self.cut.homes().clone(), false);
        let status = std::thread::scope(|s| {
            for t in 1..threads {
                let shared = &shared;
                s.spawn(move || shared.work(t, threads));
            }
            // the workers are released even if the driver panics (a bug): they would wait
            // at the barrier forever, and the scope for them
            let status = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.drive(&shared, budget, n, started)));
            *shared.plan.lock().unwrap_or_else(PoisonError::into_inner) = None;
            shared.start.wait();
            status.unwrap_or_else(|payload| std::panic::resume_unwind(payload))
        });
        self.add_waits(&shared);
        status
    }

    /// Adds what the threads of `shared` waited to the run's counts ([`Simulation::window_profile`]).
    pub(super) fn add_waits(&mut self, shared: &Shared) {
        for (sum, w) in self.thread_waits.iter_mut().zip(&shared.waited) {
            *sum += std::time::Duration::from_nanos(w.load(Ordering::Relaxed));
        }
    }

    /// Where the parallel windows' wall time went: the driver's time inside windows, and the
    /// worker threads' waits summed over them, between windows (for the driver's pass and its
    /// turns) and within them (for the slowest piece, the exchange across processes and the
    /// barriers' wake-ups). Timings, not results: they vary from run to run.
    pub fn window_profile(&self) -> [std::time::Duration; 3] {
        [self.window_time, self.thread_waits[0], self.thread_waits[1]]
    }

    /// The driver's side of [`Simulation::windows`].
    fn drive(&mut self, shared: &Shared, budget: u64, n: &mut u64, started: Instant) -> Status {
        loop {
            let Some(end) = self.parallel_window(budget, *n, started) else {
                // in turns up to one lookahead on, or to a stop (or a session's bound)
                let until = self.next_time().map_or(u128::MAX, |t| u128::from(t.saturating_add(self.lookahead)) << 64);
                let until = until.min(self.bound_key());
                if self.next_time().is_some_and(|t| u128::from(t) << 64 >= until) {
                    return Status::Running;
                }
                let before = self.events;
                let stopped = self.turns(budget, n, started, until);
                self.widen(self.events - before);
                match stopped {
                    Some(status) => return status,
                    None => continue,
                }
            };
            let bound = u128::from(end) << 64;
            for (cell, piece) in shared.cells.iter().zip(self.pieces.drain(..)) {
                *cell.lock().unwrap_or_else(PoisonError::into_inner) = Some(piece);
            }
            let parallel = self.chooser.as_ref().is_none_or(threads::Chooser::parallel);
            let began = Instant::now();
            if parallel {
                *shared.plan.lock().unwrap_or_else(PoisonError::into_inner) = Some(bound);
                shared.start.wait();
                shared.window(0, self.threads, bound);
                shared.end.wait();
            } else {
                // on this thread alone, every piece in turn; the others sleep at `start`
                shared.each(0, 1, |i, piece| shared.run_and_post(i, piece, bound));
                shared.each(0, 1, |j, piece| shared.collect(j, piece));
            }
            self.pieces = shared.cells.iter().filter_map(|c| c.lock().unwrap_or_else(PoisonError::into_inner).take()).collect();
            if let Some(payload) = shared.panicked() {
                std::panic::resume_unwind(payload);
            }
            let took = began.elapsed();
            self.window_time += took;
            let mut events = 0;
            for i in 0..self.pieces.len() {
                let ran = std::mem::take(&mut self.pieces[i].ran);
                (*n, self.events, events) = (*n + ran, self.events + ran, events + ran);
                self.now = self.now.max(self.pieces[i].queue.now());
                self.changed(i);
            }
            if parallel {
                self.windows.0 += 1;
                self.windows.1 += events;
                // a waiting thread spins at most about as long as a window takes
                self.window_wall = (self.window_wall * 7 + took) / 8;
                if self.windows.0.is_multiple_of(16) {
                    for b in [&shared.start, &shared.posted, &shared.end] {
                        b.spin(self.window_wall);
                    }
                }
            }
            if let Some(chooser) = &mut self.chooser {
                chooser.ran(events);
            }
            self.widen(events);
            if self.events > self.model.max_events {
                // the guard fell inside the window after all (it held more than the estimate
                // near the guard allowed): said, not hidden
                self.warnings.push(format!(
                    "stop.max_events = {} fell inside a window the pieces ran in parallel, which held {events} events (more than the spans before it and the events queued at its start foretold): the run stopped after {} events, and where it stops depends on the number of threads",
                    self.model.max_events, self.events
                ));
            }
            debug_assert!(self.done < self.stop_at, "no message completes in a parallel window");
        }
    }

    /// A span of one lookahead (a window, or a stretch in turns) held `events`: the widest so
    /// far, which the event guard reads (`parallel_window`). One that held nothing measures
    /// nothing (a run whose messages start later); one a step's budget cut short (a session's
    /// step, `step(chunk)`) what it held.
    pub(super) fn widen(&mut self, events: u64) {
        if events > 0 {
            self.widest = Some(self.widest.unwrap_or(0).max(events));
        }
    }

    /// The end of the window the pieces may run next in parallel, from the least time of
    /// any event left; `None` where it must run in turns (see the module doc), or the
    /// budget, the wall clock or a guard stops the run (which [`Simulation::turns`] tells).
    fn parallel_window(&mut self, budget: u64, n: u64, started: Instant) -> Option<Time> {
        let near_guard = self.near_guard(|sim| sim.pieces.iter().map(|p| p.queue.len() as u64).sum());
        if n >= budget || self.finish_at.is_some() || near_guard {
            return None;
        }
        if self.model.max_wall.is_some_and(|limit| self.wall + started.elapsed() >= limit) {
            return None;
        }
        let now = self.next_time()?;
        // the pieces' bound read only where the one found before falls inside the window: it
        // is still a bound, and reading every host's link each window is the driver's largest
        // pass between windows (a training step's windows are as short as the scale-up latency)
        let end = self.window_end(now, Time::MAX)?;
        if self.ends_after < end {
            let last = self.pieces.iter().map(|p| p.completion_bound(now)).max().unwrap_or(now);
            self.ends_after = self.ends_after.max(last);
        }
        self.window_end(now, self.ends_after)
    }

    /// Whether the event guard is too near for a window: the first span runs in turns, to
    /// measure one, and a window runs only while more than [`GUARD_SPANS`] of the widest span
    /// so far are left. A window holds what its queued events make: as wide as the widest span
    /// so far, or [`QUEUED_GROWTH`] events for each one queued (a burst after a quiet spell);
    /// the queues (`queued`) are counted only where the widest span leaves room.
    pub(super) fn near_guard(&self, queued: impl FnOnce(&Simulation) -> u64) -> bool {
        let spans = self.model.max_events.saturating_sub(self.events) / GUARD_SPANS;
        self.widest.is_none_or(|w| spans <= w || spans <= queued(self).saturating_mul(QUEUED_GROWTH))
    }

    /// The end of a window that starts at `now` (the least time of any event left), where no
    /// message completes before `last`: one lookahead on, or the next duty of the whole run,
    /// the time guard or a session's bound if sooner; `None` where the window would hold no
    /// instant or a completion.
    pub(super) fn window_end(&self, now: Time, last: Time) -> Option<Time> {
        let mut end = now.saturating_add(self.lookahead).min(self.model.max_time.saturating_add(1)).min(self.bound());
        if let Some(&std::cmp::Reverse(duty)) = self.duty_times.peek() {
            end = end.min(duty);
        }
        (end > now && last >= end).then_some(end)
    }
}

#[cfg(test)]
mod tests {
    use super::{Barrier, MAX_SPIN};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Threads through many rounds, each asleep at every wait (no spin) or spinning first:
    /// none passes a round before every thread arrived at it, and none sleeps through the last
    /// arrival (the run would hang: the test fails after a minute instead).
    #[test]
    fn a_barrier_holds_every_thread_until_all_arrived_and_wakes_every_sleeper() {
        let (threads, rounds) = (6, 3000);
        for spin in [0, MAX_SPIN.as_nanos() as u64] {
            let (done, finished) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let b = Barrier::new(threads);
                b.spin_ns.store(spin, Ordering::Relaxed);
                let arrived = AtomicUsize::new(0);
                std::thread::scope(|s| {
                    for _ in 0..threads {
                        s.spawn(|| {
                            for round in 1..=rounds {
                                arrived.fetch_add(1, Ordering::SeqCst);
                                b.wait();
                                let seen = arrived.load(Ordering::SeqCst);
                                assert!(seen >= threads * round, "round {round}: passed with {seen} arrivals");
                            }
                        });
                    }
                });
                done.send(()).expect("the test waits");
            });
            let ended = finished.recv_timeout(std::time::Duration::from_secs(60));
            assert!(ended.is_ok(), "spin {spin} ns: a thread slept through its round's last arrival, or one panicked");
        }
    }
}
