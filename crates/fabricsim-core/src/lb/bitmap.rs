//! `bitmap`: per-EV penalties, skipping penalized EVs (STrack-style).
//!
//! The "bitmap" baseline of the ARCANE paper (sec. 4.1: "a bitmap approach where we keep per
//! EV statistics similarly to STrack"), following the behaviour of the reference peer's
//! bitmap balancer: the EVS (a power of two) is walked in a scrambled round-robin order (the
//! index XOR a mask redrawn at every pass); feedback adds a penalty to the EV it carries (ECN
//! +`p_ecn`, NACK +`p_nack`, timeout = `max_penalty`), accumulating up to `max_penalty`; a
//! send skips EVs with a non-zero penalty, decaying the first one it skips by one, and gives
//! up skipping after a whole pass. PRIME (sec. I) criticizes exactly this design for its
//! accumulated penalties and lack of time-based decay.
//!
//! Parameters (defaults): `evs_size` (256, a power of two), `p_ecn` (1), `p_nack` (4),
//! `max_penalty` (15). State: one penalty per EV (4 bits each at the default maximum), the
//! walk position and mask.

use super::walk::XorWalk;
use super::{Ev, LoadBalancer};
use crate::engine::rng::Rng;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, LbContext};
use crate::error::{ensure, ScenarioError};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "bitmap",
    summary: "scrambled round robin over the EVS, skipping EVs penalized by ECN/NACK/timeout",
    reference: "ARCANE sec. 4.1 (STrack-style bitmap)",
};

#[derive(Debug, Clone)]
pub struct Bitmap {
    penalty: Vec<u8>,
    walk: XorWalk,
    p_ecn: u8,
    p_nack: u8,
    max_penalty: u8,
}

impl Bitmap {
    pub fn new(evs_size: u32, p_ecn: u8, p_nack: u8, max_penalty: u8, rng: &mut Rng) -> Bitmap {
        Bitmap { penalty: vec![0; evs_size as usize], walk: XorWalk::new(evs_size, rng), p_ecn, p_nack, max_penalty }
    }

    fn n(&self) -> u32 {
        self.penalty.len() as u32
    }

    fn penalize(&mut self, ev: Ev, by: u8) {
        let i = (ev & (self.n() - 1)) as usize;
        self.penalty[i] = self.penalty[i].saturating_add(by).min(self.max_penalty);
    }

    pub fn penalty_of(&self, ev: Ev) -> u8 {
        self.penalty[(ev & (self.n() - 1)) as usize]
    }
}

impl LoadBalancer for Bitmap {
    fn next_ev(&mut self, _now: Time, rng: &mut Rng) -> Ev {
        let mut ev = self.walk.current();
        let mut skipped = 0;
        while self.penalty[ev as usize] > 0 && skipped < self.n() {
            if skipped == 0 {
                self.penalty[ev as usize] -= 1; // decay the first EV skipped
            }
            skipped += 1;
            self.walk.advance(rng);
            ev = self.walk.current();
        }
        self.walk.advance(rng);
        ev
    }

    fn on_ack(&mut self, _now: Time, ev: Ev, ecn: bool) {
        if ecn {
            self.penalize(ev, self.p_ecn);
        }
    }

    fn on_nack(&mut self, _now: Time, ev: Ev) {
        self.penalize(ev, self.p_nack);
    }

    fn on_timeout(&mut self, _now: Time, ev: Ev) {
        self.penalize(ev, self.max_penalty);
    }

    fn state_bytes(&self) -> usize {
        let pen_bits = 8 - self.max_penalty.leading_zeros() as usize;
        (self.penalty.len() * pen_bits + self.walk.state_bits()).div_ceil(8)
    }
}

/// `[lb]` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Distinct entropy values, a power of two up to 2^24.
    #[serde(default = "d_evs")]
    pub evs_size: u32,
    /// Penalty of an ECN-marked ACK's EV.
    #[serde(default = "d_p_ecn")]
    pub p_ecn: u32,
    /// Penalty of a NACKed packet's EV.
    #[serde(default = "d_p_nack")]
    pub p_nack: u32,
    /// The most an EV's penalty reaches; a timeout sets it.
    #[serde(default = "d_max_penalty")]
    pub max_penalty: u32,
}
fn d_evs() -> u32 {
    256
}
fn d_p_ecn() -> u32 {
    1
}
fn d_p_nack() -> u32 {
    4
}
fn d_max_penalty() -> u32 {
    15
}
impl Default for Config {
    fn default() -> Self {
        Config { evs_size: d_evs(), p_ecn: d_p_ecn(), p_nack: d_p_nack(), max_penalty: d_max_penalty() }
    }
}

impl Algorithm for Config {
    type State = Bitmap;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::walk::check_evs(self.evs_size, 1 << 16, "")?;
        ensure((1..=255).contains(&self.max_penalty), "lb.max_penalty", self.max_penalty, "allowed: 1 to 255")
    }
    fn build(&self, _ctx: &LbContext, rng: &mut Rng) -> Bitmap {
        Bitmap::new(self.evs_size, self.p_ecn.min(255) as u8, self.p_nack.min(255) as u8, self.max_penalty as u8, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn walks_every_ev_once_per_pass_and_skips_penalized_ones() {
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut b = Bitmap::new(16, 1, 4, 15, &mut rng);
        let pass: Vec<Ev> = (0..16).map(|_| b.next_ev(0, &mut rng)).collect();
        let mut sorted = pass.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..16).collect::<Vec<_>>());
        b.on_nack(0, 5); // 4
        b.on_ack(0, 5, true); // 5: penalties accumulate
        assert_eq!(b.penalty_of(5), 5);
        b.on_timeout(0, 9);
        assert_eq!(b.penalty_of(9), 15);
        let next: Vec<Ev> = (0..14).map(|_| b.next_ev(0, &mut rng)).collect();
        assert!(!next.contains(&5) && !next.contains(&9));
        assert!(b.penalty_of(5) < 5, "skipping decays");
    }

    #[test]
    fn all_penalized_still_sends() {
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut b = Bitmap::new(4, 1, 4, 15, &mut rng);
        for ev in 0..4 {
            b.on_timeout(0, ev);
        }
        let total = |b: &Bitmap| (0..4).map(|e| b.penalty_of(e) as u32).sum::<u32>();
        assert_eq!(total(&b), 60);
        // each send gives up after a whole pass, decaying only the first EV it skipped
        let sent: Vec<Ev> = (0..8).map(|_| b.next_ev(0, &mut rng)).collect();
        assert_eq!(total(&b), 60 - 8, "one decay per send: {sent:?}");
        // once decayed to zero an EV is taken at once, without skipping
        for ev in 0..4 {
            while b.penalty_of(ev) > 0 {
                b.penalty[ev as usize] -= 1;
            }
        }
        let before = total(&b);
        b.next_ev(0, &mut rng);
        assert_eq!(total(&b), before, "nothing left to skip, nothing decays");
    }
}
