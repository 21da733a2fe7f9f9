//! A fabric given as a graph (`[topology] kind = "graph"`): its hosts, its switches and the
//! links between them, each link with its own rate and latency, inline as `topology.graph` or
//! in a file (TOML, JSON, a NetworkX-style edge list or GraphML) that the Python front end reads
//! into it (docs/topologies.md). The switches route by shortest paths over it, as on any
//! fabric ([`super::tables`]).
//!
//! The graph becomes nodes and ports as the fat tree generator lays them out: the hosts first
//! (a host's id is its place in `hosts`), then the switches in order; each node's ports
//! contiguous, those towards a lower tier ("down") first, then those to its own tier ("peer"),
//! then those towards a higher tier ("up"), each in the order of `links`, named
//! `"{node}:down{i}"`, `"{node}:peer{i}"`, `"{node}:up{i}"`. A switch's tier is given or
//! found: 0 for a switch with hosts, else one more than the lowest tier among its neighbours
//! (the hops from the nearest switch with hosts). A link's tier is 0 from a host, else one
//! more than its lower end's: a fat tree written so (`fabricsim topology --export`) is the
//! generator's fabric, port for port.

use serde::{Deserialize, Serialize};

use super::{GraphSize, HostMap, Node, PortInfo, ScaleUp, Topology};
use crate::error::{ensure, ScenarioError};
use crate::time::Time;
use crate::units::{Duration, Rate};

/// The graph of a fabric.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphConfig {
    pub hosts: Vec<GraphHost>,
    pub switches: Vec<GraphSwitch>,
    pub links: Vec<GraphLink>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphHost {
    pub name: String,
    /// The scenario's id for it (`src`, `dst`, a job's `hosts`); default its place in `hosts`.
    /// Given for one host, given for all: each id once, 0 to hosts - 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    /// The server it is a NIC (GPU) of: servers are hosts of consecutive ids, all of one size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<u32>,
    /// Where GPUs have several NICs: the GPU (the scenario's id) this host is a NIC of. Given for
    /// one host, given for all, with no `id`: GPUs 0 to G - 1, each with as many NICs (its hosts,
    /// NIC 0 first in the order of `hosts`); a message between GPUs is cut into a part per NIC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphSwitch {
    pub name: String,
    /// 0 for a switch with hosts; found from the graph where left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<u32>,
}

/// A full-duplex link: a port each way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub a: String,
    pub b: String,
    /// Default `topology.link_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Propagation latency; default `topology.link_latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Duration>,
    /// What routing counts for crossing it, 1 to 1000; default 1 (switches forward on the
    /// paths of least total cost: a hop count where every link costs 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<u32>,
}

impl GraphLink {
    /// A link between `a` and `b` that takes every default (rate, latency, cost 1).
    pub fn new(a: impl Into<String>, b: impl Into<String>) -> GraphLink {
        GraphLink { a: a.into(), b: b.into(), rate: None, latency: None, cost: None }
    }
}

impl GraphConfig {
    /// Adds host `name` (a NIC of `server`, if given) and its link to `switch`.
    pub fn add_host(&mut self, name: String, server: Option<u32>, switch: String) {
        self.links.push(GraphLink::new(name.clone(), switch));
        self.hosts.push(GraphHost { name, id: None, server, gpu: None });
    }

    /// Adds a leaf-spine of its own: the `leaves` (tier 0), then each of the `spines` (tier 1)
    /// with a link from every leaf.
    pub fn add_leaf_spine(&mut self, leaves: Vec<String>, spines: Vec<String>) {
        for spine in spines.iter() {
            self.links.extend(leaves.iter().map(|leaf| GraphLink::new(leaf.clone(), spine.clone())));
        }
        self.switches.extend(leaves.into_iter().map(|name| GraphSwitch { name, tier: Some(0) }));
        self.switches.extend(spines.into_iter().map(|name| GraphSwitch { name, tier: Some(1) }));
    }
}

/// What the graph's links take from `[topology]` where they say nothing.
pub struct Defaults {
    pub rate: Rate,
    pub latency: Duration,
    pub switch_latency: Time,
    pub nics: u32,
    pub scale_up: Option<ScaleUp>,
    /// Host nodes per scenario host (a multi-plane fabric's: its hosts are listed plane by
    /// plane); 1 otherwise.
    pub planes: u32,
}

