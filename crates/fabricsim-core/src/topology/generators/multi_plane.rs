//! A multi-plane fabric, as Alibaba's HPN builds one (Qian et al., "Alibaba HPN: A Data Center
//! Network for Large Language Model Training", SIGCOMM 2024: each NIC's two ports in two
//! independent planes): `planes` copies of a leaf-spine, no link between two, and every host
//! (GPU, NIC) with one port in each. A host's port in plane `p` is host node `p * hosts + h`
//! (`topology::HostMap::planes`), named `host{h}p{p}`; the switches are `leaf{i}p{p}` and
//! `spine{j}p{p}`. Each plane is the fat tree generator's leaf-spine: `radix / 2` hosts a
//! leaf, `radix / 2` spines, every leaf linked to every spine; `link_rate` is each port's (two
//! 200 Gb/s ports make HPN's 400 Gb/s NIC).
//!
//! A message is striped over the planes (`workload::support::stripe`): an equal part on each,
//! as NCCL spreads a collective's channels over a NIC's ports; each part is its own row of the
//! flows table, and what waits for the message waits for every part.

use super::Generator;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::topology::file::{Defaults, GraphConfig};
use crate::topology::{GraphSize, Topology};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "topology",
    name: "multi_plane",
    summary: "independent leaf-spine planes, each host with a port in every plane; messages striped over them",
    reference: "Alibaba HPN, SIGCOMM 2024",
};

topology_kind!(Config {
    /// Independent planes, 2 to 16: each host has a port (`link_rate`) in each.
    #[serde(default = "d_planes")]
    planes: u32,
    /// Number of hosts (GPUs); in each plane they fill whole leaves of radix / 2.
    #[serde(default = "d_hosts")]
    hosts: u32,
    /// Ports per switch: each plane is a leaf-spine of radix / 2 hosts a leaf and radix / 2 spines.
    #[serde(default = "d_radix")]
    radix: u32,
});

fn d_planes() -> u32 {
    2
}
fn d_hosts() -> u32 {
    128
}
fn d_radix() -> u32 {
    16
}

impl Config {
    /// (planes, leaves a plane, hosts a leaf), checked.
    fn shape(&self) -> Result<(u32, u32, u32), ScenarioError> {
        let (p, h, k) = (self.planes, self.hosts, self.radix);
        ensure((2..=16).contains(&p), "topology.planes", p, "allowed: 2 to 16")?;
        ensure((2..=1 << 16).contains(&k) && k % 2 == 0, "topology.radix", k, "allowed: an even number of ports, 2 to 65536")?;
        let per_leaf = k / 2;
        ensure(
            h >= 2 && h % per_leaf == 0 && h / per_leaf <= k && u64::from(h) * u64::from(p) < 1 << 24,
            "topology.hosts",
            h,
            format!("allowed: whole leaves of {per_leaf} hosts, at most {k} leaves (radix {k})"),
        )?;
        ensure(
            self.nics_per_server >= 1 && h % self.nics_per_server == 0,
            "topology.nics_per_server",
            self.nics_per_server,
            format!("allowed: a divisor of hosts ({h})"),
        )?;
        ensure(self.link_rate.0 > 0, "topology.link_rate", self.link_rate, "allowed: a positive rate")?;
        Ok((p, h / per_leaf, per_leaf))
    }

    /// The planes as a graph: every plane's host nodes first, plane by plane.
    fn graph(&self) -> Result<GraphConfig, ScenarioError> {
        let (planes, leaves, per_leaf) = self.shape()?;
        let mut graph = GraphConfig::default();
        for p in 0..planes {
            for h in 0..self.hosts {
                graph.add_host(format!("host{h}p{p}"), None, format!("leaf{}p{p}", h / per_leaf));
            }
        }
        for p in 0..planes {
            graph.add_leaf_spine((0..leaves).map(|i| format!("leaf{i}p{p}")).collect(), (0..per_leaf).map(|j| format!("spine{j}p{p}")).collect());
        }
        Ok(graph)
    }
}

impl Generator for Config {
    fn size(&self) -> Result<GraphSize, ScenarioError> {
        let (planes, leaves, per_leaf) = self.shape()?;
        let (p, hosts) = (u64::from(planes), u64::from(self.hosts));
        let per_plane_links = hosts + u64::from(leaves) * u64::from(per_leaf);
        Ok(GraphSize { hosts: p * hosts, switches: p * u64::from(leaves + per_leaf), ports: 2 * p * per_plane_links, classes: p * u64::from(leaves) })
    }

    fn build(&self) -> Result<Topology, ScenarioError> {
        let (planes, _, _) = self.shape()?;
        // the graph's host nodes are every plane's: the scenario's hosts are plane 0's
        let defaults = Defaults { planes, ..self.shared().defaults()? };
        self.graph()?.build(&defaults)
    }
}
