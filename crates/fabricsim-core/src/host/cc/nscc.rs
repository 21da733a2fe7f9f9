//! `nscc`: Network Signal-based Congestion Control, the sender-based window of Ultra Ethernet
//! (UE Specification 1.0, sec. 3.6.13, "NSCC"), with the constants and scaling of the UEC
//! reference simulator (htsim, `uec.cpp`), which issue 3's comparison ran.
//!
//! Each ACK carries two signals: its ECN mark and the queuing delay, the RTT of the packet
//! that triggered it minus the connection's base RTT (the smallest RTT seen, starting at the
//! fabric's). Against a target delay they pick one of four actions:
//! - **no mark, delay < target**: proportional increase, `alpha * acked * (target - delay)`;
//! - **no mark, delay >= target**: fair increase, `fi * acked` (the queue is not this flow's);
//! - **mark, delay >= target**: multiplicative decrease of the window by
//!   `gamma * (avg_delay - target) / avg_delay` (at most a half), once per base RTT;
//! - **mark, delay < target**: nothing (a passing queue; the load balancer moves off it).
//!
//! Increases accumulate and are applied as `inc / cwnd` every `8 MTU` acknowledged or every
//! base RTT ("fulfill"), which also adds `eta` once per base RTT. Fast increase: once a whole
//! window's ACKs saw under 1 us of delay, every ACK adds `fi_scale * acked` at once. Quick
//! adapt: on a loss, or a delay over 4 x target, at most once per period of base RTT +
//! target, if less than max_cwnd / 8 was acknowledged in the last period the window becomes
//! what was acknowledged (the rate achieved), and the marks of the packets then in flight are
//! ignored. A loss (NACK of a trimmed packet, or a timeout) otherwise takes one packet off the
//! window. The average delay is an EWMA of weight 0.0125 in which an unmarked sample above
//! target counts as base RTT / 4; a loss counts as a sample of one base RTT.
//!
//! Constants (scaled to the fabric against the specification's reference, 100 Gb/s x 12 us
//! = 150 kB): a = BDP / 150 kB, b = target / 12 us; target = 0.75 x base RTT when switches
//! trim (1 x when they drop), alpha = 4 MSS a b / target, fi = 5 MSS a, eta = 0.15 MSS a,
//! fi_scale = 0.25 a, gamma = 0.8. The window starts at `init_cwnd` and stays within
//! [1 MTU, `max_cwnd`]; the reference starts at and caps at 1.5 BDP (`init_cwnd = max_cwnd =
//! "1.5bdp"`). Not modelled: the receiver's window penalty (`rcv_wnd_pen`) and SLEEK loss
//! recovery, which the reference keeps off by default.
//! State: about 150 bytes per connection (boxed: DCTCP connections do not pay for it).

use super::{AckSignal, CcContext, CongestionControl};
use crate::registry::AlgorithmInfo;
use crate::time::{Time, PS_PER_US};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "cc",
    name: "nscc",
    summary: "Ultra Ethernet NSCC: ECN x queuing delay decide increase or decrease; quick adapt on loss",
    reference: "UE Specification 1.0 sec. 3.6.13 (NSCC); UEC htsim",
};

pub const NEEDS_RTT: bool = true;

pub const SENDS_CNPS: bool = false;

/// The specification's reference fabric: 100 Gb/s and 12 us.
const REF_RTT: Time = 12 * PS_PER_US;
const REF_BDP: f64 = 100e9 / 8.0 * 12e-6;
const GAMMA: f64 = 0.8;
const DELAY_ALPHA: f64 = 0.0125;
/// Quick adapt runs only below max_cwnd >> QA_GATE acknowledged per period.
const QA_GATE: u32 = 3;
/// Fast increase needs a delay below this.
const FAST_DELAY: Time = PS_PER_US;

/// The window of one connection.
#[derive(Debug, Clone)]
pub struct Nscc(Box<State>);

