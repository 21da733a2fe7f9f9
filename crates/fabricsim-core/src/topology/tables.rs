//! Forwarding tables: what a switch holds to route a packet, built from the graph of nodes and
//! ports alone (no topology's shape), in the form of the reference simulator's route tables
//! (htsim `routetable.h`: per destination, the next hops; `Switch::getNextHop` picks one).
//!
//! A node is a host or a switch and each port is one direction of a link (`PortInfo`: from,
//! to, rate). Every host hangs from one switch, its **edge switch**; the hosts of one edge
//! switch are one destination **class**: every other switch treats them alike. A switch's
//! entry for a class is one of:
//! - **deliver**: the class's own edge switch, which sends the packet down the port into the
//!   destination host;
//! - **a port**: the one next hop on a shortest path (a fat tree's switch above the
//!   destination: routing down is deterministic);
//! - **a group**: two or more ports that each start a shortest path. The switch's routing rule
//!   (`switch::routing`: ECMP hashing, spraying, adaptive, the packet's MP-EV) picks one, and
//!   the packet's path id records which (its position in the group).
//!
//! "Shortest" is least total cost, each port counting its `cost` (1 unless a graph's link
//! gives one: then a shortest path has the fewest links). Tables are built by breadth-first
//! search back from each class's edge switch over the intact graph, or by Dijkstra's algorithm
//! where links cost more than 1 (`least_cost.rs`: a dragonfly's global links); hosts relay
//! nothing. On a fat tree the shortest paths are exactly the up-down
//! (valley-free) paths: a switch below the destination has its one down port, any other all
//! its up-ports in port order; the tests check this against the tree's arithmetic on every
//! shape.
//!
//! **Reconvergence** ([`Tables::restrict`]): when routing learns that links are down, each
//! group keeps the ports whose far end still reaches the class over live links along the
//! tables' own next hops. A group none of whose ports still reaches the class keeps them all
//! (nothing better exists: its packets are lost where the path is cut), and single next hops
//! stay: a switch does not detour by a longer, non-shortest path (up-down routing never goes
//! down and up again).

mod least_cost;
use least_cost::least_costs;

use super::{Node, PortInfo};

/// An entry's code: a port id, [`GROUP`] | group index, or [`DELIVER`].
const GROUP: u32 = 1 << 31;
const DELIVER: u32 = u32::MAX;
/// The entry of a switch that cannot reach the class (a fabric of islands, such as a rail-only
/// one, that the servers' scale-up networks join).
const UNREACHABLE: u32 = GROUP - 1;

/// Where a switch sends a packet, by its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The port into the destination host: this is its edge switch.
    Deliver(u32),
    /// The one next hop.
    Port(u32),
    /// A group of next hops (its index): the switch's rule picks one.
    Group(u32),
}

/// Every switch's forwarding table.
#[derive(Debug, Clone)]
pub struct Tables {
    hosts: u32,
    /// Per host node: its class (the index of its edge switch among `edges`).
    class_of: Vec<u32>,
    /// The edge switches (node ids), one per class.
    edges: Vec<u32>,
    /// Per host node: the port out of it (to its edge switch), and the port into it.
    out_of_host: Vec<u32>,
    into_host: Vec<u32>,
    /// Per (switch - hosts) * classes + class: the entry's code.
    entries: Vec<u32>,
    /// The groups: (offset into `pool`, ports), each distinct set once.
    groups: Vec<(u32, u32)>,
    pool: Vec<u32>,
    /// The most links between two hosts on shortest paths, and two hosts that far apart.
    diameter: u32,
    farthest: (u32, u32),
    /// Where the fabric is not connected: the first switch found that cannot reach an edge
    /// switch, said so.
    split: Option<String>,
}

