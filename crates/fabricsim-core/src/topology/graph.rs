//! The fabric read as a graph, without its shape: forwarding tables by shortest paths, the
//! diameter and a bisection estimate (issue 48's first step: the model any topology can use).
//!
//! A node is a host or a switch and each port is one direction of a link (`PortInfo`: from,
//! to, rate). A switch's **forwarding table** holds, per destination, the ports that start a
//! shortest path there over the ports routing has not excluded, as htsim's route tables hold
//! next hops per destination (`routetable.h`, `Switch::getNextHop`). Hosts forward nothing: a
//! path crosses switches only. A host hangs from one switch (its edge switch), so every host of
//! an edge switch has the same entry at every other switch: the table is kept per (switch,
//! edge switch), and at its own edge switch a host is the port to it.
//!
//! On a fat tree the shortest paths are the up-down paths: a switch below the destination has
//! one port towards it, any other every up-port that still reaches the destination's leaf
//! (`Topology::usable_up_ports`); the tests check the tables against that arithmetic on every
//! shape, with and without dead links. The switches still route by the arithmetic; the tables
//! are what they will read (docs/model.md, "Topology").

use super::Topology;

/// A switch's ports towards every destination, on shortest paths.
#[derive(Debug, Clone)]
pub struct Tables {
    hosts: u32,
    /// Per host node: its edge switch's index among `edges`.
    edge_of: Vec<u32>,
    /// The edge switches (node ids).
    edges: Vec<u32>,
    /// Per (switch - hosts, edge index): (offset into `pool`, ports); (0, 0) where nothing
    /// reaches it.
    entries: Vec<(u32, u32)>,
    pool: Vec<u32>,
    /// The most links between two hosts on shortest paths; `None`: some pair is cut off.
    diameter: Option<u32>,
}

impl Tables {
    /// The tables of `topo` over the ports not `excluded` (empty: none is).
    pub fn shortest_paths(topo: &Topology, excluded: &[bool]) -> Tables {
        let hosts = topo.hosts();
        let n = topo.nodes.len();
        let live = |p: usize| excluded.get(p).is_none_or(|&x| !x);
        // every host's one link: its edge switch
        let mut edge_node = vec![u32::MAX; hosts as usize];
        for p in &topo.ports {
            if p.from < hosts {
                edge_node[p.from as usize] = p.to;
            }
        }
        let mut edges: Vec<u32> = edge_node.clone();
        edges.sort_unstable();
        edges.dedup();
        let edge_of = edge_node.iter().map(|e| edges.binary_search(e).unwrap_or(0) as u32).collect();
        // the ports into each node, for the searches back from a destination
        let mut into: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, p) in topo.ports.iter().enumerate() {
            into[p.to as usize].push(i as u32);
        }
        let switches = n - hosts as usize;
        let mut entries = vec![(0u32, 0u32); switches * edges.len()];
        let mut pool = Vec::new();
        // found search by search, so that no per-edge distances are kept (edges x nodes of them)
        let mut diameter = Some(if edge_node.len() > 1 { 2 } else { 0 });
        for (e, &edge) in edges.iter().enumerate() {
            // breadth first from the edge switch over live ports, backwards; hosts relay nothing
            let mut d = vec![u32::MAX; n];
            d[edge as usize] = 0;
            let mut frontier = vec![edge];
            while !frontier.is_empty() {
                let mut next = Vec::new();
                for &w in &frontier {
                    for &p in &into[w as usize] {
                        let v = topo.ports[p as usize].from;
                        if live(p as usize) && d[v as usize] == u32::MAX {
                            d[v as usize] = d[w as usize] + 1;
                            if v >= hosts {
                                next.push(v);
                            }
                        }
                    }
                }
                frontier = next;
            }
            for s in hosts..n as u32 {
                let node = &topo.nodes[s as usize];
                if d[s as usize] == u32::MAX || s == edge {
                    continue;
                }
                let first = node.reach.first_port;
                let ports = first..first + node.reach.n_down + node.reach.n_up;
                let offset = pool.len() as u32;
                pool.extend(ports.filter(|&p| {
                    let to = topo.ports[p as usize].to;
                    live(p as usize) && to >= hosts && d[to as usize] == d[s as usize] - 1
                }));
                entries[(s - hosts) as usize * edges.len() + e] = (offset, pool.len() as u32 - offset);
            }
            for &other in &edges {
                diameter = diameter.zip(d[other as usize].checked_add(2)).map(|(a, b)| a.max(b));
            }
        }
        Tables { hosts, edge_of, edges, entries, pool, diameter }
    }

    /// The ports switch `switch` (a node id) may send a packet for host node `dst` on: at the
    /// host's edge switch its port, elsewhere the table's entry (empty: nothing reaches it).
    pub fn next_hops<'a>(&'a self, topo: &Topology, switch: u32, dst: u32) -> std::borrow::Cow<'a, [u32]> {
        let e = self.edge_of[dst as usize] as usize;
        if self.edges[e] == switch {
            let port = topo.ports.iter().position(|p| p.from == switch && p.to == dst).map(|p| p as u32);
            return std::borrow::Cow::Owned(port.into_iter().collect());
        }
        let (offset, len) = self.entries[(switch - self.hosts) as usize * self.edges.len() + e];
        std::borrow::Cow::Borrowed(&self.pool[offset as usize..(offset + len) as usize])
    }

    /// The most links between two hosts on shortest paths (`None`: some pair is cut off).
    pub fn diameter(&self) -> Option<u32> {
        self.diameter
    }

    /// Entries in all tables, and the ports they hold.
    pub fn size(&self) -> (usize, usize) {
        (self.entries.iter().filter(|e| e.1 > 0).count(), self.pool.len())
    }
}