#[derive(Debug, Clone)]
struct State {
    cwnd: f64,
    max: f64,
    /// Also the window's floor.
    mtu: u64,
    /// The fabric's base RTT (the adjust period) and this connection's (the smallest seen).
    network_rtt: Time,
    base_rtt: Time,
    target: Time,
    alpha: f64,
    fi: f64,
    eta: f64,
    fi_scale: f64,
    avg_delay: f64,
    /// Increase accumulated since the last fulfill, and bytes acknowledged since then.
    inc: f64,
    received: u64,
    /// Bytes acknowledged in this quick-adapt period.
    achieved: u64,
    /// Fast increase: bytes acknowledged at low delay in a row, and whether it is on.
    fast_bytes: u64,
    fast: bool,
    last_decrease: Time,
    last_adjust: Time,
    qa_end: Time,
    qa_pending: bool,
    /// After a quick adapt: the bytes then in flight, whose marks are ignored.
    ignore: u64,
    ignored: u64,
}

impl Nscc {
    pub fn new(ctx: &CcContext) -> Nscc {
        let rtt = ctx.base_rtt.max(1);
        let bdp = ctx.rate as f64 / 8.0 * rtt as f64 * 1e-12;
        let target = if ctx.trimming { rtt * 3 / 4 } else { rtt }.max(1);
        let a = bdp / REF_BDP;
        let b = target as f64 / REF_RTT as f64;
        let mss = ctx.mss as f64;
        Nscc(Box::new(State {
            cwnd: ctx.init as f64,
            max: ctx.max as f64,
            mtu: ctx.mtu,
            network_rtt: rtt,
            base_rtt: rtt,
            target,
            alpha: 4.0 * mss * a * b / target as f64,
            fi: 5.0 * mss * a,
            eta: 0.15 * mss * a,
            fi_scale: 0.25 * a,
            avg_delay: 0.0,
            inc: 0.0,
            received: 0,
            achieved: 0,
            fast_bytes: 0,
            fast: false,
            last_decrease: 0,
            last_adjust: 0,
            qa_end: 0,
            qa_pending: false,
            ignore: 0,
            ignored: 0,
        }))
    }
}

impl State {
    /// The window's floor, one packet.
    fn min(&self) -> f64 {
        self.mtu as f64
    }

    fn bound(&mut self) {
        self.cwnd = self.cwnd.clamp(self.min(), self.max);
    }

    fn average(&mut self, delay: Time, ecn: bool) {
        let sample = if !ecn && delay > self.target { self.base_rtt as f64 / 4.0 } else { delay as f64 };
        self.avg_delay = DELAY_ALPHA * sample + (1.0 - DELAY_ALPHA) * self.avg_delay;
    }

    /// Quick adapt; true when it ran or the signal is to be ignored (nothing else changes).
    fn quick_adapt(&mut self, now: Time, loss: bool, ecn: bool, delay: f64, in_flight: u64) -> bool {
        let mut done = false;
        if self.ignored < self.ignore && ecn {
            done = true;
        } else if now > self.qa_end {
            let signal = self.qa_pending || loss || delay > 4.0 * self.target as f64;
            if self.qa_end != 0 && signal && (self.achieved as f64) < self.max / (1u64 << QA_GATE) as f64 {
                self.cwnd = (self.achieved as f64).max(self.min());
                self.ignore = in_flight;
                self.ignored = 0;
                self.qa_pending = false;
                done = true;
            }
            self.achieved = 0;
            self.qa_end = now + self.base_rtt + self.target;
        }
        if done {
            self.inc = 0.0;
            self.received = 0;
        }
        done
    }

    fn proportional_increase(&mut self, acked: u64, delay: f64) {
        if delay < FAST_DELAY as f64 {
            self.fast_bytes += acked;
            if self.fast || self.fast_bytes as f64 > self.cwnd {
                self.cwnd += acked as f64 * self.fi_scale;
                self.fast = true;
                return;
            }
        } else {
            self.fast_bytes = 0;
        }
        self.fast = false;
        self.inc += self.alpha * acked as f64 * (self.target as f64 - delay);
    }

