//! `prime` and `co_prime`: pseudo-random round-robin multi-part EVs with congestion history.
//!
//! PRIME paper, section III:
//! - **MP-EV** (III-D): one part per switch tier with up-ports, each the index of the next
//!   up-port at that tier, in as many bits as the tier's port count needs; switches forward
//!   by their tier's part (`routing = "mp_ev"`, chosen by `routing = "auto"`).
//! - **Generation** (III-D, Alg. 2): per part a permutation walked by a counter, the higher
//!   part's counter advancing when the lower one wraps; a Fisher-Yates reshuffle of a part at
//!   each wrap, seeded per host ([`super::mpev`]).
//! - **Congestion history** (III-C, III-D): a penalty per path (per MP-EV). An ECN-marked ACK
//!   sets the path's penalty to `p_ecn` only if it is zero (no multi-penalization); a NACK
//!   (trimmed packet) or a timeout (loss) sets it to `p_nack` (> `p_ecn`). Sending skips
//!   generated MP-EVs whose path has a non-zero penalty (each skip advances the counters); if
//!   every path is penalized it takes the one with the smallest penalty. After each
//!   generation all penalties decay by `decay`.
//! - **Decay from the drain rate** (III-D, "Decaying function"): the paper derives the decay
//!   from the switch drain rate, "close to" the line rate; its numbers were lost from the text
//!   we have. We measure penalties in packets of queue: a NACK says the queue was at the
//!   buffer, an ECN mark that it was at least Kmin, and while the host sends one packet at
//!   line rate the queue drains about one packet. So by default `p_nack` = the buffer in
//!   packets, `p_ecn` = Kmin in packets, `decay` = 1 per send: a path is avoided until the
//!   queue that flagged it has drained. Decay is evaluated lazily (penalty minus sends since
//!   it was set), which is exact and O(1) per send.
//! - **CO-PRIME** (IV, "Algorithms" iii): PRIME with congestion signals ignored.
//!
//! Parameters (defaults): `p_ecn` ("auto" = Kmin in packets, 21 with 1-BDP buffers on the
//! 400 Gb/s fabric), `p_nack` ("auto" = buffer in packets, 101), `decay` (1 per send),
//! `penalty_bits` (8; penalties saturate at 2^bits - 1). First BDP: no history exists yet, so
//! the generator alone decides (III-C, "Process at hosts").
//!
//! Where the text allows another reading, the reading is a parameter (the defaults are the
//! readings above; docs/reproduction.md's PRIME ablation runs each):
//! - `decay_by` ("send"): "when sending a new packet all penalty values would be updated"
//!   decays per packet sent; `"time"` reads "the update value is calculated based on the
//!   drainage rate of the switch" as a drain in time: `decay` units per packet time at the
//!   host's line rate, whether or not the host sends (they agree while it sends at line rate).
//! - `nack_over_ecn` (true): a NACK raises an ECN-penalized path to `p_nack` ("the path's
//!   penalty is updated to" p_nack); `false` reads "PRIME avoids re-penalizing a path that is
//!   ECN-marked" as covering NACKs too: only a path with no penalty is penalized.
//! - `penalize` (["ecn", "nack", "timeout"]): the signals that penalize. The paper names ECN
//!   and NACK; a timeout (a lost packet, no NACK comes) is treated as a NACK here because a
//!   failed link drops rather than trims. Leaving signals out is the ablation (`[]` is
//!   CO-PRIME).
//!
//! Why these defaults: the reproduction suite's PRIME ablations (`prime-ablation-failures`,
//! `-degradation`, `-mixed`) run each reading on the paper's failure, degradation and mixed
//! traffic setups. No reading puts PRIME ahead of REPS in all three (a longer ECN penalty
//! helps on a degraded link and hurts on failures; a penalty that never decays beats REPS on
//! the degraded link at 5x the slowdown on failures), so the defaults are the readings the
//! text states most directly, not the ones that match a figure.
//!
//! Not a parameter: the text's "none of the EVs included in the MP-EV is experiencing
//! congestion" could mean a history per part (per tier's up-port) rather than per whole path;
//! on two tiers the MP-EV has one part and the readings are the same.
//!
//! State: the permutations and counters, plus `penalty_bits` per path.

use super::mpev::MpEvGenerator;
use super::{Ev, LbContext, LoadBalancer};
use crate::engine::rng::Rng;
use crate::packet::mp_ev::MpEvLayout;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, AutoOr};
use crate::error::{ensure, ScenarioError};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "prime",
    summary: "pseudo-random round-robin multi-part EVs; skip paths penalized by ECN/NACK, with decay",
    reference: "PRIME sec. III-C, III-D",
};

