//! The least time each job (and the `[workload]`) takes, known before its run: its messages'
//! critical path with
//! each message at its ideal FCT ([`super::ideal`]), its sender hearing of what it waits for
//! as the jobs' ideal bound has it ([`crate::workload::collective::ideal_finish`]), from its
//! start. No message finishes before its ideal finish there (a message is never faster than
//! its ideal FCT, and never hears sooner), so a run whose `stop.max_time` is below a job's
//! least time cannot complete it: the scenario is warned of before anything runs.
//!
//! Counted as the messages are made, in order ([`Least::add`]: a job's wait only for earlier
//! ones; the `[workload]`'s come first), holding a message's ideal finish and two hosts only
//! while a later message may read them ([`Window`]).

use rustc_hash::FxHashMap;
use std::cell::RefCell;

use super::ideal::{ideal_fct, message_fct};
use crate::host::TransportModel;
use crate::time::{serialization, Time};
use crate::topology::{RouteKey, Routes, Topology};
use crate::units::Duration;
use crate::workload::collective::{heard, released, Hearing, Tag};
use crate::workload::window::{FarIds, Window};
use crate::workload::MessageSpec;

/// Each message's ideal FCT: computed once per (route, size, connections), for the first
/// [`IdealFcts::KEPT`] such keys (a job's messages repeat a few sizes; a trace's sizes are
/// drawn from a CDF and rarely repeat, and a key a message kept would cost 64 bytes for each
/// of its millions of messages).
#[derive(Default)]
pub struct IdealFcts(FxHashMap<(RouteKey, u64, u32), Time>);

impl IdealFcts {
    /// The ideal FCT of `spec`'s message (hosts by leaf slot) carried by `count` connections.
    pub fn of(&mut self, routes: &Routes, transport: &TransportModel, spec: &MessageSpec, count: u32) -> Time {
        if spec.is_compute() {
            return 0;
        }
        if let Some(up) = routes.topology().scale_up_between(spec.src, spec.dst) {
            // alone on its server's scale-up network (`host::nic::scale_up`)
            return up.latency + serialization(spec.bytes, up.rate);
        }
        let key = (routes.ideal_key(spec.src, spec.dst), spec.bytes, count);
        if let Some(&fct) = self.0.get(&key) {
            return fct;
        }
        let hops = routes.ideal_route(spec.src, spec.dst).hops;
        let fct = message_fct(&hops, spec.bytes, transport.mtu, transport.header, count, transport.rate_cap);
        if self.0.len() < Self::KEPT {
            self.0.insert(key, fct);
        }
        fct
    }

    /// The most keys kept (about 64 MB).
    pub const KEPT: usize = 1 << 20;
}

/// The connections message `m` (its hosts by leaf slot, as a run's model holds them) runs on,
/// as `ConnCatalog::build` makes them: none for a compute task or a transfer on its server's
/// scale-up network, one per subflow otherwise (`lb::mptcp::shares`).
pub fn connections(topo: &Topology, subflows: u32, m: &MessageSpec) -> u32 {
    if m.is_compute() || topo.scale_up_between(m.src, m.dst).is_some() {
        return 0;
    }
    u64::from(subflows).min(m.bytes).max(1) as u32
}

/// A final ACK's flight from `from` back to `to`, as the jobs' ideal bound counts it: a header
/// alone on the ideal route, or the latency of their server's scale-up network.
pub fn ack_flight(routes: &Routes, header: u64, from: u32, to: u32) -> Time {
    match routes.topology().scale_up_between(from, to) {
        Some(up) => up.latency,
        None => ideal_fct(&routes.ideal_route(from, to).hops, &[header], &[0]),
    }
}

/// The jobs' least times, counted message by message.
pub struct Least<'a> {
    routes: &'a Routes,
    transport: &'a TransportModel,
    subflows: u32,
    fcts: IdealFcts,
    /// How many of the messages are the `[workload]`'s (they come first), and each message's
    /// (ideal finish, source, destination) while a later one may read it.
    given: usize,
    done: Window<(Time, u32, u32)>,
    /// The `[workload]`'s latest ideal finish, and each job's; `None` once a message waits for
    /// a later one (no bound is then said).
    jobs: Option<(Time, Vec<Time>)>,
    /// The final ACK's flight between two hosts, by (from, to) ([`ack_flight`], kept).
    acks: RefCell<FxHashMap<(u32, u32), Time>>,
}