    fn multiplicative_decrease(&mut self, now: Time) {
        self.fast = false;
        self.fast_bytes = 0;
        let avg = self.avg_delay;
        let target = self.target as f64;
        if avg > target && now - self.last_decrease > self.base_rtt {
            self.cwnd *= (1.0 - GAMMA * (avg - target) / avg).max(0.5);
            self.cwnd = self.cwnd.max(self.min());
            self.last_decrease = now;
        }
    }

    fn fulfill(&mut self, now: Time) {
        self.cwnd += self.inc / self.cwnd;
        if now - self.last_adjust >= self.network_rtt {
            self.cwnd += self.eta;
            self.last_adjust = now;
        }
        self.inc = 0.0;
        self.received = 0;
    }
}

impl CongestionControl for Nscc {
    #[inline]
    fn cwnd(&self) -> u64 {
        self.0.cwnd as u64
    }

    fn on_ack(&mut self, a: &AckSignal) {
        let s = &mut *self.0;
        s.achieved += a.acked;
        s.received += a.acked;
        s.ignored += a.acked;
        let delay = match a.rtt {
            Some(rtt) => {
                s.base_rtt = s.base_rtt.min(rtt.max(1));
                let d = rtt - s.base_rtt.min(rtt);
                s.average(d, a.ecn);
                d as f64
            }
            None => s.avg_delay,
        };
        if s.quick_adapt(a.now, false, a.ecn, delay, a.in_flight) {
            return;
        }
        let high = delay >= s.target as f64;
        match (a.ecn, high) {
            (false, true) => s.inc += s.fi * a.acked as f64,
            (false, false) => s.proportional_increase(a.acked, delay),
            (true, true) => s.multiplicative_decrease(a.now),
            (true, false) => {}
        }
        s.bound();
        if s.received > 8 * s.mtu || a.now - s.last_adjust > s.network_rtt {
            s.fulfill(a.now);
        }
        s.bound();
    }

