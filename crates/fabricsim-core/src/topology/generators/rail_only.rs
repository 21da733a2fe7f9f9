//! The rail-only network of Wang, Ghobadi, Shakeri, Bhardwaj, Mudigere and Chen, "How to Build
//! Low-cost Networks for Large Language Models (without Sacrificing Performance)" (2023; the
//! "Rail-only" network): the rail-optimized fat tree without its spine. The GPUs of one local
//! rank (NIC i of every server: rail i) share a network of their own, and no link joins two
//! rails: traffic between GPUs of different rails and servers crosses the source server's
//! scale-up network (NVLink) to the GPU on the destination's rail, then that rail (the relay,
//! `workload::support::relay`: NCCL's PXN does the same). Traffic that training's usual
//! placement sends between servers (data and pipeline parallelism between GPUs of one local
//! rank) stays on one rail.
//!
//! Each rail is one switch (`rail{r}`) where the servers fit its ports, else a leaf-spine of its
//! own: leaves `rail{r}leaf{i}` with `radix / 2` GPUs each and `radix / 2` spines
//! `rail{r}spine{j}`, every leaf linked to every spine. Hosts are numbered as everywhere (host
//! `h` is NIC `h % n` of server `h / n`, n = `nics_per_server`), so host `h` is on rail
//! `h % n`. It needs a scale-up network (`scale_up_rate`) and two or more NICs per server.

use super::Generator;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::topology::file::GraphConfig;
use crate::topology::{GraphSize, Topology};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "topology",
    name: "rail_only",
    summary: "one network per rail (the GPUs of one local rank), no spine; other rails through the server's scale-up network",
    reference: "Wang et al., Rail-only, 2023",
};

topology_kind!(Config {
    /// Number of hosts (GPUs, one NIC each): whole servers of `nics_per_server`, one rail per NIC.
    #[serde(default = "d_hosts")]
    hosts: u32,
    /// Ports per switch: a rail of at most `radix` servers is one switch, a larger one a leaf-spine of radix / 2
    /// down and up.
    #[serde(default = "d_radix")]
    radix: u32,
});

fn d_hosts() -> u32 {
    128
}
fn d_radix() -> u32 {
    64
}

/// A rail's shape: its leaves (1: one switch) and spines (0 with one switch).
#[derive(Debug, Clone, Copy)]
struct Rail {
    rails: u32,
    servers: u32,
    leaves: u32,
    spines: u32,
    per_leaf: u32,
}

impl Config {
    fn shape(&self) -> Result<Rail, ScenarioError> {
        let (h, n, k) = (self.hosts, self.nics_per_server, self.radix);
        ensure(
            (2..=1024).contains(&n),
            "topology.nics_per_server",
            n,
            "allowed: 2 to 1024 (the rails: one network per GPU of a server)",
        )?;
        ensure(self.scale_up_rate.is_some(), "topology.scale_up_rate", "none", "allowed: a rate (the scale-up network carries traffic between rails)")?;
        ensure((2..=1 << 16).contains(&k) && k % 2 == 0, "topology.radix", k, "allowed: an even number of ports, 2 to 65536")?;
        ensure(h >= 2 * n && h % n == 0 && h < 1 << 24, "topology.hosts", h, format!("allowed: whole servers of {n} GPUs, two or more, fewer than 2^24 hosts"))?;
        ensure(self.link_rate.0 > 0, "topology.link_rate", self.link_rate, "allowed: a positive rate")?;
        let servers = h / n;
        if servers <= k {
            return Ok(Rail { rails: n, servers, leaves: 1, spines: 0, per_leaf: servers });
        }
        let per_leaf = k / 2;
        ensure(
            servers % per_leaf == 0 && servers / per_leaf <= k,
            "topology.hosts",
            h,
            format!("allowed: a rail of {servers} servers fills whole leaves of {per_leaf} and at most {k} of them (radix {k})"),
        )?;
        Ok(Rail { rails: n, servers, leaves: servers / per_leaf, spines: k / 2, per_leaf })
    }

    /// The rails as a graph.
    fn graph(&self) -> Result<GraphConfig, ScenarioError> {
        let s = self.shape()?;
        let leaf = |r: u32, i: u32| if s.spines == 0 { format!("rail{r}") } else { format!("rail{r}leaf{i}") };
        let mut graph = GraphConfig::default();
        for server in 0..s.servers {
            for r in 0..s.rails {
                graph.add_host(format!("host{}", server * s.rails + r), Some(server), leaf(r, server / s.per_leaf));
            }
        }
        for r in 0..s.rails {
            graph.add_leaf_spine((0..s.leaves).map(|i| leaf(r, i)).collect(), (0..s.spines).map(|j| format!("rail{r}spine{j}")).collect());
        }
        Ok(graph)
    }
}

impl Generator for Config {
    fn size(&self) -> Result<GraphSize, ScenarioError> {
        let s = self.shape()?;
        let rails = u64::from(s.rails);
        let links = u64::from(self.hosts) + rails * u64::from(s.leaves) * u64::from(s.spines);
        Ok(GraphSize {
            hosts: self.hosts.into(),
            switches: rails * u64::from(s.leaves + s.spines),
            ports: 2 * links,
            classes: rails * u64::from(s.leaves),
        })
    }

    fn build(&self) -> Result<Topology, ScenarioError> {
        let defaults = self.shared().defaults()?;
        self.graph()?.build(&defaults)
    }
}
