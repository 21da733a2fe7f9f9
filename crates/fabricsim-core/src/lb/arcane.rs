//! `arcane` (also `reps`): recycled entropies with a circular buffer and freezing mode.
//!
//! ARCANE paper, section 3, Algorithms 1 and 2, step by step:
//! - A new connection *explores*: its first BDP of packets get random EVs from the EVS
//!   (`exploreCounter = NUM_PKTS_BDP`, sec. 3.1).
//! - On an ACK (Alg. 1, `ONACK`): an ECN-marked ACK is ignored; otherwise its EV is written at
//!   `head` of the circular buffer with its validity bit set (`numberOfValidEVs` grows unless
//!   the slot was still valid) and `head` advances. If freezing and the freezing time is
//!   over, freezing ends and exploration restarts for one BDP (lines 15-18).
//! - On failure detection (Alg. 1, `ONFAILUREDETECTION`): if not freezing and not exploring,
//!   enter freezing mode until now + `freezing_timeout`. A failure is a retransmission
//!   timeout; a NACK of a trimmed packet is congestion, not failure (sec. 3.2, Appendix A).
//! - On send (Alg. 2, `ONSEND`): explore (a random EV, counting down `exploreCounter`) if the
//!   buffer was never written, or there is no valid EV and we are not freezing, or we are
//!   exploring; otherwise `GETNEXTEV`: the oldest valid EV (`head - numberOfValidEVs`), whose
//!   bit is cleared, or, with none valid (only when freezing), the EV at `head`, advancing
//!   `head`: frozen, ARCANE cycles through the cached EVs and never draws a new one.
//!
//! One refinement: until the buffer has been filled once, freezing cycles through the
//! written slots only (the pseudocode would also read never-written slots, whose EV is
//! whatever the memory held).
//!
//! Parameters (defaults): `evs_size` (65536), `buffer_size` (8, from Theorem 5.1),
//! `freezing_timeout` ("1ms"; the paper gives no value, so it is fabricsim's choice, from
//! what the paper shows: App. D.3 / Fig. 19, three of a switch's four uplinks dead for good,
//! has ARCANE leave freezing and re-enter it within the run ("small utilization spikes are
//! observed on the failing links when ARCANE exits freezing mode"), so the timeout is shorter
//! than that run of a few ms, which the reference simulator's 10 ms is not; and the same figure
//! has OPS 40x slower than ARCANE, which a timeout near 100 us does not give: leaving freezing
//! explores a BDP of random EVs during which no timeout re-freezes (Alg. 1 lines 17 and 22),
//! and under DCTCP's cut of one MTU per loss a flow stalls, in fabricsim and in the reference
//! alike (docs/faults.md). Sec. 3.2's "about 1K" packets lost over a 10 ms routing transient
//! also allows only a few exits. Fig. 6's text, ARCANE leaving freezing "once the failure
//! stops" after failures of 100 and 200 us, reads as a shorter one: at 1 ms ARCANE stays frozen
//! through both; docs/reproduction.md's sensitivity table gives each verdict under 100 us,
//! 1 ms and 10 ms),
//! `freezing_exit` ("timeout"): when freezing ends once that time is over. Alg. 1 checks it
//! only in ONACK (`"ack"`), but sec. 3.2's text says ARCANE will "simply exit freezing mode after
//! a fixed amount of time", so that it cannot stay stuck when every cached EV points at a
//! failing path (then no ACK ever comes): `"timeout"` also checks it at each send.
//! `exit_explore` ("auto" = one BDP of packets, Alg. 1 line 17): how many random EVs leaving
//! freezing explores. The reference simulator (UEC htsim, `uec_mp.cpp`) explores 16 and
//! freezes for 10 ms; docs/reproduction.md's `arcane-appD-persistent-failures` shows what each
//! choice does when links stay dead. `exit_reset` (false): forget the cached EVs when freezing
//! ends. Alg. 1 keeps them; the reference's `resetBuffer` clears them, so that after the
//! exploration a flow draws random EVs until ACKs refill the buffer, not EVs cached before a
//! failure (docs/faults.md compares the two simulators on App. D.3).
//! State (Table 1): `buffer_size` x (EV bits + 1 validity bit) + head (8) + valid count (8) +
//! exit time (32) + freezing bit (1) + explore counter (8) bits: 193 bits, 25 bytes, for 8
//! entries and 16-bit EVs.

