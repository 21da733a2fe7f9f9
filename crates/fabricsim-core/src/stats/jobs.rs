//! The jobs' tables: per job iteration (JCT against its ideal, nccl-tests' bandwidths) and per
//! step, from the messages' release and end times.
//!
//! The ideal JCT is a lower bound of the iteration's span: the larger of (1) its span on an
//! idle fabric where every message takes its ideal FCT from its release as if alone
//! ([`crate::workload::collective::ideal_finish`]): for ring and halving-doubling, the
//! critical path of ideal FCTs (and, for a step that waits for its own send, the final ACK's
//! flight); and (2) for
//! each rank's NIC (and scale-up port), the earliest ideal release of its messages of the
//! iteration, plus their wire times at line rate, plus the least time one of them still takes
//! after its last byte left ([`crate::workload::collective::nic_bounds`]). Every term is at
//! most what the run takes (docs/workloads.md, "The ideal is a bound"). A lone ring or
//! halving-doubling job with ACKs only at a message's end meets it but for the final ACKs its
//! ranks' NICs send between steps (1.28 ns each at 400 Gb/s); with an ACK per packet, the ACKs
//! of what a rank receives slip between its data packets and it runs a little above.
//!
//! The bound depends on the workload alone, not on the run: it is computed when the scenario
//! is resolved ([`bounds`], kept in the model as [`JobBounds`]), in one pass over the messages
//! where each waits only for earlier ones (a job's always), holding a message's times only
//! while a later one may read them ([`BoundsPass`]: also fed by a run that makes its jobs'
//! messages as it goes); the results add what the run did (releases and ends).

use std::collections::BTreeMap;

use super::collect::WorkView;
use super::least::{ack_flight, IdealFcts};
use super::{columns, ns, Column, Nullable, Table};
use crate::time::Time;
use crate::workload::collective::{ideal_finish, nic_bounds, Hearing, Lane, Tag};
use crate::workload::job::JobInfo;
use crate::workload::training::KINDS;
use crate::workload::MessageSpec;

/// The jobs and steps tables, and (max JCT ns, mean JCT ns, max JCT slowdown).
pub struct JobTables {
    pub jobs: Table,
    pub steps: Table,
    pub max_jct_ns: Option<f64>,
    pub mean_jct_ns: Option<f64>,
    pub max_jct_slowdown: Option<f64>,
}

/// Start (first release), end (last end, if every message ended) and count of a group of
/// messages; and the same on an idle fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: Option<Time>,
    end: Option<Time>,
    unfinished: bool,
    count: u64,
    ideal: (Time, Time),
    /// The same with every message taking no time (training jobs).
    free: (Time, Time),
    /// Bytes, and those on a scale-up network.
    bytes: u64,
    scale_up_bytes: u64,
}

impl Span {
    fn new() -> Span {
        Span {
            start: None,
            end: None,
            unfinished: false,
            count: 0,
            ideal: (Time::MAX, 0),
            free: (Time::MAX, 0),
            bytes: 0,
            scale_up_bytes: 0,
        }
    }
    /// One of its messages, as the workload has it: its ideal and compute-only (release,
    /// finish), its bytes.
    fn add_planned(&mut self, ideal: (Time, Time), free: (Time, Time), bytes: u64, scale_up_bytes: u64) {
        self.free = (self.free.0.min(free.0), self.free.1.max(free.1));
        self.ideal = (self.ideal.0.min(ideal.0), self.ideal.1.max(ideal.1));
        self.count += 1;
        self.bytes += bytes;
        self.scale_up_bytes += scale_up_bytes;
    }
    /// One of its messages, as the run went: released at `ready` (`None`: it was not).
    fn add_run(&mut self, ready: Option<Time>, end: Option<Time>) {
        self.start = match (self.start, ready) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.close(end);
    }
    /// One of its messages ends at `end` (`None`: did not).
    fn close(&mut self, end: Option<Time>) {
        match end {
            Some(e) => self.end = Some(self.end.map_or(e, |x| x.max(e))),
            None => self.unfinished = true,
        }
    }
    fn end(&self) -> Option<Time> {
        if self.unfinished {
            None
        } else {
            self.end
        }
    }
}

