//! A session: a run that takes messages while it runs and reports each completion as it
//! happens, for a caller that drives the fabric from outside (its own loop, a co-simulator,
//! ASTRA-sim's network API). Built from a scenario that may have no workload (its messages
//! and jobs, if any, run as usual); the caller sends messages ([`Session::send`]), runs the
//! clock ([`Session::run_until`], [`Session::run_until_completion`]) and polls what completed
//! ([`Session::completions`]).
//!
//! Every guarantee of a closed run stays:
//! - a message sent for a time later than the session's clock starts exactly as it would
//!   have had the scenario given it up front with the same fields, in the same order among
//!   its source host's messages: its start's order key is numbered by the message, not by
//!   when it was made (`engine::start_order`), and its load balancers draw from its source
//!   host's stream where the next message of that host would have. A message sent for the
//!   clock's own instant starts after the events of that instant that already ran;
//! - calls are applied between windows of the parallel engine, and [`Session::run_until`]
//!   stops at its time on every thread count; so the same calls give the same results, bit
//!   for bit, on any thread count. [`Session::run_until_completion`] runs the pieces in
//!   turns on the caller's thread (exact; a window on several threads could run past the
//!   completion it has to stop at).
//!
//! Memory: the messages sent are kept with their rows for the results, as a closed run keeps
//! its workload's ([`crate::host::table`]); the live state is that of the messages under way.

use std::time::Instant;

use super::Simulation;
use crate::engine::{Event, Status, MAX_MESSAGES};
use crate::error::{ensure, ScenarioError};
use crate::scenario::Scenario;
use crate::stats::RunResult;
use crate::time::Time;
use crate::workload::MessageSpec;

/// What a closed run does not keep and a session needs.
pub(super) struct Open {
    /// Events before this time run (`Time::MAX`: no bound).
    bound: Time,
    /// Whether the no-progress guard's check is scheduled (it stops when nothing is left).
    pub(super) watching: bool,
}

impl Open {
    pub(super) fn new() -> Open {
        Open { bound: Time::MAX, watching: true }
    }
}

/// A message that completed: its id ([`Session::send`]'s), when it was released and when its
/// receiver had every byte, and its FCT as the flows table gives it (from its first packet
/// sent, or its release where it sent none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub id: u32,
    pub start: Time,
    pub end: Time,
    pub fct: Time,
}

impl Simulation {
    /// Events run while their time is before this.
    #[inline]
    pub(super) fn bound(&self) -> Time {
        self.open.as_ref().map_or(Time::MAX, |o| o.bound)
    }

    /// [`Simulation::bound`] as an order key.
    #[inline]
    pub(super) fn bound_key(&self) -> u128 {
        match self.bound() {
            Time::MAX => u128::MAX,
            t => u128::from(t) << 64,
        }
    }

    /// Adds message `spec` (hosts by leaf slot), which waits for `after`, to the run between
    /// windows at the session's time `now`; returns its id.
    fn add(&mut self, spec: MessageSpec, after: &[u32], now: Time) -> u32 {
        let m = if after.is_empty() { self.add_all(&[spec], super::generate::Joining::Sent) } else { self.add_waiting(spec, after, now) };
        let open = self.open.as_mut().expect("a session's run");
        if !open.watching {
            open.watching = true;
            let at = spec.start.max(self.now).saturating_add(self.watchdog.every());
            self.schedule_duty(at, Event::Watch);
        }
        m
    }

    /// Runs in turns until a message completes (then to the end of that instant) or the next
    /// event lies at or after the bound.
    fn run_to_completion(&mut self) -> Status {
        if self.status != Status::Running {
            return self.status;
        }
        let started = Instant::now();
        let budget = self.model.max_events.saturating_sub(self.events);
        self.stop_at = self.done + 1;
        let mut n = 0;
        self.status = self.turns(budget, &mut n, started, self.bound_key()).unwrap_or(Status::Running);
        self.wall += started.elapsed();
        self.stop_at = if self.stop_at == 0 { 0 } else { u32::MAX };
        self.status
    }

    /// After the clock ran: a session that paused at a completion, or ran out of events, goes
    /// on (its caller may send more).
    fn resume(&mut self) -> Status {
        if self.stop_at != 0 && self.finish_at.is_some() {
            self.finish_at = None;
        }
        if self.stop_at != 0 && matches!(self.status, Status::Stalled | Status::Complete | Status::NoProgress) {
            self.status = Status::Running;
        }
        self.status
    }
}

/// A run driven from outside: see the module doc.
pub struct Session {
    sim: Simulation,
    /// The caller's clock: every event up to it ran, a message may be sent for it or later.
    clock: Time,
}

