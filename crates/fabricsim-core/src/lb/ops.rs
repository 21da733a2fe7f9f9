//! `ops`: oblivious packet spraying.
//!
//! Every data packet gets an EV drawn uniformly at random from the EVS, ignoring all
//! feedback (ARCANE paper section 2 and 4.1, "OPS" [Dixit et al.]; PRIME section II calls it
//! random packet spraying). It removes flow-level ECMP collisions but keeps sending onto
//! congested or failed paths at the same rate as onto good ones.
//!
//! Parameters: `evs_size` (default 65536).
//! State: none per connection (the EVS size is a NIC-wide setting).

use super::{Ev, LoadBalancer};
use crate::engine::rng::Rng;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, EvsConfig, LbContext};
use crate::error::ScenarioError;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "ops",
    summary: "oblivious packet spraying: a uniformly random EV for every packet",
    reference: "ARCANE sec. 2 and 4.1 (OPS); PRIME sec. II",
};

#[derive(Debug, Clone)]
pub struct Ops {
    evs_size: u32,
}

impl Ops {
    pub fn new(evs_size: u32) -> Ops {
        Ops { evs_size }
    }
}

impl LoadBalancer for Ops {
    #[inline]
    fn next_ev(&mut self, _now: Time, rng: &mut Rng) -> Ev {
        rng.below(self.evs_size as u64) as Ev
    }
    fn state_bytes(&self) -> usize {
        0
    }
}

/// `[lb]` parameters: the EVS size ([`EvsConfig`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Config(pub EvsConfig);

impl Algorithm for Config {
    type State = Ops;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::check_evs(self.0.evs_size)
    }
    fn build(&self, _ctx: &LbContext, _rng: &mut Rng) -> Ops {
        Ops::new(self.0.evs_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn evs_are_uniform_over_the_evs_and_ignore_feedback() {
        let mut rng = Rng::stream(9, Stream::Host, 1);
        let mut lb = Ops::new(16);
        let mut counts = [0u32; 16];
        for t in 0..32_000 {
            let ev = lb.next_ev(t, &mut rng);
            counts[ev as usize] += 1;
            lb.on_ack(t, ev, ev == 3); // ECN on EV 3 does not steer OPS away from it
        }
        assert!(counts.iter().all(|&c| (1_700..2_300).contains(&c)), "{counts:?}");
        assert_eq!(lb.state_bytes(), 0);
    }
}
