//! The fabric read as a graph, without its shape: the summary `fabricsim topology` prints
//! (switches, links, the diameter and table sizes from the forwarding tables, a bisection
//! estimate by maximum flow).

use super::Topology;

/// What `fabricsim topology` prints of a fabric.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub hosts: u32,
    /// Each host's NIC ports on the fabric: a multi-plane fabric's planes, a fat tree's
    /// `nics_per_gpu`, a graph's hosts per `gpu`; else 1.
    pub ports_per_host: u32,
    /// Switches by tier and the letters their names open with, each group labelled by what its
    /// names share but the index (`leaf`, `spine`, InfraGraph's `tier_0`).
    pub switches: Vec<(String, u32)>,
    /// Links (both directions of one count once), per link tier.
    pub links: Vec<u32>,
    /// The most links between two hosts on shortest paths.
    pub diameter: u32,
    /// The maximum flow from the first half of the hosts (by id) to the second, bits/s.
    pub bisection_bps: u64,
    /// The same if every host sent at line rate: the hosts' half times their link rate.
    pub injection_bps: u64,
    /// Forwarding table entries, and the ports of their distinct groups.
    pub table_entries: usize,
    pub table_ports: usize,
    /// The switches whose links to hosts and to switches differ from most of their group's (a
    /// leaf built with two uplinks fewer, a graph with a link missing): `"leaf3: links to 8
    /// hosts and 6 switches, where 15 leaf switches have 8 and 8"`, at most
    /// [`IRREGULAR_SHOWN`], and how many there are.
    pub irregular: Vec<String>,
    pub irregular_count: usize,
}

/// The irregular switches [`Summary::irregular`] names.
pub const IRREGULAR_SHOWN: usize = 12;

/// The summary of `topo`.
pub fn summary(topo: &Topology) -> Summary {
    let hosts = topo.hosts();
    // by the letters their names open with and their tier, each group named by what its
    // names share but the index (`leaf`, `spine`; InfraGraph's `tier_0.3` and `tier_1.0`:
    // `tier_0`, `tier_1`; a dragonfly's `g0r1`: `g`)
    let mut groups: Vec<(String, Option<u32>, String, u32)> = Vec::new();
    for n in &topo.nodes[hosts as usize..] {
        let letters: String = n.name.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        match groups.iter_mut().find(|(l, tier, _, _)| *l == letters && *tier == n.tier) {
            Some((_, _, shared, count)) => {
                let common = shared.chars().zip(n.name.chars()).take_while(|(a, b)| a == b).count();
                shared.truncate(shared.char_indices().nth(common).map_or(shared.len(), |(k, _)| k));
                *count += 1;
            }
            None => groups.push((letters, n.tier, n.name.clone(), 1)),
        }
    }
    let switches: Vec<(String, u32)> = groups
        .iter()
        .map(|(letters, _, shared, count)| {
            let label = shared.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end_matches(['.', '_', '-', ':']);
            (if label.is_empty() { letters.clone() } else { label.to_string() }, *count)
        })
        .collect();
    let (irregular, irregular_count) = irregular(topo, &groups, &switches);
    let mut links = vec![0u32; topo.ports.iter().map(|p| p.tier as usize + 1).max().unwrap_or(0)];
    for p in topo.ports.iter().filter(|p| p.up) {
        links[p.tier as usize] += 1;
    }
    let tables = &topo.tables;
    let (table_entries, table_ports) = tables.size();
    // the first half of the scenario's hosts against the second, every plane's node of each
    let (gpus, planes) = (topo.gpus(), topo.planes());
    let half = gpus / 2;
    let nodes = |r: std::ops::Range<u32>| r.flat_map(|h| (0..planes).map(move |p| topo.slot_on(h, p))).collect::<Vec<u32>>();
    let (a, b) = (nodes(0..half), nodes(half..gpus));
    Summary {
        hosts: gpus,
        ports_per_host: planes,
        switches,
        links,
        diameter: tables.diameter(),
        bisection_bps: max_flow_bps(topo, &a, &b),
        injection_bps: u64::from(half) * u64::from(planes) * topo.host_rate(),
        table_entries,
        table_ports,
        irregular,
        irregular_count,
    }
}

/// The switches whose (links to hosts, links to switches) differ from the most common of their group's
/// (`groups`: letters, tier, shared name, count; `labels`: each group's label).
fn irregular(topo: &Topology, groups: &[(String, Option<u32>, String, u32)], labels: &[(String, u32)]) -> (Vec<String>, usize) {
    // (links to hosts, links to switches): up and down mean little in a dragonfly's groups
    let mut degree = vec![(0u32, 0u32); topo.nodes.len()];
    for p in &topo.ports {
        let d = &mut degree[p.from as usize];
        if p.to < topo.hosts() {
            d.0 += 1;
        } else {
            d.1 += 1;
        }
    }
    let group_of = |n: &super::Node| {
        let letters: String = n.name.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        groups.iter().position(|(l, tier, _, _)| *l == letters && *tier == n.tier)
    };
    let switches = || (topo.hosts() as usize..topo.nodes.len()).filter_map(|k| Some((k, group_of(&topo.nodes[k])?)));
    let mut counts: Vec<std::collections::BTreeMap<(u32, u32), u32>> = vec![Default::default(); groups.len()];
    for (k, g) in switches() {
        *counts[g].entry(degree[k]).or_default() += 1;
    }
    // the most common, the lowest on a tie
    let usual: Vec<(u32, u32)> =
        counts.iter().map(|c| c.iter().max_by_key(|&(d, n)| (*n, std::cmp::Reverse(*d))).map_or((0, 0), |(d, _)| *d)).collect();
    let odd: Vec<(usize, usize)> = switches().filter(|&(k, g)| degree[k] != usual[g]).collect();
    let said = odd
        .iter()
        .take(IRREGULAR_SHOWN)
        .map(|&(k, g)| {
            let ((hosts, switches), (h, s)) = (degree[k], usual[g]);
            let others = counts[g].get(&usual[g]).copied().unwrap_or(0);
            format!(
                "{}: links to {hosts} hosts and {switches} switches, where {others} {} switches have {h} and {s}",
                topo.nodes[k].name, labels[g].0
            )
        })
        .collect();
    (said, odd.len())
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
    use crate::topology::tree;

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