impl Session {
    /// A session of `scenario` (which may have no workload) on `threads` threads (`None`: the
    /// engine's choice, as `threads = "auto"`).
    pub fn new(scenario: &Scenario, threads: Option<usize>) -> Result<Session, ScenarioError> {
        let mut sim = Simulation::threaded(scenario, threads.map(|t| t.max(1)), true, None)?;
        for p in &mut sim.pieces {
            p.nics.keep_log();
        }
        Ok(Session { sim, clock: 0 })
    }

    /// Sends `bytes` from host `src` to host `dst` at `at` (`None`: now); returns the
    /// message's id (its row in the flows table). Refused, naming the argument, for a host
    /// that does not exist, a message to itself, no bytes, more packets than a message may
    /// have, a time before now, or a session that has ended.
    pub fn send(&mut self, src: u32, dst: u32, bytes: u64, at: Option<Time>) -> Result<u32, ScenarioError> {
        self.send_after(src, dst, bytes, at, &[])
    }

    /// [`Session::send`] of a message that also waits for the messages `after` (ids the
    /// session gave, or the scenario's own messages' rows; each crossing the fabric): it is
    /// released once its source has heard that each completed, as a closed run's dependencies
    /// are (at once at the receiver, at its final ACK at the sender, after a notice from the
    /// receiver elsewhere: a `flows` workload's `after`), and not before `at`.
    /// Sent before its source hears of them, it runs as the same message given up front
    /// with `after` would; what its source heard before it was sent counts as heard then.
    pub fn send_after(&mut self, src: u32, dst: u32, bytes: u64, at: Option<Time>, after: &[u32]) -> Result<u32, ScenarioError> {
        let hosts = self.sim.topology().gpus();
        let at = at.unwrap_or(self.clock);
        let status = self.sim.status;
        ensure(status == Status::Running, "session", status.reason(), "allowed: a session still running (this one has ended)")?;
        ensure(src < hosts, "src", src, format!("allowed: a host from 0 to {}", hosts - 1))?;
        ensure(dst < hosts, "dst", dst, format!("allowed: a host from 0 to {}", hosts - 1))?;
        ensure(src != dst, "dst", dst, "allowed: a host other than src")?;
        let topo = self.sim.topology();
        // what a closed run's workload goes through on such fabrics (`workload::support`'s
        // relay and stripe) is not done to a message sent into a session
        let planes = topo.planes();
        ensure(
            planes == 1,
            "src",
            src,
            format!(
                "allowed: a fabric of one NIC port a host (this one has {planes}, in planes or a GPU's NICs: a session does not \
                 stripe a message over them yet)"
            ),
        )?;
        let (a, b) = (topo.slot(src), topo.slot(dst));
        ensure(
            topo.tables.reachable(a, b) || topo.scale_up_between(a, b).is_some(),
            "dst",
            dst,
            format!("allowed: a host that host {src} reaches over the fabric or its server's scale-up network (a session does not relay a message through another GPU of the server yet, as a rail-only fabric's workloads are)"),
        )?;
        ensure(bytes > 0, "bytes", bytes, "allowed: at least 1")?;
        let payload = self.sim.model.transport.mtu - self.sim.model.transport.header;
        ensure(
            bytes.div_ceil(payload) <= u64::from(u32::MAX),
            "bytes",
            bytes,
            format!("allowed: at most {} packets of {payload} B", u32::MAX),
        )?;
        self.not_before("at", at)?;
        let max = self.sim.model.max_time;
        ensure(at <= max, "at", at, format!("allowed: up to stop.max_time ({max} ps): a message sent for later never starts"))?;
        ensure(
            (self.sim.flow_count() as usize) < MAX_MESSAGES,
            "send",
            "one message more",
            format!("allowed: at most {MAX_MESSAGES} messages"),
        )?;
        let conns = self.sim.pieces[0].nics.connections().len() as u64 + u64::from(self.sim.model.lb.subflows());
        ensure(
            conns <= crate::budget::MAX_CONNECTIONS,
            "send",
            "one message more",
            format!("allowed: at most {} connections", crate::budget::MAX_CONNECTIONS),
        )?;
        let made = self.sim.pieces[0].nics.messages();
        for &a in after {
            let count = made.get(a as usize).map(|m| m.count);
            let have = match made.len() {
                0 => "it has none yet".to_string(),
                n => format!("ids 0 to {}", n - 1),
            };
            ensure(count.is_some(), "after", a, format!("allowed: a message already in the session ({have})"))?;
            ensure(
                count != Some(0),
                "after",
                a,
                "allowed: a message that crosses the fabric (waiting for a transfer on a server's scale-up network or a job's compute task is not supported in a session yet)",
            )?;
        }
        // the engine numbers hosts by leaf slot (on rails, not their ids)
        let spec = MessageSpec::new(src, dst, bytes, at, 0).on_slots(self.sim.topology());
        Ok(self.sim.add(spec, after, self.clock))
    }

