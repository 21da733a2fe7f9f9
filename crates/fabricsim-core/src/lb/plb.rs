//! `plb`: Protective Load Balancing: repath a flow after consecutive congested rounds.
//!
//! PLB (Qureshi et al., SIGCOMM 2022) keeps one EV per flow and counts ACKs per round (a
//! base RTT); a round is congested when the fraction of ECN-marked ACKs reaches `threshold`.
//! After `rounds` consecutive congested rounds the flow moves to a new random EV; a timeout
//! repaths at once. The ARCANE baseline uses parameters "more aggressive, similarly to
//! FlowBender" (sec. 4.1): FlowBender reroutes when 5% of a round's packets are marked, after
//! one round; these are the defaults.
//!
//! Parameters (defaults): `evs_size` (65536), `threshold` (0.05), `rounds` (1), `round`
//! ("auto" = the base RTT). State: the EV, round start, two ACK counters and the
//! congested-round count (about 12 bytes).

use super::{ev_bytes, Ev, LoadBalancer};
use crate::engine::rng::Rng;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, AutoOr, LbContext};
use crate::error::{ensure, ScenarioError};
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "plb",
    summary: "one EV per flow, repathed after consecutive rounds with >= 5% ECN-marked ACKs or a timeout",
    reference: "ARCANE sec. 4.1; PLB (SIGCOMM 2022), FlowBender parameters",
};

#[derive(Debug, Clone)]
pub struct Plb {
    evs_size: u32,
    /// Threshold in parts per million of ACKs marked.
    threshold_ppm: u64,
    rounds: u32,
    round: Time,
    ev: Option<Ev>,
    round_start: Time,
    acks: u64,
    marked: u64,
    congested: u32,
    repath: bool,
}

impl Plb {
    pub fn new(evs_size: u32, threshold: f64, rounds: u32, round: Time) -> Plb {
        Plb {
            evs_size,
            threshold_ppm: (threshold * 1e6).round() as u64,
            rounds,
            round,
            ev: None,
            round_start: 0,
            acks: 0,
            marked: 0,
            congested: 0,
            repath: false,
        }
    }
}

impl LoadBalancer for Plb {
    fn next_ev(&mut self, _now: Time, rng: &mut Rng) -> Ev {
        if self.ev.is_none() || self.repath {
            self.ev = Some(rng.below(self.evs_size as u64) as Ev);
            self.repath = false;
        }
        self.ev.unwrap_or(0)
    }

    fn on_ack(&mut self, now: Time, _ev: Ev, ecn: bool) {
        self.acks += 1;
        self.marked += ecn as u64;
        if now >= self.round_start + self.round {
            let congested = self.marked * 1_000_000 >= self.threshold_ppm * self.acks;
            self.congested = if congested { self.congested + 1 } else { 0 };
            if self.congested >= self.rounds {
                self.repath = true;
                self.congested = 0;
            }
            self.round_start = now;
            self.acks = 0;
            self.marked = 0;
        }
    }

    fn on_timeout(&mut self, _now: Time, _ev: Ev) {
        self.repath = true;
    }

    fn state_bytes(&self) -> usize {
        ev_bytes(self.evs_size) + 4 + 2 + 2 + 1
    }
}

/// `[lb]` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Distinct entropy values, 1 to 2^24.
    #[serde(default = "super::d_evs")]
    pub evs_size: u32,
    /// Fraction of a round's ACKs ECN-marked that makes the round congested.
    #[serde(default = "d_threshold")]
    pub threshold: f64,
    /// Consecutive congested rounds before the flow moves to a new EV.
    #[serde(default = "d_rounds")]
    pub rounds: u32,
    /// Round length; `"auto"` = the base RTT.
    #[serde(default)]
    pub round: AutoOr<Duration>,
}
fn d_threshold() -> f64 {
    0.05
}
fn d_rounds() -> u32 {
    1
}
impl Default for Config {
    fn default() -> Self {
        Config { evs_size: super::d_evs(), threshold: d_threshold(), rounds: d_rounds(), round: AutoOr::Auto }
    }
}

impl Algorithm for Config {
    type State = Plb;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::check_evs(self.evs_size)?;
        ensure(self.threshold > 0.0 && self.threshold <= 1.0, "lb.threshold", self.threshold, "allowed: a fraction in (0, 1]")?;
        ensure(self.rounds >= 1, "lb.rounds", self.rounds, "allowed: 1 or more")
    }
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Plb {
        Plb::new(self.evs_size, self.threshold, self.rounds, self.round.or(Duration(ctx.base_rtt)).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn repaths_after_a_congested_round_only() {
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut p = Plb::new(65_536, 0.05, 1, 1_000);
        let a = p.next_ev(0, &mut rng);
        for t in 0..100 {
            p.on_ack(t * 10, a, false); // a clean round
        }
        p.on_ack(1_000, a, false);
        assert_eq!(p.next_ev(1_001, &mut rng), a);
        for t in 0..20 {
            p.on_ack(1_001 + t, a, t < 2); // 2 of 20 marked = 10%
        }
        p.on_ack(2_100, a, false);
        let b = p.next_ev(2_101, &mut rng);
        assert_ne!(a, b);
        p.on_timeout(2_200, b);
        assert_ne!(p.next_ev(2_201, &mut rng), b);
    }
}
