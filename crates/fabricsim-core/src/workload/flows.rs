//! `flows`: an explicit list of messages (src, dst, size, start, class), each with an optional
//! `id`, the ids it waits for (`after`) and a `delay` after them ([`super::Deps`]): the format
//! for traces users bring. An entry from a host to itself of size 0 is a compute task: done
//! once its `after` are and its `delay` has passed (a GOAL schedule's `calc`). The Python front
//! end turns a CSV, JSON, htsim `.cm`/`.tm`, GOAL or Chakra file (`file = "x.csv"`) into this list
//! before the run, since the core reads no files; a Chakra trace's collectives are expanded by
//! [`super::collective::expand`].

use serde::{Deserialize, Serialize};

use super::collective::AlgorithmKind;
use super::{Hosts, check_size, Deps, MessageSpec, Workload};
use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::units::{Duration, Size};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "workload",
    name: "flows",
    summary: "an explicit list of (src, dst, size, start) with optional dependencies, inline or from a CSV/JSON file",
    reference: "",
};

/// One message as a scenario writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    pub src: u32,
    pub dst: u32,
    pub size: Size,
    #[serde(default)]
    pub start: Duration,
    #[serde(default)]
    pub class: u8,
    /// The name other entries use in `after`; default: its row number (0-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// Ids of the messages that must be fully received before this one is released.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u64>,
    /// Time between the last of `after` completing and the release (compute time).
    #[serde(default, skip_serializing_if = "Duration::is_zero")]
    pub delay: Duration,
    /// A CPU of `src` that runs the entry's `delay` one task at a time: the entry begins once
    /// its `after` are done and the CPU is free, holds the CPU for its `delay`, and is
    /// released (a compute task: done) at the end (LogGOPSim's `cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u16>,
}

/// `[workload]` parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The messages (or `file`): `[{src = 0, dst = 9, size = "1MiB", start = "0us"}, ...]`, each with `src`,
    /// `dst`, `size`, and optionally `start` (`"0ns"`), `class` (`0`), `id` (the entry's index; unique), `after`
    /// (ids it waits for), `delay` (after those, `"0ns"`) and `cpu` (a CPU of `src`, 0 to 65535, that runs the
    /// entry's `delay` one entry at a time, in the order they get ready: the entry begins once its `after` are
    /// done and the CPU is free, and is released at the end of its `delay`, with or without `after`; `start` must
    /// be 0; absent: delays overlap).
    #[serde(default)]
    #[schemars(example = crate::registry::example("[{\"src\": 0, \"dst\": 1, \"size\": \"1MiB\"}]"))]
    pub flows: Vec<FlowEntry>,
    /// Instead of `flows`: a file of them, relative to the scenario file: `.csv` (columns `src,dst,size` and
    /// optionally `start,class,id,after,delay,cpu`), `.json` (a list of objects), `.cm` or `.tm` (an htsim
    /// connection matrix), `.goal` (a GOAL schedule) or `.et` (a Chakra execution trace `x.0.et`, `x.1.et`, ...;
    /// docs/workloads.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Chakra traces only: the algorithm that expands their collectives; absent: as for jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<AlgorithmKind>,
    /// Chakra traces only: a JSON file of process groups, `{"name": [ranks]}` (ASTRA-sim's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm_groups: Option<String>,
    /// Chakra traces only: what one GPU computes, TFLOP/s achieved; times a compute node that gives `num_ops` and
    /// no `duration_micros` (as ASTRA-sim's generators write them) at `num_ops / gpu_tflops`. Absent: such a node
    /// is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_tflops: Option<f64>,
    /// Chakra traces only: a GPU's memory bandwidth, TB/s (ASTRA-sim's `local-mem-bw`); times a node's
    /// `tensor_size` where it gives no `duration_micros`: a compute node takes `max(num_ops / gpu_tflops,
    /// tensor_size / bandwidth)` (ASTRA-sim's roofline), a memory node `tensor_size / bandwidth`. Absent:
    /// `tensor_size` is not timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_tb_per_s: Option<f64>,
}

impl Config {
    fn field(i: usize, k: &str) -> String {
        format!("workload.flows[{i}].{k}")
    }

