//! `dcqcn`: Data Center QCN, the rate-based congestion control of RoCE NICs (Zhu et al.,
//! "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, sec. 3), with the
//! constants of the UEC reference simulator (htsim, `dcqcn.cpp`).
//!
//! Three parts, as the paper splits them:
//! - **CP** (the switch) marks ECN by RED between Kmin and Kmax (`[switch.ecn]`, unchanged).
//! - **NP** (the receiver, [`Notifier`]): a marked data packet makes it send a congestion
//!   notification packet (CNP) to the sender at once if it sent none for the connection in the
//!   last N = 50 us; otherwise it remembers the mark and, when the N window ends, sends one
//!   CNP for all the marks of the window ("at most one CNP every N us for the flow, if any
//!   packet that arrives within that time window was marked"). CNPs are header-sized control
//!   packets (strict priority at the switches, like ACKs).
//! - **RP** (the sender, [`Dcqcn`]): a current rate RC, a target rate RT and alpha (from 1).
//!   On a CNP: RT = RC, RC = RC (1 - alpha / 2), alpha = (1 - g) alpha + g, and the timer and
//!   byte counter restart. Every K = T = 55 us without a CNP the timer fires: alpha = (1 - g)
//!   alpha, and a rate-increase event; every B = 10 MB sent another one. An increase event is
//!   *fast recovery* (RC = (RT + RC) / 2) while both counters are at most F = 5, *hyper
//!   increase* (RT += (min - F) RHAI, then the same average) once both exceed F, and
//!   *additive increase* (RT += RAI, then the average) in between. RC stays within [100 Mb/s,
//!   line rate] (an increase at line rate changes nothing).
//!
//! Constants as in the reference simulator: g = 1/256, N = 50 us, K = T = 55 us (one timer for
//! alpha and the rate), B = 10 MB, F = 5, RAI = line rate / 20, RHAI = line rate / 10, RC and
//! RT start at line rate. The rate paces the connection's packets at the NIC (each starts
//! size / RC after the previous one, recomputed when RC changes; `transport.rate_cap` bounds
//! it too). DCQCN has no window: the connection's window stays at `max_cwnd` (a NIC's limit on
//! outstanding bytes; "auto" is one line-rate BDP, which never holds back a lone flow), and
//! losses do not change the rate (Go-back-N or the out-of-order transport resends).
//!
//! The timer is an event only while it can change something: once RC is back at line rate it
//! stops, and the alpha decays it would have applied are caught up at the next CNP (an
//! increase at line rate is a no-op and the counters restart at a CNP, so this is exact).
//! State: about 70 bytes per connection (boxed).

use super::{CcContext, CongestionControl};
use crate::registry::AlgorithmInfo;
use crate::time::{Time, PS_PER_US};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "cc",
    name: "dcqcn",
    summary: "RoCE DCQCN: rate cut by alpha/2 per CNP (at most one per 50 us), fast recovery / additive / hyper increase",
    reference: "DCQCN (Zhu et al., SIGCOMM 2015) sec. 3; UEC htsim",
};

pub const NEEDS_RTT: bool = false;

pub const SENDS_CNPS: bool = true;

/// N: the least time between two CNPs of a connection.
pub const CNP_INTERVAL: Time = 50 * PS_PER_US;
/// K = T: the alpha and rate-increase timer.
pub const PERIOD: Time = 55 * PS_PER_US;
const G: f64 = 1.0 / 256.0;
/// B: bytes sent per byte-counter increase event.
const BYTE_COUNTER: u64 = 10_000_000;
/// F: increase events of fast recovery.
const F: u32 = 5;
const MIN_RATE: u64 = 100_000_000;

/// The reaction point of one connection: its rate.
#[derive(Debug, Clone)]
pub struct Dcqcn(Box<State>);

#[derive(Debug, Clone)]
struct State {
    window: u64,
    line: u64,
    rai: u64,
    rhai: u64,
    /// Current and target rate (bits/s).
    rc: u64,
    rt: u64,
    alpha: f64,
    /// Increase events of the timer and of the byte counter since the last CNP.
    t: u32,
    bc: u32,
    /// Bytes sent towards the next byte-counter event.
    bytes: u64,
    /// When the timer fires next (`Time::MAX`: stopped), and when it last fired or was
    /// restarted (for the alpha decays of a stopped timer).
    timer_at: Time,
    timer_from: Time,
    /// A CNP has arrived: the counters run.
    active: bool,
}

impl Dcqcn {
    pub fn new(ctx: &CcContext) -> Dcqcn {
        let line = ctx.rate.max(MIN_RATE);
        Dcqcn(Box::new(State {
            window: ctx.max,
            line,
            rai: line / 20,
            rhai: line / 10,
            rc: line,
            rt: line,
            alpha: 1.0,
            t: 0,
            bc: 0,
            bytes: 0,
            timer_at: Time::MAX,
            timer_from: 0,
            active: false,
        }))
    }