const FIELD: &str = "topology.graph";
/// The highest tier a switch may be given (a fabric of more tiers is no datacenter's).
pub const MAX_TIER: u32 = 63;
/// The highest routing cost of a link.
pub const MAX_COST: u32 = 1000;

impl GraphConfig {
    /// The size of the graph, for the memory check before it is built.
    pub fn size(&self) -> GraphSize {
        let hosts = self.hosts.len() as u64;
        GraphSize {
            hosts,
            switches: self.switches.len() as u64,
            ports: 2 * self.links.len() as u64,
            classes: hosts.min(self.switches.len() as u64),
        }
    }

    /// The hosts of the first host's server, where the hosts name their servers (ids aside:
    /// the count is what a valid graph's servers all have).
    pub fn nics_per_server(&self) -> Option<u32> {
        let first = self.hosts.first()?.server?;
        let on = self.hosts.iter().filter(|x| x.server == Some(first));
        // where hosts name their GPU, the server's GPUs
        let gpus: std::collections::BTreeSet<u32> = on.clone().filter_map(|x| x.gpu).collect();
        Some(if gpus.is_empty() { on.count() as u32 } else { gpus.len() as u32 })
    }

    /// The fabric of this graph; an error names the entry at fault.
    pub fn build(&self, d: &Defaults) -> Result<Topology, ScenarioError> {
        let (h, n) = (self.hosts.len(), self.hosts.len() + self.switches.len());
        ensure(h >= 2, &format!("{FIELD}.hosts"), format!("{h} hosts"), "allowed: at least 2")?;
        ensure(!self.switches.is_empty(), &format!("{FIELD}.switches"), "none", "allowed: at least one switch")?;
        ensure(n < 1 << 31, FIELD, format!("{n} nodes"), "allowed: fewer than 2^31")?;
        let names: Vec<&str> = self.hosts.iter().map(|x| x.name.as_str()).chain(self.switches.iter().map(|x| x.name.as_str())).collect();
        let entry = |i: usize| if i < h { format!("{FIELD}.hosts[{i}]") } else { format!("{FIELD}.switches[{}]", i - h) };
        let mut id: std::collections::HashMap<&str, u32> = std::collections::HashMap::with_capacity(n);
        for (i, name) in names.iter().enumerate() {
            ensure(
                !name.is_empty() && !name.contains(':'),
                &format!("{}.name", entry(i)),
                format!("{name:?}"),
                "allowed: a non-empty name without ':'",
            )?;
            if let Some(&first) = id.get(name) {
                return Err(ScenarioError::new(
                    format!("{}.name", entry(i)),
                    format!("{name:?}"),
                    format!("allowed: a name no other node has ({} has it)", entry(first as usize)),
                ));
            }
            id.insert(name, i as u32);
        }
        // the links' ends, checked
        let mut ends: Vec<(u32, u32)> = Vec::with_capacity(self.links.len());
        let mut host_links = vec![0u32; h];
        for (i, l) in self.links.iter().enumerate() {
            let at = |k: &str| format!("{FIELD}.links[{i}].{k}");
            let end = |k: &str, name: &str| {
                id.get(name)
                    .copied()
                    .ok_or_else(|| ScenarioError::new(at(k), format!("{name:?}"), "allowed: the name of a host or switch of the graph"))
            };
            let (a, b) = (end("a", &l.a)?, end("b", &l.b)?);
            ensure(a != b, &at("b"), format!("{:?}", l.b), "allowed: another node than `a` (a link joins two nodes)")?;
            ensure(
                (a as usize) >= h || (b as usize) >= h,
                &at("b"),
                format!("{:?}", l.b),
                "allowed: a switch (two hosts are joined through a switch, or a server's scale-up network)",
            )?;
            ensure(l.rate.is_none_or(|r| r.0 > 0), &at("rate"), "0", "allowed: a positive rate like \"400Gbps\"")?;
            if let Some(c) = l.cost {
                ensure((1..=MAX_COST).contains(&c), &at("cost"), c, format!("allowed: 1 to {MAX_COST}"))?;
            }
            for x in [a, b] {
                if (x as usize) < h {
                    host_links[x as usize] += 1;
                }
            }
            ends.push((a, b));
        }
        if let Some(x) = host_links.iter().position(|&c| c != 1) {
            let why = if host_links[x] == 0 { "no link" } else { "more than one link" };
            return Err(ScenarioError::new(entry(x), format!("{:?} has {why}", names[x]), "allowed: exactly one link, to a switch"));
        }
        let tiers = self.tiers(h, n, &ends)?;
        let mut hosts = self.hosts(d)?;
        if d.planes > 1 && hosts.planes == 1 {
            (hosts.count, hosts.planes) = (hosts.count / d.planes, d.planes);
        }
        let nodes: Vec<Node> =
            names.iter().enumerate().map(|(i, name)| Node { name: name.to_string(), tier: (i >= h).then(|| tiers[i]) }).collect();
        let ports = self.ports(h, &names, &tiers, &ends, d);
        Topology::from_graph(hosts, nodes, ports).map_err(|e| ScenarioError { field: FIELD.into(), ..e })
    }

