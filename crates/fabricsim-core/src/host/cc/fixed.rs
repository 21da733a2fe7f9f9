//! `none`: a fixed window (`init_cwnd`), for load-balancing studies without congestion-control
//! dynamics.

use super::CongestionControl;
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo { category: "cc", name: "none", summary: "fixed window (init_cwnd)", reference: "" };

/// A window that never moves.
#[derive(Debug, Clone)]
pub struct Fixed {
    cwnd: u64,
}

impl Fixed {
    pub fn new(init: u64, _max: u64, _mtu: u64) -> Fixed {
        Fixed { cwnd: init }
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
        let mut w = Fixed::new(40_000, 80_000, 4_000);
        w.on_ack(4_000, true);
        w.on_loss();
        w.on_ack(4_000, false);
        assert_eq!(w.cwnd(), 40_000);
    }
}
