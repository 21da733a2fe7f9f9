//! The retransmission timer: a fixed RTO (the papers' setting) or one estimated from the
//! round-trip times (RFC 6298, "Computing TCP's Retransmission Timer", sec. 2-5).
//!
//! Adaptive: the first RTT sample R sets SRTT = R and RTTVAR = R/2; each later one sets
//! RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R (sec. 2.2-2.3), and
//! RTO = SRTT + 4 RTTVAR (the clock granularity G is 0 here), never below `rto_min` (sec.
//! 2.4) nor above 60 s (sec. 2.5). Samples come only from packets sent once (Karn's
//! algorithm, sec. 3). Each time the timer expires with a loss the RTO doubles (sec. 5.5),
//! once per episode (not again for packets sent before the last back-off), until the next
//! sample recomputes it, and every packet still in flight on the expired packets' paths (their
//! EVs) is declared lost with them (the NIC, `host/nic/timers.rs`: loss recovery after a
//! timeout as RFC 6675 sec. 5.1 and Linux do it, for the paths the evidence covers; otherwise a
//! back-off per expired packet would hold the resends behind packets that died with a link,
//! and the RTO would outgrow the run). Before any sample the RTO is `rto_min` (sec. 2.1
//! says 1 s, which is for the Internet; `rto_min` defaults to the papers' fixed 70 us).

use crate::time::Time;

/// RFC 6298 sec. 2.5: a maximum of at least 60 s.
pub const RTO_MAX: Time = 60 * crate::time::PS_PER_S;

/// A connection's retransmission timer value.
#[derive(Debug, Clone, Default)]
pub struct RtoTimer {
    /// The current RTO.
    pub rto: Time,
    estimator: Option<Box<Estimator>>,
}

#[derive(Debug, Clone)]
struct Estimator {
    min: Time,
    srtt: Time,
    rttvar: Time,
    sampled: bool,
    /// When the timer last backed off.
    backed_off: Option<Time>,
}

impl RtoTimer {
    /// A fixed RTO.
    pub fn fixed(rto: Time) -> RtoTimer {
        RtoTimer { rto, estimator: None }
    }

    /// An RTO estimated from RTT samples, starting at and never below `min`.
    pub fn adaptive(min: Time) -> RtoTimer {
        RtoTimer { rto: min, estimator: Some(Box::new(Estimator { min, srtt: 0, rttvar: 0, sampled: false, backed_off: None })) }
    }

    /// An RTT sample `r`, from a packet sent once (Karn's algorithm: the sender gives no
    /// sample for a retransmitted packet).
    #[inline]
    pub fn on_sample(&mut self, r: Time) {
        let Some(e) = &mut self.estimator else { return };
        if e.sampled {
            e.rttvar = (3 * e.rttvar + e.srtt.abs_diff(r)) / 4;
            e.srtt = (7 * e.srtt + r) / 8;
        } else {
            e.sampled = true;
            e.srtt = r;
            e.rttvar = r / 2;
        }
        self.rto = (e.srtt + 4 * e.rttvar).clamp(e.min, RTO_MAX);
    }

    /// Whether the RTO is estimated (RFC 6298) rather than fixed.
    pub fn is_adaptive(&self) -> bool {
        self.estimator.is_some()
    }

    /// The timer expired at `now` and declared lost packets sent as late as `sent`: back off
    /// (sec. 5.5), once per episode: not for packets all sent before the last back-off.
    pub fn on_timeout(&mut self, now: Time, sent: Time) {
        if let Some(e) = self.estimator.as_mut() {
            if e.backed_off.is_none_or(|at| sent >= at) {
                e.backed_off = Some(now);
                self.rto = (self.rto * 2).min(RTO_MAX);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_rto_never_moves() {
        let mut t = RtoTimer::fixed(70);
        t.on_sample(500);
        t.on_timeout(600, 0);
        assert_eq!(t.rto, 70);
    }

    #[test]
    fn the_estimate_follows_rfc_6298() {
        let mut t = RtoTimer::adaptive(10);
        assert_eq!(t.rto, 10, "rto_min before any sample");
        t.on_sample(100); // R = 100: SRTT 100, RTTVAR 50, RTO 300
        assert_eq!(t.rto, 300);
        t.on_sample(200); // R = 200: RTTVAR = (150 + 100) / 4 = 62, SRTT = (700 + 200) / 8 = 112
        assert_eq!(t.rto, 112 + 4 * 62);
        t.on_timeout(1_000, 200);
        assert_eq!(t.rto, 720, "backed off");
        t.on_timeout(1_100, 900);
        assert_eq!(t.rto, 720, "a packet sent before the last back-off: the same episode");
        t.on_timeout(2_000, 1_000);
        assert_eq!(t.rto, 1_440, "one sent after it: a new one");
        // equal samples shrink RTTVAR towards 0; the RTO never goes below rto_min
        let mut s = RtoTimer::adaptive(1000);
        for _ in 0..50 {
            s.on_sample(5);
        }
        assert_eq!(s.rto, 1000);
    }

    #[test]
    fn back_off_stops_at_sixty_seconds() {
        let mut t = RtoTimer::adaptive(RTO_MAX / 3);
        t.on_timeout(1, 0);
        t.on_timeout(2, 1);
        assert_eq!(t.rto, RTO_MAX);
    }
}
