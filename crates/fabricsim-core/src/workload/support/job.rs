//! `[[jobs]]`: AI training jobs, each a collective over placed ranks, repeated for a number of
//! iterations with a compute gap between them, or iterations of training a model
//! (`model` and `parallel`: `training/`), beside (or instead of) the `[workload]`.
//!
//! Each job's ranks are hosts: listed (`hosts = [0, 8, 16]` or `hosts = "0-15"`), or
//! `ranks = N` placed by `placement` on the first N hosts no earlier job holds, in the
//! placement's order: `packed` (by host id: a server's NICs, then the next server's),
//! `spread` (round-robin over the leaves: rank i on leaf i mod L), `rail` (NIC 0 of every
//! server, then NIC 1, ...: a job of at most `servers` ranks sits on one rail, as GPU
//! clusters place data-parallel groups), `random` (a seeded shuffle). An iteration is the collective's messages (one file per algorithm in
//! `collective/`); a rank's first messages of iteration i+1 wait for its part of iteration i,
//! then `compute`.

use crate::engine::rng::Rng;
use crate::engine::MAX_MESSAGES;
use crate::error::{ensure, ScenarioError};
use std::sync::Arc;

use crate::topology::Topology;
use crate::units::Size;
use crate::workload::collective::nccl::{CostsModel, Protocol, ProtocolChoice};
use crate::workload::collective::{nvls, ring, share, tuner, AlgorithmKind, Builder, Costs, Op, Out, QpCycle, Ranks, Sink, Tag};
use crate::workload::training::{ModelConfig, Trainer};
use crate::workload::{check_size, MessageSpec};

pub use super::jobs_table::{AlgorithmChoice, HostList, JobConfig, Placement};

/// What the results need to know of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobInfo {
    pub name: String,
    /// Its collective; `None` for training and for a trace.
    pub op: Option<Op>,
    pub size: u64,
    pub iterations: u32,
    /// The `[workload]`'s dependent messages (a trace: a GOAL, Chakra or htsim file, or a
    /// flows list with `after`), reported as one iteration of a job.
    pub trace: bool,
    /// Its ranks' hosts, in rank order (a trace: the hosts its messages touch), as the
    /// scenario numbers them.
    pub hosts: Vec<u32>,
    /// Its collective's compute tasks are its ranks' calls (NCCL's latencies,
    /// [`crate::workload::collective::Builder::launch`]): each iteration starts at them.
    pub calls: bool,
}

impl JobInfo {
    /// Its ranks (one per host).
    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32
    }

    /// A training job's.
    pub fn training(&self) -> bool {
        self.op.is_none() && !self.trace
    }

    /// What the jobs table's `collective` column says.
    pub fn kind(&self) -> &'static str {
        match self.op {
            Some(op) => op.name(),
            None if self.trace => "trace",
            None => "training",
        }
    }
}

impl JobConfig {
    /// Whether it counts NCCL's latencies (`costs = "nccl"`): its ranks' calls start its
    /// collectives.
    fn nccl_latencies(&self) -> bool {
        self.costs.unwrap_or(CostsModel::Nccl) == CostsModel::Nccl
    }

    /// Its protocol: the one given, or what NCCL's tuner picks.
    fn protocol(&self) -> ProtocolChoice {
        self.protocol.unwrap_or(ProtocolChoice::Auto)
    }

    /// The hosts of the ranks, in rank order. Placed ranks take hosts no earlier job holds;
    /// listed hosts are taken as given (and held from later placed jobs).
    fn hosts(&self, i: usize, topo: &Topology, held: &[bool], rng: &mut Rng) -> Result<Vec<u32>, ScenarioError> {
        let at = |k: &str| format!("jobs[{i}].{k}");
        let hosts = topo.gpus();
        let list = match (&self.hosts, self.ranks) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError { field: at("ranks"), message: "got both ranks and hosts; allowed: one of them".into() })
            }
            (None, None) => return Err(ScenarioError { field: at("ranks"), message: "missing; must be given (or hosts)".into() }),
            (Some(h), None) => h.0.clone(),
            (None, Some(n)) => {
                let free = held.iter().filter(|&&h| !h).count() as u32;
                ensure(n >= 2 && n <= free, &at("ranks"), n, format!("allowed: 2 to {free} (the hosts no earlier job holds, of {hosts})"))?;
                if self.placement == Placement::Rail {
                    ensure(
                        topo.nics() > 1,
                        &at("placement"),
                        "\"rail\"",
                        "allowed: only with topology.nics_per_server of 2 or more (else use \"packed\")",
                    )?;
                }
                self.placement.order(topo, rng).into_iter().filter(|&h| !held[h as usize]).take(n as usize).collect()
            }
        };
        ensure(list.len() >= 2, &at("hosts"), format!("{} hosts", list.len()), "allowed: at least 2")?;
        let mut seen = std::collections::HashSet::with_capacity(list.len());
        for (k, &h) in list.iter().enumerate() {
            ensure(h < hosts, &format!("jobs[{i}].hosts[{k}]"), h, format!("allowed: a host id from 0 to {}", hosts.saturating_sub(1)))?;
            ensure(seen.insert(h), &format!("jobs[{i}].hosts[{k}]"), h, "allowed: each host once per job")?;
        }
        Ok(list)
    }
}

