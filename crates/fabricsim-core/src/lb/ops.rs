//! `ops`: oblivious packet spraying.
//!
//! Every data packet gets an EV drawn uniformly at random from the EVS, ignoring all
//! feedback (ARCANE paper section 2 and 4.1, "OPS" [Dixit et al.]; PRIME section II calls it
//! random packet spraying). It removes flow-level ECMP collisions but keeps sending onto
//! congested or failed paths at the same rate as onto good ones.
//!
//! `order = "cycle"` is the reference simulator's oblivious sprayer instead (UEC htsim,
//! `UecMpOblivious` in `uec_mp.cpp`): each connection walks the EVS in passes that visit every
//! EV once, in the order `index XOR mask` with a random mask per pass ([`super::walk`]), so a
//! flow spreads its packets evenly over its EVs within every pass where the random draw only
//! does so on average. The papers describe OPS as random; `"cycle"` exists to run the
//! reference's sprayer like for like (docs/comparison.md). It needs a power-of-two `evs_size`.
//!
//! Parameters: `evs_size` (default 65536), `order` (`"random"`; or `"cycle"`).
//! State: none per connection with `"random"` (the EVS size is a NIC-wide setting); the walk's
//! position and mask with `"cycle"` (2 x 16 bits at 65536 EVs).

use super::walk::XorWalk;
use super::{Ev, LoadBalancer};
use crate::engine::rng::Rng;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, LbContext};
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
    /// With `order = "cycle"`: the walk over the EVS.
    walk: Option<XorWalk>,
}

impl Ops {
    /// Random order: a uniformly random EV per packet.
    pub fn new(evs_size: u32) -> Ops {
        Ops { evs_size, walk: None }
    }

    /// Cycle order: passes over the EVS in a scrambled order (`evs_size` a power of two).
    pub fn cycling(evs_size: u32, rng: &mut Rng) -> Ops {
        Ops { evs_size, walk: Some(XorWalk::new(evs_size, rng)) }
    }
}

impl LoadBalancer for Ops {
    #[inline]
    fn next_ev(&mut self, _now: Time, rng: &mut Rng) -> Ev {
        match &mut self.walk {
            None => rng.below(self.evs_size as u64) as Ev,
            Some(walk) => walk.next(rng),
        }
    }
    fn state_bytes(&self) -> usize {
        self.walk.as_ref().map_or(0, |w| w.state_bits().div_ceil(8))
    }
}

/// The order in which `ops` draws EVs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// A uniformly random EV per packet (the papers' OPS).
    #[default]
    Random,
    /// Passes over the EVS, each EV once per pass in a scrambled order (the reference's).
    Cycle,
}

/// `[lb]` parameters: the EVS size and the order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Distinct entropy values, 1 to 2^24.
    #[serde(default = "super::d_evs")]
    pub evs_size: u32,
    /// `"random"`: a random EV per packet; `"cycle"`: the reference simulator's sprayer, passes over the EVS that
    /// visit every EV once in a scrambled order (index XOR a random mask per pass; `evs_size` a power of two).
    #[serde(default)]
    pub order: Order,
}

impl Default for Config {
    fn default() -> Self {
        Config { evs_size: super::d_evs(), order: Order::Random }
    }
}

impl Algorithm for Config {
    type State = Ops;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::check_evs(self.evs_size)?;
        if self.order == Order::Cycle {
            super::walk::check_evs(self.evs_size, super::MAX_EVS, " with order = \"cycle\"")?;
        }
        Ok(())
    }
    fn build(&self, _ctx: &LbContext, rng: &mut Rng) -> Ops {
        match self.order {
            Order::Random => Ops::new(self.evs_size),
            Order::Cycle => Ops::cycling(self.evs_size, rng),
        }
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

    #[test]
    fn cycle_order_spreads_each_pass_evenly_and_refuses_odd_evs_sizes() {
        let mut rng = Rng::stream(9, Stream::Host, 2);
        let cfg = Config { evs_size: 8, order: Order::Cycle };
        let ctx_rng = &mut Rng::stream(9, Stream::Host, 3);
        let ctx = LbContext {
            bdp_packets: 1,
            base_rtt: 1,
            mtu: 4160,
            mp_ev: crate::packet::mp_ev::MpEvLayout::new(&[8]),
            kmin_packets: 1,
            buffer_packets: 1,
            packet_time: 1,
        };
        let mut lb = cfg.build(&ctx, ctx_rng);
        let mut counts = [0u32; 8];
        for t in 0..24 {
            counts[lb.next_ev(t, &mut rng) as usize] += 1;
        }
        assert_eq!(counts, [3; 8], "three passes: every EV exactly three times");
        assert_eq!(lb.state_bytes(), 1, "3-bit position and mask");
        let odd = Config { evs_size: 48, order: Order::Cycle };
        let err = odd.validate().unwrap_err().to_string();
        assert!(err.contains("lb.evs_size") && err.contains("48") && err.contains("power of two"), "{err}");
        assert!(Config { evs_size: 48, order: Order::Random }.validate().is_ok());
    }
}