    /// Runs every event at `t` or before; the clock is `t` afterwards, unless a guard of the
    /// scenario (`stop.max_time`, `max_events`, `max_wall`, no progress) ended the session
    /// first (its status says which). Refused for a time before the clock.
    pub fn run_until(&mut self, t: Time) -> Result<Status, ScenarioError> {
        self.not_before("t", t)?;
        self.bound(t);
        self.sim.step(u64::MAX);
        let status = self.sim.resume();
        self.clock = if status == Status::Running { t } else { self.sim.now.max(self.clock) };
        Ok(status)
    }

    /// Runs until a message completes (every event of that instant included) or, if none
    /// does by then, every event at `limit` or before; the clock is the completion's time, or
    /// `limit`. What completed is in [`Session::completions`].
    pub fn run_until_completion(&mut self, limit: Time) -> Result<Status, ScenarioError> {
        self.not_before("limit", limit)?;
        self.bound(limit);
        let done = self.sim.done;
        self.sim.run_to_completion();
        let status = self.sim.resume();
        self.clock = match status {
            Status::Running if self.sim.done > done => self.sim.now.max(self.clock),
            Status::Running => limit,
            _ => self.sim.now.max(self.clock),
        };
        Ok(status)
    }

    /// Refuses a time before the clock, naming `field`.
    fn not_before(&self, field: &str, t: Time) -> Result<(), ScenarioError> {
        ensure(t >= self.clock, field, t, format!("allowed: the session's time ({} ps) or later", self.clock))
    }

    fn bound(&mut self, t: Time) {
        if let Some(open) = &mut self.sim.open {
            open.bound = t.saturating_add(1);
        }
    }

    /// The time of the next event (a packet's, a timer's, or one of the run's own checks),
    /// `None` when nothing is scheduled.
    pub fn next_event_time(&mut self) -> Option<Time> {
        self.sim.next_time()
    }

    /// The session's clock.
    pub fn now(&self) -> Time {
        self.clock
    }

    pub fn status(&self) -> Status {
        self.sim.status
    }

    /// The messages completed since the last call, by time of completion, then id.
    pub fn completions(&mut self) -> Vec<Completion> {
        let mut log: Vec<(u32, Time)> = self.sim.pieces.iter_mut().flat_map(|p| p.nics.take_log()).collect();
        log.sort_unstable_by_key(|&(m, t)| (t, m));
        let sim = &self.sim;
        log.into_iter()
            .map(|(m, end)| {
                let msg = sim.pieces[0].nics.messages()[m as usize];
                let src = &sim.pieces[usize::from(sim.cut.home(msg.spec.src))].nics;
                let start = src.released(m as usize).unwrap_or(end);
                let first = msg.connections().filter_map(|c| src.connections().row(c as u32).first_send()).min();
                Completion { id: m, start, end, fct: end - first.unwrap_or(start) }
            })
            .collect()
    }

    /// The simulation the session drives (its counts, warnings, threads).
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// The results so far: the same tables as a closed run's ([`Simulation::results`]); the
    /// session goes on.
    pub fn results(&self) -> RunResult {
        self.sim.results()
    }

    /// The results, ending the session ([`Simulation::into_results`]).
    pub fn into_results(self) -> RunResult {
        self.sim.into_results()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of messages sent with `after` before any completes, in one piece: each one's
    /// list of dependents is held until it told them, and none is left once all are done.
    #[test]
    fn the_added_lists_go_once_their_messages_told_them() {
        let value: toml::Table = toml::from_str("[topology]\nhosts = 16\nradix = 8\n").expect("TOML");
        let scenario = Scenario::from_deserializer(value).expect("valid");
        let mut s = Session::new(&scenario, Some(1)).expect("a session");
        let mut last = s.send(0, 1, 64 << 10, None).expect("sent");
        for k in 1..40u32 {
            last = s.send_after(k % 16, (k + 1) % 16, 64 << 10, None, &[last]).expect("sent after");
        }
        assert_eq!(s.sim.pieces[0].nics.more_len(), 39);
        assert_eq!(s.run_until(1_000_000_000).expect("runs"), Status::Running);
        assert_eq!(s.completions().len(), 40);
        assert_eq!(s.sim.pieces[0].nics.more_len(), 0, "every list went");
    }
}
