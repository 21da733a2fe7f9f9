//! The fat tree: a 2-tier leaf-spine or a 3-tier k-ary fat tree (leaf, aggregation, core) from
//! (hosts, switch radix, tiers, tier-0 oversubscription), optionally rail-optimized (NIC i of
//! each server of a rail group on the group's leaf i). PRIME Table I gives its fabrics (128 /
//! 2048 / 8192 hosts with 16 / 64 / 128 ports); the k-ary fat tree is Al-Fares et al., "A
//! Scalable, Commodity Data Center Network Architecture" (SIGCOMM 2008). Shapes and numbering:
//! [`crate::topology`]; the graph is built by `topology/build.rs`.

use super::Generator;
use crate::error::ScenarioError;
use crate::registry::{AlgorithmInfo, Param};
use crate::topology::{FatTreeSpec, GraphSize, Topology};
use crate::units::{Duration, Rate};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "topology",
    name: "fat_tree",
    summary: "2-tier leaf-spine or 3-tier k-ary fat tree, tier-0 oversubscription, optionally rail-optimized",
    reference: "PRIME Table I",
};

pub const PARAMS: &[Param] = kind_params![
    Param::new("tiers", "2 (leaf-spine) or 3 (leaf-aggregation-core, a k-ary fat tree)."),
    Param::new("hosts", "Number of hosts; they fill whole leaves (2 tiers) or whole pods (3 tiers)."),
    Param::new("radix", "Ports per switch."),
    Param::new("oversubscription", "Leaf down:up port ratio (1 = non-blocking); the radix is divisible by 1 + it."),
    Param::new("tier_link_rates", "Per link tier (0 = host-leaf, 1 = leaf-up, 2 = aggregation-core): its rate; default `link_rate`."),
    Param::new("tier_link_latencies", "Per link tier: its propagation latency; default `link_latency`."),
    Param::new("rails", "Rail-optimized: NIC i of every server of a rail group hangs on the group's i-th leaf."),
];

topology_kind!(Config {
    #[serde(default = "d_tiers")]
    tiers: u32,
    #[serde(default = "d_hosts")]
    hosts: u32,
    #[serde(default = "d_radix")]
    radix: u32,
    #[serde(default = "d_oversub")]
    oversubscription: u32,
    /// Per link tier (0 = host-leaf, 1 = leaf-up, 2 = agg-core); defaults to `link_rate`.
    #[serde(default)]
    tier_link_rates: Vec<Rate>,
    /// Per link tier; defaults to `link_latency`.
    #[serde(default)]
    tier_link_latencies: Vec<Duration>,
    /// Rail-optimized: NIC i of each server of a group attaches to the group's leaf i.
    #[serde(default)]
    rails: bool,
});

fn d_tiers() -> u32 {
    2
}
fn d_hosts() -> u32 {
    128
}
fn d_radix() -> u32 {
    16
}
fn d_oversub() -> u32 {
    1
}

impl Generator for Config {
    fn size(&self) -> Result<GraphSize, ScenarioError> {
        Ok(FatTreeSpec::new(self)?.size())
    }

    fn build(&self) -> Result<Topology, ScenarioError> {
        Topology::build(&FatTreeSpec::new(self)?)
    }

    fn fill(&mut self) {
        let tiers = self.tiers as usize;
        if self.tier_link_rates.is_empty() {
            self.tier_link_rates = vec![self.link_rate; tiers];
        }
        if self.tier_link_latencies.is_empty() {
            self.tier_link_latencies = vec![self.link_latency; tiers];
        }
    }
}
