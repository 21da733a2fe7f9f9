//! Switch next-hop rules for packets going up (going down there is one port).
//!
//! - `ecmp` (default for hashed load balancers): a salted hash of the flow's 5-tuple (source
//!   and destination host, flow id as the source port) and the packet's EV over the up-ports
//!   (RFC 2992; ARCANE sec. 2).
//! - `mp_ev`: the tier's part of a multi-part EV is the up-port index (PRIME sec. III-C,
//!   "Process at switches", and III-D, Fig. 4). Part t occupies `ceil(log2(up-ports at tier
//!   t))` bits, tier 0 in the low bits; a part value beyond the port count wraps modulo it.
//!   If routing has excluded the named port (a failed link), the packet is hashed, as by
//!   `ecmp`, over the ports left in the group.
//! - `adaptive`: the up-port whose egress queue holds the fewest bytes, ties broken at random
//!   (NVIDIA Spectrum adaptive routing, the "adaptive RoCE" baseline of ARCANE sec. 4.1; PRIME
//!   sec. IV "AR"). A local decision: it cannot see congestion beyond the next hop.
//! - `spray`: a uniformly random up-port per packet (switch-based spraying).
//!
//! `routing` is one rule for every tier, or a list with one rule per switch tier that has
//! up-ports (leaves, then aggregation switches in 3 tiers). `"auto"` picks `mp_ev` for the
//! load balancers that write an MP-EV (`prime`, `co_prime`, `round_robin`) and `ecmp`
//! otherwise.

use serde::{Deserialize, Serialize};

use crate::engine::rng::{mix64, Rng};
use crate::packet::mp_ev::MpEvLayout;
use crate::packet::{Ev, Packet};
use crate::registry::AlgorithmInfo;
use crate::switch::EgressPort;
use crate::topology::FatTreeSpec;

/// A rule as a scenario names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleName {
    Auto,
    Ecmp,
    MpEv,
    Adaptive,
    Spray,
}

/// A resolved rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Ecmp,
    MpEv,
    Adaptive,
    Spray,
}

impl Rule {
    /// The name a scenario uses.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Ecmp => "ecmp",
            Rule::MpEv => "mp_ev",
            Rule::Adaptive => "adaptive",
            Rule::Spray => "spray",
        }
    }
}

/// `routing = "ecmp"` or `routing = ["adaptive", "ecmp"]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RoutingConfig {
    All(RuleName),
    PerTier(Vec<RuleName>),
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig::All(RuleName::Auto)
    }
}

pub const RULES: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        category: "routing",
        name: "ecmp",
        summary: "hash of (5-tuple, EV) with a per-switch salt over the up-ports",
        reference: "RFC 2992; ARCANE sec. 2",
    },
    AlgorithmInfo {
        category: "routing",
        name: "mp_ev",
        summary: "the tier's part of the multi-part EV is the up-port index",
        reference: "PRIME sec. III-C, III-D",
    },
    AlgorithmInfo {
        category: "routing",
        name: "adaptive",
        summary: "least-loaded egress queue among the up-ports, random tie-break",
        reference: "NVIDIA Spectrum AR; ARCANE sec. 4.1; PRIME sec. IV",
    },
    AlgorithmInfo {
        category: "routing",
        name: "spray",
        summary: "uniformly random up-port per packet",
        reference: "switch-based spraying",
    },
    AlgorithmInfo {
        category: "routing",
        name: "auto",
        summary: "mp_ev for prime, co_prime and round_robin; ecmp otherwise",
        reference: "",
    },
];

impl RoutingConfig {
    /// One rule per switch tier with up-ports; `auto` resolved with the load balancer's wish.
    pub fn resolve(&self, tiers_with_up: usize, auto: Rule) -> Result<Vec<Rule>, String> {
        let names: Vec<RuleName> = match self {
            RoutingConfig::All(r) => vec![*r; tiers_with_up],
            RoutingConfig::PerTier(v) if v.len() == tiers_with_up => v.clone(),
            RoutingConfig::PerTier(v) => {
                return Err(format!("got {} rules; allowed: one rule, or one per switch tier with up-ports ({tiers_with_up})", v.len()))
            }
        };
        Ok(names
            .into_iter()
            .map(|n| match n {
                RuleName::Auto => auto,
                RuleName::Ecmp => Rule::Ecmp,
                RuleName::MpEv => Rule::MpEv,
                RuleName::Adaptive => Rule::Adaptive,
                RuleName::Spray => Rule::Spray,
            })
            .collect())
    }
}