    /// Each entry's `after` ids as message indices; unknown or duplicate ids and cycles are
    /// refused with the entry named.
    pub fn deps(&self) -> Result<Deps, ScenarioError> {
        let waits = self.flows.iter().any(|f| !f.after.is_empty());
        if !waits && self.flows.iter().all(|f| f.id.is_none()) {
            return Ok(Deps::default()); // row numbers: unique, and nothing refers to them
        }
        let mut index = std::collections::HashMap::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let id = f.id.unwrap_or(i as u64);
            if let Some(first) = index.insert(id, i as u32) {
                return Err(ScenarioError {
                    field: Self::field(i, "id"),
                    message: format!("got {id}, already the id of workload.flows[{first}]; allowed: ids unique in the list"),
                });
            }
        }
        if !waits {
            return Ok(Deps::default());
        }
        let mut lists = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let mut list = Vec::with_capacity(f.after.len());
            for (j, a) in f.after.iter().enumerate() {
                let Some(&m) = index.get(a) else {
                    return Err(ScenarioError {
                        field: format!("workload.flows[{i}].after[{j}]"),
                        message: format!("got {a}; allowed: the id of another entry (an entry's id is its `id`, else its row number)"),
                    });
                };
                ensure(m as usize != i, &format!("workload.flows[{i}].after[{j}]"), a, "allowed: another entry's id, not its own")?;
                list.push(m);
            }
            lists.push(list);
        }
        let deps = Deps::from_lists(&lists);
        deps.order(self.flows.len(), |i| Self::field(i, "after"))?;
        Ok(deps)
    }
}

impl Workload for Config {
    fn messages(&self, at: &Hosts, _rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
        let hosts = at.count;
        let chakra = self.file.as_deref().is_some_and(|f| f.to_ascii_lowercase().ends_with(".et"));
        let given = [
            (self.algorithm.is_some(), "algorithm"),
            (self.comm_groups.is_some(), "comm_groups"),
            (self.gpu_tflops.is_some(), "gpu_tflops"),
            (self.gpu_memory_tb_per_s.is_some(), "gpu_memory_tb_per_s"),
        ];
        if let Some(t) = self.gpu_tflops {
            ensure(t.is_finite() && t > 0.0 && t <= 1e6, "workload.gpu_tflops", t, "allowed: more than 0 up to 1000000")?;
        }
        if let Some(m) = self.gpu_memory_tb_per_s {
            ensure(m.is_finite() && m > 0.0 && m <= 1e3, "workload.gpu_memory_tb_per_s", m, "allowed: more than 0 up to 1000")?;
        }
        for (given, name) in given {
            ensure(!given || chakra, &format!("workload.{name}"), "a value", "allowed: only with file = \"x.et\" (a Chakra trace)")?;
        }
        ensure(
            !self.flows.is_empty(),
            "workload.flows",
            if self.file.is_some() { "no message: the file holds none (a trace of metadata alone, a CSV of its header), or nothing read it (the Python front end reads `file`)" } else { "an empty list" },
            "allowed: at least one flow (inline, or `file` loaded by the Python front end)",
        )?;
        let mut out = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            // the field's name and the message are made only for an entry that fails (for
            // every entry, they took most of the time of reading millions of flows)
            let refuse = |k: &str, value: u64, allowed: &str| Err(ScenarioError::new(Self::field(i, k), value, allowed));
            let hosts_allowed = || format!("allowed: a host id from 0 to {}", hosts.saturating_sub(1));
            if f.src >= hosts {
                return refuse("src", f.src.into(), &hosts_allowed());
            }
            if f.dst >= hosts {
                return refuse("dst", f.dst.into(), &hosts_allowed());
            }
            // a host's entry to itself of size 0 is a compute task (`MessageSpec::is_compute`)
            let compute = f.src == f.dst && f.size.0 == 0;
            if f.src == f.dst && !compute {
                return refuse("dst", f.dst.into(), "allowed: a host other than src (or src itself with size 0: a compute task)");
            }
            let bytes = if compute || f.size.0 > 0 { f.size.0 } else { check_size(&Self::field(i, "size"), f.size)? };
            if f.cpu.is_some() && f.start.0 != 0 {
                // a CPU is claimed when an entry is ready, in the order entries get ready: a
                // later start would hold its CPU from the beginning of the run
                return Err(ScenarioError::new(
                    Self::field(i, "start"),
                    f.start,
                    "allowed: 0 with cpu (an entry on a CPU waits for its `after`, not a time)",
                ));
            }
            out.push(MessageSpec { delay: f.delay.0, cpu: f.cpu, ..MessageSpec::new(f.src, f.dst, bytes, f.start.0, f.class) });
        }
        Ok(out)
    }
}