/// Resolved PRIME parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimeParams {
    pub p_ecn: u32,
    pub p_nack: u32,
    pub decay: u32,
    pub penalty_bits: u32,
    /// false = CO-PRIME.
    pub congestion_aware: bool,
    /// `decay_by = "time"`: the decay clock ticks once per this many picoseconds (a packet
    /// time at the host's line rate); `None` ticks once per send.
    pub tick: Option<Time>,
    pub nack_over_ecn: bool,
    pub signals: Signals,
}

/// Which congestion signals penalize a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signals {
    pub ecn: bool,
    pub nack: bool,
    pub timeout: bool,
}

impl Signals {
    pub const ALL: Signals = Signals { ecn: true, nack: true, timeout: true };
}

#[derive(Debug, Clone)]
pub struct Prime {
    gen: MpEvGenerator,
    layout: MpEvLayout,
    params: PrimeParams,
    /// Penalty of each path when it was last set, and the decay clock then.
    penalty: Vec<u32>,
    set_at: Vec<u64>,
    /// The decay clock: sends so far, or packet times since the start (`decay_by = "time"`).
    clock: u64,
}

impl Prime {
    pub fn new(params: PrimeParams, ctx: &LbContext, rng: &mut Rng) -> Prime {
        let paths = 1usize << ctx.mp_ev.bits();
        Prime {
            gen: MpEvGenerator::new(&ctx.mp_ev, rng, true),
            layout: ctx.mp_ev.clone(),
            params,
            penalty: vec![0; if params.congestion_aware { paths } else { 0 }],
            set_at: vec![0; if params.congestion_aware { paths } else { 0 }],
            clock: 0,
        }
    }

    /// The path's penalty now, after decay.
    pub fn penalty_of(&self, ev: Ev) -> u32 {
        let i = self.index(ev);
        let decayed = (self.clock - self.set_at[i]).saturating_mul(self.params.decay as u64);
        (self.penalty[i] as u64).saturating_sub(decayed) as u32
    }

    /// Advances a time-driven decay clock to `now`.
    fn tick(&mut self, now: Time) {
        if let Some(t) = self.params.tick {
            self.clock = now / t;
        }
    }

    fn index(&self, ev: Ev) -> usize {
        (ev & ((1 << self.layout.bits()) - 1)) as usize
    }

    fn set(&mut self, ev: Ev, value: u32) {
        let i = self.index(ev);
        self.penalty[i] = value.min((1 << self.params.penalty_bits) - 1);
        self.set_at[i] = self.clock;
    }

    /// A loss signal (NACK or timeout) on `ev`'s path.
    fn lost(&mut self, now: Time, ev: Ev) {
        self.tick(now);
        let current = self.penalty_of(ev);
        if current == 0 || self.params.nack_over_ecn {
            self.set(ev, current.max(self.params.p_nack));
        }
    }
}

impl LoadBalancer for Prime {
    fn next_ev(&mut self, now: Time, rng: &mut Rng) -> Ev {
        let ev = if !self.params.congestion_aware {
            self.gen.next(&self.layout, rng)
        } else {
            self.tick(now);
            let paths = self.layout.paths();
            let mut chosen = None;
            for _ in 0..paths {
                let ev = self.gen.next(&self.layout, rng);
                if self.penalty_of(ev) == 0 {
                    chosen = Some(ev);
                    break;
                }
            }
            // every path penalized: the least penalized one (first in index order on ties)
            chosen.unwrap_or_else(|| {
                (0..self.penalty.len() as Ev)
                    .filter(|&ev| {
                        self.layout.parts.iter().enumerate().all(|(t, &(n, _, _))| {
                            let (_, shift, bits) = self.layout.parts[t];
                            ((ev >> shift) & ((1 << bits) - 1)) < n
                        })
                    })
                    .min_by_key(|&ev| self.penalty_of(ev))
                    .unwrap_or(0)
            })
        };
        if self.params.tick.is_none() {
            self.clock += 1; // decay after each generation
        }
        ev
    }

    fn on_ack(&mut self, now: Time, ev: Ev, ecn: bool) {
        if ecn && self.params.congestion_aware && self.params.signals.ecn {
            self.tick(now);
            if self.penalty_of(ev) == 0 {
                self.set(ev, self.params.p_ecn);
            }
        }
    }

    fn on_nack(&mut self, now: Time, ev: Ev) {
        if self.params.congestion_aware && self.params.signals.nack {
            self.lost(now, ev);
        }
    }