use super::plan::Flights;
pub use super::plan::Plan;
mod pass;
pub use pass::BoundsPass;

/// What the jobs and steps tables hold before any run: per (job, iteration) and per step, the
/// ideal and compute-only spans, the messages and bytes. Computed once from the workload
/// ([`bounds`], with the model), so that the results add only what the run did: their scratch
/// (a schedule and four columns over every message, about 75 bytes each) is no longer taken
/// beside the run's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobBounds {
    iters: BTreeMap<(u32, u32), Span>,
    steps: BTreeMap<(u32, u32, u32), Span>,
}

/// The jobs' bounds of the workload `p` (see [`JobBounds`]). Where every message waits only
/// for earlier ones (a job's always) in one pass over the messages that holds a message's
/// times only while a later one may read them ([`BoundsPass`]); otherwise from the whole
/// schedule (`ideals`): the same bounds.
pub fn bounds(p: &Plan<'_>) -> JobBounds {
    bounds_by(p, true)
}

/// [`bounds`] from the whole schedule even where one pass would do: what a test compares the
/// pass with.
#[doc(hidden)]
pub fn bounds_whole(p: &Plan<'_>) -> JobBounds {
    bounds_by(p, false)
}

fn bounds_by(p: &Plan<'_>, pass: bool) -> JobBounds {
    let mut b = JobBounds::default();
    if p.jobs.is_empty() {
        return b;
    }
    let n = p.specs.len();
    if pass && (0..n).all(|i| p.deps.of(i).iter().all(|&d| (d as usize) < i)) {
        let far = crate::workload::window::Far::of(p.deps).shared();
        let mut pass = BoundsPass::new(p.routes.shared(), p.transport.clone(), p.subflows, p.jobs.to_vec(), far);
        for i in 0..n {
            pass.push(&p.specs[i], p.deps.of(i), p.tags[i]);
        }
        return pass.finish();
    }
    let busy = {
        let mut fcts = IdealFcts::default();
        // from its release: its posting, then its ideal FCT
        let ideals: Vec<Time> = (0..n).map(|i| p.posting(i) + fcts.of(p.routes, p.transport, &p.specs[i], p.count(i))).collect();
        let (ideal, compute_only, busy) = self::ideals(p, &ideals);
        for i in 0..n {
            b.add(p, i, ideal[i], compute_only.as_ref().map(|c| c[i]));
        }
        busy
    };
    for (key, span) in b.iters.iter_mut() {
        span.ideal.1 = span.ideal.1.max(busy.get(key).copied().unwrap_or(0));
    }
    b
}

impl JobBounds {
    /// Message `i` of `p`, ideally released and finished at `ideal`, and at `free` with every
    /// message taking no time (where the run has training jobs).
    fn add(&mut self, p: &Plan<'_>, i: usize, ideal: (Time, Time), free: Option<(Time, Time)>) {
        let t = p.tags[i];
        if t.job == Tag::NONE.job || joins(p, i) {
            // a collective's compute task only joins what a rank's pieces wait for
            // (`collective::Builder::join`): no work of the iteration's
            return;
        }
        let m = &p.specs[i];
        let ran = ran(m, t.job, p.jobs);
        let ideal = (ideal.0 - ran, ideal.1);
        let free = free.map_or((0, 0), |c| (c.0 - ran, c.1));
        let up = if p.on_scale_up(i) { m.bytes } else { 0 };
        self.iters.entry((t.job, t.iteration)).or_insert_with(Span::new).add_planned(ideal, free, m.bytes, up);
        self.steps.entry((t.job, t.iteration, t.step)).or_insert_with(Span::new).add_planned(ideal, free, m.bytes, up);
        if p.jobs[t.job as usize].trace && m.dst != m.src {
            // a trace's rank is done once what it receives is, too
            let rank = self.steps.entry((t.job, t.iteration, p.routes.topology().host(m.dst))).or_insert_with(Span::new);
            rank.ideal.1 = rank.ideal.1.max(ideal.1);
        }
    }
}

/// Per message, when it is released and finishes.
type Schedule = Vec<(Time, Time)>;

