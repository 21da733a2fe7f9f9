//! `permutation`: a seeded derangement; every host sends to exactly one other host and
//! receives from exactly one (ARCANE sec. 4.2, PRIME sec. IV).

use serde::{Deserialize, Serialize};

use super::{Hosts, check_size, MessageSpec, Uniform, Workload};
use crate::engine::rng::Rng;
use crate::error::ScenarioError;
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "workload",
    name: "permutation",
    summary: "seeded derangement: each host sends to and receives from exactly one other host",
    reference: "ARCANE sec. 4.2; PRIME sec. IV",
};

/// `[workload]` parameters: every message has the same size and start ([`Uniform`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Config(pub Uniform);

impl Workload for Config {
    fn messages(&self, at: &Hosts, rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
        let hosts = at.count;
        let Uniform { size, start, class } = self.0;
        let bytes = check_size("workload.size", size)?;
        Ok(derangement(hosts, rng)
            .into_iter()
            .enumerate()
            .map(|(src, dst)| MessageSpec::new(src as u32, dst, bytes, start.0, class))
            .collect())
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
