//! Congestion control: the sender's window.
//!
//! - `dctcp`: the per-ACK DCTCP variant of MPRDMA (Lu et al., NSDI 2018, sec. 3.3), used for
//!   every load balancer in the ARCANE paper (sec. 4.1, "NIC congestion control"): each
//!   unmarked ACK grows the window by MTU * acked / cwnd (one MTU per window of ACKs), each
//!   ECN-marked ACK shrinks it by MTU/2 (a window whose ACKs are a fraction F marked shrinks
//!   by F * cwnd / 2, as DCTCP's alpha/2 cut), and a loss (NACK of a trimmed packet, or a
//!   timeout) shrinks it by one MTU. The window stays within [1 MTU, max_cwnd].
//! - `none`: a fixed window (`init_cwnd`), for load-balancing studies without CC dynamics.

use super::CcKind;

#[derive(Debug, Clone)]
pub struct Cwnd {
    kind: CcKind,
    cwnd: u64,
    max: u64,
    mtu: u64,
}

impl Cwnd {
    pub fn new(kind: CcKind, init: u64, max: u64, mtu: u64) -> Cwnd {
        Cwnd { kind, cwnd: init, max, mtu }
    }

    #[inline]
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// An ACK for `acked` newly acknowledged bytes, with the echoed ECN mark.
    #[inline]
    pub fn on_ack(&mut self, acked: u64, ecn: bool) {
        if self.kind == CcKind::None {
            return;
        }
        if ecn {
            self.cwnd = self.cwnd.saturating_sub(self.mtu / 2).max(self.mtu);
        } else if acked > 0 {
            self.cwnd = (self.cwnd + self.mtu * acked / self.cwnd).min(self.max);
        }
    }

    /// A packet was lost (NACK or timeout).
    #[inline]
    pub fn on_loss(&mut self) {
        if self.kind == CcKind::None {
            return;
        }
        self.cwnd = self.cwnd.saturating_sub(self.mtu).max(self.mtu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dctcp_per_ack_rules() {
        let mut w = Cwnd::new(CcKind::Dctcp, 40_000, 100_000, 4_000);
        w.on_ack(4_000, true);
        assert_eq!(w.cwnd(), 38_000, "ECN: minus MTU/2");
        w.on_loss();
        assert_eq!(w.cwnd(), 34_000, "loss: minus one MTU");
        w.on_ack(4_000, false);
        assert_eq!(w.cwnd(), 34_000 + 4_000 * 4_000 / 34_000, "additive increase");
        for _ in 0..100 {
            w.on_loss();
        }
        assert_eq!(w.cwnd(), 4_000, "floor of one MTU");
        for _ in 0..100_000 {
            w.on_ack(4_000, false);
        }
        assert_eq!(w.cwnd(), 100_000, "capped at max_cwnd");
    }

    #[test]
    fn none_keeps_its_window() {
        let mut w = Cwnd::new(CcKind::None, 40_000, 40_000, 4_000);
        w.on_ack(4_000, true);
        w.on_loss();
        w.on_ack(4_000, false);
        assert_eq!(w.cwnd(), 40_000);
    }
}
