//! The fat tree: a 2-tier leaf-spine or a 3-tier k-ary fat tree (leaf, aggregation, core) from
//! (hosts, switch radix, tiers, tier-0 oversubscription), optionally rail-optimized (NIC i of
//! each server of a rail group on the group's leaf i). PRIME Table I gives its fabrics (128 /
//! 2048 / 8192 hosts with 16 / 64 / 128 ports); the k-ary fat tree is Al-Fares et al., "A
//! Scalable, Commodity Data Center Network Architecture" (SIGCOMM 2008). Shapes and numbering:
//! [`crate::topology`]; the graph is built by `topology/build.rs`.

use super::Generator;
use crate::error::ScenarioError;
use crate::registry::AlgorithmInfo;
use crate::topology::{FatTreeSpec, GraphSize, Topology};
use crate::units::{Duration, Rate};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "topology",
    name: "fat_tree",
    summary: "2-tier leaf-spine or 3-tier k-ary fat tree, tier-0 oversubscription, optionally rail-optimized",
    reference: "PRIME Table I",
};

topology_kind!(Config {
    /// 2 = leaf-spine; 3 = leaf-aggregation-core (k-ary fat tree).
    #[serde(default = "d_tiers")]
    #[schemars(extend("x-type" = "2 or 3"))]
    tiers: u32,
    /// Number of hosts. Must fill whole leaves (2 tiers) or whole pods (3 tiers).
    #[serde(default = "d_hosts")]
    hosts: u32,
    /// Ports per switch.
    #[serde(default = "d_radix")]
    radix: u32,
    /// Leaf down:up port ratio; `radix` must be divisible by `1 + oversubscription`.
    #[serde(default = "d_oversub")]
    #[schemars(extend("x-type" = "integer ≥ 1"))]
    oversubscription: u32,
    /// Per link tier: 0 = host-leaf, 1 = leaf-up, 2 = aggregation-core.
    #[serde(default)]
    #[schemars(extend("x-default" = "one `link_rate` per tier"))]
    tier_link_rates: Vec<Rate>,
    /// Per link tier, as `tier_link_rates`: 0 = host-leaf, 1 = leaf-up, 2 = aggregation-core.
    #[serde(default)]
    #[schemars(extend("x-default" = "one `link_latency` per tier"))]
    tier_link_latencies: Vec<Duration>,
    /// Rail-optimized: the servers are cut into rail groups of `d` servers (hosts per leaf), and NIC i of every server of a
    /// group hangs on the group's i-th leaf. Needs `nics_per_server` ≥ 2 and `hosts` a multiple of `d * nics_per_server`.
    /// Off: a server's NICs are consecutive hosts under one leaf (or two, if `d` is not a multiple of `nics_per_server`).
    #[serde(default)]
    rails: bool,
    /// NICs per GPU, each with its own port on the fabric (NCCL spreads a GPU's channels over them): `hosts` stays the
    /// GPUs (what workloads number), the tree is built over `hosts x nics_per_gpu` NICs, a GPU's NICs consecutive (with
    /// `rails`, each NIC of a server on its own rail). A job's channel `c` goes whole on NIC `c mod nics_per_gpu` where the job
    /// has a channel a NIC (NCCL's placement); any other message that crosses the fabric is cut into one equal part per
    /// NIC, as on a multi-plane fabric. [topologies.md](topologies.md#several-nics-a-gpu).
    #[serde(default = "crate::topology::generators::d_nics")]
    #[schemars(extend("x-type" = "integer 1-16"))]
    nics_per_gpu: u32,
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
