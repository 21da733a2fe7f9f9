//! Workloads: who sends how much to whom, and when.
//!
//! - `permutation`: a seeded derangement; every host sends to exactly one other host and
//!   receives from exactly one (ARCANE sec. 4.2, PRIME sec. IV).
//! - `tornado`: host i sends to host (i + N/2) mod N: every flow crosses the fabric's core.
//! - `incast`: `senders` distinct hosts (seeded choice) send to one `receiver`.
//! - `flows`: an explicit list of (src, dst, size, start); the Python front end turns a CSV
//!   file (`file = "x.csv"`) into this list before the run, since the core reads no files.

use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::registry::{self, AlgorithmInfo};
use crate::time::Time;
use crate::units::{Duration, Size};

/// One flow as the core runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageSpec {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start: Time,
    /// Data class at the switches.
    pub class: u8,
    /// Pinned to one path (ECMP) whatever the scenario's load balancer (`[mixed]`).
    pub pinned: bool,
}

/// One flow as a scenario writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    pub src: u32,
    pub dst: u32,
    pub size: Size,
    #[serde(default = "d_start")]
    pub start: Duration,
    #[serde(default)]
    pub class: u8,
}

/// The `[workload]` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    Permutation(Uniform),
    Tornado(Uniform),
    Incast(Incast),
    Flows(FlowList),
}

/// Every flow has the same size and start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Uniform {
    #[serde(default = "d_size")]
    pub size: Size,
    #[serde(default = "d_start")]
    pub start: Duration,
    #[serde(default)]
    pub class: u8,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Incast {
    pub senders: u32,
    #[serde(default)]
    pub receiver: u32,
    #[serde(default = "d_size")]
    pub size: Size,
    #[serde(default = "d_start")]
    pub start: Duration,
    #[serde(default)]
    pub class: u8,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowList {
    #[serde(default)]
    pub flows: Vec<FlowEntry>,
    /// A CSV file (src,dst,size,start) resolved by the front end; kept for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl<'de> Deserialize<'de> for WorkloadConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (kind, rest) = registry::split_kind(d, "permutation")?;
        Ok(match kind.as_str() {
            "permutation" => WorkloadConfig::Permutation(registry::fields(rest)?),
            "tornado" => WorkloadConfig::Tornado(registry::fields(rest)?),
            "incast" => WorkloadConfig::Incast(registry::fields(rest)?),
            "flows" => WorkloadConfig::Flows(registry::fields(rest)?),
            other => return Err(registry::unknown_kind(other, &WORKLOADS.iter().map(|a| a.name).collect::<Vec<_>>())),
        })
    }
}

fn d_size() -> Size {
    Size(8 << 20)
}
fn d_start() -> Duration {
    Duration(0)
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::Permutation(Uniform { size: d_size(), start: d_start(), class: 0 })
    }
}

pub const WORKLOADS: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        category: "workload",
        name: "permutation",
        summary: "seeded derangement: each host sends to and receives from exactly one other host",
        reference: "ARCANE sec. 4.2; PRIME sec. IV",
    },
    AlgorithmInfo { category: "workload", name: "tornado", summary: "host i sends to host (i + N/2) mod N", reference: "ARCANE sec. 4.2" },
    AlgorithmInfo { category: "workload", name: "incast", summary: "`senders` hosts send to one `receiver`", reference: "ARCANE sec. 4.2" },
    AlgorithmInfo {
        category: "workload",
        name: "flows",
        summary: "an explicit list of (src, dst, size, start), inline or from a CSV file",
        reference: "",
    },
];

fn check_size(field: &str, size: Size) -> Result<u64, ScenarioError> {
    ensure(size.0 > 0, field, size, "allowed: a positive size")?;
    ensure(size.0 <= 1 << 40, field, size, "allowed: at most 1TiB")?;
    Ok(size.0)
}