    fn on_timeout(&mut self, now: Time, ev: Ev) {
        if self.params.congestion_aware && self.params.signals.timeout {
            self.lost(now, ev);
        }
    }

    fn state_bytes(&self) -> usize {
        let bits = self.gen.state_bits(&self.layout) + self.penalty.len() * self.params.penalty_bits as usize;
        bits.div_ceil(8)
    }
}

/// `[lb]` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Penalty of an ECN-marked ACK's path; `"auto"` = Kmin in packets.
    #[serde(default)]
    pub p_ecn: AutoOr<u32>,
    /// Penalty of a NACKed (or timed-out) packet's path; `"auto"` = the buffer in packets; must exceed `p_ecn`.
    #[serde(default)]
    pub p_nack: AutoOr<u32>,
    /// Penalty units removed from every path per packet sent (or per packet time, with `decay_by = "time"`).
    #[serde(default = "d_decay")]
    pub decay: u32,
    /// Bits of each path's penalty counter (it saturates at 2^bits - 1).
    #[serde(default = "d_penalty_bits")]
    pub penalty_bits: u32,
    /// `"send"`: the decay counts packets sent; `"time"`: packet times at the host's line rate.
    #[serde(default)]
    pub decay_by: DecayBy,
    /// A NACK raises an ECN-penalized path to `p_nack`.
    #[serde(default = "d_true")]
    pub nack_over_ecn: bool,
    /// The signals that penalize a path, of `"ecn"`, `"nack"`, `"timeout"`; `[]` behaves as `co_prime`.
    #[serde(default = "d_penalize")]
    pub penalize: Vec<Signal>,
}

/// `decay_by`: what drives the penalty decay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecayBy {
    /// `decay` units per packet sent (sec. III-D: "when sending a new packet").
    #[default]
    Send,
    /// `decay` units per packet time at the host's line rate (sec. III-D: from "the
    /// drainage rate of the switch").
    Time,
}

/// A congestion signal that may penalize a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    Ecn,
    Nack,
    Timeout,
}

fn d_decay() -> u32 {
    1
}
fn d_penalty_bits() -> u32 {
    8
}
fn d_true() -> bool {
    true
}
fn d_penalize() -> Vec<Signal> {
    vec![Signal::Ecn, Signal::Nack, Signal::Timeout]
}
impl Default for Config {
    fn default() -> Self {
        Config {
            p_ecn: AutoOr::Auto,
            p_nack: AutoOr::Auto,
            decay: d_decay(),
            penalty_bits: d_penalty_bits(),
            decay_by: DecayBy::Send,
            nack_over_ecn: true,
            penalize: d_penalize(),
        }
    }
}

