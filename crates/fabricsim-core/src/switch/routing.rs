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

use crate::lb::AlgorithmInfo;

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

/// Where each tier's part sits in a multi-part EV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpEvLayout {
    /// Per switch tier with up-ports: (up-port count, bit shift, bit width).
    pub parts: Vec<(u32, u32, u32)>,
}

impl MpEvLayout {
    pub fn new(up_ports: &[u32]) -> MpEvLayout {
        let mut shift = 0;
        let parts = up_ports
            .iter()
            .map(|&n| {
                let bits = 32 - (n.max(2) - 1).leading_zeros();
                let part = (n, shift, bits);
                shift += bits;
                part
            })
            .collect();
        MpEvLayout { parts }
    }

    /// The up-port index a switch of `tier` reads from `ev`.
    #[inline]
    pub fn part(&self, ev: u32, tier: usize) -> u32 {
        let (n, shift, bits) = self.parts[tier];
        ((ev >> shift) & ((1 << bits) - 1)) % n
    }

    /// Packs one up-port index per tier into an MP-EV.
    pub fn pack(&self, indices: &[u32]) -> u32 {
        self.parts.iter().zip(indices).map(|(&(_, shift, _), &i)| i << shift).sum()
    }

    /// Total bits of an MP-EV.
    pub fn bits(&self) -> u32 {
        self.parts.iter().map(|p| p.2).sum()
    }

    /// Number of distinct paths (MP-EVs).
    pub fn paths(&self) -> u32 {
        self.parts.iter().map(|p| p.0).product()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mp_ev_packs_and_unpacks_each_tier() {
        let l = MpEvLayout::new(&[8, 6]);
        assert_eq!(l.parts, vec![(8, 0, 3), (6, 3, 3)]);
        for a in 0..8 {
            for b in 0..6 {
                let ev = l.pack(&[a, b]);
                assert_eq!((l.part(ev, 0), l.part(ev, 1)), (a, b));
            }
        }
        assert_eq!(l.paths(), 48);
        assert_eq!(l.bits(), 6);
    }

    #[test]
    fn per_tier_lists_must_match_the_tiers() {
        let one = RoutingConfig::All(RuleName::Auto).resolve(2, Rule::MpEv).unwrap();
        assert_eq!(one, vec![Rule::MpEv, Rule::MpEv]);
        let per = RoutingConfig::PerTier(vec![RuleName::Adaptive, RuleName::Ecmp]).resolve(2, Rule::Ecmp).unwrap();
        assert_eq!(per, vec![Rule::Adaptive, Rule::Ecmp]);
        assert!(RoutingConfig::PerTier(vec![RuleName::Ecmp]).resolve(2, Rule::Ecmp).is_err());
    }
}
