//! Non-minimal routing between groups of switches: a dragonfly's Valiant and UGAL routing
//! (Kim, Dally, Scott and Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology",
//! ISCA 2008, sec. 4, "Routing").
//!
//! Minimal routing sends every packet from group `a` to group `b` over the one global link
//! between them, so traffic from all of `a`'s hosts to `b` shares one link. **Valiant** (VAL)
//! routes each packet first to an intermediate group `x` (neither `a` nor `b`), entering it by
//! the router that `a`'s global link to `x` reaches, and from there minimally to its
//! destination: two global links a packet, so that any traffic pattern spreads over all global
//! links, at the price of a longer path. **UGAL** (universal globally adaptive load-balanced,
//! its local variant UGAL-L: the decision reads only the deciding router's queues) takes the
//! minimal path unless `q_min * H_min > q_val * H_val`, where `q` is the load of the path's
//! first egress queue at the deciding router (what `[switch.adaptive]` says a switch reads) and
//! `H` the path's switch-to-switch hops, comparing minimal with one Valiant path.
//!
//! The decision is made once, by a packet's first switch (the router of the host that sent
//! it: `Packet::via` is `UNDECIDED` until then). Which intermediate group it takes is that
//! switch's routing rule over the candidate groups, as for any group of next hops: `ecmp`
//! hashes the packet's EV (a flow with one EV keeps one intermediate group; a load balancer
//! that varies the EV per packet, or `routing = "spray"`, varies it per packet, as the paper's
//! random choice does), `adaptive` takes the one whose first hop is least loaded, `mp_ev`
//! reads the tier's part of the EV. The packet then carries the class (router) it goes to
//! first and every switch routes it there by the forwarding tables, then on to its
//! destination. Simplifications: the deciding switch does not avoid an intermediate group
//! that a fault cut off (its packets are lost where the path is cut, as on any table entry
//! routing has not yet excluded); UGAL-L's refinements of the paper (`UGAL-L_VC_H`,
//! credit round-trip sensing) are not modeled, nor virtual channels (the fabric is lossy
//! or trims, so it needs none against deadlock).

use serde::{Deserialize, Serialize};

use super::{Route, Topology};

/// How packets cross between groups (`[topology] group_routing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroupRouting {
    /// Minimal paths only (one global link a path).
    #[default]
    Minimal,
    /// Every packet between two groups through a third.
    Valiant,
    /// Per packet, minimal or Valiant by the first switch's queues (UGAL-L).
    Ugal,
}

impl GroupRouting {
    /// The name `group_routing` gives it.
    pub fn name(self) -> &'static str {
        match self {
            GroupRouting::Minimal => "minimal",
            GroupRouting::Valiant => "valiant",
            GroupRouting::Ugal => "ugal",
        }
    }
}

/// What the switches of a fabric with groups need for non-minimal routing.
#[derive(Debug, Clone)]
pub struct Detours {
    pub mode: GroupRouting,
    groups: u32,
    hosts: u32,
    /// Per switch (node id - hosts): its group.
    group_of: Vec<u32>,
    /// Per (from group, to group): the destination class (router) by which packets from
    /// group `from` enter group `to`.
    entry: Vec<u32>,
}

impl Detours {
    /// `mode` over `groups` groups: `group_of[switch]` for each switch (node id - `hosts`),
    /// and `entry(from, to)` the class a packet from group `from` enters group `to` by.
    pub fn new(mode: GroupRouting, groups: u32, hosts: u32, group_of: Vec<u32>, entry: impl Fn(u32, u32) -> u32) -> Detours {
        let mut e = vec![u32::MAX; (groups * groups) as usize];
        for from in 0..groups {
            for to in (0..groups).filter(|&t| t != from) {
                e[(from * groups + to) as usize] = entry(from, to);
            }
        }
        Detours { mode, groups, hosts, group_of, entry: e }
    }

    /// The group of switch node `node`.
    #[inline]
    pub fn group(&self, node: u32) -> u32 {
        self.group_of[(node - self.hosts) as usize]
    }

    /// How many intermediate groups a packet between two groups may take.
    pub fn candidates(&self) -> u32 {
        self.groups.saturating_sub(2)
    }

    /// The class a packet from group `a` to group `b` goes to first through its `k`-th
    /// intermediate group (the groups other than `a` and `b`, in order).
    #[inline]
    pub fn via(&self, a: u32, b: u32, k: u32) -> u32 {
        let (lo, hi) = (a.min(b), a.max(b));
        let mut x = k;
        if x >= lo {
            x += 1;
        }
        if x >= hi {
            x += 1;
        }
        self.entry[(a * self.groups + x) as usize]
    }
}

impl Topology {
    /// The switch-to-switch links from switch node `node` to the edge switch of `class`, along
    /// the forwarding tables (a group's first port where they offer several).
    pub fn hops_to_class(&self, mut node: u32, class: u32) -> u64 {
        let t = &self.tables;
        let mut hops = 0;
        while let Some(port) = t.first_hop(t.key_of_class(node, class)) {
            node = self.ports[port as usize].to;
            hops += 1;
        }
        hops
    }
}

impl Topology {
    /// The longest path a packet from host node 0 may take through an intermediate group (the
    /// most switch-to-switch hops; on a dragonfly every router is alike): what the base RTT
    /// is computed over where the fabric routes so. `None` without two other groups.
    pub fn longest_detour(&self, d: &Detours) -> Option<Route> {
        let t = &self.tables;
        let s = t.edge(t.class(0));
        let a = d.group(s);
        let mut best: Option<(u64, u32, u32)> = None;
        for c in 0..t.classes() as u32 {
            let b = d.group(t.edge(c));
            if b == a {
                continue;
            }
            for k in 0..d.candidates() {
                let via = d.via(a, b, k);
                let hops = self.hops_to_class(s, via) + self.hops_to_class(t.edge(via), c);
                if best.is_none_or(|(most, _, _)| hops > most) {
                    best = Some((hops, via, c));
                }
            }
        }
        let (_, via, c) = best?;
        let host_of = |class: u32| (0..self.hosts()).find(|&h| t.class(h) == class);
        let (middle, dst) = (host_of(via)?, host_of(c)?);
        // to the intermediate class's edge switch, then on from it: without the host links
        // into and out of the host standing for it
        let (first, second) = (self.route(0, middle), self.route(middle, dst));
        let hops = first.hops[..first.hops.len() - 1].iter().chain(&second.hops[1..]).copied().collect();
        Some(Route { hops, paths: 1 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidates_skip_the_two_groups_of_the_packet() {
        // 5 groups, entry (from, to) = 10 from + to
        let d = Detours::new(GroupRouting::Valiant, 5, 0, vec![0; 5], |f, t| 10 * f + t);
        assert_eq!(d.candidates(), 3);
        let vias = |a, b| (0..3).map(|k| d.via(a, b, k)).collect::<Vec<u32>>();
        assert_eq!(vias(1, 3), vec![10, 12, 14]);
        assert_eq!(vias(3, 1), vec![30, 32, 34]);
        assert_eq!(vias(0, 4), vec![1, 2, 3]);
    }
}
