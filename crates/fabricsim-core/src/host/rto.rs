//! The retransmission timer: a fixed RTO (the papers' setting) or one estimated from the
//! round-trip times (RFC 6298, "Computing TCP's Retransmission Timer", sec. 2-5).
//!
//! Adaptive: the first RTT sample R sets SRTT = R and RTTVAR = R/2; each later one sets
//! RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R (sec. 2.2-2.3), and
//! RTO = SRTT + 4 RTTVAR (the clock granularity G is 0 here), never below `rto_min` (sec.
//! 2.4) nor above 60 s (sec. 2.5). Samples come only from packets sent once (Karn's
//! algorithm, sec. 3). Each time the timer expires with a loss the RTO doubles (sec. 5.5),
//! until the next sample recomputes it. Before any sample the RTO is `rto_min` (sec. 2.1
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
    /// When each PSN was last sent.
    sent_at: Vec<Time>,
}

impl RtoTimer {
    /// A fixed RTO.
    pub fn fixed(rto: Time) -> RtoTimer {
        RtoTimer { rto, estimator: None }
    }

    /// An RTO estimated from RTT samples, starting at and never below `min`, for a message of
    /// `n_pkts` packets.
    pub fn adaptive(min: Time, n_pkts: u32) -> RtoTimer {
        let estimator = Estimator { min, srtt: 0, rttvar: 0, sampled: false, sent_at: vec![0; n_pkts as usize] };
        RtoTimer { rto: min, estimator: Some(Box::new(estimator)) }
    }

    /// `psn` went out at `now`.
    #[inline]
    pub fn on_sent(&mut self, psn: u32, now: Time) {
        if let Some(e) = &mut self.estimator {
            e.sent_at[psn as usize] = now;
        }
    }

    /// An ACK triggered by `psn` arrived at `now`; `tx_count`: how often each PSN was sent
    /// (only a PSN sent once gives a sample).
    #[inline]
    pub fn on_ack(&mut self, psn: u32, tx_count: &[u16], now: Time) {
        let Some(e) = &mut self.estimator else { return };
        if tx_count[psn as usize] != 1 {
            return;
        }
        let r = now.saturating_sub(e.sent_at[psn as usize]);
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

    /// The timer expired and something was declared lost: back off (sec. 5.5).
    pub fn on_timeout(&mut self) {
        if self.estimator.is_some() {
            self.rto = (self.rto * 2).min(RTO_MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_rto_never_moves() {
        let mut t = RtoTimer::fixed(70);
        t.on_sent(0, 0);
        t.on_ack(0, &[1], 500);
        t.on_timeout();
        assert_eq!(t.rto, 70);
    }

    const ONCE: [u16; 4] = [1; 4];

    #[test]
    fn the_estimate_follows_rfc_6298() {
        let mut t = RtoTimer::adaptive(10, 4);
        assert_eq!(t.rto, 10, "rto_min before any sample");
        t.on_sent(0, 0);
        t.on_ack(0, &ONCE, 100); // R = 100: SRTT 100, RTTVAR 50, RTO 300
        assert_eq!(t.rto, 300);
        t.on_sent(1, 100);
        t.on_ack(1, &ONCE, 300); // R = 200: RTTVAR = (150 + 100) / 4 = 62, SRTT = (700 + 200) / 8 = 112
        assert_eq!(t.rto, 112 + 4 * 62);
        // Karn: a retransmitted packet gives no sample
        t.on_sent(2, 300);
        t.on_ack(2, &[1, 1, 2, 1], 100_000);
        assert_eq!(t.rto, 360);
        t.on_timeout();
        assert_eq!(t.rto, 720, "backed off");
        // equal samples shrink RTTVAR towards 0; the RTO never goes below rto_min
        let mut s = RtoTimer::adaptive(1000, 1);
        for k in 0..50 {
            s.on_sent(0, k * 10);
            s.on_ack(0, &ONCE, k * 10 + 5);
        }
        assert_eq!(s.rto, 1000);
    }

    #[test]
    fn back_off_stops_at_sixty_seconds() {
        let mut t = RtoTimer::adaptive(RTO_MAX / 3, 1);
        t.on_timeout();
        t.on_timeout();
        assert_eq!(t.rto, RTO_MAX);
    }
}
