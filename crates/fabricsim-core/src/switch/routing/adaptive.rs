//! `adaptive`: the up-port whose egress queue holds the fewest bytes, ties broken uniformly at
//! random (NVIDIA Spectrum adaptive routing, the "adaptive RoCE" baseline of ARCANE sec. 4.1;
//! PRIME sec. IV "AR"). A local decision: it cannot see congestion beyond the next hop.

use super::Route;
use crate::engine::rng::Rng;
use crate::packet::mp_ev::MpEvLayout;
use crate::packet::Packet;
use crate::registry::AlgorithmInfo;
use crate::switch::EgressPort;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "routing",
    name: "adaptive",
    summary: "least-loaded egress queue among the up-ports, random tie-break",
    reference: "NVIDIA Spectrum AR; ARCANE sec. 4.1; PRIME sec. IV",
};

/// The least-loaded up-port; `None` without a random stream (path inspection).
#[inline]
pub fn choose(r: &Route, _pkt: &Packet, set: Option<&[u32]>, rng: Option<&mut Rng>, ports: &[EgressPort], _layout: &MpEvLayout) -> Option<u32> {
    let rng = rng?;
    let n = set.map_or(r.reach.n_up, |s| s.len() as u32);
    let at = |i: u32| set.map_or(i, |s| s[i as usize]);
    let up = r.reach.first_up();
    // among equals, each is kept with probability 1/k (reservoir sampling)
    let (mut best, mut best_load, mut ties) = (0, u64::MAX, 0u64);
    for i in 0..n {
        let p = &ports[(up + at(i)) as usize];
        let load = p.data_bytes + p.control_bytes;
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
