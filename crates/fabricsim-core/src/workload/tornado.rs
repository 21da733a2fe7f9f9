//! `tornado`: host i sends to host (i + N/2) mod N: every message crosses the fabric's core
//! (ARCANE sec. 4.2).

use serde::{Deserialize, Serialize};

use super::{check_size, MessageSpec, Workload};
use crate::engine::rng::Rng;
use crate::error::ScenarioError;
use crate::registry::AlgorithmInfo;
use crate::units::{Duration, Size};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "workload",
    name: "tornado",
    summary: "host i sends to host (i + N/2) mod N",
    reference: "ARCANE sec. 4.2",
};

/// `[workload]` parameters: every message has the same size and start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default = "super::d_size")]
    pub size: Size,
    #[serde(default)]
    pub start: Duration,
    #[serde(default)]
    pub class: u8,
}

impl Default for Config {
    fn default() -> Self {
        Config { size: super::d_size(), start: Duration(0), class: 0 }
    }
}

impl Workload for Config {
    fn messages(&self, hosts: u32, _rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
        let bytes = check_size("workload.size", self.size)?;
        Ok((0..hosts)
            .map(|src| MessageSpec { src, dst: (src + hosts / 2) % hosts, bytes, start: self.start.0, class: self.class, pinned: false })
            .collect())
    }
}