    fn on_loss(&mut self, now: Time, in_flight: u64) {
        let s = &mut *self.0;
        s.ignored += s.mtu;
        s.average(s.network_rtt, true);
        s.qa_pending = true;
        if !s.quick_adapt(now, true, true, 0.0, in_flight) {
            s.cwnd -= s.mtu as f64;
            s.bound();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 400 Gb/s fabric of the papers: 4160 B packets, base RTT 8 us (a BDP of 400 kB).
    fn nscc() -> Nscc {
        let bdp = 400_000;
        let ctx = CcContext {
            init: bdp * 3 / 2,
            max: bdp * 3 / 2,
            mtu: 4_160,
            mss: 4_096,
            base_rtt: 8 * PS_PER_US,
            rate: 400_000_000_000,
            trimming: true,
        };
        Nscc::new(&ctx)
    }

    fn ack(now: Time, ecn: bool, rtt: Time) -> AckSignal {
        AckSignal { now, acked: 4_160, ecn, rtt: Some(rtt), in_flight: 100_000, ack: Default::default() }
    }

    const RTT: Time = 8 * PS_PER_US;

    #[test]
    fn scales_its_constants_to_the_fabric() {
        let w = nscc();
        let s = &w.0;
        assert_eq!(s.target, 6 * PS_PER_US, "0.75 base RTT with trimming");
        let a = 400_000.0 / 150_000.0;
        assert!((s.fi - 5.0 * 4_096.0 * a).abs() < 1e-6);
        assert!((s.eta - 0.15 * 4_096.0 * a).abs() < 1e-6);
        assert!((s.alpha - 4.0 * 4_096.0 * a * 0.5 / (6 * PS_PER_US) as f64).abs() < 1e-12);
    }

    #[test]
    fn marked_high_delay_decreases_once_per_rtt() {
        let mut w = nscc();
        w.0.avg_delay = 12.0 * PS_PER_US as f64; // twice the target
        w.0.qa_end = u64::MAX; // keep quick adapt out of it
        let before = w.0.cwnd;
        w.on_ack(&ack(100 * PS_PER_US, true, RTT + 12 * PS_PER_US));
        let after = w.0.cwnd;
        // 1 - 0.8 * (12 - 6) / 12 = 0.6 (the average moved a little with the sample)
        assert!((after / before - 0.6).abs() < 0.01, "{}", after / before);
        w.on_ack(&ack(100 * PS_PER_US + RTT / 2, true, RTT + 12 * PS_PER_US));
        assert_eq!(w.0.cwnd, after, "not twice within a base RTT");
        w.on_ack(&ack(100 * PS_PER_US + 2 * RTT, true, RTT + 12 * PS_PER_US));
        assert!(w.0.cwnd < after);
    }

    #[test]
    fn marked_low_delay_changes_nothing_and_unmarked_grows() {
        let mut w = nscc();
        w.0.cwnd = 200_000.0;
        w.0.qa_end = u64::MAX;
        w.0.last_adjust = 0;
        // marked but little delay: no change, even at fulfill time
        w.on_ack(&ack(RTT / 2, true, RTT + PS_PER_US));
        assert_eq!(w.0.cwnd, 200_000.0);
        // unmarked and little delay: the proportional increase lands at the next fulfill
        for k in 1..=9 {
            w.on_ack(&ack(RTT / 2 + k, false, RTT + 2 * PS_PER_US));
        }
        assert!(w.0.cwnd > 200_000.0, "{}", w.0.cwnd);
        // unmarked but delay above target: the (smaller, constant) fair increase
        let mut f = nscc();
        f.0.cwnd = 200_000.0;
        f.0.qa_end = u64::MAX;
        f.on_ack(&ack(RTT / 2, false, RTT + 7 * PS_PER_US));
        assert!((f.0.inc - f.0.fi * 4_160.0).abs() < 1e-3);
    }

    #[test]
    fn quick_adapt_sets_the_window_to_what_was_achieved_after_a_loss() {
        let mut w = nscc();
        w.0.cwnd = 500_000.0;
        // the first ACK opens a quick-adapt period of base RTT + target (14 us)
        w.on_ack(&ack(PS_PER_US, false, RTT + 7 * PS_PER_US));
        for k in 2..10 {
            w.on_ack(&ack(k * PS_PER_US, false, RTT + 7 * PS_PER_US));
        }
        // 8 packets acknowledged this period, far below max_cwnd / 8: a loss after it ends
        w.on_loss(20 * PS_PER_US, 300_000);
        assert_eq!(w.0.cwnd, 8.0 * 4_160.0, "the window becomes the bytes achieved");
        // the marks of the 300 kB then in flight are ignored
        let c = w.0.cwnd;
        w.0.avg_delay = 20.0 * PS_PER_US as f64;
        w.on_ack(&ack(25 * PS_PER_US, true, RTT + 20 * PS_PER_US));
        assert_eq!(w.0.cwnd, c);
        // a loss inside the period just takes one packet off
        let mut l = nscc();
        l.0.cwnd = 500_000.0;
        l.0.qa_end = u64::MAX;
        l.on_loss(PS_PER_US, 0);
        assert_eq!(l.0.cwnd, 500_000.0 - 4_160.0);
    }

    #[test]
    fn the_window_stays_between_one_packet_and_max_cwnd() {
        let mut w = nscc();
        for k in 0..10_000 {
            w.on_ack(&ack(k * PS_PER_US, false, RTT));
        }
        assert_eq!(w.cwnd(), 600_000);
        for k in 0..1_000 {
            w.on_loss(20_000 * PS_PER_US + k, 0);
        }
        assert_eq!(w.cwnd(), 4_160);
    }
}