/// The `[workload]`'s messages (`messages`, waiting for `lists`) as job number `job` where
/// any waits for another (a trace), tagging them (`tags`): one iteration, a step per rank (its
/// source host); named after `file`.
pub fn trace(messages: &[MessageSpec], lists: &[Vec<u32>], file: Option<&str>, job: u32, tags: &mut [Tag]) -> Option<JobInfo> {
    if lists.iter().all(|l| l.is_empty()) {
        return None;
    }
    let mut ranks: Vec<u32> = messages.iter().flat_map(|m| [m.src, m.dst]).collect();
    ranks.sort_unstable();
    ranks.dedup();
    for (t, m) in tags.iter_mut().zip(messages) {
        *t = Tag { job, iteration: 0, step: m.src };
    }
    Some(JobInfo {
        name: file.unwrap_or("workload").to_string(),
        op: None,
        size: messages.iter().map(|m| m.bytes).sum(),
        iterations: 1,
        trace: true,
        hosts: ranks,
        calls: false,
    })
}

/// Expands the jobs into dependent messages, made into `sink` (which numbers them after the
/// `[workload]`'s); refuses, before making any, more than `max_messages` in all (the memory
/// budget). Returns what each job is.
pub fn plan(
    jobs: &[JobConfig],
    sink: &mut dyn Sink,
    topo: &Arc<Topology>,
    max_messages: u64,
    rng: &mut Rng,
) -> Result<Vec<JobInfo>, ScenarioError> {
    let mut infos = Vec::new();
    let mut held = vec![false; topo.gpus() as usize];
    for (i, job) in jobs.iter().enumerate() {
        let at = |k: &str| format!("jobs[{i}].{k}");
        let ranks = job.hosts(i, topo, &held, rng)?;
        for &h in &ranks {
            held[h as usize] = true;
        }
        let name = job.name.clone().unwrap_or_else(|| format!("job{i}"));
        ensure((1..=1_000_000).contains(&job.iterations), &at("iterations"), job.iterations, "allowed: 1 to 1000000")?;
        let (op, size) = match (job.collective, &job.model) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError { field: at("model"), message: "got both collective and model; allowed: one of them".into() })
            }
            (None, None) => {
                return Err(ScenarioError { field: at("collective"), message: "missing; give a collective, or a model to train".into() })
            }
            (Some(op), None) => {
                collective(job, i, op, &ranks, topo, max_messages, sink)?;
                (Some(op), check_size(&at("size"), job.size.unwrap_or(Size(0)))?)
            }
            (None, Some(model)) => {
                training(job, i, model, &ranks, topo, max_messages, sink)?;
                (None, 0)
            }
        };
        infos.push(JobInfo { name, op, size, iterations: job.iterations, trace: false, hosts: ranks, calls: job.nccl_latencies() });
    }
    Ok(infos)
}

/// Where iteration `it` of job `i` puts its messages.
fn out<'a>(sink: &'a mut dyn Sink, qps: Option<&'a mut QpCycle>, job: &JobConfig, i: usize, it: u32) -> Out<'a> {
    let tag = Tag { job: i as u32, iteration: it, step: 0 };
    Out { start: job.start.0, class: job.class, tag, qps, ..Out::to(sink) }
}

/// Job `i`'s queue pairs a connection, checked: a cycle over them where there are several.
fn qp_cycle(job: &JobConfig, i: usize) -> Result<Option<QpCycle>, ScenarioError> {
    let qps = job.qps.unwrap_or(1);
    ensure((1..=128).contains(&qps), &format!("jobs[{i}].qps"), qps, "allowed: 1 to 128 (NCCL_IB_QPS_PER_CONNECTION's range)")?;
    Ok((qps > 1).then(|| QpCycle::new(qps as u16)))
}

