//! One run across ranks: processes (on MPI) or threads standing in for them ([`Local`]), each
//! running only its own pieces of the run, with the same results as one process.
//!
//! The run is cut into pieces as for threads (`sim::piece`: a leaf with its hosts), and rank
//! `r` of `R` runs the consecutive pieces [`owned`] gives it, on its own threads in a window
//! (the threads' engine's `Shared`, its mail swapped with the other ranks between the threads'
//! posting and their collecting). The ranks move in lockstep,
//! through two collective operations ([`Exchange`]), each step decided alike on every rank from
//! what they all told each other:
//! - **agree**: each rank tells the others the events it ran and the messages its pieces
//!   completed since the last step, the time of its last event, the least two keys its pieces'
//!   queues hold (and where), what they hold, and (before a window may run, where the bound
//!   found before may not reach past it) the two parts of its hosts' completion bound
//!   (`Piece::completion_parts`; a bound stays one as the run goes on). This is the window's
//!   all-reduce of ns-3's distributed simulator (its null-message-free "granted time window"),
//!   with the event guard's and the end's inputs beside the next event's time.
//! - **a window**, where the threads' engine would run one (`sim::parallel`: no duty of the
//!   whole run, no completion, the event guard far): every rank runs its pieces up to the
//!   window's end, and what they hand pieces of other ranks crosses in one all-to-all,
//!   encoded by `codec` (47 bytes a packet), at the window's end; a window in which messages
//!   may complete runs in two phases that stop it at the end of the instant of the run's last
//!   completion, where one process runs it in turns (`finish.rs`);
//! - **a turn** otherwise (the first span, near the guard, a duty): the piece
//!   with the least key runs on its rank while its events stay below every other piece's next
//!   key, exactly as `Simulation::turns` runs it, and its rank tells the others (an all-gather)
//!   what it handed their pieces and the duty of the whole run it paused at, if any, which
//!   every rank then runs: the fault timeline on each rank's copy of every link, the
//!   no-progress guard and a trace's windows on sums over the ranks (`duties::Seen`).
//!
//! Event keys never depend on a global counter (`engine`), so each piece makes the decisions
//! it makes in one process, and the run stops where one process stops it: at the end of the
//! instant of its last completion, at `stop.max_events` (counted in turns), at `stop.max_time`.
//!
//! Every rank builds the whole fabric and the run's messages, and the pieces it does not own
//! hollow (their links, switches and hosts, none of their messages' or connections' state);
//! at the end the other ranks tell rank 0 what their pieces hold for the results
//! ([`Simulation::gather`], `gather.rs`), and rank 0 gives the run's results. A
//! sample (`[samples]`) reads each sampled port on the rank that holds it, gathered on every
//! rank; `stop.max_wall` reads rank 0's clock, which it tells the others at each step; priority
//! flow control's deadlock check reads the pauses every rank tells (`pauses.rs`). Not across
//! ranks: sessions (`sim::session` has no ranked form).

mod codec;
mod exchange;
mod finish;
mod gather;
mod pauses;

pub use exchange::{Exchange, Local};

use std::ops::Range;
use std::sync::PoisonError;
use std::time::Instant;

use super::duties::Seen;
use super::parallel::Shared;
use super::piece::{Mail, Pause, Piece};
use super::Simulation;
use crate::engine::watchdog::Activity;
use crate::engine::{Event, Status};
use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::time::Time;
use codec::{Reader, Writer};

/// The pieces of rank `rank` of `ranks`, when a run is cut into `pieces`: consecutive ones
/// (neighbouring leaves), as even as they come.
pub fn owned(pieces: usize, ranks: usize, rank: usize) -> Range<usize> {
    rank * pieces / ranks..(rank + 1) * pieces / ranks
}

/// A rank's side of the run.
struct Rank<'a> {
    ex: &'a dyn Exchange,
    own: Range<usize>,
    /// The rank of each piece.
    owner: Vec<usize>,
    /// Events this rank ran, and completions its pieces counted, since the ranks last agreed.
    ran: u64,
    done: u32,
    /// The time of the last event this rank ran.
    now: Time,
    /// The messages each piece completes in all (its hosts receive them: `finish.rs`).
    expected: Vec<u32>,
    /// When this call of `run_ranked` began: rank 0's clock, told to all, stops a run at
    /// `stop.max_wall`.
    started: Instant,
}

