//! The dragonfly of Kim, Dally, Scott and Abts, "Technology-Driven, Highly-Scalable Dragonfly
//! Topology" (ISCA 2008): `groups` groups of `routers_per_group` (a) routers; each
//! router has `hosts_per_router` (p) hosts, a local link to every other router of its group,
//! and `global_links_per_router` (h) global links to other groups. Group i's global channel
//! j (router j / h, its global port j % h) goes to group (i + j + 1) mod g, so that each pair
//! of groups shares exactly one global link (the paper's maximal size, g = a h + 1, is the
//! default; fewer groups leave the last channels unused). The paper's balanced choice is
//! a = 2p = 2h.
//!
//! Routing is **minimal** by default: a global link costs 3 and a local one 1 (`cost`), so the
//! forwarding tables' least-cost paths are exactly the minimal routes, local, global, local
//! (one global link, at most three router hops); by hop count alone two global links through a
//! third group would tie with them (the paper's abstract: "each minimally routed packet
//! traverses at most one global channel"). ECMP, spraying or adaptive routing choose among them, as
//! on any graph. Under adversarial traffic (every host of group i sends to group i + 1)
//! minimal routing is limited to the one global link between the two groups. `group_routing`
//! = `"valiant"` or `"ugal"` routes through an intermediate group (sec. 4 of the paper:
//! `topology::detour`), each group entered by the router that the source group's global link
//! to it reaches.
//!
//! Every router holds hosts, so all are tier 0: host links are link tier 0, and router-to-router links, local and global, link tier
//! 1 (`[[faults]] links = "leaf_up"` draws from both). The graph is built as a given graph is
//! (`topology/file.rs`): hosts `host{n}` (n = (group a + router) p + k) with ports
//! `host{n}:up0`, routers `g{i}r{r}` with `g{i}r{r}:down{k}` to their hosts, then
//! `g{i}r{r}:peer0` to `peer{a-2}` to the other routers of the group and `peer{a-1}` on to its
//! global links (a fault names one by these ports).

use super::Generator;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::topology::file::{GraphConfig, GraphLink, GraphSwitch};
use crate::topology::{Detours, GraphSize, GroupRouting, Topology};
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "topology",
    name: "dragonfly",
    summary: "groups of fully connected routers, one global link between every two groups; minimal, Valiant or UGAL routing",
    reference: "Kim et al., ISCA 2008",
};

topology_kind!(Config {
    /// Hosts (terminals) on each router, p.
    #[serde(default = "d_p")]
    hosts_per_router: u32,
    /// Routers in each group, a; they are fully connected by local links.
    #[serde(default = "d_a")]
    routers_per_group: u32,
    /// Global links on each router, h.
    #[serde(default = "d_h")]
    global_links_per_router: u32,
    /// Groups, g: 2 to a h + 1 (the default, every pair of groups joined by one global link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    groups: Option<u32>,
    /// Propagation latency of the global links (long cables); default `link_latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    global_link_latency: Option<Duration>,
    /// How packets cross between groups: "minimal" (the one global link between the two groups), "valiant"
    /// (through a third group, two global links) or "ugal" (per packet, minimal or Valiant by the first router's
    /// queues, UGAL-L).
    #[serde(default)]
    group_routing: GroupRouting,
});

/// The most groups with Valiant or UGAL routing (a table of the entry router of every pair of
/// groups: 4 MB at the most), and the most paths through an intermediate group the base RTT's
/// search walks (routers times intermediate groups: about a second at the most).
const MAX_DETOUR_GROUPS: u32 = 1024;
const MAX_DETOUR_WALKS: u64 = 1 << 26;

/// What routing counts for a global link: more than two local links, so that two global
/// links (6) never tie with local, global, local (5).
const GLOBAL_COST: u32 = 3;

// the paper's balanced a = 2p = 2h at p = 2: 9 groups of 4 routers, 72 hosts
fn d_p() -> u32 {
    2
}
fn d_a() -> u32 {
    4
}
fn d_h() -> u32 {
    2
}

