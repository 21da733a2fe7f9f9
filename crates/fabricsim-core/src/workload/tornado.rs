//! `tornado`: host i sends to host (i + N/2) mod N: every message crosses the fabric's core
//! (ARCANE sec. 4.2).

use serde::{Deserialize, Serialize};

use super::{Hosts, check_size, MessageSpec, Uniform, Workload};
use crate::engine::rng::Rng;
use crate::error::ScenarioError;
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "workload",
    name: "tornado",
    summary: "host i sends to host (i + N/2) mod N",
    reference: "ARCANE sec. 4.2",
};

/// `[workload]` parameters: every message has the same size and start ([`Uniform`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Config(pub Uniform);

impl Workload for Config {
    fn messages(&self, at: &Hosts, _rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
        let hosts = at.count;
        let Uniform { size, start, class } = self.0;
        let bytes = check_size("workload.size", size)?;
        Ok((0..hosts)
            .map(|src| MessageSpec::new(src, (src + hosts / 2) % hosts, bytes, start.0, class))
            .collect())
    }
}