    /// Each node's tier (0 for hosts too): given, or the hops from the nearest switch with
    /// hosts.
    fn tiers(&self, h: usize, n: usize, ends: &[(u32, u32)]) -> Result<Vec<u32>, ScenarioError> {
        let mut near: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(a, b) in ends {
            near[a as usize].push(b);
            near[b as usize].push(a);
        }
        let mut tier = vec![u32::MAX; n];
        let mut frontier: Vec<u32> = Vec::new();
        for s in h..n {
            if near[s].iter().any(|&x| (x as usize) < h) {
                tier[s] = 0;
                frontier.push(s as u32);
            }
        }
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &s in &frontier {
                for &x in &near[s as usize] {
                    if x as usize >= h && tier[x as usize] == u32::MAX {
                        tier[x as usize] = tier[s as usize] + 1;
                        next.push(x);
                    }
                }
            }
            frontier = next;
        }
        for (i, s) in self.switches.iter().enumerate() {
            match s.tier {
                Some(t) if t > MAX_TIER => {
                    return Err(ScenarioError::new(format!("{FIELD}.switches[{i}].tier"), t, format!("allowed: 0 to {MAX_TIER}")))
                }
                Some(t) => tier[h + i] = t,
                None if tier[h + i] == u32::MAX => {
                    return Err(ScenarioError::new(
                        format!("{FIELD}.switches[{i}]"),
                        format!("{:?} reaches no host", s.name),
                        "allowed: a connected fabric",
                    ))
                }
                None => {}
            }
        }
        tier[..h].fill(0);
        Ok(tier)
    }

    /// The hosts' ids and servers: `id` and `server` where given (a server's hosts of
    /// consecutive ids, every server as large), else their places and `topology.nics_per_server`.
    fn hosts(&self, d: &Defaults) -> Result<HostMap, ScenarioError> {
        if self.hosts.iter().any(|x| x.gpu.is_some()) {
            return self.gpus(d);
        }
        let h = self.hosts.len() as u32;
        let at = |i: usize, k: &str| format!("{FIELD}.hosts[{i}].{k}");
        // per id, the host's place
        let mut node_of = vec![u32::MAX; h as usize];
        let given = self.hosts[0].id.is_some();
        for (i, x) in self.hosts.iter().enumerate() {
            let id = x.id.unwrap_or(i as u32);
            let shown = x.id.map_or("none".to_string(), |v| v.to_string());
            ensure(x.id.is_some() == given, &at(i, "id"), &shown, "allowed: an id on every host or on none")?;
            ensure(id < h, &at(i, "id"), &shown, format!("allowed: 0 to {}", h - 1))?;
            ensure(node_of[id as usize] == u32::MAX, &at(i, "id"), &shown, "allowed: an id no other host has")?;
            node_of[id as usize] = i as u32;
        }
        let server_of = |id: u32| self.hosts[node_of[id as usize] as usize].server;
        let nics = self.nics_per_server().unwrap_or(d.nics);
        ensure(
            h.is_multiple_of(nics),
            &format!("{FIELD}.hosts"),
            format!("{h} hosts"),
            format!("allowed: a multiple of the {nics} NICs per server"),
        )?;
        for id in 0..h {
            let i = node_of[id as usize] as usize;
            let want = server_of(0).map(|first| first + id / nics);
            ensure(
                server_of(id) == want,
                &at(i, "server"),
                server_of(id).map_or("none".to_string(), |s| s.to_string()),
                format!(
                    "allowed: servers of {nics} hosts of consecutive ids, numbered in order, on every host or on none (this host's: {})",
                    want.map_or("none".to_string(), |w| w.to_string())
                ),
            )?;
        }
        ensure(d.scale_up.is_none() || nics >= 2, "topology.scale_up_rate", "a rate", "allowed: only with servers of 2 or more hosts")?;
        let mut map = HostMap::new(h, nics, d.scale_up);
        if given {
            map.host_at = self.hosts.iter().map(|x| x.id.unwrap_or(0)).collect();
            map.node_of = node_of;
        }
        Ok(map)
    }

    /// The ports, each node's contiguous: down, peer, then up, each in link order.
    fn ports(&self, h: usize, names: &[&str], tiers: &[u32], ends: &[(u32, u32)], d: &Defaults) -> Vec<PortInfo> {
        let n = names.len();
        // per node, its links' far ends: (side: 0 down, 1 peer, 2 up; link)
        let mut out: Vec<Vec<(u8, usize, u32)>> = vec![Vec::new(); n];
        let level = |x: u32| if (x as usize) < h { -1 } else { i64::from(tiers[x as usize]) };
        for (i, &(a, b)) in ends.iter().enumerate() {
            for (from, to) in [(a, b), (b, a)] {
                let side = match level(to).cmp(&level(from)) {
                    std::cmp::Ordering::Less => 0,
                    std::cmp::Ordering::Equal => 1,
                    std::cmp::Ordering::Greater => 2,
                };
                out[from as usize].push((side, i, to));
            }
        }
        let mut ports = Vec::with_capacity(2 * ends.len());
        for (from, links) in out.iter_mut().enumerate() {
            links.sort_by_key(|&(side, i, _)| (side, i));
            let mut count = [0u32; 3];
            for &(side, i, to) in links.iter() {
                let l = &self.links[i];
                let (a, b) = ends[i];
                let tier = if (a as usize) < h || (b as usize) < h { 0 } else { 1 + tiers[a as usize].min(tiers[b as usize]) };
                let latency = l.latency.unwrap_or(d.latency).0;
                let kind = ["down", "peer", "up"][side as usize];
                ports.push(PortInfo {
                    name: format!("{}:{kind}{}", names[from], count[side as usize]),
                    from: from as u32,
                    to,
                    tier,
                    up: side == 2 || side == 1 && (from as u32) < to,
                    rate: l.rate.unwrap_or(d.rate).0,
                    delay: latency + if to as usize >= h { d.switch_latency } else { 0 },
                    cost: l.cost.unwrap_or(1),
                });
                count[side as usize] += 1;
            }
        }
        ports
    }

    /// The graph of a built fabric whose switches take `switch_latency` (the part of a
    /// port's delay that is not its link's): what `fabricsim topology --export` writes.
    pub fn of(topo: &Topology, switch_latency: Time) -> GraphConfig {
        let h = topo.hosts() as usize;
        // hosts of several NIC ports (planes, a GPU's NICs) name their GPU, others their id
        let several = topo.planes() > 1;
        let renumbered = !several && !topo.hosts.host_at.is_empty();
        let hosts = (0..h as u32)
            .map(|x| GraphHost {
                name: topo.nodes[x as usize].name.clone(),
                id: renumbered.then(|| topo.host(x)),
                server: (topo.nics() > 1).then(|| topo.host(x) / topo.nics()),
                gpu: several.then(|| topo.host(x)),
            })
            .collect();
        let switches = topo.nodes[h..].iter().map(|s| GraphSwitch { name: s.name.clone(), tier: s.tier }).collect();
        // one link per pair of ports: the one leaving the lower node (a host, a lower tier)
        let mut links = Vec::with_capacity(topo.ports.len() / 2);
        for p in topo.ports.iter().filter(|p| p.up) {
            let latency = p.delay - if p.to as usize >= h { switch_latency } else { 0 };
            links.push(GraphLink {
                a: topo.nodes[p.from as usize].name.clone(),
                b: topo.nodes[p.to as usize].name.clone(),
                rate: Some(Rate(p.rate)),
                latency: Some(Duration(latency)),
                cost: (p.cost != 1).then_some(p.cost),
            });
        }
        GraphConfig { hosts, switches, links }
    }
}

mod gpus;
#[cfg(test)]
mod tests;
