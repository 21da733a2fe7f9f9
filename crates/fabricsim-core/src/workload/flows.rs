//! `flows`: an explicit list of messages (src, dst, size, start, class); the Python front end
//! turns a CSV file (`file = "x.csv"`) into this list before the run, since the core reads no
//! files.

use serde::{Deserialize, Serialize};

use super::{check_size, MessageSpec, Workload};
use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::units::{Duration, Size};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "workload",
    name: "flows",
    summary: "an explicit list of (src, dst, size, start), inline or from a CSV file",
    reference: "",
};

/// One message as a scenario writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    pub src: u32,
    pub dst: u32,
    pub size: Size,
    #[serde(default)]
    pub start: Duration,
    #[serde(default)]
    pub class: u8,
}

/// `[workload]` parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub flows: Vec<FlowEntry>,
    /// A CSV file (src,dst,size,start) resolved by the front end; kept for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Workload for Config {
    fn messages(&self, hosts: u32, _rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
        ensure(
            !self.flows.is_empty(),
            "workload.flows",
            if self.file.is_some() { "a file that the front end did not load" } else { "an empty list" },
            "allowed: at least one flow (inline, or `file` loaded by the Python front end)",
        )?;
        let mut out = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let at = |k: &str| format!("workload.flows[{i}].{k}");
            ensure(f.src < hosts, &at("src"), f.src, format!("allowed: a host id in 0..{hosts}"))?;
            ensure(f.dst < hosts, &at("dst"), f.dst, format!("allowed: a host id in 0..{hosts}"))?;
            ensure(f.src != f.dst, &at("dst"), f.dst, "allowed: a host other than src")?;
            let bytes = check_size(&at("size"), f.size)?;
            out.push(MessageSpec { src: f.src, dst: f.dst, bytes, start: f.start.0, class: f.class, pinned: false });
        }
        Ok(out)
    }
}