impl Tables {
    /// The shortest-path tables of a graph (`hosts` first among the `nodes`); an error names a
    /// host without exactly one link. Switches that cannot reach a class hold no entry for it
    /// ([`Tables::split`] says where: the caller decides whether islands are allowed).
    pub fn shortest_paths(hosts: u32, nodes: &[Node], ports: &[PortInfo]) -> Result<Tables, String> {
        let n = nodes.len();
        let mut out_of_host = vec![u32::MAX; hosts as usize];
        let mut into_host = vec![u32::MAX; hosts as usize];
        // the switch-to-switch ports out of each switch, with their far ends, in port order (a
        // group lists its ports so), and the near ends of those into each, for the searches
        // back from a destination
        let mut out: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut into: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (i, p) in ports.iter().enumerate() {
            let i = i as u32;
            if p.from < hosts {
                if out_of_host[p.from as usize] != u32::MAX {
                    return Err(format!("{} has more than one link", nodes[p.from as usize].name));
                }
                out_of_host[p.from as usize] = i;
            } else if p.to < hosts {
                into_host[p.to as usize] = i;
            } else {
                into[p.to as usize].push((p.from, p.cost));
                out[p.from as usize].push((i, p.to));
            }
        }
        if let Some(h) = out_of_host.iter().position(|&p| p == u32::MAX) {
            return Err(format!("{} has no link", nodes[h].name));
        }
        if i64::try_from(ports.len()).unwrap_or(i64::MAX) >= i64::from(UNREACHABLE) {
            return Err(format!("{} ports; allowed: fewer than 2^31 - 1", ports.len()));
        }
        let edge_node: Vec<u32> = out_of_host.iter().map(|&p| ports[p as usize].to).collect();
        let mut edges = edge_node.clone();
        edges.sort_unstable();
        edges.dedup();
        let class_of: Vec<u32> = edge_node.iter().map(|e| edges.binary_search(e).unwrap_or(0) as u32).collect();
        let (switches, classes) = (n - hosts as usize, edges.len());
        let mut entries = vec![DELIVER; switches * classes];
        let mut interned: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
        let (mut groups, mut pool) = (Vec::new(), Vec::new());
        // the group each switch named last: most switches name one group for many classes
        let mut last: Vec<u32> = vec![u32::MAX; switches];
        let mut diameter = if hosts > 1 { 2 } else { 0 };
        let mut farthest = (0, hosts.saturating_sub(1).min(1));
        let mut a_host = vec![u32::MAX; classes];
        for (h, &c) in class_of.iter().enumerate().rev() {
            a_host[c as usize] = h as u32;
        }
        // per node, its least cost to the edge switch, and the most links of a least-cost path
        let (mut d, mut links) = (vec![u32::MAX; n], vec![0u32; n]);
        let weighted = ports.iter().any(|p| p.cost != 1);
        let cost = |p: u32| ports[p as usize].cost;
        let (mut frontier, mut further, mut next) = (Vec::new(), Vec::new(), Vec::new());
        let mut split = None;
        for (c, &edge) in edges.iter().enumerate() {
            // from the edge switch, backwards over switch-to-switch ports: breadth first where
            // every link costs 1 (costs are hops), else by least cost (Dijkstra)
            d.fill(u32::MAX);
            d[edge as usize] = 0;
            if weighted {
                least_costs(edge, &into, &out, cost, &mut d, &mut links);
            } else {
                frontier.clear();
                frontier.push(edge);
                while !frontier.is_empty() {
                    further.clear();
                    for &w in &frontier {
                        for &(v, _) in &into[w as usize] {
                            if d[v as usize] == u32::MAX {
                                d[v as usize] = d[w as usize] + 1;
                                further.push(v);
                            }
                        }
                    }
                    std::mem::swap(&mut frontier, &mut further);
                }
            }
            for s in hosts..n as u32 {
                let ds = d[s as usize];
                if ds == u32::MAX {
                    let far = nodes[edge as usize].name.as_str();
                    split.get_or_insert_with(|| format!("{} cannot reach {far}: the fabric is not connected", nodes[s as usize].name));
                    entries[(s - hosts) as usize * classes + c] = UNREACHABLE;
                    continue;
                }
                if ds == 0 {
                    continue; // the edge switch delivers
                }
                next.clear();
                // the ports to a node one link (or its cost) nearer
                let on_path = |&&(p, to): &&(u32, u32)| {
                    if weighted {
                        d[to as usize].saturating_add(cost(p)) == ds
                    } else {
                        d[to as usize] == ds - 1
                    }
                };
                next.extend(out[s as usize].iter().filter(on_path).map(|&(p, _)| p));
                let sw = (s - hosts) as usize;
                entries[sw * classes + c] = match next[..] {
                    [port] => port,
                    _ => {
                        let same = last[sw] != u32::MAX && {
                            let (offset, len) = groups[last[sw] as usize];
                            pool[offset as usize..(offset + len) as usize] == next[..]
                        };
                        if !same {
                            last[sw] = match interned.get(&next) {
                                Some(&id) => id,
                                None => {
                                    groups.push((pool.len() as u32, next.len() as u32));
                                    pool.extend_from_slice(&next);
                                    interned.insert(next.clone(), groups.len() as u32 - 1);
                                    groups.len() as u32 - 1
                                }
                            };
                        }
                        GROUP | last[sw]
                    }
                };
            }
            for (from, &e) in edges.iter().enumerate().filter(|&(_, &e)| d[e as usize] != u32::MAX) {
                let hops = if weighted { links[e as usize] } else { d[e as usize] };
                if hops + 2 > diameter {
                    diameter = hops + 2;
                    farthest = (a_host[from], a_host[c]);
                }
            }
        }
        let mut t = Tables { hosts, class_of, edges, out_of_host, into_host, entries, groups, pool, diameter, farthest, split };
        if !t.reachable(t.farthest.0, t.farthest.1) {
            // islands, none longer than a host's own edge switch: two hosts of one
            let c = t.class_of[0];
            t.farthest = (0, (1..hosts).find(|&h| t.class_of[h as usize] == c).unwrap_or(0));
        }
        Ok(t)
    }

