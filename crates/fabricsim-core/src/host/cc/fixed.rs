//! `none`: a fixed window (`init_cwnd`), for load-balancing studies without congestion-control
//! dynamics.

use super::{CcContext, CongestionControl};
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo { category: "cc", name: "none", summary: "fixed window (init_cwnd)", reference: "" };

pub const NEEDS_RTT: bool = false;

pub const SENDS_CNPS: bool = false;

/// A window that never moves.
#[derive(Debug, Clone)]
pub struct Fixed {
    cwnd: u64,
}

impl Fixed {
    pub fn new(ctx: &CcContext) -> Fixed {
        Fixed { cwnd: ctx.init }
    }
}

impl CongestionControl for Fixed {
    #[inline]
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_its_window() {
        let ctx = CcContext { init: 40_000, max: 80_000, mtu: 4_000, mss: 3_936, base_rtt: 1, rate: 1, trimming: true };
        let mut w = Fixed::new(&ctx);
        let ack = |ecn| super::super::AckSignal { now: 0, acked: 4_000, ecn, rtt: None, in_flight: 0, ack: Default::default() };
        w.on_ack(&ack(true));
        w.on_loss(0, 0);
        w.on_ack(&ack(false));
        assert_eq!(w.cwnd(), 40_000);
    }
}
