//! What a fault leaves on one link direction: a wrapper around the wire, in the manner of
//! smoltcp's `FaultInjector`, rather than flags spread over the egress port.
//!
//! A fault's effect on the packets lives here whole: its [`Change`], the state it leaves on
//! the link ([`LinkFault::apply`]) and what the link then does to each packet put on it
//! ([`LinkFault::on_transmit`], the one hook the packet path calls). A fault kind with a new
//! effect is its own file, a variant and its lines here, and its registry line.
//!
//! A port with no fault has no [`LinkFault`] at all (one branch in the packet path). The first
//! change a fault makes to a link creates it, remembering the link's nominal rate and latency
//! so that a fault's `end` can restore them, and giving the link its own random stream for
//! losses (`Stream::Fault`), so that a lossy link never shifts anyone else's draws.

use crate::engine::rng::{Rng, Stream};
use crate::packet::Packet;
use crate::time::Time;

/// What a fault event does to both directions of a link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Set the rate (bit/s).
    Rate(u64),
    /// Back to the link's nominal rate.
    NominalRate,
    /// The link blackholes everything it is given.
    Down,
    Up,
    /// Routing adopts the link's current state (after detection and reconvergence).
    Converge,
    /// Extra propagation latency (ps); 0 restores the nominal latency.
    ExtraDelay(Time),
    /// Loss probability per packet.
    Loss(f64),
}

/// What a link with a fault does to a packet put on it ([`LinkFault::on_transmit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It travels (perhaps changed).
    Carry,
    /// It is serialized, then lost on the wire.
    Lost,
    /// The link is dead: the port serializes into the void (at the link's nominal speed of
    /// the moment) and the packet is lost.
    Dead,
}

/// The fault state of one link direction.
#[derive(Debug, Clone)]
pub struct LinkFault {
    /// A dead link: whatever is sent is lost.
    pub down: bool,
    /// Probability that a packet put on the link is lost.
    pub loss: f64,
    rng: Rng,
    /// The link's rate and latency without faults.
    pub nominal_rate: u64,
    pub nominal_delay: Time,
}

impl LinkFault {
    /// The wrapper of port `port` (its loss stream is derived from the port id).
    pub fn new(seed: u64, port: u32, rate: u64, delay: Time) -> LinkFault {
        LinkFault {
            down: false,
            loss: 0.0,
            rng: Rng::stream(seed, Stream::Fault, (1 << 32) | port as u64),
            nominal_rate: rate,
            nominal_delay: delay,
        }
    }

    /// Applies `change` to this link and to its current `rate` and `delay` (`Converge` is
    /// routing's business, not the link's: it changes nothing here).
    pub fn apply(&mut self, change: Change, rate: &mut u64, delay: &mut Time) {
        match change {
            Change::Rate(r) => *rate = r,
            Change::NominalRate => *rate = self.nominal_rate,
            Change::Down => self.down = true,
            Change::Up => self.down = false,
            Change::ExtraDelay(x) => *delay = self.nominal_delay + x,
            Change::Loss(p) => self.loss = p,
            Change::Converge => {}
        }
    }

    /// What the link does to `pkt`, put on it now: the effects in a fixed order (a dead link
    /// takes everything; a lossy one draws from its own stream for each packet).
    #[inline]
    pub fn on_transmit(&mut self, _pkt: &mut Packet) -> Verdict {
        if self.down {
            Verdict::Dead
        } else if self.loses() {
            Verdict::Lost
        } else {
            Verdict::Carry
        }
    }

    /// Whether the packet now put on the wire is lost to a random loss.
    #[inline]
    fn loses(&mut self) -> bool {
        self.loss > 0.0 && (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < self.loss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_apply_and_end_restores_the_nominal_link() {
        let (mut rate, mut delay) = (400, 1_000);
        let mut f = LinkFault::new(1, 3, rate, delay);
        f.apply(Change::Rate(100), &mut rate, &mut delay);
        f.apply(Change::ExtraDelay(500), &mut rate, &mut delay);
        assert_eq!((rate, delay), (100, 1_500));
        f.apply(Change::NominalRate, &mut rate, &mut delay);
        f.apply(Change::ExtraDelay(0), &mut rate, &mut delay);
        assert_eq!((rate, delay), (400, 1_000));
        f.apply(Change::Down, &mut rate, &mut delay);
        assert!(f.down);
        f.apply(Change::Up, &mut rate, &mut delay);
        assert!(!f.down);
    }

    #[test]
    fn losses_follow_the_probability() {
        let (mut rate, mut delay) = (1, 1);
        let mut f = LinkFault::new(1, 0, rate, delay);
        assert!((0..1000).all(|_| !f.loses()), "no loss without a loss fault");
        f.apply(Change::Loss(0.25), &mut rate, &mut delay);
        let lost = (0..40_000).filter(|_| f.loses()).count();
        assert!((9_400..10_600).contains(&lost), "{lost}");
        f.apply(Change::Loss(1.0), &mut rate, &mut delay);
        assert!((0..100).all(|_| f.loses()));
    }
}