    /// Where the fabric is not connected, the first switch that cannot reach an edge switch.
    pub fn split(&self) -> Option<&str> {
        self.split.as_deref()
    }

    /// Whether packets from host node `a` reach host node `b` over the fabric.
    pub fn reachable(&self, a: u32, b: u32) -> bool {
        let (ca, cb) = (self.class_of[a as usize], self.class_of[b as usize]);
        ca == cb || self.entries[self.key_of_class(self.edges[ca as usize], cb)] != UNREACHABLE
    }

    /// Destination classes (edge switches).
    pub fn classes(&self) -> usize {
        self.edges.len()
    }

    /// The destination class of host node `host`.
    #[inline]
    pub fn class(&self, host: u32) -> u32 {
        self.class_of[host as usize]
    }

    /// The edge switch (node id) of class `class`.
    pub fn edge(&self, class: u32) -> u32 {
        self.edges[class as usize]
    }

    /// The index of switch node `switch`'s entry for host node `dst` (the key of
    /// [`Tables::restrict`]'s sets).
    #[inline(always)]
    pub fn key(&self, switch: u32, dst: u32) -> usize {
        self.key_of_class(switch, self.class_of[dst as usize])
    }

    /// The index of switch node `switch`'s entry for destination class `class`.
    #[inline(always)]
    pub fn key_of_class(&self, switch: u32, class: u32) -> usize {
        (switch - self.hosts) as usize * self.edges.len() + class as usize
    }

    /// The first of the next hops the entry at `key` names; `None` where it delivers (or
    /// cannot reach the class).
    #[inline]
    pub fn first_hop(&self, key: usize) -> Option<u32> {
        match self.entries[key] {
            DELIVER | UNREACHABLE => None,
            code if code & GROUP != 0 => Some(self.group(code & !GROUP)[0]),
            port => Some(port),
        }
    }

    /// The class whose edge switch is node `switch`, if it is one.
    pub fn class_of_edge(&self, switch: u32) -> Option<u32> {
        self.edges.binary_search(&switch).ok().map(|c| c as u32)
    }

    /// The entry at `key` for host node `dst`.
    #[inline(always)]
    pub fn next(&self, key: usize, dst: u32) -> Next {
        match self.entries[key] {
            DELIVER => Next::Deliver(self.into_host[dst as usize]),
            code if code & GROUP != 0 => Next::Group(code & !GROUP),
            port => Next::Port(port),
        }
    }

    /// The ports of group `id`, in port order.
    #[inline(always)]
    pub fn group(&self, id: u32) -> &[u32] {
        let (offset, len) = self.groups[id as usize];
        &self.pool[offset as usize..(offset + len) as usize]
    }

    /// Host node `host`'s port to its edge switch.
    #[inline]
    pub fn out_of_host(&self, host: u32) -> u32 {
        self.out_of_host[host as usize]
    }

    /// The port from host node `host`'s edge switch into it.
    #[inline]
    pub fn into_host(&self, host: u32) -> u32 {
        self.into_host[host as usize]
    }