/// What `fabricsim topology` prints of a fabric.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub hosts: u32,
    /// Switches per tier (0: leaves), and their names' prefix.
    pub switches: Vec<(String, u32)>,
    /// Links (both directions of one count once), per link tier.
    pub links: Vec<u32>,
    /// The most links between two hosts on shortest paths; `None`: some pair is cut off.
    pub diameter: Option<u32>,
    /// The maximum flow from the first half of the hosts (by id) to the second, bits/s.
    pub bisection_bps: u64,
    /// The same if every host sent at line rate: the hosts' half times their link rate.
    pub injection_bps: u64,
    /// Forwarding table entries and the ports they hold.
    pub table_entries: usize,
    pub table_ports: usize,
}

/// The summary of `topo`.
pub fn summary(topo: &Topology) -> Summary {
    let hosts = topo.hosts();
    let mut switches: Vec<(String, u32)> = Vec::new();
    for n in &topo.nodes[hosts as usize..] {
        let prefix: String = n.name.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        match switches.iter_mut().find(|(name, _)| *name == prefix) {
            Some((_, count)) => *count += 1,
            None => switches.push((prefix, 1)),
        }
    }
    let mut links = vec![0u32; topo.spec.tier_rates.len()];
    for p in topo.ports.iter().filter(|p| p.up) {
        links[p.tier as usize] += 1;
    }
    let tables = Tables::shortest_paths(topo, &[]);
    let (table_entries, table_ports) = tables.size();
    let half = hosts / 2;
    let a: Vec<u32> = (0..half).map(|h| topo.spec.slot(h)).collect();
    let b: Vec<u32> = (half..hosts).map(|h| topo.spec.slot(h)).collect();
    Summary {
        hosts,
        switches,
        links,
        diameter: tables.diameter(),
        bisection_bps: max_flow_bps(topo, &a, &b),
        injection_bps: u64::from(half) * topo.spec.tier_rates[0],
        table_entries,
        table_ports,
    }
}