/// More messages than `max` (the memory budget) in all, or than a run holds
/// ([`MAX_MESSAGES`]), for job `i`'s `count`.
fn too_many(i: usize, total: u64, count: u64, max: u64) -> ScenarioError {
    if total > MAX_MESSAGES as u64 {
        let message = format!(
            "got jobs that make at least {total} messages (jobs[{i}]: {count} or more); allowed: at most {MAX_MESSAGES} messages in a run"
        );
        return ScenarioError { field: "workload".into(), message };
    }
    ScenarioError {
        field: "stop.max_memory".into(),
        message: format!(
            "got jobs that make at least {total} messages (jobs[{i}]: {count} or more), more than the memory allows ({max}); allowed: fewer ranks or iterations, or raise stop.max_memory"
        ),
    }
}

/// Job `i`'s iterations of collective `op` on `ranks`.
fn collective(
    job: &JobConfig,
    i: usize,
    op: Op,
    ranks: &[u32],
    topo: &Arc<Topology>,
    max_messages: u64,
    sink: &mut dyn Sink,
) -> Result<(), ScenarioError> {
    let at = |k: &str| format!("jobs[{i}].{k}");
    ensure(job.parallel.is_none(), &at("parallel"), "a table", "allowed: only with model (a training job)")?;
    let n = ranks.len();
    let size = check_size(&at("size"), job.size.unwrap_or(Size(0)))?;
    let channels = job.channels.unwrap_or(1);
    ensure((1..=64).contains(&channels), &at("channels"), channels, "allowed: 1 to 64 (NCCL's MAXCHANNELS)")?;
    let given = job.algorithm.map_or(Some(AlgorithmKind::default_for(op)), AlgorithmChoice::given);
    let link = tuner::Link::of(topo, ranks);
    let (algorithm, protocol) = tuner::resolve(given, job.protocol(), op, n, size, link, channels);
    let layout = Ranks { hosts: ranks, per_server: topo.nics() };
    algorithm
        .supports(op, &layout)
        .map_err(|m| ScenarioError { field: at("algorithm"), message: format!("got {}: {m}", algorithm.name()) })?;
    if let Some(k) = job.max_connections {
        ensure(op == Op::Alltoall, &at("max_connections"), k, "allowed: only for collective = \"alltoall\"")?;
        ensure(k >= 1, &at("max_connections"), k, "allowed: 1 or more")?;
    }
    let nvls = algorithm == AlgorithmKind::Nvls;
    if nvls {
        check_nvls(&at, topo, protocol)?;
    }
    let slice = match job.slice {
        None => 0,
        Some(s) => {
            ensure(s.0 >= 1, &at("slice"), s, "allowed: a positive size")?;
            let ring = algorithm == AlgorithmKind::Ring && op != Op::Broadcast;
            let auto = job.algorithm == Some(AlgorithmChoice::Auto);
            ensure(
                ring || nvls || auto,
                &at("slice"),
                s,
                "allowed: with algorithm = \"ring\" (or \"auto\") for allreduce, reduce_scatter or allgather, or \"nvls\"",
            )?;
            if ring || nvls {
                s.0
            } else {
                0
            }
        }
    };
    // each channel's part, and the slices of its largest step (nvls: of each head's part)
    let part = |c: u32| share(size, u64::from(channels), u64::from(c));
    let pieces =
        if nvls { nvls::pieces(part(0), n, if slice == 0 { nvls::CHUNK } else { slice }) } else { ring::slices(part(0), n, slice) };
    // and with slices (always with nvls), a compute task a rank and channel joins what its
    // first pieces wait for
    let joins = if pieces > 1 || nvls { n as u64 } else { 0 };
    let costs = costs(job, topo);
    let step = costs.as_ref().map(|c| (c, c.of(algorithm, protocol, ranks)));
    // with NCCL's latencies, each rank's call of each channel's collective
    let calls = if step.is_some_and(|(_, s)| s.base > 0) { n as u64 } else { 0 };
    let count = (algorithm.count(op, &layout).saturating_mul(pieces).saturating_add(joins))
        .saturating_add(calls)
        .saturating_mul(u64::from(channels))
        .saturating_mul(job.iterations as u64);
    let total = (sink.len() as u64).saturating_add(count);
    let max = max_messages.min(MAX_MESSAGES as u64);
    if total > max {
        return Err(too_many(i, total, count, max_messages));
    }
    let mut cycle = qp_cycle(job, i)?;
    let mut entry: Vec<Vec<u32>> = vec![Vec::new(); n];
    for it in 0..job.iterations {
        // the channels run at once; a rank's next iteration waits for its part of all of them
        let mut done: Vec<Vec<u32>> = vec![Vec::new(); n];
        for c in 0..channels {
            let mut out = out(sink, cycle.as_mut(), job, i, it);
            out.qp = c as u16;
            out.costs = step;
            let mut b = Builder {
                ranks,
                per_server: topo.nics(),
                size: part(c),
                entry: &entry,
                max_connections: job.max_connections.map_or(n - 1, |k| k as usize),
                compute: job.compute.0,
                slice,
                out,
            };
            for (r, d) in algorithm.iteration(op, &mut b).into_iter().enumerate() {
                done[r].extend(d);
            }
        }
        entry = done;
    }
    Ok(())
}