impl WorkloadConfig {
    pub fn name(&self) -> &'static str {
        match self {
            WorkloadConfig::Permutation(_) => "permutation",
            WorkloadConfig::Tornado(_) => "tornado",
            WorkloadConfig::Incast(_) => "incast",
            WorkloadConfig::Flows(_) => "flows",
        }
    }

    /// The flows of this workload on `hosts` hosts.
    pub fn flows(&self, hosts: u32, rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
        let flows = match self {
            WorkloadConfig::Permutation(Uniform { size, start, class }) => {
                let bytes = check_size("workload.size", *size)?;
                derangement(hosts, rng)
                    .into_iter()
                    .enumerate()
                    .map(|(src, dst)| MessageSpec { src: src as u32, dst, bytes, start: start.0, class: *class, pinned: false })
                    .collect()
            }
            WorkloadConfig::Tornado(Uniform { size, start, class }) => {
                let bytes = check_size("workload.size", *size)?;
                (0..hosts)
                    .map(|src| MessageSpec { src, dst: (src + hosts / 2) % hosts, bytes, start: start.0, class: *class, pinned: false })
                    .collect()
            }
            WorkloadConfig::Incast(Incast { senders, receiver, size, start, class }) => {
                let bytes = check_size("workload.size", *size)?;
                ensure(*receiver < hosts, "workload.receiver", receiver, format!("allowed: a host id in 0..{hosts}"))?;
                ensure(
                    *senders >= 1 && *senders < hosts,
                    "workload.senders",
                    senders,
                    format!("allowed: 1 to {} (every host but the receiver)", hosts - 1),
                )?;
                let mut others: Vec<u32> = (0..hosts).filter(|h| h != receiver).collect();
                rng.shuffle(&mut others);
                others.truncate(*senders as usize);
                others.sort_unstable();
                others
                    .into_iter()
                    .map(|src| MessageSpec { src, dst: *receiver, bytes, start: start.0, class: *class, pinned: false })
                    .collect()
            }
            WorkloadConfig::Flows(FlowList { flows, file }) => {
                ensure(
                    !flows.is_empty(),
                    "workload.flows",
                    if file.is_some() { "a file that the front end did not load" } else { "an empty list" },
                    "allowed: at least one flow (inline, or `file` loaded by the Python front end)",
                )?;
                let mut out = Vec::with_capacity(flows.len());
                for (i, f) in flows.iter().enumerate() {
                    let at = |k: &str| format!("workload.flows[{i}].{k}");
                    ensure(f.src < hosts, &at("src"), f.src, format!("allowed: a host id in 0..{hosts}"))?;
                    ensure(f.dst < hosts, &at("dst"), f.dst, format!("allowed: a host id in 0..{hosts}"))?;
                    ensure(f.src != f.dst, &at("dst"), f.dst, "allowed: a host other than src")?;
                    let bytes = check_size(&at("size"), f.size)?;
                    out.push(MessageSpec { src: f.src, dst: f.dst, bytes, start: f.start.0, class: f.class, pinned: false });
                }
                out
            }
        };
        Ok(flows)
    }
}

/// A uniformly random permutation without fixed points (rejection sampling: about e tries).
fn derangement(n: u32, rng: &mut Rng) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    loop {
        rng.shuffle(&mut p);
        if p.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            return p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn permutation_is_a_derangement_and_seeded() {
        let cfg = WorkloadConfig::default();
        let a = cfg.flows(128, &mut Rng::stream(1, Stream::Workload, 0)).unwrap();
        let b = cfg.flows(128, &mut Rng::stream(1, Stream::Workload, 0)).unwrap();
        let c = cfg.flows(128, &mut Rng::stream(2, Stream::Workload, 0)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut dsts: Vec<u32> = a.iter().map(|f| f.dst).collect();
        assert!(a.iter().all(|f| f.src != f.dst));
        dsts.sort_unstable();
        assert_eq!(dsts, (0..128).collect::<Vec<_>>());
    }

    #[test]
    fn tornado_and_incast_shapes() {
        let mut rng = Rng::stream(1, Stream::Workload, 0);
        let t = WorkloadConfig::Tornado(Uniform { size: Size(1), start: Duration(0), class: 0 }).flows(8, &mut rng).unwrap();
        assert_eq!(t.iter().map(|f| f.dst).collect::<Vec<_>>(), vec![4, 5, 6, 7, 0, 1, 2, 3]);
        let i = WorkloadConfig::Incast(Incast { senders: 5, receiver: 3, size: Size(1), start: Duration(0), class: 0 })
            .flows(16, &mut rng)
            .unwrap();
        assert_eq!(i.len(), 5);
        assert!(i.iter().all(|f| f.dst == 3 && f.src != 3));
    }

    #[test]
    fn flows_to_missing_hosts_are_rejected() {
        let cfg = WorkloadConfig::Flows(FlowList {
            flows: vec![FlowEntry { src: 0, dst: 200, size: Size(10), start: Duration(0), class: 0 }],
            file: None,
        });
        let e = cfg.flows(128, &mut Rng::stream(1, Stream::Workload, 0)).unwrap_err();
        assert_eq!(e.field, "workload.flows[0].dst");
        assert!(e.message.contains("200") && e.message.contains("0..128"), "{e}");
    }
}