/// A compact copy of a node's routing fields (hot path).
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// The switch tier (index into the per-tier rules); unused for hosts and top switches.
    pub tier: u8,
    pub rule: Rule,
    /// Hosts reachable downwards: `lo..hi`, `span` hosts behind each down port.
    pub lo: u32,
    pub hi: u32,
    pub span: u32,
    pub first_port: u32,
    pub n_down: u32,
    pub n_up: u32,
    /// Per-switch ECMP hash salt.
    pub salt: u64,
}

/// The up-ports switch `sw` (index among switches) may use towards `dst` after routing
/// excluded links; `None` while nothing restricts it.
#[inline]
pub fn usable<'a>(restricted: &'a [Option<Box<[u32]>>], tree: &FatTreeSpec, sw: usize, dst: u32) -> Option<&'a [u32]> {
    if restricted.is_empty() {
        return None;
    }
    let leaf = (dst / tree.down0) as usize;
    restricted[sw * tree.leaves as usize + leaf].as_deref()
}

/// The up-port offset a switch picks by its rule, among `set` (offsets) if routing restricts
/// it. `None` for the rules that need randomness when no `rng` is given (path inspection).
#[inline]
pub fn choose_up(
    r: &Route,
    pkt: &Packet,
    set: Option<&[u32]>,
    rng: Option<&mut Rng>,
    ports: &[EgressPort],
    layout: &MpEvLayout,
) -> Option<u32> {
    let n = set.map_or(r.n_up, |s| s.len() as u32);
    let at = |i: u32| set.map_or(i, |s| s[i as usize]);
    Some(match r.rule {
        Rule::Ecmp => at(ecmp_index(r.salt, pkt.src, pkt.dst, pkt.conn, pkt.ev, n)),
        Rule::MpEv => {
            let part = layout.part(pkt.ev, r.tier as usize);
            match set {
                // the named port is out of the group: hash over what is left, so the packets
                // that named it spread instead of doubling one neighbour's share
                Some(s) if !s.contains(&part) => s[ecmp_index(r.salt, pkt.src, pkt.dst, pkt.conn, pkt.ev, n) as usize],
                _ => part,
            }
        }
        Rule::Spray => at(rng?.below(n as u64) as u32),
        Rule::Adaptive => {
            // least-loaded queue; among equals, each is kept with probability 1/k
            // (reservoir sampling), so ties break uniformly at random
            let rng = rng?;
            let up = r.first_port + r.n_down;
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
            best
        }
    })
}

/// ECMP: a salted hash of the 5-tuple (hosts, connection id as the source port) and the EV,
/// mapped onto `n` up-ports with a multiply-shift (no modulo bias worth the name at n << 2^64).
#[inline]
pub fn ecmp_index(salt: u64, src: u32, dst: u32, conn: u32, ev: Ev, n: u32) -> u32 {
    let h = mix64(salt ^ mix64(((src as u64) << 32) | dst as u64) ^ ((conn as u64) << 32 | ev as u64));
    ((h as u128 * n as u128) >> 64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_tier_lists_must_match_the_tiers() {
        let one = RoutingConfig::All(RuleName::Auto).resolve(2, Rule::MpEv).unwrap();
        assert_eq!(one, vec![Rule::MpEv, Rule::MpEv]);
        let per = RoutingConfig::PerTier(vec![RuleName::Adaptive, RuleName::Ecmp]).resolve(2, Rule::Ecmp).unwrap();
        assert_eq!(per, vec![Rule::Adaptive, Rule::Ecmp]);
        assert!(RoutingConfig::PerTier(vec![RuleName::Ecmp]).resolve(2, Rule::Ecmp).is_err());
    }
}