impl Algorithm for Config {
    type State = Prime;
    fn validate(&self) -> Result<(), ScenarioError> {
        ensure((1..=16).contains(&self.penalty_bits), "lb.penalty_bits", self.penalty_bits, "allowed: 1 to 16")?;
        if let (AutoOr::Value(e), AutoOr::Value(n)) = (self.p_ecn, self.p_nack) {
            ensure(n > e, "lb.p_nack", n, format!("allowed: more than p_ecn ({e}): a NACK is the more severe signal (PRIME sec. III-D)"))?;
        }
        Ok(())
    }
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Prime {
        let p_ecn = self.p_ecn.or(ctx.kmin_packets as u32).max(1);
        let p_nack = self.p_nack.or(ctx.buffer_packets as u32).max(p_ecn + 1);
        let has = |s: Signal| self.penalize.contains(&s);
        let params = PrimeParams {
            p_ecn,
            p_nack,
            decay: self.decay,
            penalty_bits: self.penalty_bits,
            congestion_aware: true,
            tick: (self.decay_by == DecayBy::Time).then_some(ctx.packet_time.max(1)),
            nack_over_ecn: self.nack_over_ecn,
            signals: Signals { ecn: has(Signal::Ecn), nack: has(Signal::Nack), timeout: has(Signal::Timeout) },
        };
        Prime::new(params, ctx, rng)
    }
    fn writes_mp_ev(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    fn prime(aware: bool) -> (Prime, Rng) {
        let ctx = LbContext {
            bdp_packets: 101,
            base_rtt: 8_000_000,
            mtu: 4160,
            mp_ev: MpEvLayout::new(&[8]),
            kmin_packets: 21,
            buffer_packets: 101,
            packet_time: 83_200,
        };
        let mut rng = Rng::stream(4, Stream::Host, 0);
        (Prime::new(params(aware), &ctx, &mut rng), rng)
    }

    fn params(aware: bool) -> PrimeParams {
        PrimeParams {
            p_ecn: 5,
            p_nack: 20,
            decay: 1,
            penalty_bits: 8,
            congestion_aware: aware,
            tick: None,
            nack_over_ecn: true,
            signals: Signals::ALL,
        }
    }

    #[test]
    fn skips_penalized_paths_until_they_decay() {
        let (mut p, mut rng) = prime(true);
        p.on_nack(0, 3);
        p.on_ack(0, 5, true);
        let first: Vec<Ev> = (0..12).map(|_| p.next_ev(0, &mut rng)).collect();
        // the ECN penalty (5) lasts 5 sends, the NACK penalty (20) 20 sends
        assert!(!first.contains(&3), "{first:?}");
        assert!(!first[..5].contains(&5), "{first:?}");
        assert!(first[5..].contains(&5), "{first:?}");
        // ECN on a penalized path does not re-penalize; 20 sends later both are usable again
        p.on_ack(0, 3, true);
        for _ in 0..20 {
            p.next_ev(0, &mut rng);
        }
        assert_eq!(p.penalty_of(3), 0);
        let later: Vec<Ev> = (0..16).map(|_| p.next_ev(0, &mut rng)).collect();
        assert!(later.contains(&3) && later.contains(&5));
    }

    #[test]
    fn ecn_does_not_stack_and_nack_outweighs_it() {
        let (mut p, _) = prime(true);
        p.on_ack(0, 2, true);
        p.on_ack(0, 2, true);
        assert_eq!(p.penalty_of(2), 5);
        p.on_nack(0, 2);
        assert_eq!(p.penalty_of(2), 20);
    }

    #[test]
    fn all_penalized_takes_the_least_penalized() {
        let (mut p, mut rng) = prime(true);
        for ev in 0..8 {
            p.on_nack(0, ev);
        }
        p.on_ack(0, 6, true); // no effect: already penalized
        p.set(6, 7);
        assert_eq!(p.next_ev(0, &mut rng), 6);
    }

    #[test]
    fn time_decay_drains_while_the_host_is_idle() {
        let (mut p, mut rng) = prime(true);
        p.params.tick = Some(1_000);
        p.on_nack(10_000, 3); // clock 10: penalty 20 until clock 30
        p.next_ev(29_999, &mut rng);
        assert_eq!(p.penalty_of(3), 1);
        // sending does not advance a time-driven clock; time does
        for _ in 0..50 {
            p.next_ev(29_999, &mut rng);
        }
        assert_eq!(p.penalty_of(3), 1);
        p.next_ev(30_000, &mut rng);
        assert_eq!(p.penalty_of(3), 0);
    }

    #[test]
    fn nack_over_ecn_false_keeps_the_ecn_penalty() {
        let (mut p, _) = prime(true);
        p.params.nack_over_ecn = false;
        p.on_ack(0, 2, true);
        p.on_nack(0, 2);
        assert_eq!(p.penalty_of(2), 5, "an ECN-marked path is not re-penalized");
        p.on_nack(0, 4);
        assert_eq!(p.penalty_of(4), 20, "a clean path still takes the NACK penalty");
    }

    #[test]
    fn signals_left_out_do_not_penalize() {
        let (mut p, _) = prime(true);
        p.params.signals = Signals { ecn: false, nack: true, timeout: false };
        p.on_ack(0, 1, true);
        p.on_timeout(0, 2);
        p.on_nack(0, 3);
        assert_eq!((p.penalty_of(1), p.penalty_of(2), p.penalty_of(3)), (0, 0, 20));
    }

    #[test]
    fn no_signals_is_co_prime() {
        let (mut a, mut ra) = prime(true);
        a.params.signals = Signals { ecn: false, nack: false, timeout: false };
        let (mut b, mut rb) = prime(false);
        for i in 0..64 {
            if i % 3 == 0 {
                a.on_nack(0, i % 8);
                a.on_ack(0, (i + 1) % 8, true);
            }
            assert_eq!(a.next_ev(0, &mut ra), b.next_ev(0, &mut rb));
        }
    }

    #[test]
    fn co_prime_ignores_congestion() {
        let (mut p, mut rng) = prime(false);
        for ev in 0..8 {
            p.on_nack(0, ev);
        }
        let evs: Vec<Ev> = (0..8).map(|_| p.next_ev(0, &mut rng)).collect();
        let mut sorted = evs.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>(), "still a full round robin");
    }
}