/// `algorithm = "nvls"` needs its server's scale-up switch and runs NCCL's Simple protocol only
/// (NCCL's tuner skips NVLS under LL and LL128).
fn check_nvls(at: &dyn Fn(&str) -> String, topo: &Topology, protocol: Protocol) -> Result<(), ScenarioError> {
    ensure(
        topo.scale_up().is_some_and(|up| up.nvls),
        &at("algorithm"),
        "nvls",
        "allowed: only on a fabric whose servers have a scale-up network (topology.scale_up_rate) whose switch reduces (topology.scale_up_nvls, its default)",
    )?;
    let given = if protocol == Protocol::Ll { "ll" } else { "ll128" };
    ensure(protocol == Protocol::Simple, &at("protocol"), given, "allowed with nvls: \"simple\" or \"auto\" (NVLS runs Simple only)")
}

/// What NCCL's stack adds to job `job`'s messages (`None`: nothing, Simple without NCCL's
/// latencies: [`crate::workload::collective::nccl`]).
fn costs(job: &JobConfig, topo: &Arc<Topology>) -> Option<Costs> {
    let (latencies, protocol) = (job.nccl_latencies(), job.protocol());
    (latencies || protocol != ProtocolChoice::Simple).then(|| Costs::new(topo, latencies, protocol))
}

/// Job `i`'s training iterations of `model` on `ranks`.
fn training(
    job: &JobConfig,
    i: usize,
    model: &ModelConfig,
    ranks: &[u32],
    topo: &Arc<Topology>,
    max_messages: u64,
    sink: &mut dyn Sink,
) -> Result<(), ScenarioError> {
    let at = |k: &str| format!("jobs[{i}].{k}");
    for (given, k) in [
        (job.size.is_some(), "size"),
        (job.max_connections.is_some(), "max_connections"),
        (job.channels.is_some(), "channels"),
        (job.slice.is_some(), "slice"),
    ] {
        ensure(!given, &at(k), "a value", "allowed: only with collective (a training job's traffic follows from its model and layout)")?;
    }
    if let Some(AlgorithmChoice::Kind(k)) = job.algorithm.filter(|&a| a != AlgorithmChoice::Kind(AlgorithmKind::Ring)) {
        return Err(ScenarioError::new(
            at("algorithm"),
            k.name(),
            "allowed for a training job: \"auto\" (NCCL's tuner: NVLS or the ring on one server's switch that reduces, the ring elsewhere) or \"ring\"",
        ));
    }
    let shape = model.resolve(&at("model"))?;
    let parallel = job.parallel.clone().unwrap_or_default();
    let layout = parallel.resolve(&format!("jobs[{i}]"), ranks.len(), &shape)?;
    let max = max_messages.min(MAX_MESSAGES as u64) as usize;
    let least = layout.least_messages(&shape, ranks.len()).saturating_mul(job.iterations.into());
    let total = (sink.len() as u64).saturating_add(least);
    if total > max as u64 {
        return Err(too_many(i, total, least, max_messages));
    }
    let mut cycle = qp_cycle(job, i)?;
    let costs = costs(job, topo);
    let mut entry: Vec<Vec<u32>> = vec![Vec::new(); ranks.len()];
    for it in 0..job.iterations {
        let out = out(sink, cycle.as_mut(), job, i, it);
        let tuner = (job.algorithm != Some(AlgorithmChoice::Kind(AlgorithmKind::Ring))).then_some((&**topo, job.protocol()));
        let mut t = Trainer { shape, layout, hosts: ranks, per_server: topo.nics(), gap: job.compute.0, out, costs: costs.as_ref(), tuner };
        entry = t.iteration(&entry, max).map_err(|made| too_many(i, made as u64, made as u64, max_messages))?;
    }
    Ok(())
}

/// The warnings for jobs sliced below a packet's `payload`: every packet is then a message of
/// its own, and the run is bound by per-message work (a ring in 64 B slices ran at 0.57 M
/// events/s); no NCCL protocol moves a step in pieces that small.
pub fn small_slices(jobs: &[JobConfig], payload: u64) -> impl Iterator<Item = String> + '_ {
    jobs.iter().enumerate().filter_map(move |(i, job)| {
        job.slice.filter(|s| s.0 < payload).map(|slice| {
            format!(
                "jobs[{i}].slice ({slice}) is below a packet's payload ({}): each piece is a message of its own, the run is bound by per-message work and slow per event; NCCL's slices are hundreds of KiB",
                Size(payload)
            )
        })
    })
}
