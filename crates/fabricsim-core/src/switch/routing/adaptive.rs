//! `adaptive`: the group's port whose egress queue holds the fewest bytes, ties broken uniformly at
//! random (NVIDIA Spectrum adaptive routing, the "adaptive RoCE" baseline of ARCANE sec. 4.1;
//! PRIME sec. IV "AR"). A local decision: it cannot see congestion beyond the next hop.
//!
//! What the switch reads of a port's load ([`LoadSense`], `[switch.adaptive]`): by default the
//! exact bytes queued (data and control) at the moment of the decision. Real switches and the
//! reference simulator read a coarser, older value: `levels` quantizes the queue into bands
//! (the reference's `quantized_queuesize`: below 5 %, 10 %, 20 % of the buffer, else the top
//! band; ports in the same band tie), and `refresh` keeps the value a port showed for that
//! long: a read more than `refresh` after the port's last sample takes a new one, any other
//! read sees the last (the reference: 100 ns).

use super::Route;
use crate::engine::rng::Rng;
use crate::switch::SwitchModel;
use crate::packet::Packet;
use crate::registry::AlgorithmInfo;
use crate::switch::EgressPort;
use crate::time::Time;
use crate::topology::Cut;

/// How adaptive switches read their ports' loads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadSense {
    /// Band edges in bytes, ascending: a queue of `q` bytes is in band `#{t : q >= t}`. Empty:
    /// the bytes themselves.
    pub thresholds: Vec<u64>,
    /// How long a sample stays; 0 = every read is fresh.
    pub refresh: Time,
}

impl LoadSense {
    /// Exact loads: no quantization and no staleness (no per-port samples kept).
    pub fn is_exact(&self) -> bool {
        self.thresholds.is_empty() && self.refresh == 0
    }

    fn sense(&self, bytes: u64) -> u64 {
        if self.thresholds.is_empty() {
            bytes
        } else {
            self.thresholds.iter().filter(|&&t| bytes >= t).count() as u64
        }
    }
}

/// The ports' loads as a switch sees them at `now`.
pub struct PortLoads<'a> {
    /// The switch's piece's ports, and where it keeps each (`None`: at its id).
    pub ports: &'a [EgressPort],
    pub cut: Option<&'a Cut>,
    pub sense: &'a LoadSense,
    pub now: Time,
    /// Per port: when its load was last sampled and what it showed (empty when exact).
    pub samples: &'a mut [(Time, u64)],
}

impl PortLoads<'_> {
    /// The load of `port` as the switch sees it.
    #[inline]
    pub fn load(&mut self, port: usize) -> u64 {
        let port = self.cut.map_or(port, |c| c.port(port as u32));
        let p = &self.ports[port];
        let bytes = p.data_bytes + p.control_bytes;
        if self.samples.is_empty() {
            return bytes;
        }
        let (at, seen) = &mut self.samples[port];
        if self.sense.refresh == 0 || self.now - *at > self.sense.refresh {
            (*at, *seen) = (self.now, self.sense.sense(bytes));
        }
        *seen
    }
}

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "routing",
    name: "adaptive",
    summary: "least-loaded egress queue in the group, random tie-break",
    reference: "NVIDIA Spectrum AR; ARCANE sec. 4.1; PRIME sec. IV",
};

/// The least-loaded up-port; `None` without a random stream (path inspection).
#[inline]
pub fn choose(_r: &Route, group: &[u32], _pkt: &Packet, set: Option<&[u32]>, rng: Option<&mut Rng>, loads: &mut PortLoads<'_>, _m: &SwitchModel) -> Option<u32> {
    let rng = rng?;
    let n = set.map_or(group.len() as u32, |s| s.len() as u32);
    let at = |i: u32| set.map_or(i, |s| s[i as usize]);
    // among equals, each is kept with probability 1/k (reservoir sampling)
    let (mut best, mut best_load, mut ties) = (0, u64::MAX, 0u64);
    for i in 0..n {
        let load = loads.load(group[at(i) as usize] as usize);
        if load < best_load {
            (best, best_load, ties) = (at(i), load, 1);
        } else if load == best_load {
            ties += 1;
            if rng.below(ties) == 0 {
                best = at(i);
            }
        }
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(bytes: u64) -> EgressPort {
        let mut p = EgressPort::new(0, 1, 400_000_000_000, 0, 1);
        p.data_bytes = bytes;
        p
    }

    #[test]
    fn exact_loads_read_the_queue_now() {
        let ports = [port(5_000)];
        let sense = LoadSense::default();
        assert!(sense.is_exact());
        let mut loads = PortLoads { ports: &ports, cut: None, sense: &sense, now: 7, samples: &mut [] };
        assert_eq!(loads.load(0), 5_000);
    }

    #[test]
    fn quantized_loads_fall_in_bands_and_stay_for_the_refresh_interval() {
        // the reference's bands on a 100 kB buffer: below 5, 10, 20 kB, else the top
        let sense = LoadSense { thresholds: vec![5_000, 10_000, 20_000], refresh: 100_000 };
        let mut samples = vec![(0, 0); 1];
        let band = |bytes: u64, now: Time, samples: &mut [(Time, u64)]| {
            let ports = [port(bytes)];
            PortLoads { ports: &ports, cut: None, sense: &sense, now, samples }.load(0)
        };
        assert_eq!(band(30_000, 100_000, &mut samples), 0, "not more than refresh after the start: the initial sample");
        assert_eq!(band(30_000, 100_001, &mut samples), 3, "a new sample: top band");
        assert_eq!(band(0, 200_001, &mut samples), 3, "still within refresh of it");
        assert_eq!(band(4_999, 200_002, &mut samples), 0);
        assert_eq!(band(5_000, 300_003, &mut samples), 1);
        assert_eq!(band(19_999, 400_004, &mut samples), 2);
        // refresh 0: every read is fresh, still banded
        let sense = LoadSense { thresholds: vec![5_000], refresh: 0 };
        let ports = [port(6_000)];
        assert_eq!(PortLoads { ports: &ports, cut: None, sense: &sense, now: 0, samples: &mut [(0, 0)] }.load(0), 1);
    }
}
