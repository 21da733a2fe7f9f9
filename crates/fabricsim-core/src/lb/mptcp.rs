//! `mptcp`: a message split into subflows, each with its own path and its own window.
//!
//! The ARCANE baseline (sec. 4.1): "for MPTCP, we divide each message into 8 subflows and
//! route each one individually similarly to using multiple QPs". Each message of the
//! workload becomes `subflows` connections carrying consecutive shares of its bytes (the
//! first ones one byte larger when it does not divide evenly); each connection has its own
//! ECMP entropy value (so its own path) and its own congestion window, uncoupled, as separate
//! QPs would. Each starts with 1/`subflows` of the initial window (at least one packet), so
//! that the message as a whole starts at line rate as a single connection would, and each may
//! grow to the full `max_cwnd`. The message completes when its last subflow does; results keep
//! one row per message, with counters summed over its subflows.
//!
//! Parameters (defaults): `subflows` (8), `evs_size` (65536). State: one EV and one window per
//! subflow (reported: the EVs, 2 bytes each with a 16-bit EVS).

use crate::registry::AlgorithmInfo;
use serde::{Deserialize, Serialize};
use super::ecmp::Ecmp;
use super::{Algorithm, LbContext};
use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "mptcp",
    summary: "each message split into 8 subflows (QPs), each with its own ECMP path and window",
    reference: "ARCANE sec. 4.1",
};

/// Byte shares of a message split into `k` subflows: consecutive, as equal as possible.
pub fn shares(bytes: u64, k: u32) -> Vec<u64> {
    let k = (k as u64).min(bytes).max(1);
    (0..k).map(|i| bytes / k + u64::from(i < bytes % k)).collect()
}

/// `[lb]` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Connections each message is split into, each with its own ECMP path and window (the flows table keeps one
    /// row per message).
    #[serde(default = "d_subflows")]
    pub subflows: u32,
    /// Distinct entropy values, 1 to 2^24.
    #[serde(default = "super::d_evs")]
    pub evs_size: u32,
}
fn d_subflows() -> u32 {
    8
}
impl Default for Config {
    fn default() -> Self {
        Config { subflows: d_subflows(), evs_size: super::d_evs() }
    }
}

impl Algorithm for Config {
    /// Each subflow is its own connection with its own ECMP path.
    type State = Ecmp;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::check_evs(self.evs_size)?;
        ensure((1..=256).contains(&self.subflows), "lb.subflows", self.subflows, "allowed: 1 to 256")
    }
    fn build(&self, _ctx: &LbContext, rng: &mut Rng) -> Ecmp {
        Ecmp::new(self.evs_size, rng)
    }
    fn subflows(&self) -> u32 {
        self.subflows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_message() {
        assert_eq!(shares(80, 8), vec![10; 8]);
        assert_eq!(shares(83, 8), vec![11, 11, 11, 10, 10, 10, 10, 10]);
        assert_eq!(shares(3, 8), vec![1, 1, 1], "never an empty subflow");
        assert_eq!(shares(8 << 20, 8).iter().sum::<u64>(), 8 << 20);
    }
}
