//! `dctcp`: the per-ACK DCTCP variant of MPRDMA (Lu et al., NSDI 2018, sec. 3.3), used for
//! every load balancer in the ARCANE paper (sec. 4.1, "NIC congestion control"): each
//! unmarked ACK grows the window by MTU * acked / cwnd (one MTU per window of ACKs), each
//! ECN-marked ACK shrinks it by MTU/2 (a window whose ACKs are a fraction F marked shrinks by
//! F * cwnd / 2, as DCTCP's alpha/2 cut), and a loss (NACK of a trimmed packet, or a timeout)
//! shrinks it by one MTU. The window stays within [1 MTU, max_cwnd].

use super::{AckSignal, CcContext, CongestionControl};
use crate::time::Time;
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "cc",
    name: "dctcp",
    summary: "per-ACK DCTCP window (MPRDMA variant): +MTU/cwnd per ACK, -MTU/2 per ECN ACK, -MTU per loss",
    reference: "ARCANE sec. 4.1; MPRDMA sec. 3.3",
};

pub const NEEDS_RTT: bool = false;

pub const SENDS_CNPS: bool = false;

/// The window of one connection.
#[derive(Debug, Clone)]
pub struct Dctcp {
    cwnd: u64,
    max: u64,
    mtu: u64,
}

impl Dctcp {
    pub fn new(ctx: &CcContext) -> Dctcp {
        Dctcp { cwnd: ctx.init, max: ctx.max, mtu: ctx.mtu }
    }
}

impl CongestionControl for Dctcp {
    #[inline]
    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    #[inline]
    fn on_ack(&mut self, ack: &AckSignal) {
        let acked = ack.acked;
        if ack.ecn {
            self.cwnd = self.cwnd.saturating_sub(self.mtu / 2).max(self.mtu);
        } else if acked > 0 {
            self.cwnd = (self.cwnd + self.mtu * acked / self.cwnd).min(self.max);
        }
    }

    #[inline]
    fn on_loss(&mut self, _now: Time, _in_flight: u64) {
        self.cwnd = self.cwnd.saturating_sub(self.mtu).max(self.mtu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, ecn: bool) -> AckSignal {
        AckSignal { now: 0, acked, ecn, rtt: None, in_flight: 0, ack: Default::default() }
    }

    #[test]
    fn dctcp_per_ack_rules() {
        let ctx = CcContext { init: 40_000, max: 100_000, mtu: 4_000, mss: 3_936, base_rtt: 1, rate: 1, trimming: true };
        let mut w = Dctcp::new(&ctx);
        w.on_ack(&ack(4_000, true));
        assert_eq!(w.cwnd(), 38_000, "ECN: minus MTU/2");
        w.on_loss(0, 0);
        assert_eq!(w.cwnd(), 34_000, "loss: minus one MTU");
        w.on_ack(&ack(4_000, false));
        assert_eq!(w.cwnd(), 34_000 + 4_000 * 4_000 / 34_000, "additive increase");
        for _ in 0..100 {
            w.on_loss(0, 0);
        }
        assert_eq!(w.cwnd(), 4_000, "floor of one MTU");
        for _ in 0..100_000 {
            w.on_ack(&ack(4_000, false));
        }
        assert_eq!(w.cwnd(), 100_000, "capped at max_cwnd");
    }
}