    /// The ports switch node `switch` may send a packet for host node `dst` on.
    pub fn next_hops(&self, switch: u32, dst: u32) -> Vec<u32> {
        match self.next(self.key(switch, dst), dst) {
            Next::Deliver(p) | Next::Port(p) => vec![p],
            Next::Group(g) => self.group(g).to_vec(),
        }
    }

    /// The most links between two hosts on shortest paths.
    pub fn diameter(&self) -> u32 {
        self.diameter
    }

    /// The most next hops switch node `switch`'s table offers for any destination (1 where
    /// it never chooses).
    pub fn most_choices(&self, switch: u32) -> u32 {
        let c = self.classes();
        let row = &self.entries[(switch - self.hosts) as usize * c..][..c];
        row.iter()
            .filter(|&&code| code != DELIVER && code & GROUP != 0)
            .map(|&code| self.groups[(code & !GROUP) as usize].1)
            .max()
            .unwrap_or(1)
    }

    /// Two host nodes [`Tables::diameter`] links apart, the first such pair found.
    pub fn farthest(&self) -> (u32, u32) {
        self.farthest
    }

    /// Entries in all tables (the edge switches' own classes included), and the distinct
    /// groups' ports.
    pub fn size(&self) -> (usize, usize) {
        (self.entries.len(), self.pool.len())
    }

    /// After routing has excluded the ports `excluded[port]`, what each group may still use:
    /// the positions in the group of the ports that still reach the class, where some no
    /// longer do; a group none of whose ports does keeps them all (nothing better exists: its
    /// packets are lost where the path is cut).
    pub fn restrict(&self, ports: &[PortInfo], excluded: &[bool]) -> Restriction {
        let classes = self.classes();
        let to: Vec<u32> = ports.iter().map(|p| p.to).collect();
        let mut memo = vec![0u8; self.entries.len()];
        let mut r = Restriction { of_entry: vec![u32::MAX; self.entries.len()], sets: Vec::new() };
        let mut interned: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
        let mut usable = Vec::new();
        for key in 0..self.entries.len() {
            let code = self.entries[key];
            if code == DELIVER || code & GROUP == 0 {
                continue;
            }
            let group = self.group(code & !GROUP);
            let class = key % classes;
            usable.clear();
            for (i, &p) in group.iter().enumerate() {
                if !excluded[p as usize] && self.reaches(&to, to[p as usize], class, excluded, &mut memo) {
                    usable.push(i as u32);
                }
            }
            if !usable.is_empty() && usable.len() < group.len() {
                r.of_entry[key] = *interned.entry(usable.clone()).or_insert_with_key(|set| {
                    r.sets.push(set.clone().into_boxed_slice());
                    r.sets.len() as u32 - 1
                });
            }
        }
        r
    }

    /// Whether switch node `node` still delivers to `class` over live ports along the tables
    /// (`to`: each port's far end).
    fn reaches(&self, to: &[u32], node: u32, class: usize, excluded: &[bool], memo: &mut [u8]) -> bool {
        let key = (node - self.hosts) as usize * self.classes() + class;
        if memo[key] != 0 {
            return memo[key] == 1;
        }
        let mut live = |p: u32| !excluded[p as usize] && self.reaches(to, to[p as usize], class, excluded, memo);
        let ok = match self.entries[key] {
            DELIVER => true,
            code if code & GROUP != 0 => self.group(code & !GROUP).iter().any(|&p| live(p)),
            port => live(port),
        };
        memo[key] = if ok { 1 } else { 2 };
        ok
    }
}

/// What routing still allows after it excluded links ([`Tables::restrict`]).
#[derive(Debug, Clone, Default)]
pub struct Restriction {
    /// Per table entry: the index of its set in `sets`, or `u32::MAX` where nothing restricts
    /// the group (or it is no group).
    of_entry: Vec<u32>,
    /// The distinct sets of positions.
    sets: Vec<Box<[u32]>>,
}

impl Restriction {
    /// The positions of its group that entry `key` may still use; `None` where all may.
    #[inline]
    pub fn usable(&self, key: usize) -> Option<&[u32]> {
        let set = *self.of_entry.get(key)?;
        self.sets.get(set as usize).map(|s| &s[..])
    }
}

#[cfg(test)]
mod tests;
