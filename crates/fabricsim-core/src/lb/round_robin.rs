//! `round_robin`: deterministic per-packet round robin over the up-ports.
//!
//! The per-packet round robin the PRIME paper cites as the simplest sprayer (sec. II): the
//! MP-EV generator of PRIME without reshuffling and without congestion history, so every
//! packet takes the next up-port at each tier in a fixed order (switches forward by MP-EV).
//! Each connection starts at a random position of the cycle, so that hosts are not all in
//! step; the order itself is fixed.
//!
//! Parameters: none. State: the counters.

use super::mpev::MpEvGenerator;
use super::{Ev, LbContext, LoadBalancer};
use crate::engine::rng::Rng;
use crate::packet::mp_ev::MpEvLayout;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::Algorithm;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "round_robin",
    summary: "fixed per-packet round robin over the up-ports of every tier (MP-EV, no shuffle)",
    reference: "PRIME sec. II",
};

#[derive(Debug, Clone)]
pub struct RoundRobin {
    gen: MpEvGenerator,
    layout: MpEvLayout,
}

impl RoundRobin {
    pub fn new(ctx: &LbContext, rng: &mut Rng) -> RoundRobin {
        let offsets: Vec<u32> = ctx.mp_ev.parts.iter().map(|&(n, _, _)| rng.below(n as u64) as u32).collect();
        RoundRobin { gen: MpEvGenerator::new(&ctx.mp_ev, rng, false).with_offsets(&offsets), layout: ctx.mp_ev.clone() }
    }
}

impl LoadBalancer for RoundRobin {
    fn next_ev(&mut self, _now: Time, rng: &mut Rng) -> Ev {
        self.gen.next(&self.layout, rng)
    }
    fn state_bytes(&self) -> usize {
        self.layout.bits().div_ceil(8) as usize
    }
}

/// No parameters (unknown keys are still errors).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {}

impl Algorithm for Config {
    type State = RoundRobin;
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> RoundRobin {
        RoundRobin::new(ctx, rng)
    }
    fn writes_mp_ev(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn cycles_through_every_port_in_a_fixed_order() {
        let ctx = LbContext { bdp_packets: 1, base_rtt: 1, mtu: 4160, mp_ev: MpEvLayout::new(&[4]), kmin_packets: 21, buffer_packets: 101, packet_time: 83_200 };
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut rr = RoundRobin::new(&ctx, &mut rng);
        let evs: Vec<Ev> = (0..12).map(|_| rr.next_ev(0, &mut rng)).collect();
        assert_eq!(&evs[0..4], &evs[4..8]);
        assert_eq!(&evs[4..8], &evs[8..12]);
        assert!(evs.windows(2).all(|w| w[1] == (w[0] + 1) % 4));
    }
}