/// What the ranks agreed on before a step.
struct Heads {
    /// The least key of any piece's queue, and its piece; the next least of any other piece.
    first: Option<(u128, usize)>,
    second: u128,
    /// Events queued, over the pieces.
    queued: u64,
    /// The pieces' completion bounds in parts (`Piece::completion_parts`), where asked.
    at: Time,
    after: Time,
    /// Events the ranks ran since they last agreed.
    ran: u64,
    /// Rank 0's wall clock passed `stop.max_wall`.
    wall_out: bool,
}

impl Simulation {
    /// `scenario` as rank `rank` of a run across `ranks` ranks (processes, or [`Local`]
    /// threads), each running its pieces on `threads` threads: cut into pieces as for `ranks x
    /// threads` threads, of which this rank runs [`owned`]`(pieces, ranks, rank)`
    /// ([`Simulation::run_ranked`]; at most one thread per piece it owns). Refused where the
    /// fabric cuts into fewer pieces than ranks, where a link between two pieces has no latency,
    /// and for what does not run across ranks yet (the module doc), each naming its field.
    pub fn ranked(scenario: &Scenario, ranks: usize, rank: usize, threads: usize) -> Result<Simulation, ScenarioError> {
        if ranks == 0 || rank >= ranks {
            return Err(ScenarioError::new("rank", format!("rank {rank} of {ranks}"), "a rank from 0 to ranks - 1, and at least 1 rank"));
        }
        let sim = Self::threaded(scenario, Some(ranks.saturating_mul(threads.max(1))), false, Some((rank, ranks)))?;
        let pieces = sim.pieces.len();
        if pieces < ranks {
            let allowed = format!("at most {pieces} ranks: the fabric cuts into {pieces} pieces (a leaf with its hosts each)");
            return Err(ScenarioError::new("ranks", ranks, allowed));
        }
        if ranks > 1 && sim.lookahead == 0 {
            let allowed = "links with latency between pieces: with none, no window can run the ranks apart";
            return Err(ScenarioError::new("ranks", ranks, allowed));
        }
        let threads = threads.clamp(1, owned(pieces, ranks, rank).len());
        Ok(Simulation { threads, thread_note: None, across: Some((rank, ranks)), ..sim })
    }

    /// This run's rank and the run's ranks, where it is a rank's ([`Simulation::ranked`]; rank 0
    /// after [`Simulation::gather`] holds the whole run: `None`).
    pub fn rank(&self) -> Option<(usize, usize)> {
        self.across
    }