use super::{ev_bytes, Ev, LbContext, LoadBalancer};
use crate::engine::rng::Rng;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use super::{Algorithm, AutoOr};
use crate::error::{ensure, ScenarioError};
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "arcane",
    summary: "recycle the EVs of unmarked ACKs from an 8-entry circular buffer; freeze on failure",
    reference: "ARCANE sec. 3, Alg. 1-2",
};

#[derive(Debug, Clone)]
pub struct Arcane {
    evs_size: u32,
    cached: Vec<Ev>,
    valid: Vec<bool>,
    head: usize,
    /// Slots written at least once (the buffer is "empty" while this is 0).
    written: usize,
    n_valid: usize,
    freezing: bool,
    exit_freezing: Time,
    explore: u64,
    freezing_timeout: Time,
    /// Also leave freezing at the first send past the freezing time, not only at an ACK.
    exit_on_send: bool,
    /// Packets explored when freezing ends (Alg. 1 line 17: one BDP).
    exit_explore: u64,
    /// Forget the cached EVs when freezing ends (`exit_reset`, as the reference does).
    exit_reset: bool,
}

impl Arcane {
    pub fn new(evs_size: u32, buffer_size: usize, freezing_timeout: Time, ctx: &LbContext) -> Arcane {
        Arcane {
            evs_size,
            cached: vec![0; buffer_size],
            valid: vec![false; buffer_size],
            head: 0,
            written: 0,
            n_valid: 0,
            freezing: false,
            exit_freezing: 0,
            explore: ctx.bdp_packets, // a new connection explores its first BDP (sec. 3.1)
            freezing_timeout,
            exit_on_send: false,
            exit_explore: ctx.bdp_packets,
            exit_reset: false,
        }
    }

    /// `exit_explore`: packets explored when freezing ends (one BDP unless given).
    pub fn with_exit_explore(mut self, packets: u64) -> Arcane {
        self.exit_explore = packets;
        self
    }

    /// `exit_reset`: forget the cached EVs when freezing ends.
    pub fn with_exit_reset(mut self, reset: bool) -> Arcane {
        self.exit_reset = reset;
        self
    }

    /// `freezing_exit`: when freezing ends once its time is over.
    pub fn with_exit(mut self, exit: FreezingExit) -> Arcane {
        self.exit_on_send = exit == FreezingExit::Timeout;
        self
    }

    /// Freezing is over (Alg. 1 lines 15-18): explore one BDP of random EVs.
    fn thaw(&mut self, now: Time) {
        if self.freezing && now > self.exit_freezing {
            self.freezing = false;
            self.explore = self.exit_explore;
            if self.exit_reset {
                // the reference's `CircularBufferREPS::resetBuffer`: an empty buffer, so that
                // what follows the exploration is random until ACKs refill it
                self.valid.fill(false);
                (self.head, self.written, self.n_valid) = (0, 0, 0);
            }
        }
    }

    pub fn is_freezing(&self) -> bool {
        self.freezing
    }

    /// Alg. 2, GETNEXTEV.
    fn next_cached(&mut self) -> Ev {
        let size = self.cached.len();
        let offset = if self.n_valid > 0 {
            let offset = (self.head + size - self.n_valid) % size;
            self.valid[offset] = false;
            self.n_valid -= 1;
            offset
        } else {
            // must be freezing: cycle through the cached EVs, valid or not
            if self.head >= self.written {
                self.head = 0;
            }
            let offset = self.head;
            self.head = (self.head + 1) % size;
            offset
        };
        self.cached[offset]
    }
}

impl LoadBalancer for Arcane {
    /// Alg. 2, ONSEND.
    fn next_ev(&mut self, now: Time, rng: &mut Rng) -> Ev {
        if self.exit_on_send {
            self.thaw(now);
        }
        if self.written == 0 || (self.n_valid == 0 && !self.freezing) || self.explore > 0 {
            self.explore = self.explore.saturating_sub(1);
            rng.below(self.evs_size as u64) as Ev
        } else {
            self.next_cached()
        }
    }

    /// Alg. 1, ONACK.
    fn on_ack(&mut self, now: Time, ev: Ev, ecn: bool) {
        if ecn {
            return;
        }
        if !self.valid[self.head] {
            self.n_valid += 1;
        }
        self.cached[self.head] = ev;
        self.valid[self.head] = true;
        self.head = (self.head + 1) % self.cached.len();
        self.written = (self.written + 1).min(self.cached.len());
        self.thaw(now);
    }