/// The most bits per second the hosts `a` can send to the hosts `b` at once over `topo`'s
/// links (a maximum flow, Dinic's algorithm): with `a` the first half of the hosts and `b` the
/// second, an estimate of the bisection bandwidth (the least over all balanced cuts).
pub fn max_flow_bps(topo: &Topology, a: &[u32], b: &[u32]) -> u64 {
    let n = topo.nodes.len();
    let (source, sink) = (n, n + 1);
    // residual graph: each port and its reverse, then the source's and the sink's links
    let mut to: Vec<usize> = Vec::new();
    let mut cap: Vec<u64> = Vec::new();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n + 2];
    let mut add = |from: usize, dest: usize, c: u64| {
        adj[from].push(to.len());
        to.push(dest);
        cap.push(c);
        adj[dest].push(to.len());
        to.push(from);
        cap.push(0);
    };
    for p in &topo.ports {
        add(p.from as usize, p.to as usize, p.rate);
    }
    for &h in a {
        add(source, h as usize, u64::MAX / 4);
    }
    for &h in b {
        add(h as usize, sink, u64::MAX / 4);
    }
    let mut flow = 0u64;
    loop {
        // levels by breadth first search over edges with capacity left
        let mut level = vec![u32::MAX; n + 2];
        level[source] = 0;
        let mut queue = std::collections::VecDeque::from([source]);
        while let Some(v) = queue.pop_front() {
            for &e in &adj[v] {
                if cap[e] > 0 && level[to[e]] == u32::MAX {
                    level[to[e]] = level[v] + 1;
                    queue.push_back(to[e]);
                }
            }
        }
        if level[sink] == u32::MAX {
            return flow;
        }
        // blocking flow by depth-first search along the levels (iteratively: deep fabrics)
        let mut next = vec![0usize; n + 2];
        loop {
            let mut path: Vec<usize> = Vec::new(); // edges from the source
            let mut v = source;
            let pushed = loop {
                if v == sink {
                    break path.iter().map(|&e| cap[e]).min().unwrap_or(0);
                }
                let mut advanced = false;
                while next[v] < adj[v].len() {
                    let e = adj[v][next[v]];
                    if cap[e] > 0 && level[to[e]] == level[v] + 1 {
                        path.push(e);
                        v = to[e];
                        advanced = true;
                        break;
                    }
                    next[v] += 1;
                }
                if !advanced {
                    // a dead end: retreat
                    level[v] = u32::MAX;
                    match path.pop() {
                        Some(e) => {
                            v = to[e ^ 1];
                            next[v] += 1;
                        }
                        None => break 0,
                    }
                }
            };
            if pushed == 0 {
                break;
            }
            for &e in &path {
                cap[e] -= pushed;
                cap[e ^ 1] += pushed;
            }
            flow += pushed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{FatTreeSpec, TopologyConfig};

    fn tree(tiers: u32, hosts: u32, radix: u32, oversub: u32, rails: bool) -> Topology {
        let nics = if rails { 4 } else { 1 };
        let cfg = TopologyConfig { tiers, hosts, radix, oversubscription: oversub, nics_per_server: nics, rails, ..Default::default() };
        Topology::build(&FatTreeSpec::new(&cfg).unwrap())
    }

    /// The arithmetic's ports at `switch` towards host node `dst`: down where it lies below,
    /// else the up-ports (those `usable` leaves, where it restricts them).
    fn arithmetic(t: &Topology, usable: &[Option<Box<[u32]>>], switch: u32, dst: u32) -> Vec<u32> {
        let r = t.nodes[switch as usize].reach;
        if let Some(p) = r.down_port(dst) {
            return vec![p];
        }
        let leaf = (dst / t.spec.down0) as usize;
        match usable.get((switch - t.hosts()) as usize * t.spec.leaves as usize + leaf).and_then(|u| u.as_deref()) {
            Some(set) => set.iter().map(|&i| r.first_up() + i).collect(),
            None => (r.first_up()..r.first_up() + r.n_up).collect(),
        }
    }

    #[test]
    fn on_fat_trees_the_shortest_paths_are_the_up_down_arithmetic() {
        for (tiers, hosts, radix, oversub, rails) in
            [(2, 128, 16, 1, false), (2, 96, 16, 3, false), (3, 128, 8, 1, false), (3, 1024, 16, 1, false), (2, 128, 16, 1, true)]
        {
            let t = tree(tiers, hosts, radix, oversub, rails);
            let tables = Tables::shortest_paths(&t, &[]);
            for s in hosts..t.nodes.len() as u32 {
                for dst in 0..hosts {
                    assert_eq!(
                        tables.next_hops(&t, s, dst).to_vec(),
                        arithmetic(&t, &[], s, dst),
                        "{tiers}-tier {hosts}: switch {s} to host {dst}"
                    );
                }
            }
            assert_eq!(tables.diameter(), Some(2 * tiers), "{tiers}-tier {hosts}");
        }
    }

    #[test]
    fn dead_links_leave_the_up_ports_that_still_reach_the_leaf() {
        for (tiers, hosts, radix, dead) in [(2, 128, 16, vec!["leaf0:up3", "spine3:down0"]), (3, 128, 8, vec!["agg0:up1", "core1:down0"])] {
            let t = tree(tiers, hosts, radix, 1, false);
            let mut excluded = vec![false; t.ports.len()];
            for name in dead {
                excluded[t.port_by_name(name).unwrap() as usize] = true;
            }
            let usable = t.usable_up_ports(&excluded);
            let tables = Tables::shortest_paths(&t, &excluded);
            let mut restricted = 0;
            for s in t.spec.hosts..t.nodes.len() as u32 {
                for dst in 0..hosts {
                    let want = arithmetic(&t, &usable, s, dst);
                    let got = tables.next_hops(&t, s, dst).to_vec();
                    // where the arithmetic keeps a dead port (nothing better exists) the
                    // shortest paths go round it, a longer way; elsewhere they agree
                    if want.iter().all(|&p| !excluded[p as usize]) {
                        assert_eq!(got, want, "{tiers}-tier: switch {s} to host {dst}");
                        let r = t.nodes[s as usize].reach;
                        restricted += usize::from(r.down_port(dst).is_none() && (want.len() as u32) < r.n_up);
                    }
                }
            }
            assert!(restricted > 0, "{tiers}-tier: some switch routes round the dead link");
        }
    }

    #[test]
    fn the_bisection_of_a_fat_tree_is_its_spine_capacity() {
        // 128 hosts under 16 leaves, 8 spines, 400 Gb/s: half the hosts send 64 x 400 Gb/s; an
        // oversubscribed leaf (3:1) halves the fabric's share to a third of that
        let ids = |r: std::ops::Range<u32>| r.collect::<Vec<u32>>();
        let t = tree(2, 128, 16, 1, false);
        assert_eq!(max_flow_bps(&t, &ids(0..64), &ids(64..128)), 64 * 400_000_000_000);
        let o = tree(2, 96, 16, 3, false);
        assert_eq!(max_flow_bps(&o, &ids(0..48), &ids(48..96)), 16 * 400_000_000_000);
        // within one leaf nothing crosses the spines: each host's own link is the limit
        assert_eq!(max_flow_bps(&t, &ids(0..4), &ids(4..8)), 4 * 400_000_000_000);
    }
}