/// Per message, its ideal (release, finish) and, where the run has training jobs, its
/// (release, finish) with every message taking no time (the compute-only schedule); and per
/// (job, iteration), the bound its NICs' busy times set on its ideal end.
fn ideals(v: &Plan<'_>, ideals: &[Time]) -> (Schedule, Option<Schedule>, std::collections::HashMap<(u32, u32), Time>) {
    let n = v.specs.len();
    let wire: Vec<Time> = (0..n).map(|i| v.wire(i)).collect();
    let lanes: Vec<Lane> = (0..n).map(|i| v.lane(i)).collect();
    let ack_flight = |from: u32, to: u32| ack_flight(v.routes, v.transport.header, from, to);
    let notice = |from: u32, to: u32| v.routes.notice_latency(from, to);
    let hearing = Hearing { ack_flight: &ack_flight, notice: &notice };
    // each iteration on its own: what it waits for in another iteration is dropped, so that
    // all its entries are released together at their starts (a bound of the run's span from
    // the iteration's first release, whenever its ranks entered it: the schedule only gets
    // earlier as releases do)
    let own = |i: usize| (v.tags[i].job, v.tags[i].iteration);
    let same = |i: usize, d: u32| own(d as usize) == own(i);
    // a collective's join of the previous iteration (`collective::Builder::join`) that is
    // left with nothing to wait for releases its pieces at their starts, as the pieces
    // would be whose lists held the previous iteration alone
    let bare: Vec<bool> = (0..n).map(|i| joins(v, i) && !v.deps.of(i).iter().any(|&d| same(i, d))).collect();
    let deps = v.deps.filtered(n, |i, d| same(i, d) && !bare[d as usize]);
    let ideal = ideal_finish(v.specs, &deps, ideals, &hearing);
    // each (job, iteration)'s messages on one NIC or scale-up port of one host
    let on = |i: usize| {
        let t = v.tags[i];
        (t.job != Tag::NONE.job && lanes[i] != Lane::Alone).then(|| (t.job, t.iteration, v.specs[i].src, lanes[i] == Lane::ScaleUp))
    };
    let mut busy: std::collections::HashMap<(u32, u32), Time> = std::collections::HashMap::new();
    // the least a packet of each message takes from leaving its NIC to arriving
    let mut flight = Flights::default();
    let tail: Vec<Time> = (0..n).map(|i| v.tail(i, ideals[i], wire[i], &mut flight)).collect();
    for ((job, it, _, _), b) in nic_bounds(&ideal, &wire, &tail, on) {
        let e = busy.entry((job, it)).or_insert(0);
        *e = (*e).max(b);
    }
    // a CPU runs its entries one at a time (a GOAL schedule's `cpu`): its iteration ends no
    // earlier than its first entry's begin (release less its computation), plus every entry's
    // computation, plus the least any of them takes after it (a message's flight; nothing for
    // a compute task). The schedule above lets them overlap (issue 61: a trace's ideal ignored
    // the serialization)
    // (only where an entry names a CPU: three columns over every message otherwise, for nothing)
    if v.specs.iter().any(|m| m.cpu.is_some()) {
        let on_cpu = |i: usize| {
            let (t, m) = (v.tags[i], &v.specs[i]);
            (t.job != Tag::NONE.job).then_some(())?;
            m.cpu.map(|cpu| (t.job, t.iteration, m.src, cpu))
        };
        let begun: Vec<(Time, Time)> = ideal.iter().zip(v.specs).map(|(&(r, f), m)| (r.saturating_sub(m.delay), f)).collect();
        let held: Vec<Time> = v.specs.iter().map(|m| m.delay).collect();
        let after: Vec<Time> = ideal.iter().map(|&(r, f)| f - r).collect();
        for ((job, it, _, _), b) in nic_bounds(&begun, &held, &after, on_cpu) {
            let e = busy.entry((job, it)).or_insert(0);
            *e = (*e).max(b);
        }
    }
    let compute_only = v.jobs.iter().any(|j| j.training()).then(|| {
        let none = |_: u32, _: u32| 0;
        let free = Hearing { ack_flight: &none, notice: &none };
        let zero = vec![0; ideals.len()];
        // a copy only where some message carries NCCL's latencies
        let specs: std::borrow::Cow<'_, [MessageSpec]> = if v.specs.iter().any(|m| !m.is_compute() && m.delay > 0) {
            v.specs.iter().map(MessageSpec::taking_no_time).collect()
        } else {
            v.specs.into()
        };
        ideal_finish(&specs, &deps, &zero, &free)
    });
    (ideal, compute_only, busy)
}

