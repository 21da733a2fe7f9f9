//! `co_prime`: CO-PRIME, PRIME with its congestion signals ignored: the pseudo-random
//! round-robin MP-EV generator alone (PRIME sec. IV, "Algorithms" iii). See `prime` for the
//! generator; no parameters.

use serde::{Deserialize, Serialize};

use super::prime::{Prime, PrimeParams, Signals};
use super::{Algorithm, LbContext};
use crate::engine::rng::Rng;
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "co_prime",
    summary: "PRIME with congestion signals ignored (pure pseudo-random round robin)",
    reference: "PRIME sec. IV (CO-PRIME)",
};

/// No parameters (unknown keys are still errors).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {}

impl Algorithm for Config {
    type State = Prime;
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Prime {
        let params = PrimeParams {
            p_ecn: 0,
            p_nack: 0,
            decay: 0,
            penalty_bits: 1,
            congestion_aware: false,
            tick: None,
            nack_over_ecn: false,
            signals: Signals { ecn: false, nack: false, timeout: false },
        };
        Prime::new(params, ctx, rng)
    }
    fn writes_mp_ev(&self) -> bool {
        true
    }
}
