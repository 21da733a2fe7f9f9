//! The model of a fabric, whatever generated it: nodes (hosts first, then switches), the ports
//! that are each one direction of a link, and every switch's forwarding table built from them
//! ([`super::tables`]). What the rest of the simulator asks of a fabric it asks here: the hosts
//! and their servers, the routes between hosts ([`super::paths`]), how many next hops the
//! switches of each tier choose among (PRIME's multi-part EV), how hosts spread over edge
//! switches.

use std::sync::Arc;

use super::detour::Detours;
use super::tables::Tables;
use super::{GraphSize, ScaleUp};
use crate::error::ScenarioError;
use crate::time::Time;

/// A node: a host or a switch.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// Switch tier (0 = leaf); `None` for a host.
    pub tier: Option<u32>,
}

/// One direction of a link: its sender side owns an egress queue.
#[derive(Debug, Clone)]
pub struct PortInfo {
    /// Stable name, `"leaf3:up2"`, `"spine0:down5"`, `"host7:up0"`.
    pub name: String,
    pub from: u32,
    pub to: u32,
    /// Link tier (0 = host-leaf).
    pub tier: u32,
    pub up: bool,
    pub rate: u64,
    /// Propagation latency, plus the switch traversal latency when `to` is a switch.
    pub delay: Time,
    /// What routing counts for crossing it (1 for every link of a fat tree): switches forward
    /// on the paths of least total cost (`topology::tables`).
    pub cost: u32,
}

/// The hosts as the scenario numbers them: their servers, their scale-up network, and the
/// host node each one is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMap {
    pub count: u32,
    /// NICs (GPUs) per server: host `h` is NIC `h % nics` of server `h / nics`.
    pub nics: u32,
    /// The servers' scale-up network, if they have one.
    pub scale_up: Option<ScaleUp>,
    /// Per scenario host its host node (with several NIC ports a host, per port `p` of host
    /// `h` at `p * count + h`), and per host node its scenario host; both empty where they
    /// are the same (every fabric but a rail-optimized tree or one of several NICs a GPU).
    pub node_of: Vec<u32>,
    pub host_at: Vec<u32>,
    /// Host nodes per scenario host, its NIC ports (a multi-plane fabric: one in each plane;
    /// a fat tree's `nics_per_gpu`: that many in one fabric; else 1): host `h`'s port `p` is
    /// the node `node_of[p * count + h]`, or `p * count + h` where `node_of` is empty
    /// ([`Topology::slot_on`]).
    pub planes: u32,
}

impl HostMap {
    /// `count` hosts, each its own node, `nics` per server.
    pub fn new(count: u32, nics: u32, scale_up: Option<ScaleUp>) -> HostMap {
        HostMap { count, nics, scale_up, node_of: Vec::new(), host_at: Vec::new(), planes: 1 }
    }
}

/// The built fabric: its graph and every switch's forwarding table (shared by the pieces of
/// a run).
#[derive(Debug, Clone)]
pub struct Topology {
    pub hosts: HostMap,
    pub nodes: Vec<Node>,
    pub ports: Vec<PortInfo>,
    pub tables: Arc<Tables>,
    /// Non-minimal routing between groups of switches (a dragonfly's Valiant or UGAL), if
    /// the fabric routes so.
    pub detours: Option<Arc<Detours>>,
    /// The fastest host link.
    host_rate: u64,
}