    /// Alg. 1, ONFAILUREDETECTION, on a retransmission timeout.
    fn on_timeout(&mut self, now: Time, _ev: Ev) {
        if !self.freezing && self.explore == 0 {
            self.freezing = true;
            self.exit_freezing = now + self.freezing_timeout;
        }
    }

    fn state_bytes(&self) -> usize {
        let ev_bits = ev_bytes(self.evs_size) * 8;
        let bits = self.cached.len() * (ev_bits + 1) + 8 + 8 + 32 + 1 + 8;
        bits.div_ceil(8)
    }
}

/// `[lb]` parameters (shared by `reps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Distinct entropy values, 1 to 2^24.
    #[serde(default = "super::d_evs")]
    pub evs_size: u32,
    /// Entries of the cache of EVs whose ACKs came back unmarked (recycled EVs).
    #[serde(default = "d_buffer")]
    pub buffer_size: u32,
    /// How long freezing lasts at least. fabricsim's choice, as the paper gives no value: shorter than App. D.3's
    /// run of a few ms, in which Fig. 19 shows ARCANE leaving freezing and re-entering it (the reference simulator's
    /// 10 ms is not), and long enough that links dead for good do not stall it (near 100 us, Fig. 6's reading, a
    /// flow stalls: `arcane-appD-persistent-failures` in docs/reproduction.md).
    #[serde(default = "d_freezing")]
    pub freezing_timeout: Duration,
    /// `"timeout"`: leave freezing at the first ACK or send after `freezing_timeout` (sec. 3.2's text); `"ack"`:
    /// only at an ACK (Alg. 1 as written, which stays frozen while every cached EV points at a dead path).
    #[serde(default = "d_exit")]
    pub freezing_exit: FreezingExit,
    /// Random EVs explored when leaving freezing: `"auto"` = one BDP of packets (Alg. 1 line 17), or 1 to 1048576
    /// packets (the reference simulator explores 16).
    #[serde(default)]
    pub exit_explore: AutoOr<u32>,
    /// Forget the cached EVs when freezing ends (`false`: Alg. 1 lines 15-18 keep them; the reference simulator's
    /// `uec_mp.cpp` resets its buffer, so that after the exploration a flow sends random EVs until ACKs refill it
    /// rather than cycling EVs cached before a failure).
    #[serde(default)]
    pub exit_reset: bool,
}

/// When a frozen ARCANE leaves freezing mode once `freezing_timeout` is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FreezingExit {
    /// At the next unmarked ACK (Alg. 1, lines 15-18: the check sits in ONACK).
    Ack,
    /// At the next ACK or the next send, whichever comes first (sec. 3.2's text: "exit
    /// freezing mode after a fixed amount of time"): a flow whose cached EVs all point at a
    /// dead path gets no ACK, and recovers only this way.
    Timeout,
}
fn d_exit() -> FreezingExit {
    FreezingExit::Timeout
}
fn d_buffer() -> u32 {
    8
}
fn d_freezing() -> Duration {
    Duration(1_000_000_000)
}
impl Default for Config {
    fn default() -> Self {
        Config { evs_size: super::d_evs(), buffer_size: d_buffer(), freezing_timeout: d_freezing(), freezing_exit: d_exit(), exit_explore: AutoOr::Auto, exit_reset: false }
    }
}