impl<'a> Least<'a> {
    /// Messages numbered from 0, the first `given` the `[workload]`'s, those in `far` read
    /// from far on ([`crate::workload::window::Far`]); `subflows`: the connections a message
    /// is cut into.
    pub fn new(routes: &'a Routes, transport: &'a TransportModel, subflows: u32, given: usize, far: FarIds) -> Least<'a> {
        let (fcts, done) = (IdealFcts::default(), Window::new(far));
        Least { routes, transport, subflows, fcts, given, done, jobs: Some((0, Vec::new())), acks: RefCell::default() }
    }

    /// Counts the next message, `m` (hosts by leaf slot): the `[workload]`'s, or of job `job`
    /// (none: a part a fabric made of a message), which waits for `after`.
    pub fn add(&mut self, m: &MessageSpec, after: &[u32], job: u32) {
        let fct = self.ideal(m);
        self.add_ideal(m, after, job, fct);
    }

    /// The ideal FCT of message `m` (hosts by leaf slot) as [`Least::add`] counts it.
    pub fn ideal(&mut self, m: &MessageSpec) -> Time {
        let count = connections(self.routes.topology(), self.subflows, m);
        self.fcts.of(self.routes, self.transport, m, count)
    }

    /// [`Least::add`] of a message whose ideal FCT ([`Least::ideal`]) is `fct`.
    pub fn add_ideal(&mut self, m: &MessageSpec, after: &[u32], job: u32, fct: Time) {
        let (ack, notice) = (|from, to| self.ack_flight(from, to), |from, to| self.routes.notice_latency(from, to));
        let hearing = Hearing { ack_flight: &ack, notice: &notice };
        let mut latest: Option<Time> = None;
        let mut known = true;
        for &d in after {
            // a message that waits for a later one: no bound is said
            let Some((finish, src, dst)) = self.done.get(d) else {
                known = false;
                break;
            };
            let at = heard(&hearing, (src, dst), m.src, finish);
            latest = Some(latest.map_or(at, |t| t.max(at)));
        }
        if !known {
            self.jobs = None;
        }
        let finish = released(m, latest).saturating_add(fct);
        let given = (self.done.made() as usize) < self.given;
        self.done.push((finish, m.src, m.dst));
        self.finished(given, job, finish);
    }

    /// A message of the `[workload]` (`given`) or of job `job` finishes at `finish` at the
    /// earliest: the least time of what it belongs to is that late at least.
    fn finished(&mut self, given: bool, job: u32, finish: Time) {
        match &mut self.jobs {
            Some((workload, _)) if given => *workload = (*workload).max(finish),
            Some((_, jobs)) if job != Tag::NONE.job => {
                let j = job as usize;
                if jobs.len() <= j {
                    jobs.resize(j + 1, 0);
                }
                jobs[j] = jobs[j].max(finish);
            }
            _ => {}
        }
    }

    /// Each message's (ideal finish, source, destination) while a later one may read it; and
    /// whether the next message is the `[workload]`'s.
    pub(crate) fn done(&self) -> (&Window<(Time, u32, u32)>, bool) {
        (&self.done, (self.done.made() as usize) < self.given)
    }

    /// Counts `count` messages of job `job` at once ([`Least::add`] of each, in closed form:
    /// the survey's rounds), the latest of whose ideal finishes is `latest`: the last
    /// `last.len()` of them have (ideal finish, source, destination) `last`, the others are
    /// never read.
    pub(crate) fn add_counted(&mut self, count: u32, job: u32, latest: Time, last: &[(Time, u32, u32)]) {
        self.done.skip(count - last.len() as u32);
        last.iter().for_each(|&v| self.done.push(v));
        self.finished(false, job, latest);
    }

    /// A final ACK's flight from `from` back to `to` (a header on its ideal route, or the
    /// scale-up network's latency).
    fn ack_flight(&self, from: u32, to: u32) -> Time {
        *self.acks.borrow_mut().entry((from, to)).or_insert_with(|| ack_flight(self.routes, self.transport.header, from, to))
    }

    /// The `[workload]`'s latest ideal finish and each job's (`None`: not told).
    pub(crate) fn least(&self) -> Option<&(Time, Vec<Time>)> {
        self.jobs.as_ref()
    }

    /// The warnings for the `[workload]` and the jobs (named `names`) whose least time is
    /// beyond `max_time`.
    pub fn warnings(&self, max_time: Time, names: &[String]) -> Vec<String> {
        let Some((workload, jobs)) = &self.jobs else { return Vec::new() };
        let said = |what: String, least: Time| {
            format!(
                "stop.max_time ({}) is below the least time {what} takes ({}: its messages' critical path, each at its ideal FCT): the run stops before it completes; raise stop.max_time",
                Duration(max_time),
                about(least)
            )
        };
        let mut out: Vec<String> = Vec::new();
        if *workload > max_time {
            out.push(said("the [workload]".into(), *workload));
        }
        for (j, &least) in jobs.iter().enumerate().filter(|&(_, &least)| least > max_time) {
            let name = names.get(j).map_or(String::new(), |n| format!(" ({n})"));
            out.push(said(format!("jobs[{j}]{name}"), least));
        }
        out
    }
}

/// A time in the largest unit it has a whole one of, to 4 figures ("13.64s", "812.5us").
fn about(t: Time) -> String {
    let units = [(1_000_000_000_000, "s"), (1_000_000_000, "ms"), (1_000_000, "us"), (1_000, "ns")];
    let (per, unit) = units.into_iter().find(|&(per, _)| t >= per).unwrap_or((1, "ps"));
    let v = t as f64 / per as f64;
    let decimals = if v >= 100.0 {
        1
    } else if v >= 10.0 {
        2
    } else {
        3
    };
    format!("{v:.decimals$}{unit}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_time_reads_in_its_largest_unit() {
        assert_eq!(super::about(13_635_065_838_326), "13.64s");
        assert_eq!(super::about(812_512_000), "812.5us");
        assert_eq!(super::about(999), "999.0ps");
    }
}
