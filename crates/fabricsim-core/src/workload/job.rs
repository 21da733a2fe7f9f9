//! `[[jobs]]`: AI training jobs, each a collective over placed ranks, repeated for a number of
//! iterations with a compute gap between them, beside (or instead of) the `[workload]`.
//!
//! Each job's ranks are hosts: listed (`hosts = [0, 8, 16]` or `hosts = "0-15"`), or
//! `ranks = N` placed by `placement` on the first N hosts no earlier job holds, in the
//! placement's order: `packed` (by host id: a server's NICs, then the next server's),
//! `spread` (round-robin over the leaves: rank i on leaf i mod L), `rail` (NIC 0 of every
//! server, then NIC 1, ...: a job of at most `servers` ranks sits on one rail, as GPU
//! clusters place data-parallel groups), `random` (a seeded shuffle). An iteration is the collective's messages (one file per algorithm in
//! `collective/`); a rank's first messages of iteration i+1 wait for its part of iteration i,
//! then `compute`.

use serde::{Deserialize, Serialize};

use super::collective::{AlgorithmKind, Builder, Op, Ranks, Tag};
use super::{check_size, MessageSpec};
use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::topology::FatTreeSpec;
use crate::units::{Duration, Size};

/// How `ranks = N` are put on hosts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    #[default]
    Packed,
    Spread,
    Rail,
    Random,
}

impl Placement {
    /// Every host, in the order this placement takes them (a job takes the first free ones).
    fn order(self, tree: &FatTreeSpec, rng: &mut Rng) -> Vec<u32> {
        let hosts = tree.hosts;
        match self {
            // by host id: a server's NICs, then the next server's
            Placement::Packed => (0..hosts).collect(),
            // position p of leaf 0, of leaf 1, ..., then position p + 1: round-robin over leaves
            Placement::Spread => {
                let (d, leaves) = (tree.down0, tree.leaves);
                (0..hosts).map(|r| tree.host((r % leaves) * d + r / leaves)).collect()
            }
            // NIC 0 of every server, then NIC 1 of every server, ...
            Placement::Rail => {
                let (n, servers) = (tree.nics, tree.servers());
                (0..hosts).map(|r| (r % servers) * n + r / servers).collect()
            }
            Placement::Random => {
                let mut all: Vec<u32> = (0..hosts).collect();
                rng.shuffle(&mut all);
                all
            }
        }
    }
}

/// One `[[jobs]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    /// Name in the results; default `job<i>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub collective: Op,
    /// Default: `ring`, or `direct` for alltoall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<AlgorithmKind>,
    /// Per-rank buffer as nccl-tests counts it.
    pub size: Size,
    /// How many ranks, placed by `placement` (or give `hosts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    #[serde(default)]
    pub placement: Placement,
    /// The ranks' hosts, in rank order: a list, or a range `"a-b"` (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<HostList>,
    #[serde(default = "d_iterations")]
    pub iterations: u32,
    /// Gap between a rank's part of an iteration and its next one.
    #[serde(default)]
    pub compute: Duration,
    #[serde(default)]
    pub start: Duration,
    /// Alltoall: peers a rank sends to at once; default all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<u32>,
    #[serde(default)]
    pub class: u8,
}
fn d_iterations() -> u32 {
    1
}

/// `hosts`: a list of host ids or a range string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Value", into = "serde_json::Value")]
pub struct HostList(pub Vec<u32>);

impl TryFrom<serde_json::Value> for HostList {
    type Error = String;
    fn try_from(v: serde_json::Value) -> Result<Self, String> {
        let bad = || format!("expected a list of host ids or a range like \"0-15\", got {v}");
        match &v {
            serde_json::Value::Array(items) => {
                items.iter().map(|x| x.as_u64().and_then(|h| u32::try_from(h).ok()).ok_or_else(bad)).collect::<Result<_, _>>().map(HostList)
            }
            serde_json::Value::String(s) => {
                let (a, b) = s.split_once('-').ok_or_else(bad)?;
                let (a, b): (u32, u32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                if a > b || b - a >= 1 << 24 {
                    return Err(bad());
                }
                Ok(HostList((a..=b).collect()))
            }
            _ => Err(bad()),
        }
    }
}
impl From<HostList> for serde_json::Value {
    fn from(h: HostList) -> Self {
        serde_json::Value::from(h.0)
    }
}

/// What the results need to know of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobInfo {
    pub name: String,
    pub op: Op,
    pub ranks: u32,
    pub size: u64,
    pub iterations: u32,
}

