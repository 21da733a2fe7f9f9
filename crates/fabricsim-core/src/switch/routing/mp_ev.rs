//! `mp_ev`: the switch tier's part of a multi-part EV is the up-port index (PRIME sec. III-C,
//! "Process at switches", and III-D, Fig. 4; the layout is in `packet::mp_ev`). A tier's part
//! is as wide as its largest group (III-D sizes each part's array by "the maximum number of
//! upstream switch ports in a network tier", Alg. 2). How a switch with fewer up-ports (a graph
//! whose leaves have unequal uplinks) reads a larger index the paper does not say: here it wraps
//! the part modulo its own group (a simplification), so every value still names one of its
//! ports. If routing has
//! excluded the named port (a failed link), the packet is hashed, as by `ecmp`, over the
//! ports left in the group, so the packets that named it spread instead of doubling one
//! neighbour's share.

use super::adaptive::PortLoads;
use super::Route;
use crate::engine::rng::Rng;
use crate::switch::SwitchModel;
use crate::packet::Packet;
use crate::registry::AlgorithmInfo;

use super::ecmp::hash;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "routing",
    name: "mp_ev",
    summary: "the tier's part of the multi-part EV is the position in the group (the up-port index)",
    reference: "PRIME sec. III-C, III-D",
};

/// The up-port offset the packet's MP-EV names for this tier.
#[inline]
pub fn choose(r: &Route, group: &[u32], pkt: &Packet, set: Option<&[u32]>, _rng: Option<&mut Rng>, _loads: &mut PortLoads<'_>, m: &SwitchModel) -> Option<u32> {
    let part = m.mp_ev.part(pkt.ev, r.tier as usize) % group.len() as u32;
    Some(match set {
        Some(s) if !s.contains(&part) => s[hash(r, pkt, m, s.len() as u32) as usize],
        _ => part,
    })
}