impl Algorithm for Config {
    type State = Arcane;
    fn validate(&self) -> Result<(), ScenarioError> {
        super::check_evs(self.evs_size)?;
        ensure((1..=256).contains(&self.buffer_size), "lb.buffer_size", self.buffer_size, "allowed: 1 to 256 entries")?;
        if let AutoOr::Value(n) = self.exit_explore {
            ensure((1..=1 << 20).contains(&n), "lb.exit_explore", n, "allowed: \"auto\" (one BDP of packets) or 1 to 1048576 packets")?;
        }
        Ok(())
    }
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Arcane {
        Arcane::new(self.evs_size, self.buffer_size as usize, self.freezing_timeout.0, ctx)
            .with_exit(self.freezing_exit)
            .with_exit_reset(self.exit_reset)
            .with_exit_explore(match self.exit_explore {
                AutoOr::Auto => ctx.bdp_packets,
                AutoOr::Value(n) => n as u64,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;
    use crate::packet::mp_ev::MpEvLayout;

    fn ctx(bdp: u64) -> LbContext {
        LbContext { bdp_packets: bdp, base_rtt: 8_000_000, mtu: 4160, mp_ev: MpEvLayout::new(&[8]), kmin_packets: 21, buffer_packets: 101, packet_time: 83_200 }
    }

    #[test]
    fn explores_the_first_bdp_then_reuses_oldest_valid_first() {
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut a = Arcane::new(65_536, 8, 100_000_000, &ctx(4));
        for ev in [11, 12, 13] {
            a.on_ack(0, ev, false);
        }
        // still exploring: 4 random EVs regardless of the buffer
        for _ in 0..4 {
            a.next_ev(0, &mut rng);
        }
        assert_eq!(a.explore, 0);
        a.on_ack(0, 99, true); // ECN-marked: not cached
        assert_eq!([a.next_ev(0, &mut rng), a.next_ev(0, &mut rng), a.next_ev(0, &mut rng)], [11, 12, 13]);
        // no valid EV left and not freezing: every send explores a fresh random EV
        assert_eq!(a.n_valid, 0);
        let fresh: std::collections::HashSet<Ev> = (0..32).map(|_| a.next_ev(0, &mut rng)).collect();
        assert!(fresh.len() >= 31, "random EVs from a 65536 EVS, not the cached ones: {fresh:?}");
        assert!(!a.is_freezing());
    }

    #[test]
    fn while_frozen_it_never_sends_an_ev_it_has_not_seen_acked() {
        let mut rng = Rng::stream(2, Stream::Host, 0);
        let mut a = Arcane::new(65_536, 8, 1_000, &ctx(0));
        let good = [7, 8, 9];
        for ev in good {
            a.on_ack(0, ev, false);
        }
        a.on_timeout(10, 7);
        assert!(a.is_freezing());
        let sent: Vec<Ev> = (0..1000).map(|_| a.next_ev(20, &mut rng)).collect();
        assert!(sent.iter().all(|e| good.contains(e)), "{:?}", &sent[..20]);
        // it cycles over all of them, not just one
        assert!(good.iter().all(|g| sent.contains(g)));
        // ACKs while frozen refresh the buffer; exit only after the timeout, on an ACK
        a.on_ack(500, 10, false);
        assert!(a.is_freezing());
        a.on_ack(1_011, 11, false);
        assert!(!a.is_freezing());
        assert_eq!(a.explore, 0, "bdp of 0 packets in this test");
    }

    #[test]
    fn exits_freezing_into_one_bdp_of_exploration_and_ignores_failures_while_exploring() {
        let mut a = Arcane::new(65_536, 8, 1_000, &ctx(5));
        a.on_timeout(0, 1);
        assert!(!a.is_freezing(), "a failure while exploring does not freeze");
        a.explore = 0;
        a.on_timeout(0, 1);
        assert!(a.is_freezing());
        a.on_ack(2_000, 3, false);
        assert!(!a.is_freezing());
        assert_eq!(a.explore, 5);
    }

    #[test]
    fn a_flow_whose_cached_evs_are_all_dead_leaves_freezing_on_time_without_an_ack() {
        let mut rng = Rng::stream(3, Stream::Host, 0);
        let frozen = |exit: FreezingExit| {
            let mut a = Arcane::new(65_536, 8, 1_000, &ctx(4)).with_exit(exit);
            a.explore = 0;
            a.on_ack(0, 42, false); // the only cached EV; its path then dies: no ACK comes back
            a.on_timeout(10, 42);
            assert!(a.is_freezing());
            a
        };
        // Alg. 1 as written: the exit is checked only in ONACK, so it keeps resending on EV 42
        let mut by_ack = frozen(FreezingExit::Ack);
        assert!((0..100).all(|k| by_ack.next_ev(2_000 + k, &mut rng) == 42));
        assert!(by_ack.is_freezing());
        // sec. 3.2's text: after the fixed time it exits at the next send and explores a BDP
        let mut by_time = frozen(FreezingExit::Timeout);
        assert_eq!(by_time.next_ev(500, &mut rng), 42, "still frozen before the time is over");
        let fresh: Vec<Ev> = (0..4).map(|k| by_time.next_ev(1_011 + k, &mut rng)).collect();
        assert!(!by_time.is_freezing() && fresh.iter().all(|&e| e != 42), "{fresh:?}");
    }

    #[test]
    fn state_matches_table_one() {
        assert_eq!(Arcane::new(65_536, 8, 0, &ctx(1)).state_bytes(), 25);
        assert_eq!(Arcane::new(65_536, 1, 0, &ctx(1)).state_bytes(), 10);
    }
}
