//! `mprdma`: MP-RDMA-style ACK-clocked virtual paths.
//!
//! MP-RDMA (Lu et al., NSDI 2018, sec. 3) sprays a connection over many virtual paths (VPs,
//! here EVs) and clocks packets by ACKs per path: every ACK that returns *unmarked* lets the
//! sender put its next packet on that ACK's VP; an ECN-marked ACK gives no such credit, so the
//! congested VP is dropped; and the sender periodically probes a new random VP so that it
//! discovers better paths. With no credit it sends on a new random VP (as at the start). An
//! ARCANE baseline (sec. 4.1); unlike ARCANE there is no fixed-size buffer, no exploration
//! phase and no freezing.
//!
//! Parameters (defaults): `evs_size` (65536), `probe_every` (32: one packet in 32 probes a
//! random VP), `max_credits` ("auto" = 2 BDP of packets). State: the credit queue (one EV per
//! outstanding credit) and a counter.

use crate::registry::AlgorithmInfo;
use std::collections::VecDeque;

use super::{ev_bytes, Ev, LoadBalancer};
use crate::engine::rng::Rng;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, AutoOr, LbContext};
use crate::error::ScenarioError;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "mprdma",
    summary: "each unmarked ACK clocks the next packet onto its path; marked paths dropped; periodic probes",
    reference: "ARCANE sec. 4.1; MP-RDMA (NSDI 2018) sec. 3",
};

#[derive(Debug, Clone)]
pub struct Mprdma {
    evs_size: u32,
    probe_every: u32,
    max_credits: usize,
    credits: VecDeque<Ev>,
    sent: u32,
}

impl Mprdma {
    pub fn new(evs_size: u32, probe_every: u32, max_credits: usize) -> Mprdma {
        Mprdma { evs_size, probe_every, max_credits, credits: VecDeque::new(), sent: 0 }
    }
}

impl LoadBalancer for Mprdma {
    fn next_ev(&mut self, _now: Time, rng: &mut Rng) -> Ev {
        self.sent = self.sent.wrapping_add(1);
        let probe = self.probe_every > 0 && self.sent.is_multiple_of(self.probe_every);
        match self.credits.pop_front() {
            Some(ev) if !probe => ev,
            _ => rng.below(self.evs_size as u64) as Ev,
        }
    }

    fn on_ack(&mut self, _now: Time, ev: Ev, ecn: bool) {
        if !ecn {
            if self.credits.len() == self.max_credits {
                self.credits.pop_front();
            }
            self.credits.push_back(ev);
        }
    }

    fn state_bytes(&self) -> usize {
        self.max_credits * ev_bytes(self.evs_size) + 4
    }
}

/// `[lb]` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Distinct entropy values, 1 to 2^24.
    #[serde(default = "super::d_evs")]
    pub evs_size: u32,
    /// One packet in this many probes a random path (0 = never).
    #[serde(default = "d_probe")]
    pub probe_every: u32,
    /// Most path credits kept; `"auto"` = 2 BDP of packets.
    #[serde(default)]
    pub max_credits: AutoOr<u32>,
}
fn d_probe() -> u32 {
    32
}
impl Default for Config {
    fn default() -> Self {
        Config { evs_size: super::d_evs(), probe_every: d_probe(), max_credits: AutoOr::Auto }
    }
}

impl Algorithm for Config {
    type State = Mprdma;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::check_evs(self.evs_size)
    }
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Mprdma {
        Mprdma::new(self.evs_size, self.probe_every, self.max_credits.or(2 * ctx.bdp_packets as u32).max(1) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn unmarked_acks_clock_their_path_marked_ones_do_not() {
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut m = Mprdma::new(65_536, 0, 8);
        m.on_ack(0, 7, false);
        m.on_ack(0, 8, true);
        m.on_ack(0, 9, false);
        assert_eq!(m.next_ev(0, &mut rng), 7);
        assert_eq!(m.next_ev(0, &mut rng), 9);
        let fresh = m.next_ev(0, &mut rng);
        assert_ne!(fresh, 8, "a marked path got no credit (probability 1/65536 of a random hit)");
    }

    #[test]
    fn probes_periodically() {
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut m = Mprdma::new(65_536, 4, 64);
        for _ in 0..64 {
            m.on_ack(0, 1, false);
        }
        let evs: Vec<Ev> = (0..16).map(|_| m.next_ev(0, &mut rng)).collect();
        assert_eq!(evs.iter().filter(|&&e| e != 1).count(), 4);
    }
}
