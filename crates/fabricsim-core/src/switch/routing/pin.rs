//! `pin`: path pinning, the port of the group at the destination's downlink index at its edge
//! switch (its "slice"), modulo the ports the switch may use: every packet to a destination
//! takes one path, chosen by where the destination hangs, not by a hash. Gangidi et al., "RDMA
//! over Ethernet for Distributed Training at Meta Scale" (SIGCOMM 2024), its routing section,
//! and Meta's "A RoCE network for distributed AI training at scale" (2024-08-05), "ECMP and
//! path pinning": "This scheme routed packets to specific paths based on the destination
//! 'slice' (the index of the RTSW downlink). This worked well if each rack was fully assigned
//! to the same job and there was no failure in the network." On a leaf with as many uplinks
//! as hosts a permutation between full racks puts one flow on each uplink; where only some of
//! a rack's slices receive ("the rack can be partially allocated to a job"), their traffic
//! shares the uplinks of those slices while the others idle. Where routing excludes ports
//! after a failure the index runs over the ports left, which moves other destinations' paths
//! as well.

use super::adaptive::PortLoads;
use super::Route;
use crate::engine::rng::Rng;
use crate::packet::Packet;
use crate::registry::AlgorithmInfo;
use crate::switch::SwitchModel;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "routing",
    name: "pin",
    summary: "the destination's downlink index at its edge switch, modulo the group's ports (path pinning)",
    reference: "Gangidi et al., RDMA over Ethernet for Distributed Training at Meta Scale, SIGCOMM 2024 (routing)",
};

/// The destination's slice, modulo the ports the switch may use.
#[inline]
pub fn choose(_r: &Route, group: &[u32], pkt: &Packet, set: Option<&[u32]>, _rng: Option<&mut Rng>, _loads: &mut PortLoads<'_>, m: &SwitchModel) -> Option<u32> {
    let n = set.map_or(group.len() as u32, |s| s.len() as u32);
    let i = u32::from(m.slices[pkt.dst as usize]) % n;
    Some(set.map_or(i, |s| s[i as usize]))
}
