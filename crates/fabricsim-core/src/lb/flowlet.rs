//! `flowlet`: flowlet switching: a new EV when the flow pauses.
//!
//! A flow keeps one EV (one path) while its packets follow each other closely; when the gap
//! since its previous packet exceeds `timeout`, the next packet starts a new flowlet on a new
//! random EV (Kandula et al., "Dynamic load balancing without packet reordering", CCR 2007;
//! the ARCANE baseline with an aggressive timeout of half the RTT, sec. 4.1).
//!
//! Parameters (defaults): `evs_size` (65536), `timeout` ("auto" = half the base RTT).
//! State: the EV and the last send time (6 bytes with a 16-bit EV and a 32-bit time).

use super::{ev_bytes, Ev, LoadBalancer};
use crate::engine::rng::Rng;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, AutoOr, LbContext};
use crate::error::ScenarioError;
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "flowlet",
    summary: "new random EV when the gap since the flow's last packet exceeds a timeout (half RTT)",
    reference: "ARCANE sec. 4.1; Kandula et al. 2007",
};

#[derive(Debug, Clone)]
pub struct Flowlet {
    evs_size: u32,
    timeout: Time,
    ev: Option<Ev>,
    last: Time,
}

impl Flowlet {
    pub fn new(evs_size: u32, timeout: Time) -> Flowlet {
        Flowlet { evs_size, timeout, ev: None, last: 0 }
    }
}

impl LoadBalancer for Flowlet {
    fn next_ev(&mut self, now: Time, rng: &mut Rng) -> Ev {
        let ev = match self.ev {
            Some(ev) if now - self.last <= self.timeout => ev,
            _ => rng.below(self.evs_size as u64) as Ev,
        };
        self.ev = Some(ev);
        self.last = now;
        ev
    }
    fn state_bytes(&self) -> usize {
        ev_bytes(self.evs_size) + 4
    }
}

/// `[lb]` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Distinct entropy values, 1 to 2^24.
    #[serde(default = "super::d_evs")]
    pub evs_size: u32,
    /// A gap between packets longer than this starts a new flowlet (a new EV); `"auto"` = half the base RTT.
    #[serde(default)]
    pub timeout: AutoOr<Duration>,
}
impl Default for Config {
    fn default() -> Self {
        Config { evs_size: super::d_evs(), timeout: AutoOr::Auto }
    }
}

impl Algorithm for Config {
    type State = Flowlet;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::check_evs(self.evs_size)
    }
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Flowlet {
        Flowlet::new(self.evs_size, self.timeout.or(Duration(ctx.base_rtt / 2)).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn changes_ev_only_after_a_gap() {
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut f = Flowlet::new(65_536, 100);
        let a = f.next_ev(0, &mut rng);
        assert_eq!(f.next_ev(100, &mut rng), a);
        assert_eq!(f.next_ev(150, &mut rng), a);
        let b = f.next_ev(251, &mut rng);
        assert_ne!(a, b, "a gap of 101 > 100 starts a new flowlet");
        assert_eq!(f.next_ev(260, &mut rng), b);
    }
}
