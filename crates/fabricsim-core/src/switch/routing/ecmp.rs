//! `ecmp` (the default for hashed load balancers): a salted hash of the packet's 5-tuple
//! (source and destination host, its EV as the UDP source port) and, by default, its
//! destination queue pair over the up-ports (RFC 2992; ARCANE sec. 2). `switch.hash_fields =
//! "five_tuple"` leaves the queue pair out: queue pairs between two hosts whose packets carry
//! one EV then share a path, as on a switch without Meta's enhanced ECMP (Gangidi et al., "RDMA
//! over Ethernet for Distributed Training at Meta Scale", SIGCOMM 2024, routing: "E-ECMP ...
//! additionally hash on the destination QP field of a RoCE packet"). The salt is the switch's own by default;
//! `switch.hash_seed = "tier"` gives the switches of a tier one, `"fabric"` every switch the
//! same: then a flow hashes alike at every tier, and where successive tiers have as many
//! up-ports its choices repeat (the leaf's i-th uplink, then the aggregation switch's i-th),
//! so each aggregation switch of a 3-tier fat tree sends on one uplink: hash polarization
//! ("Alibaba HPN: A Data Center Network for Large Language Model Training", SIGCOMM 2024,
//! abstract: LLM training's few bursty flows "predispose[] Equal-Cost Multi-Path (ECMP) to hash
//! polarization, causing issues such as uneven traffic distribution"; its fix is a topology
//! with fewer hashing tiers, not a seed).

use super::adaptive::PortLoads;
use super::support::header_hash::{self, HashFunction};
use super::Route;
use crate::engine::rng::Rng;
use crate::switch::{HashFields, SwitchModel};
use crate::packet::Packet;
use crate::registry::AlgorithmInfo;

use crate::engine::rng::mix64;
use crate::packet::Ev;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "routing",
    name: "ecmp",
    summary: "hash (`switch.hash_function`) of the 5-tuple (the EV as the UDP source port) and the destination queue pair (`switch.hash_fields`) with the switch's salt (`switch.hash_seed`) over the group's ports (a fat tree's up-ports)",
    reference: "RFC 2992; ARCANE sec. 2",
};

/// The up-port offset: a hash over the group (or the ports routing still allows).
#[inline]
pub fn choose(r: &Route, group: &[u32], pkt: &Packet, set: Option<&[u32]>, _rng: Option<&mut Rng>, _loads: &mut PortLoads<'_>, m: &SwitchModel) -> Option<u32> {
    let n = set.map_or(group.len() as u32, |s| s.len() as u32);
    let i = hash(r, pkt, m, n);
    Some(set.map_or(i, |s| s[i as usize]))
}

/// The switch's hash of `pkt` onto `n` ports: its 5-tuple and EV, and its queue pair unless
/// `switch.hash_fields = "five_tuple"`, by `switch.hash_function` (`support/header_hash.rs`).
#[inline]
pub fn hash(r: &Route, pkt: &Packet, m: &SwitchModel, n: u32) -> u32 {
    let qp = match m.hash_fields {
        HashFields::FiveTupleQp => Some(pkt.flow),
        HashFields::FiveTuple => None,
    };
    match m.hash_function {
        HashFunction::Mix => ecmp_index(r.salt, pkt.src, pkt.dst, qp.unwrap_or(0), pkt.ev, n),
        f => header_hash::index(f, r.salt, pkt.src, pkt.dst, pkt.ev, qp, n),
    }
}

/// A salted hash of the hosts, the queue pair id (`conn`, 0 for none) and the EV, mapped
/// onto `n` up-ports with a multiply-shift (no modulo bias worth the name at n << 2^64).
#[inline]
pub fn ecmp_index(salt: u64, src: u32, dst: u32, conn: u32, ev: Ev, n: u32) -> u32 {
    let h = mix64(salt ^ mix64(((src as u64) << 32) | dst as u64) ^ ((conn as u64) << 32 | ev as u64));
    ((h as u128 * n as u128) >> 64) as u32
}