/// Jobs' messages, appended after the `[workload]`'s.
pub struct JobPlan {
    pub messages: Vec<MessageSpec>,
    pub deps: Vec<Vec<u32>>,
    pub tags: Vec<Tag>,
    pub jobs: Vec<JobInfo>,
}

impl JobConfig {
    /// The hosts of the ranks, in rank order. Placed ranks take hosts no earlier job holds;
    /// listed hosts are taken as given (and held from later placed jobs).
    fn hosts(&self, i: usize, tree: &FatTreeSpec, held: &[bool], rng: &mut Rng) -> Result<Vec<u32>, ScenarioError> {
        let at = |k: &str| format!("jobs[{i}].{k}");
        let hosts = tree.hosts;
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
                        tree.nics > 1,
                        &at("placement"),
                        "\"rail\"",
                        "allowed: only with topology.nics_per_server of 2 or more (else use \"packed\")",
                    )?;
                }
                self.placement.order(tree, rng).into_iter().filter(|&h| !held[h as usize]).take(n as usize).collect()
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

/// Expands the jobs into dependent messages, numbered from `base` (the `[workload]`'s come
/// first); refuses, before making any, more than `max_messages` in all (the memory budget).
pub fn plan(jobs: &[JobConfig], base: usize, tree: &FatTreeSpec, max_messages: u64, rng: &mut Rng) -> Result<JobPlan, ScenarioError> {
    let mut p = JobPlan { messages: Vec::new(), deps: Vec::new(), tags: Vec::new(), jobs: Vec::new() };
    let mut held = vec![false; tree.hosts as usize];
    for (i, job) in jobs.iter().enumerate() {
        let at = |k: &str| format!("jobs[{i}].{k}");
        let ranks = job.hosts(i, tree, &held, rng)?;
        for &h in &ranks {
            held[h as usize] = true;
        }
        let n = ranks.len();
        let size = check_size(&at("size"), job.size)?;
        let algorithm = job.algorithm.unwrap_or(if job.collective == Op::Alltoall { AlgorithmKind::Direct } else { AlgorithmKind::Ring });
        let layout = Ranks { hosts: &ranks, per_server: tree.nics };
        algorithm
            .supports(job.collective, &layout)
            .map_err(|m| ScenarioError { field: at("algorithm"), message: format!("got {}: {m}", algorithm.name()) })?;
        ensure((1..=1_000_000).contains(&job.iterations), &at("iterations"), job.iterations, "allowed: 1 to 1000000")?;
        if let Some(k) = job.max_connections {
            ensure(job.collective == Op::Alltoall, &at("max_connections"), k, "allowed: only for collective = \"alltoall\"")?;
            ensure(k >= 1, &at("max_connections"), k, "allowed: 1 or more")?;
        }
        let count = algorithm.count(job.collective, &layout).saturating_mul(job.iterations as u64);
        let total = (p.messages.len() as u64).saturating_add(count);
        if total > max_messages.min(u32::MAX as u64 / 2) {
            return Err(ScenarioError {
                field: "stop.max_memory".into(),
                message: format!(
                    "got jobs that make {total} messages (jobs[{i}]: {count}), more than the memory allows ({max_messages}); allowed: fewer ranks or iterations, or raise stop.max_memory"
                ),
            });
        }
        let name = job.name.clone().unwrap_or_else(|| format!("job{i}"));
        let mut entry: Vec<Vec<u32>> = vec![Vec::new(); n];
        // ids in the builder are local to the job plan; offset them into the whole run's
        let first = p.messages.len();
        for it in 0..job.iterations {
            let mut b = Builder {
                ranks: &ranks,
                per_server: tree.nics,
                size,
                entry: &entry,
                max_connections: job.max_connections.map_or(n - 1, |k| k as usize),
                messages: &mut p.messages,
                deps: &mut p.deps,
                tags: &mut p.tags,
                start: job.start.0,
                compute: job.compute.0,
                class: job.class,
                tag: Tag { job: i as u32, iteration: it, step: 0 },
            };
            entry = algorithm.iteration(job.collective, &mut b);
        }
        for d in &mut p.deps[first..] {
            for x in d.iter_mut() {
                *x += base as u32;
            }
        }
        p.jobs.push(JobInfo { name, op: job.collective, ranks: n as u32, size, iterations: job.iterations });
    }
    Ok(p)
}
