//! `incast`: `senders` distinct hosts (a seeded choice) send to one `receiver` (ARCANE
//! sec. 4.2).

use serde::{Deserialize, Serialize};

use super::{Hosts, check_size, MessageSpec, Workload};
use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::units::{Duration, Size};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "workload",
    name: "incast",
    summary: "`senders` hosts send to one `receiver`",
    reference: "ARCANE sec. 4.2",
};

/// `[workload]` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// How many distinct hosts, chosen by seed, send to `receiver`.
    #[schemars(example = crate::registry::example("4"))]
    pub senders: u32,
    /// The host they send to.
    #[serde(default)]
    pub receiver: u32,
    /// Every message's size.
    #[serde(default = "super::d_size")]
    pub size: Size,
    /// When the messages start (a trace: when arrivals begin).
    #[serde(default)]
    pub start: Duration,
    /// The messages' data class, below `switch.classes`.
    #[serde(default)]
    pub class: u8,
}

impl Workload for Config {
    fn messages(&self, at: &Hosts, rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
        let hosts = at.count;
        let bytes = check_size("workload.size", self.size)?;
        let receiver = self.receiver;
        ensure(receiver < hosts, "workload.receiver", receiver, format!("allowed: a host id from 0 to {}", hosts.saturating_sub(1)))?;
        ensure(
            self.senders >= 1 && self.senders < hosts,
            "workload.senders",
            self.senders,
            format!("allowed: 1 to {} (every host but the receiver)", hosts - 1),
        )?;
        let mut others: Vec<u32> = (0..hosts).filter(|&h| h != receiver).collect();
        rng.shuffle(&mut others);
        others.truncate(self.senders as usize);
        others.sort_unstable();
        Ok(others.into_iter().map(|src| MessageSpec::new(src, receiver, bytes, self.start.0, self.class)).collect())
    }
}