/// Whether message `i` is a collective's compute task, which only joins what a rank's
/// pieces wait for (`collective::Builder::join`): a collective has no other.
fn joins(v: &Plan<'_>, i: usize) -> bool {
    joins_in(&v.specs[i], v.tags[i].job, v.jobs)
}

/// [`joins`] for message `m` of job `job` among `jobs` (`Tag::NONE`'s: not a job's): a
/// collective's compute task, unless it is a rank's call (NCCL's latencies), where its
/// iteration starts.
fn joins_in(m: &MessageSpec, job: u32, jobs: &[JobInfo]) -> bool {
    job != Tag::NONE.job && m.is_compute() && jobs[job as usize].op.is_some() && !jobs[job as usize].calls
}

/// How long message `m` of job `job` ran before its release: a compute task its delay (a
/// training job's or a trace's computation), but a collective's call none (its delay is the
/// compute time before the call, outside the iteration).
fn ran(m: &MessageSpec, job: u32, jobs: &[JobInfo]) -> Time {
    let call = job != Tag::NONE.job && jobs[job as usize].op.is_some();
    if m.is_compute() && !call {
        m.delay
    } else {
        0
    }
}

/// What message `i` is (the flows table's `traffic`): background, its job's collective, a
/// training job's kind of work (tp, pp, dp, ep, cp), or trace.
pub fn traffic(v: &WorkView<'_>, i: usize) -> &'static str {
    let t = v.tags[i];
    if t.job == Tag::NONE.job {
        return "background";
    }
    match &v.jobs[t.job as usize] {
        j if j.training() => KINDS[t.step as usize],
        j => j.kind(),
    }
}

/// The jobs and steps tables of the run `v` whose messages ended at `end`, from the bounds
/// its workload set before it ran ([`bounds`]).
pub fn tables(v: &WorkView<'_>, bounds: &JobBounds, end: &Nullable<Time>) -> JobTables {
    // spans per (job, iteration) and per (job, iteration, step), in that order
    let (mut iters, mut steps) = (bounds.iters.clone(), bounds.steps.clone());
    for (i, t) in v.tags.iter().enumerate() {
        if t.job == Tag::NONE.job || joins_in(&v.messages[i].spec, t.job, v.jobs) {
            // a collective's compute task only joins what a rank's pieces wait for
            continue;
        }
        let m = &v.messages[i];
        let ran = ran(&m.spec, t.job, v.jobs);
        let ready = v.states[i].ready().map(|r| r - ran);
        for span in [iters.get_mut(&(t.job, t.iteration)), steps.get_mut(&(t.job, t.iteration, t.step))].into_iter().flatten() {
            span.add_run(ready, end.get(i));
        }
        if v.jobs[t.job as usize].trace && m.spec.dst != m.spec.src {
            // a trace's rank is done once what it receives is, too
            if let Some(rank) = steps.get_mut(&(t.job, t.iteration, v.routes.topology().host(m.spec.dst))) {
                rank.close(end.get(i));
            }
        }
    }
    let mut jt = Table::new(columns::JOBS);
    let rows: Vec<(&(u32, u32), &Span)> = iters.iter().collect();
    let info = |j: u32| &v.jobs[j as usize];
    let jct: Vec<Option<Time>> = rows.iter().map(|(_, s)| s.end().zip(s.start).map(|(e, b)| e - b)).collect();
    let ideal_jct: Vec<Time> = rows.iter().map(|(_, s)| s.ideal.1 - s.ideal.0).collect();
    let slowdown: Vec<Option<f64>> = jct.iter().zip(&ideal_jct).map(|(j, &i)| j.map(|j| j as f64 / i.max(1) as f64)).collect();
    let algbw: Vec<Option<f64>> = jct
        .iter()
        .zip(&rows)
        .map(|(j, ((job, _), _))| j.filter(|_| info(*job).op.is_some()).map(|j| info(*job).size as f64 * 8e3 / j.max(1) as f64))
        .collect();
    // training: what the iteration would take if communication took no time, and what it
    // exposes beyond that
    let free: Vec<Option<Time>> = rows.iter().map(|((j, _), s)| info(*j).training().then(|| s.free.1 - s.free.0)).collect();
    let exposed: Vec<Option<Time>> = jct.iter().zip(&free).map(|(j, f)| j.zip(*f).map(|(j, f)| j.saturating_sub(f))).collect();
    jt.add("job", Column::U64(rows.iter().map(|((j, _), _)| *j as u64).collect()));
    jt.add("name", Column::Str(rows.iter().map(|((j, _), _)| info(*j).name.clone()).collect()));
    jt.add("collective", Column::Str(rows.iter().map(|((j, _), _)| info(*j).kind().to_string()).collect()));
    jt.add("iteration", Column::U64(rows.iter().map(|((_, it), _)| *it as u64).collect()));
    jt.add("ranks", Column::U64(rows.iter().map(|((j, _), _)| info(*j).ranks() as u64).collect()));
    jt.add("size_bytes", Column::U64(rows.iter().map(|((j, _), _)| info(*j).size).collect()));
    jt.add("start_ps", Column::OptU64(rows.iter().map(|(_, s)| s.start).collect()));
    jt.add("end_ps", Column::OptU64(rows.iter().map(|(_, s)| s.end()).collect()));
    jt.add("jct_ps", Column::OptU64(jct.iter().copied().collect()));
    jt.add("ideal_jct_ps", Column::U64(ideal_jct));
    jt.add("slowdown", Column::OptF64(slowdown.iter().copied().collect()));
    jt.add("algbw_gbps", Column::OptF64(algbw.iter().copied().collect()));
    let busbw =
        algbw.iter().zip(&rows).map(|(a, ((j, _), _))| a.zip(info(*j).op).map(|(a, op)| a * op.bus_factor(info(*j).ranks()))).collect();
    jt.add("busbw_gbps", Column::OptF64(busbw));
    jt.add("compute_only_ps", Column::OptU64(free.into_iter().collect()));
    jt.add("exposed_comm_ps", Column::OptU64(exposed.into_iter().collect()));

    let mut stt = Table::new(columns::STEPS);
    stt.add("job", Column::U64(steps.keys().map(|k| k.0 as u64).collect()));
    stt.add("iteration", Column::U64(steps.keys().map(|k| k.1 as u64).collect()));
    stt.add("step", Column::U64(steps.keys().map(|k| k.2 as u64).collect()));
    let kind = |(j, _, step): &(u32, u32, u32)| match info(*j) {
        i if i.op.is_some() => "step",
        i if i.trace => "rank",
        _ => KINDS[*step as usize],
    };
    stt.add("kind", Column::Str(steps.keys().map(|k| kind(k).to_string()).collect()));
    stt.add("messages", Column::U64(steps.values().map(|s| s.count).collect()));
    stt.add("bytes", Column::U64(steps.values().map(|s| s.bytes).collect()));
    stt.add("scale_up_bytes", Column::U64(steps.values().map(|s| s.scale_up_bytes).collect()));
    stt.add("start_ps", Column::OptU64(steps.values().map(|s| s.start).collect()));
    stt.add("end_ps", Column::OptU64(steps.values().map(|s| s.end()).collect()));
    stt.add("ideal_end_ps", Column::U64(steps.values().map(|s| s.ideal.1).collect()));

    let done: Vec<f64> = jct.iter().flatten().map(|&j| ns(j)).collect();
    JobTables {
        jobs: jt,
        steps: stt,
        max_jct_ns: done.iter().copied().reduce(f64::max),
        mean_jct_ns: super::mean(&done),
        max_jct_slowdown: slowdown.iter().flatten().copied().reduce(f64::max),
    }
}