    /// Alpha and the target rate (for tests and traces).
    pub fn alpha(&self) -> f64 {
        self.0.alpha
    }

    pub fn target(&self) -> u64 {
        self.0.rt
    }
}

impl State {
    /// One rate-increase event (the counters were just advanced).
    fn increase(&mut self) {
        if self.rc >= self.line {
            return;
        }
        let (lo, hi) = (self.t.min(self.bc), self.t.max(self.bc));
        if lo > F {
            self.rt += (lo - F) as u64 * self.rhai; // hyper increase
        } else if hi > F {
            self.rt += self.rai; // additive increase
        } // else fast recovery: RT stays
        self.rc = ((self.rt + self.rc) / 2).clamp(MIN_RATE, self.line);
    }

    /// The timer's next firing: stopped once the rate is back at line rate.
    fn rearm(&mut self, now: Time) -> Option<Time> {
        self.timer_from = now;
        self.timer_at = if self.rc < self.line { now + PERIOD } else { Time::MAX };
        (self.timer_at != Time::MAX).then_some(self.timer_at)
    }
}

impl CongestionControl for Dcqcn {
    #[inline]
    fn cwnd(&self) -> u64 {
        self.0.window
    }

    #[inline]
    fn rate(&self) -> u64 {
        self.0.rc
    }

    #[inline]
    fn on_send(&mut self, _now: Time, bytes: u64) -> u64 {
        let s = &mut *self.0;
        if s.active {
            s.bytes += bytes;
            while s.bytes >= BYTE_COUNTER {
                s.bytes -= BYTE_COUNTER;
                s.bc += 1;
                s.increase();
            }
        }
        s.rc
    }

    fn on_cnp(&mut self, now: Time) -> Option<Time> {
        let s = &mut *self.0;
        if s.timer_at == Time::MAX && s.active {
            // the stopped timer's alpha decays, one per period since it stopped
            let periods = (now - s.timer_from) / PERIOD;
            s.alpha *= (1.0 - G).powi(periods.min(i32::MAX as u64) as i32);
        }
        s.rt = s.rc;
        s.rc = ((s.rc as f64 * (1.0 - s.alpha / 2.0)) as u64).max(MIN_RATE);
        s.alpha = (1.0 - G) * s.alpha + G;
        (s.t, s.bc, s.bytes) = (0, 0, 0);
        s.active = true;
        s.rearm(now)
    }

    fn on_timer(&mut self, now: Time) -> Option<Time> {
        let s = &mut *self.0;
        if now != s.timer_at {
            return None; // restarted by a CNP since
        }
        s.alpha *= 1.0 - G;
        s.t += 1;
        s.increase();
        s.rearm(now)
    }
}

/// The notification point of one connection (the receiver): when to send CNPs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Notifier {
    /// When the last CNP was sent.
    last: Option<Time>,
    /// A marked packet arrived since, too soon for a CNP of its own.
    marked: bool,
}

impl Notifier {
    /// A marked data packet arrived at `now`: `Some(t)` if a CNP goes out now, with its
    /// window's end `t` (when [`Notifier::on_timer`] must run).
    pub fn on_marked(&mut self, now: Time) -> Option<Time> {
        if self.last.is_some_and(|l| now - l < CNP_INTERVAL) {
            self.marked = true;
            return None;
        }
        self.last = Some(now);
        self.marked = false;
        Some(now + CNP_INTERVAL)
    }