impl Config {
    /// (p, a, h, g), checked.
    fn shape(&self) -> Result<(u32, u32, u32, u32), ScenarioError> {
        let (p, a, h) = (self.hosts_per_router, self.routers_per_group, self.global_links_per_router);
        ensure((1..=1024).contains(&p), "topology.hosts_per_router", p, "allowed: 1 to 1024")?;
        ensure((1..=1024).contains(&a), "topology.routers_per_group", a, "allowed: 1 to 1024")?;
        ensure((1..=1024).contains(&h), "topology.global_links_per_router", h, "allowed: 1 to 1024")?;
        let most = a * h + 1;
        let g = self.groups.unwrap_or(most);
        ensure(
            (2..=most).contains(&g),
            "topology.groups",
            g,
            format!("allowed: 2 to routers_per_group x global_links_per_router + 1 ({most}): one global link between every two groups"),
        )?;
        ensure(
            g >= 3 || self.group_routing == GroupRouting::Minimal,
            "topology.groups",
            g,
            format!("allowed: 3 or more with group_routing = {:?} (a packet goes through a third group)", self.group_routing.name()),
        )?;
        let hosts = u64::from(g) * u64::from(a) * u64::from(p);
        ensure((2..1 << 24).contains(&hosts), "topology.groups", g, format!("allowed: a dragonfly of 2 to 2^24 hosts (this one has {hosts})"))?;
        // non-minimal routing holds the entry router of every pair of groups, and the base RTT
        // walks every router's paths through every intermediate group
        let walks = u64::from(g) * u64::from(a) * u64::from(g - 2);
        ensure(
            self.group_routing == GroupRouting::Minimal || (g <= MAX_DETOUR_GROUPS && walks <= MAX_DETOUR_WALKS),
            "topology.groups",
            g,
            format!(
                "allowed: at most {MAX_DETOUR_GROUPS} groups, and groups x routers_per_group x (groups - 2) at most 2^26, with group_routing = {:?}",
                self.group_routing.name()
            ),
        )?;
        ensure(self.link_rate.0 > 0, "topology.link_rate", self.link_rate, "allowed: a positive rate")?;
        Ok((p, a, h, g))
    }

    /// The dragonfly as a graph.
    fn graph(&self) -> Result<GraphConfig, ScenarioError> {
        let (p, a, h, g) = self.shape()?;
        let router = |i: u32, r: u32| format!("g{i}r{r}");
        let mut graph = GraphConfig::default();
        for i in 0..g {
            for r in 0..a {
                graph.switches.push(GraphSwitch { name: router(i, r), tier: Some(0) });
                for k in 0..p {
                    graph.add_host(format!("host{}", (i * a + r) * p + k), None, router(i, r));
                }
            }
        }
        for i in 0..g {
            for r in 0..a {
                for s in r + 1..a {
                    graph.links.push(GraphLink::new(router(i, r), router(i, s)));
                }
            }
        }
        // channel j of group i to group (i + j + 1) mod g, each pair once (from the lower channel)
        for i in 0..g {
            for j in 0..g - 1 {
                let t = (i + j + 1) % g;
                let back = g - 2 - j; // t's channel to i
                if (i, j) < (t, back) {
                    graph.links.push(GraphLink {
                        latency: self.global_link_latency,
                        cost: Some(GLOBAL_COST),
                        ..GraphLink::new(router(i, j / h), router(t, back / h))
                    });
                }
            }
        }
        Ok(graph)
    }
}

impl Generator for Config {
    fn size(&self) -> Result<GraphSize, ScenarioError> {
        let (p, a, _, g) = self.shape()?;
        let (routers, hosts) = (u64::from(g) * u64::from(a), u64::from(g) * u64::from(a) * u64::from(p));
        let links = hosts + u64::from(g) * u64::from(a) * u64::from(a - 1) / 2 + u64::from(g) * u64::from(g - 1) / 2;
        Ok(GraphSize { hosts, switches: routers, ports: 2 * links, classes: routers })
    }

    fn build(&self) -> Result<Topology, ScenarioError> {
        let defaults = self.shared().defaults()?;
        let mut topo = self.graph()?.build(&defaults)?;
        if self.group_routing != GroupRouting::Minimal {
            let (_, a, h, g) = self.shape()?;
            let hosts = topo.hosts();
            let class = |n: u32| topo.tables.class_of_edge(n).expect("every router has hosts");
            // group `to` is entered from group `from` by the router at the far end of `from`'s
            // channel to it: `to`'s channel back, `g - 2 - j`, on its router `(g - 2 - j) / h`
            let entry = |from: u32, to: u32| {
                let j = (to + g - from - 1) % g;
                class(hosts + to * a + (g - 2 - j) / h)
            };
            let group_of = (0..g * a).map(|r| r / a).collect();
            topo.detours = Some(std::sync::Arc::new(Detours::new(self.group_routing, g, hosts, group_of, entry)));
        }
        Ok(topo)
    }
}
