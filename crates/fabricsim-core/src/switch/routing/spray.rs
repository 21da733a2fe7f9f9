//! `spray`: a uniformly random port of the group per packet (switch-based spraying).

use super::adaptive::PortLoads;
use super::Route;
use crate::engine::rng::Rng;
use crate::switch::SwitchModel;
use crate::packet::Packet;
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "routing",
    name: "spray",
    summary: "uniformly random port of the group per packet",
    reference: "switch-based spraying",
};

/// A random up-port; `None` without a random stream (path inspection).
#[inline]
pub fn choose(_r: &Route, group: &[u32], _pkt: &Packet, set: Option<&[u32]>, rng: Option<&mut Rng>, _loads: &mut PortLoads<'_>, _m: &SwitchModel) -> Option<u32> {
    let n = set.map_or(group.len() as u32, |s| s.len() as u32);
    let i = rng?.below(n as u64) as u32;
    Some(set.map_or(i, |s| s[i as usize]))
}