    /// A window ended at `now`: `Some(t)` if a CNP goes out now for the marks of the window,
    /// with the new window's end.
    pub fn on_timer(&mut self, now: Time) -> Option<Time> {
        if !self.marked || self.last.is_some_and(|l| now - l < CNP_INTERVAL) {
            return None;
        }
        self.last = Some(now);
        self.marked = false;
        Some(now + CNP_INTERVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 400_000_000_000;

    fn rp() -> Dcqcn {
        Dcqcn::new(&CcContext { init: 80_000, max: 80_000, mtu: 4_160, mss: 4_096, base_rtt: 1, rate: LINE, trimming: true })
    }

    #[test]
    fn a_cnp_cuts_by_half_alpha_and_raises_alpha() {
        let mut w = rp();
        assert_eq!((w.rate(), w.cwnd()), (LINE, 80_000), "line rate, window at max_cwnd");
        assert_eq!(w.on_cnp(0), Some(PERIOD));
        assert_eq!(w.rate(), LINE / 2, "alpha starts at 1: the first cut halves");
        assert_eq!(w.target(), LINE);
        assert_eq!(w.alpha(), 1.0, "(1 - g) + g");
        w.on_cnp(1);
        assert_eq!(w.rate(), LINE / 4);
        assert_eq!(w.target(), LINE / 2, "RT = RC before the cut");
        for _ in 0..200 {
            w.on_cnp(2);
        }
        assert_eq!(w.rate(), MIN_RATE, "floor");
    }

    /// Two CNPs at 0 and 1: RC = line/4, RT = line/2, alpha = 1; the timer runs from 1.
    fn cut_twice() -> Dcqcn {
        let mut w = rp();
        let first = w.on_cnp(0).unwrap();
        assert_eq!(w.on_cnp(1), Some(1 + PERIOD));
        assert_eq!(w.on_timer(first), None, "restarted by the second CNP: stale");
        assert_eq!((w.rate(), w.target()), (LINE / 4, LINE / 2));
        w
    }

    /// The paper's increase step for counters (t, bc).
    fn step(rc: u64, rt: u64, t: u32, bc: u32) -> (u64, u64) {
        let rt = match (t.min(bc), t.max(bc)) {
            (lo, _) if lo > F => rt + (lo - F) as u64 * (LINE / 10),
            (_, hi) if hi > F => rt + LINE / 20,
            _ => rt,
        };
        (((rt + rc) / 2).min(LINE), rt)
    }

    #[test]
    fn the_timer_runs_fast_recovery_then_additive_increase() {
        let mut w = cut_twice();
        let (mut rc, mut rt) = (LINE / 4, LINE / 2);
        let mut now = 1 + PERIOD;
        for t in 1..=7u32 {
            let alpha = w.alpha();
            assert_eq!(w.on_timer(now), Some(now + PERIOD), "below line rate: the timer keeps running");
            assert!((w.alpha() - alpha * (1.0 - G)).abs() < 1e-12, "alpha decays once per period");
            (rc, rt) = step(rc, rt, t, 0);
            assert_eq!((w.rate(), w.target()), (rc, rt), "event {t}");
            now += PERIOD;
        }
        assert_eq!(w.target(), LINE / 2 + 2 * (LINE / 20), "two additive steps after F = 5 fast recoveries");
        // the byte counter: with T = 7, its 6th and 7th events are hyper increases
        w.on_send(now, 7 * BYTE_COUNTER - 1);
        for bc in 1..=6u32 {
            (rc, rt) = step(rc, rt, 7, bc);
        }
        assert_eq!((w.rate(), w.target()), (rc, rt), "six byte-counter events");
        w.on_send(now, 1);
        assert_eq!(step(rc, rt, 7, 7).1, rt + 2 * (LINE / 10));
        (rc, rt) = step(rc, rt, 7, 7);
        assert_eq!((w.rate(), w.target()), (rc, rt), "the seventh: hyper increase by 2 RHAI");
    }

    #[test]
    fn the_timer_stops_at_line_rate_and_alpha_catches_up() {
        let mut w = rp();
        let mut at = w.on_cnp(0);
        let mut last = 0;
        while let Some(t) = at {
            last = t;
            at = w.on_timer(t);
        }
        assert_eq!(w.rate(), LINE, "recovered");
        let alpha = w.alpha();
        // 10 periods later: 10 decays, then the CNP's update
        w.on_cnp(last + 10 * PERIOD + 1);
        let want = alpha * (1.0 - G).powi(10) * (1.0 - G) + G;
        assert!((w.alpha() - want).abs() < 1e-12);
    }

    #[test]
    fn no_counting_before_the_first_cnp() {
        let mut w = rp();
        assert_eq!(w.on_send(0, 100 * BYTE_COUNTER), LINE);
        assert_eq!(w.0.bc, 0);
        assert_eq!(w.on_timer(PERIOD), None, "no timer before a CNP");
    }

    #[test]
    fn at_most_one_cnp_per_window_and_one_for_the_marks_of_a_window() {
        let mut np = Notifier::default();
        assert_eq!(np.on_marked(0), Some(CNP_INTERVAL), "first mark: a CNP at once");
        assert_eq!(np.on_marked(10), None, "within N: remembered");
        assert_eq!(np.on_marked(20), None);
        assert_eq!(np.on_timer(CNP_INTERVAL), Some(2 * CNP_INTERVAL), "one CNP for the window's marks");
        assert_eq!(np.on_timer(2 * CNP_INTERVAL), None, "no mark in that window: none");
        assert_eq!(np.on_marked(3 * CNP_INTERVAL), Some(4 * CNP_INTERVAL), "the window is over: at once again");
        // a mark at the very end of a window, before its timer runs, sends at once
        let mut np = Notifier::default();
        np.on_marked(0);
        assert_eq!(np.on_marked(CNP_INTERVAL), Some(2 * CNP_INTERVAL));
        assert_eq!(np.on_timer(CNP_INTERVAL), None, "the old window's timer finds nothing");
    }
}
