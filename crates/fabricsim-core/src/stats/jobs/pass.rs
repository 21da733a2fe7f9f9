//! The jobs' bounds in one pass over the messages as they are made ([`BoundsPass`]), where
//! each waits only for earlier ones (a job's always): each message's ideal release and finish
//! from those of what it waits for, held only while a later message may read them (a
//! [`Window`] of the latest messages and the far ones), so that neither the whole workload nor
//! a column over it is needed: a run that makes its jobs' messages as it goes (`sim::generate`)
//! feeds it as it draws them, a resolve message by message.

use std::collections::HashMap;
use std::sync::Arc;

use super::{joins_in, JobBounds};
use crate::host::TransportModel;
use crate::stats::least::{ack_flight, IdealFcts};
use crate::stats::plan::{Flights, Plan};
use crate::time::Time;
use crate::topology::{Routes, Topology};
use crate::workload::collective::{heard, released, Hearing, Lane, Tag};
use crate::workload::job::JobInfo;
use crate::workload::window::{FarIds, Window};
use crate::workload::{Deps, MessageSpec};

/// What a later message reads of one before it.
#[derive(Debug, Clone, Copy, Default)]
struct Done {
    /// Its ideal release and finish, and its finish with every message taking no time.
    release: Time,
    finish: Time,
    free: Time,
    /// Its job and iteration, and its hosts.
    job: u32,
    iteration: u32,
    src: u32,
    dst: u32,
    /// A collective's join left with nothing of its own iteration to wait for: what waits
    /// for it is released at its start (`bounds`' `bare`).
    bare: bool,
}

/// Per (job, iteration, host, lane or CPU): the earliest release, the time held, the least
/// tail after it.
type Acc = HashMap<(u32, u32, u32, u32), (Time, Time, Time)>;

/// The jobs' bounds of messages pushed one at a time ([`BoundsPass::push`]), in the order of
/// their ids, each waiting only for earlier ones; the same bounds as [`super::bounds`] of
/// the whole list.
pub struct BoundsPass {
    of: Of,
    free_too: bool,
    window: Window<Done>,
    fcts: IdealFcts,
    flight: Flights,
    nics: Acc,
    on_cpus: Acc,
    bounds: JobBounds,
}

/// What the messages are of: the fabric, the transport, the jobs.
struct Of {
    routes: Routes,
    transport: TransportModel,
    subflows: u32,
    jobs: Vec<JobInfo>,
    none: Deps,
}

impl Of {
    /// Message `m` alone, as a plan reads it.
    fn alone<'p>(&'p self, m: &'p MessageSpec, tag: &'p Tag) -> Plan<'p> {
        Plan {
            routes: &self.routes,
            transport: &self.transport,
            specs: std::slice::from_ref(m),
            subflows: self.subflows,
            deps: &self.none,
            tags: std::slice::from_ref(tag),
            jobs: &self.jobs,
        }
    }
}

impl BoundsPass {
    /// A pass over the messages of `jobs` on `topo` (ids from 0; the far ones, read from
    /// further back than the window holds, `far`).
    pub fn new(topo: Arc<Topology>, transport: TransportModel, subflows: u32, jobs: Vec<JobInfo>, far: FarIds) -> BoundsPass {
        let (routes, free_too) = (Routes::new(topo), jobs.iter().any(|j| j.training()));
        BoundsPass {
            of: Of { routes, transport, subflows, jobs, none: Deps::default() },
            free_too,
            window: Window::new(far),
            fcts: IdealFcts::default(),
            flight: Flights::default(),
            nics: Acc::new(),
            on_cpus: Acc::new(),
            bounds: JobBounds::default(),
        }
    }

    /// The next message (hosts by leaf slot), which waits for `after` (earlier ids), of `tag`.
    pub fn push(&mut self, m: &MessageSpec, after: &[u32], tag: Tag) {
        let mut last: Option<Time> = None;
        let mut free_last: Option<Time> = None;
        let own = (tag.job, tag.iteration);
        let deps = after.iter().map(|&d| self.window.get(d).expect("a message waits for earlier ones"));
        let mut own_deps = 0;
        for d in deps {
            if (d.job, d.iteration) != own {
                continue;
            }
            own_deps += 1;
            if d.bare {
                continue;
            }
            let at = match m.via.through() {
                // a leg of a scale-up switch that cuts through hears of what it waits for at
                // its release (`collective::ideal_finish`)
                true => d.release,
                false => {
                    let (routes, header) = (&self.of.routes, self.of.transport.header);
                    let ack_flight = |from: u32, to: u32| ack_flight(routes, header, from, to);
                    let notice = |from: u32, to: u32| routes.notice_latency(from, to);
                    heard(&Hearing { ack_flight: &ack_flight, notice: &notice }, (d.src, d.dst), m.src, d.finish)
                }
            };
            last = Some(last.map_or(at, |l| l.max(at)));
            free_last = Some(free_last.map_or(d.free, |l| l.max(d.free)));
        }
        let bare = own_deps == 0 && joins_in(m, tag.job, &self.of.jobs);
        let release = released(m, last);
        let plan = self.of.alone(m, &tag);
        let (count, posting) = (plan.count(0), plan.posting(0));
        let fct = self.fcts.of(&self.of.routes, &self.of.transport, m, count);
        let finish = release + posting + fct;
        let free = self.free_too.then(|| {
            let at = released(&m.taking_no_time(), free_last);
            (at, at)
        });
        self.bounds.add(&plan, 0, (release, finish), free);
        if tag.job != Tag::NONE.job {
            let lane = plan.lane(0);
            if lane != Lane::Alone {
                let wire = plan.wire(0);
                let tail = plan.tail(0, fct, wire, &mut self.flight);
                fold(&mut self.nics, (tag.job, tag.iteration, m.src, u32::from(lane == Lane::ScaleUp)), release, wire, tail);
            }
            if let Some(cpu) = m.cpu {
                fold(&mut self.on_cpus, (tag.job, tag.iteration, m.src, u32::from(cpu)), release.saturating_sub(m.delay), m.delay, fct);
            }
        }
        let free = free.map_or(0, |f| f.1);
        self.window.push(Done { release, finish, free, job: tag.job, iteration: tag.iteration, src: m.src, dst: m.dst, bare });
    }

    /// The bounds of every message pushed.
    pub fn finish(self) -> JobBounds {
        self.so_far()
    }

    /// [`BoundsPass::finish`] of the messages pushed so far, the pass going on.
    pub fn so_far(&self) -> JobBounds {
        let mut busy: HashMap<(u32, u32), Time> = HashMap::new();
        for ((job, it, _, _), (first, held, tail)) in self.nics.iter().chain(&self.on_cpus) {
            let e = busy.entry((*job, *it)).or_insert(0);
            *e = (*e).max(first.saturating_add(*held).saturating_add(*tail));
        }
        let mut b = self.bounds.clone();
        for (key, span) in b.iters.iter_mut() {
            span.ideal.1 = span.ideal.1.max(busy.get(key).copied().unwrap_or(0));
        }
        b
    }
}

fn fold(acc: &mut Acc, key: (u32, u32, u32, u32), first: Time, held: Time, tail: Time) {
    let e = acc.entry(key).or_insert((Time::MAX, 0, Time::MAX));
    *e = (e.0.min(first), e.1.saturating_add(held), e.2.min(tail));
}