    /// Runs this rank's pieces with the other ranks' to the run's end (the module doc);
    /// returns the status, the same on every rank. Every rank must call it, with the
    /// exchange of its rank.
    pub fn run_ranked(&mut self, ex: &dyn Exchange) -> Status {
        let (rank, ranks) = self.across.expect("a rank's run: built by Simulation::ranked");
        assert_eq!((ex.rank(), ex.ranks()), (rank, ranks), "the exchange of the rank this run was built for");
        if self.status != Status::Running {
            return self.status;
        }
        let started = Instant::now();
        let n = self.pieces.len();
        let owner = (0..ranks).flat_map(|r| owned(n, ranks, r).map(move |_| r)).collect();
        let expected = self.expected_completions();
        let mut r = Rank { ex, own: owned(n, ranks, rank), owner, ran: 0, done: 0, now: self.now, expected, started };
        // this rank's threads: created once for the run, they meet the driver at each window
        let threads = self.threads;
        let shared = Shared::new(n, threads, self.cut.homes().clone(), true);
        self.status = std::thread::scope(|s| {
            for t in 1..threads {
                let shared = &shared;
                s.spawn(move || shared.work(t, threads));
            }
            let status = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.across_ranks(&mut r, &shared)));
            *shared.plan.lock().unwrap_or_else(PoisonError::into_inner) = None;
            shared.start.wait();
            status.unwrap_or_else(|payload| std::panic::resume_unwind(payload))
        });
        self.add_waits(&shared);
        self.wall += started.elapsed();
        self.status
    }

    /// The ranks' steps (the module doc) until the run stops: the threads' driver's loop
    /// (`parallel.rs`), each decision taken alike on every rank from what they agreed.
    fn across_ranks(&mut self, r: &mut Rank, shared: &Shared) -> Status {
        // a stretch in turns: the key it runs up to (one lookahead on), and the events before it
        let mut stretch: Option<(u128, u64)> = None;
        let mut was_window = false;
        loop {
            // the completion bound's parts, where the bound found before may fall in the next window
            let parts = stretch.is_none() && self.finish_at.is_none();
            let ask = parts && self.ends_after <= self.now.saturating_add(self.lookahead.saturating_mul(2));
            let h = self.agree(r, ask);
            self.events += h.ran;
            if was_window {
                (self.windows.0, self.windows.1) = (self.windows.0 + 1, self.windows.1 + h.ran);
                self.widen(h.ran);
                was_window = false;
            }
            if self.done >= self.stop_at && self.finish_at.is_none() {
                self.finish_at = Some(self.now);
            }
            let next = h.first.map(|(key, _)| (key >> 64) as Time);
            if stretch.is_none() {
                let window = next.filter(|_| parts && !self.near_guard(|_| h.queued));
                // a window in which no message can complete, or one that stops at the end of the
                // instant of the run's last completion, if that falls in it (`finish.rs`)
                if let Some((now, end)) = window.and_then(|now| self.window_end(now, Time::MAX).map(|end| (now, end))) {
                    if h.wall_out {
                        return Status::WallLimit;
                    }
                    let parts = if ask { Some((h.at, h.after)) } else { (self.ends_after < end).then(|| self.completion_parts_across(r)) };
                    if let Some(parts) = parts {
                        self.ends_after = self.ends_after.max(Piece::bound_of(now, parts));
                    }
                    if self.ends_after >= end {
                        self.window_across(r, shared, end);
                    } else {
                        self.finishing_window(r, shared, end);
                    }
                    was_window = true;
                    continue;
                }
                // one lookahead on (to the end where no window can run: a link with no latency)
                let until = next.filter(|_| self.lookahead > 0).map_or(u128::MAX, |t| u128::from(t.saturating_add(self.lookahead)) << 64);
                stretch = Some((until.min(self.bound_key()), self.events));
            }
            let (until, before) = stretch.expect("set above");
            // whose turn it is, as `Simulation::turns` finds it
            let within = self.horizon().checked_add(1).map_or(u128::MAX, |t| u128::from(t) << 64);
            let Some((head, piece)) = h.first.filter(|&(key, _)| key < within) else {
                self.tell_pauses(r);
                return self.guard(next);
            };
            if head >= until {
                self.widen(self.events - before);
                stretch = None;
                continue;
            }
            if self.events >= self.model.max_events {
                return Status::EventLimit;
            }
            if h.wall_out {
                return Status::WallLimit;
            }
            self.turn_across(r, piece, h.second.min(within).min(until));
        }
    }

    /// Tells the other ranks where this one stands, and returns what they all told.
    fn agree(&mut self, r: &mut Rank, parts: bool) -> Heads {
        let mut mine = Heads::default();
        for i in r.own.clone() {
            let p = &mut self.pieces[i];
            mine.queued += p.queue.len() as u64;
            if let Some(key) = p.queue.peek_key() {
                mine.least(key, i, u128::MAX);
            }
        }
        if parts {
            (mine.at, mine.after) = self.own_parts(r);
        }
        let mut w = Writer::default();
        let (key, piece) = mine.first.unwrap_or((u128::MAX, 0));
        w.u64(r.ran);
        w.u32(r.done);
        w.u64(r.now);
        w.u128(key);
        w.u32(piece as u32);
        w.u128(mine.second);
        w.u64(mine.queued);
        w.u64(mine.at);
        w.u64(mine.after);
        // one clock decides for all (rank 0's), so that every rank stops at the same step
        w.u8(u8::from(self.model.max_wall.is_some_and(|limit| self.wall + r.started.elapsed() >= limit)));
        (r.ran, r.done) = (0, 0);
        let mut all = Heads::default();
        for (from, bytes) in r.ex.all_gather(w.0).into_iter().enumerate() {
            let mut rd = Reader::new(&bytes);
            all.ran += rd.u64();
            self.done += rd.u32();
            self.now = self.now.max(rd.u64());
            let (key, piece, second) = (rd.u128(), rd.u32() as usize, rd.u128());
            if key != u128::MAX {
                all.least(key, piece, second);
            }
            all.queued += rd.u64();
            (all.at, all.after) = (all.at.max(rd.u64()), all.after.max(rd.u64()));
            let wall_out = rd.u8() == 1;
            all.wall_out |= from == 0 && wall_out;
        }
        r.now = self.now;
        all
    }

    /// A window up to `end` on every rank, each running its pieces on its threads (`shared`);
    /// what crosses ranks goes in one all-to-all at its end, between the threads' posting and
    /// their collecting.
    fn window_across(&mut self, r: &mut Rank, shared: &Shared, end: Time) {
        let began = Instant::now();
        let bound = u128::from(end) << 64;
        let n = self.pieces.len();
        let mut all: Vec<Option<Box<Piece>>> = self.pieces.drain(..).map(Some).collect();
        for i in r.own.clone() {
            *shared.cells[i].lock().unwrap_or_else(PoisonError::into_inner) = all[i].take();
        }
        *shared.plan.lock().unwrap_or_else(PoisonError::into_inner) = Some(bound);
        shared.start.wait();
        shared.run_phase(0, self.threads, bound);
        shared.posted.wait();
        // what this rank's pieces posted for other ranks' pieces goes to them, and theirs comes;
        // each rank's buffer is made at its size at once (a window's crossing packets are the
        // largest transient a process holds: docs/scale.md, "Across processes")
        let crossing = || r.own.clone().flat_map(|i| (0..n).filter(|&j| r.owner[j] != r.ex.rank()).map(move |j| (i, j)));
        let mut sizes = vec![0; r.ex.ranks()];
        for (i, j) in crossing() {
            let mail = shared.mail[i * n + j].lock().unwrap_or_else(PoisonError::into_inner);
            if !mail.is_empty() {
                sizes[r.owner[j]] += Writer::mail_len(&mail);
            }
        }
        let mut out: Vec<Writer> = sizes.iter().map(|&n| Writer(Vec::with_capacity(n))).collect();
        for (i, j) in crossing() {
            let mut mail = shared.mail[i * n + j].lock().unwrap_or_else(PoisonError::into_inner);
            if !mail.is_empty() {
                out[r.owner[j]].mail(i as u32, j as u32, &mail);
                mail.packets.clear();
                mail.notices.clear();
            }
        }
        debug_assert!(out.iter().zip(&sizes).all(|(w, &n)| w.0.len() == n), "mail_len is what mail writes");
        for bytes in r.ex.all_to_all(out.into_iter().map(|w| w.0).collect()) {
            let mut rd = Reader::new(&bytes);
            while !rd.done() {
                let (from, to, mail) = rd.mail();
                *shared.mail[from as usize * n + to as usize].lock().unwrap_or_else(PoisonError::into_inner) = mail;
            }
        }
        shared.exchanged.as_ref().expect("a run across ranks").wait();
        shared.collect_phase(0, self.threads);
        shared.end.wait();
        for i in r.own.clone() {
            all[i] = shared.cells[i].lock().unwrap_or_else(PoisonError::into_inner).take();
        }
        self.pieces = all.into_iter().map(|p| p.expect("every piece back")).collect();
        if let Some(payload) = shared.panicked() {
            std::panic::resume_unwind(payload);
        }
        for i in r.own.clone() {
            let piece = &mut self.pieces[i];
            r.ran += std::mem::take(&mut piece.ran);
            r.now = r.now.max(piece.queue.now());
        }
        self.count_done(r);
        self.window_time += began.elapsed();
    }

    /// The turn of `piece`, up to the key `bound`: its rank runs it and tells every rank what
    /// it handed theirs and the duty it paused at, which they all run.
    fn turn_across(&mut self, r: &mut Rank, piece: usize, bound: u128) {
        let rank = r.ex.rank();
        let mut w = Writer::default();
        let mut here = Vec::new();
        if r.owner[piece] == rank {
            let mut left = self.model.max_events.saturating_sub(self.events).min(1 << 16);
            let before = left;
            let pause = self.pieces[piece].run::<{ Pause::ON_ALL }>(bound, &mut left, &mut r.now);
            r.ran += before - left;
            match pause {
                Pause::Duty(event, by) => {
                    w.u8(1);
                    w.event(event);
                    w.u32(by);
                    w.u64(r.now);
                }
                _ => w.u8(0),
            }
            let mut out: Vec<Writer> = (0..r.ex.ranks()).map(|_| Writer::default()).collect();
            self.post_across(r, piece, &mut out, &mut here);
            out.into_iter().for_each(|o| w.0.extend(o.0));
        }
        let told = r.ex.all_gather(w.0).swap_remove(r.owner[piece]);
        let mut rd = Reader::new(&told);
        let duty = (rd.u8() == 1).then(|| (rd.event(), rd.u32(), rd.u64() as Time));
        while !rd.done() {
            let (from, to, mail) = rd.mail();
            if r.owner[to as usize] == rank && r.owner[piece] != rank {
                here.push((from, to, mail));
            }
        }
        self.take_across(r, here);
        if let Some((event, by, at)) = duty {
            self.duty_across(r, at, event, by);
        }
    }

    /// Posts what piece `i` handed other pieces: to this rank's into `here`, to another
    /// rank's into its buffer in `out`.
    fn post_across(&mut self, r: &Rank, i: usize, out: &mut [Writer], here: &mut Vec<(u32, u32, Mail)>) {
        if !self.pieces[i].has_outgoing() {
            return;
        }
        let mut row: Vec<Mail> = (0..self.pieces.len()).map(|_| Mail::default()).collect();
        self.pieces[i].post(self.cut.homes(), &mut row.iter_mut().collect::<Vec<_>>());
        for (j, mail) in row.into_iter().enumerate().filter(|(_, m)| !m.is_empty()) {
            if r.owner[j] == r.ex.rank() {
                here.push((i as u32, j as u32, mail));
            } else {
                out[r.owner[j]].mail(i as u32, j as u32, &mail);
            }
        }
    }

    /// Takes the mail for this rank's pieces (each piece's in the order of the pieces that
    /// sent it, as the threads take theirs), and counts what its pieces completed.
    fn take_across(&mut self, r: &mut Rank, mut mail: Vec<(u32, u32, Mail)>) {
        mail.sort_by_key(|&(from, to, _)| (to, from));
        for (_, to, mut m) in mail {
            self.pieces[to as usize].take(&mut m);
        }
        self.count_done(r);
    }

    /// Counts the messages this rank's pieces completed since it last counted.
    fn count_done(&mut self, r: &mut Rank) {
        for i in r.own.clone() {
            r.done += self.pieces[i].newly_done();
        }
    }

    /// A duty of the whole run, on every rank: what it reads of the hosts and queues summed
    /// over the ranks.
    fn duty_across(&mut self, r: &Rank, now: Time, event: Event, by: u32) {
        let mut seen = Seen::of(event, &self.pieces[r.own.clone()], self.trace_messages());
        if matches!(event, Event::Watch | Event::Window) {
            let mut w = Writer::default();
            let a = seen.activity;
            for v in [a.progress, a.starts, a.notices_sent, a.notices_taken, a.up_sent, a.up_done, seen.delivered] {
                w.u64(v);
            }
            w.u8(u8::from(seen.queued));
            seen = Seen::default();
            for bytes in r.ex.all_gather(w.0) {
                let mut rd = Reader::new(&bytes);
                let [progress, starts, notices_sent, notices_taken, up_sent, up_done, delivered] = std::array::from_fn(|_| rd.u64());
                let activity = Activity { progress, starts, notices_sent, notices_taken, up_sent, up_done };
                seen = seen.add(Seen { activity, queued: rd.u8() == 1, delivered, sampled: None });
            }
        }
        if let (Event::Sample, Some(sampler)) = (event, &self.sampler) {
            // each sampled port's busy time and queue, from the rank whose piece holds it
            let topo = self.pieces[0].fabric.topology();
            let mut w = Writer::default();
            for (k, &port) in sampler.ports().iter().enumerate() {
                let piece = usize::from(self.cut.home(topo.ports[port as usize].from));
                if r.own.contains(&piece) {
                    let p = self.pieces[piece].links.port(port);
                    w.u32(k as u32);
                    w.u64(p.busy_time(now));
                    w.u64(p.data_bytes);
                }
            }
            let mut values = vec![(0, 0); sampler.ports().len()];
            for bytes in r.ex.all_gather(w.0) {
                let mut rd = Reader::new(&bytes);
                while !rd.done() {
                    // (the index first: an assignment reads its value before its place)
                    let k = rd.u32() as usize;
                    values[k] = (rd.u64(), rd.u64());
                }
            }
            seen.sampled = Some(values);
        }
        if event == Event::Watch {
            self.tell_pauses(r);
        }
        self.duty(now, event, by, seen);
    }
}

impl Default for Heads {
    fn default() -> Heads {
        Heads { first: None, second: u128::MAX, queued: 0, at: 0, after: 0, ran: 0, wall_out: false }
    }
}

impl Heads {
    /// Counts a piece's least key `key` (and the next least of its rank's, `second`).
    fn least(&mut self, key: u128, piece: usize, second: u128) {
        match self.first {
            Some((least, _)) if key >= least => self.second = self.second.min(key),
            _ => {
                self.second = self.first.map_or(self.second, |(least, _)| least.min(self.second));
                self.first = Some((key, piece));
            }
        }
        self.second = self.second.min(second);
    }
}
