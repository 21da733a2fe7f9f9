//! `ecmp`: one entropy value for the whole flow.
//!
//! The sender draws one EV from the EVS when the connection opens and stamps it on every
//! packet, so every switch hashes the flow to the same up-port: classic flow-level ECMP
//! (Hopps, RFC 2992; ARCANE paper section 2, "ECMP"; PRIME section II). Two elephant flows
//! hashed onto one link each get half of it, the collision tail the papers start from.
//!
//! Parameters: `evs_size` (default 65536), the EVS the EV is drawn from.
//! State: one EV (2 bytes with a 16-bit EVS).

use super::{ev_bytes, Ev, LoadBalancer};
use crate::engine::rng::Rng;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, EvsConfig, LbContext};
use crate::error::ScenarioError;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "ecmp",
    summary: "one random EV per flow: the flow is hashed onto a single path",
    reference: "RFC 2992; ARCANE sec. 2; PRIME sec. II",
};

#[derive(Debug, Clone)]
pub struct Ecmp {
    ev: Ev,
    evs_size: u32,
}

impl Ecmp {
    pub fn new(evs_size: u32, rng: &mut Rng) -> Ecmp {
        Ecmp { ev: rng.below(evs_size as u64) as Ev, evs_size }
    }

    pub fn ev(&self) -> Ev {
        self.ev
    }
}

impl LoadBalancer for Ecmp {
    #[inline]
    fn next_ev(&mut self, _now: Time, _rng: &mut Rng) -> Ev {
        self.ev
    }
    fn state_bytes(&self) -> usize {
        ev_bytes(self.evs_size)
    }
    fn fixed_ev(&self) -> Option<Ev> {
        Some(self.ev)
    }
}

/// `[lb]` parameters: the EVS size ([`EvsConfig`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Config(pub EvsConfig);

impl Algorithm for Config {
    type State = Ecmp;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::check_evs(self.0.evs_size)
    }
    fn build(&self, _ctx: &LbContext, rng: &mut Rng) -> Ecmp {
        Ecmp::new(self.0.evs_size, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn every_packet_of_a_flow_has_the_same_ev() {
        let mut rng = Rng::stream(3, Stream::Host, 0);
        let mut lb = Ecmp::new(65_536, &mut rng);
        let first = lb.next_ev(0, &mut rng);
        assert!((0..1000).all(|t| lb.next_ev(t, &mut rng) == first));
        lb.on_ack(5, first + 1, true);
        lb.on_nack(6, first);
        assert_eq!(lb.next_ev(7, &mut rng), first, "feedback never moves an ECMP flow");
        assert_eq!(lb.state_bytes(), 2);
    }

    #[test]
    fn flows_draw_different_evs() {
        let mut rng = Rng::stream(3, Stream::Host, 0);
        let evs: std::collections::HashSet<Ev> = (0..64).map(|_| Ecmp::new(65_536, &mut rng).next_ev(0, &mut rng)).collect();
        assert!(evs.len() > 60);
    }
}