impl Topology {
    /// A topology of these hosts, nodes (the host nodes first) and ports, routed by shortest
    /// paths; not connected only if the hosts' servers have a scale-up network.
    pub fn from_graph(hosts: HostMap, nodes: Vec<Node>, ports: Vec<PortInfo>) -> Result<Topology, ScenarioError> {
        let refuse = |why: &str| ScenarioError::new("topology", why, "allowed: a connected fabric, every host on one link");
        let host_nodes = hosts.count * hosts.planes;
        let tables = Tables::shortest_paths(host_nodes, &nodes, &ports).map_err(|why| refuse(&why))?;
        // islands only where the servers' scale-up networks join them (a rail-only fabric: a
        // message between two is relayed through a GPU of its source's server,
        // `workload::relay`) or where they are a multi-plane fabric's planes (a message is
        // striped over them, `workload::stripe`)
        if let (Some(why), None, 1) = (tables.split(), hosts.scale_up, hosts.planes) {
            return Err(refuse(why));
        }
        let host_rate = (0..host_nodes).map(|h| ports[tables.out_of_host(h) as usize].rate).max().unwrap_or(0);
        Ok(Topology { hosts, nodes, ports, tables: Arc::new(tables), detours: None, host_rate })
    }

    /// Host nodes: the scenario's hosts, times the planes of a multi-plane fabric.
    pub fn hosts(&self) -> u32 {
        self.hosts.count * self.hosts.planes
    }

    /// Each host node's downlink index at its edge switch: its place among the switch's ports
    /// to hosts, in port order (Meta's "slice", which path pinning routes by).
    pub fn slices(&self) -> Vec<u16> {
        let hosts = self.hosts() as usize;
        let (mut slice, mut next) = (vec![0u16; hosts], vec![0u16; self.nodes.len()]);
        for p in self.ports.iter().filter(|p| p.from as usize >= hosts && (p.to as usize) < hosts) {
            slice[p.to as usize] = next[p.from as usize];
            next[p.from as usize] = next[p.from as usize].saturating_add(1);
        }
        slice
    }

    /// Each port's reverse: the other direction of its link (the k-th port from a to b is
    /// paired with the k-th from b to a, parallel links in order).
    pub fn reverse_ports(&self) -> Vec<u32> {
        let mut back = vec![u32::MAX; self.ports.len()];
        let mut open: rustc_hash::FxHashMap<(u32, u32), std::collections::VecDeque<u32>> = Default::default();
        for (id, p) in (0u32..).zip(&self.ports) {
            match open.get_mut(&(p.to, p.from)).and_then(|q| q.pop_front()) {
                Some(other) => (back[id as usize], back[other as usize]) = (other, id),
                None => open.entry((p.from, p.to)).or_default().push_back(id),
            }
        }
        debug_assert!(back.iter().all(|&b| b != u32::MAX), "every link has two directions");
        back
    }

    /// The scenario's hosts (GPUs): what workloads and jobs number.
    pub fn gpus(&self) -> u32 {
        self.hosts.count
    }

    /// Planes of a multi-plane fabric (1 otherwise).
    pub fn planes(&self) -> u32 {
        self.hosts.planes
    }

    /// The node of host node `node`'s host in its first plane (`node` itself but on a
    /// multi-plane fabric): where the host hears what its ports finished.
    #[inline]
    pub fn first_port(&self, node: u32) -> u32 {
        self.slot(self.host(node))
    }

    /// The host node of scenario host `host`'s NIC port `plane` (its port in that plane of a
    /// multi-plane fabric).
    #[inline]
    pub fn slot_on(&self, host: u32, plane: u32) -> u32 {
        self.slot(host + plane * self.hosts.count)
    }

    pub fn switches(&self) -> usize {
        self.nodes.len() - self.hosts() as usize
    }

    /// Looks a port up by its stable name.
    pub fn port_by_name(&self, name: &str) -> Option<u32> {
        self.ports.iter().position(|p| p.name == name).map(|i| i as u32)
    }

    /// The size of the graph.
    pub fn size(&self) -> GraphSize {
        let hosts = u64::from(self.hosts());
        GraphSize { hosts, switches: self.switches() as u64, ports: self.ports.len() as u64, classes: self.tables.classes() as u64 }
    }

    /// The fastest host link's rate (bit/s): a host's line rate.
    pub fn host_rate(&self) -> u64 {
        self.host_rate
    }

    /// NICs (hosts) per server.
    pub fn nics(&self) -> u32 {
        self.hosts.nics
    }

    /// Servers (scenario hosts / NICs per server).
    pub fn servers(&self) -> u32 {
        self.hosts.count / self.hosts.nics
    }

    /// The host node of scenario host `host` (a leaf slot on a fat tree).
    #[inline]
    pub fn slot(&self, host: u32) -> u32 {
        self.hosts.node_of.get(host as usize).copied().unwrap_or(host)
    }

    /// The scenario host at host node `slot`.
    #[inline]
    pub fn host(&self, slot: u32) -> u32 {
        match self.hosts.host_at.get(slot as usize) {
            Some(&h) => h,
            None if slot >= self.hosts.count => slot % self.hosts.count,
            None => slot,
        }
    }

    /// The servers' scale-up network, if they have one.
    pub fn scale_up(&self) -> Option<ScaleUp> {
        self.hosts.scale_up
    }

    /// The scale-up network between two host nodes, if they are GPUs of one server with one.
    /// From a GPU to itself (only a leg through the switch goes so: `workload::Via`) it is
    /// the GPU's own network, of no latency: the leg's other end is the switch.
    #[inline]
    pub fn scale_up_between(&self, a: u32, b: u32) -> Option<ScaleUp> {
        let n = self.hosts.nics;
        let up = self.hosts.scale_up.filter(|_| self.host(a) / n == self.host(b) / n)?;
        Some(if a == b { ScaleUp { latency: 0, ..up } } else { up })
    }

    /// The GPU (host node) of host node `a`'s server that relays what `a` sends to host node
    /// `b` where the fabric does not join them (a rail-only fabric: `workload::relay`): the
    /// one of `b`'s local rank if the fabric joins it to `b`, else the first that it joins.
    pub fn relay(&self, a: u32, b: u32) -> Option<u32> {
        let (n, ha) = (self.hosts.nics, self.host(a));
        let server = ha / n * n;
        std::iter::once(server + self.host(b) % n)
            .chain(server..server + n)
            .filter(|&g| g < self.gpus() && g != ha)
            .map(|g| self.slot(g))
            .find(|&g| self.tables.reachable(g, b))
    }

    /// How many next hops the switches of each tier choose among (the largest group their
    /// tables name), up to the highest tier that chooses: the width of each part of PRIME's
    /// multi-part EV. A fat tree's: the leaves' up-ports, then (3 tiers) the aggregation
    /// switches'; a dragonfly's with Valiant or UGAL routing: the intermediate groups.
    pub fn choices_per_tier(&self) -> Vec<u32> {
        let mut most: Vec<u32> = Vec::new();
        for (s, node) in self.nodes.iter().enumerate().skip(self.hosts() as usize) {
            let choices = self.tables.most_choices(s as u32);
            let tier = node.tier.unwrap_or(0) as usize;
            // a switch that routes between groups also chooses an intermediate group
            let choices = match &self.detours {
                Some(d) => choices.max(d.candidates()),
                None => choices,
            };
            if choices > 1 {
                if most.len() <= tier {
                    most.resize(tier + 1, 1);
                }
                most[tier] = most[tier].max(choices);
            }
        }
        most
    }

    /// Every scenario host, round-robin over the edge switches: the first host of each, in
    /// switch order, then the second of each, and so on (a job placed "spread").
    pub fn spread_order(&self) -> Vec<u32> {
        let t = &self.tables;
        let mut of_class: Vec<Vec<u32>> = vec![Vec::new(); t.classes()];
        // the scenario's hosts by the edge switch of their first port, in slot order
        let mut first: Vec<u32> = (0..self.gpus()).map(|h| self.slot(h)).collect();
        first.sort_unstable();
        for slot in first {
            of_class[t.class(slot) as usize].push(self.host(slot));
        }
        let most = of_class.iter().map(Vec::len).max().unwrap_or(0);
        (0..most).flat_map(|i| of_class.iter().filter_map(move |c| c.get(i).copied())).collect()
    }
}
