//! Fat trees of 2 and 3 tiers, built from (hosts, switch radix, tiers, tier-0 oversubscription).
//!
//! Shape (k = radix, o = oversubscription, u = k/(1+o) leaf uplinks, d = k - u hosts per leaf):
//! - 2 tiers (leaf-spine): `hosts/d` leaves, `u` spines, every leaf has one link to every
//!   spine. A spine uses one port per leaf, so at most k leaves. PRIME Table I: 128 / 2048 /
//!   8192 hosts with 16 / 64 / 128 ports; the 1024-host 32x32 leaf-spine is 1024 hosts, radix 64.
//! - 3 tiers (leaf-aggregation-core, k-ary fat tree): pods of k/2 leaves and u aggregation
//!   switches (each leaf links to every aggregation switch of its pod); aggregation switch g
//!   of every pod links to the k/2 cores of core group g; a core has one port per pod, so at
//!   most k pods. 1024 hosts with k = 16 is the full k^3/4 tree.
//!
//! Numbering: hosts `0..H`, then switches tier by tier. Each node's ports are contiguous:
//! down ports first (towards hosts), then up ports, so routing is arithmetic: every switch
//! covers a contiguous host range `lo..hi`, and a packet for a host in it goes down port
//! `(dst - lo) / span`; anything else goes up. Link tiers: 0 = host-leaf, 1 = leaf-up,
//! 2 = aggregation-core.

use crate::error::{ensure, ScenarioError};
use crate::scenario::TopologyConfig;
use crate::time::Time;

/// The checked shape of a fat tree.
#[derive(Debug, Clone)]
pub struct FatTreeSpec {
    pub tiers: u32,
    pub hosts: u32,
    pub radix: u32,
    /// Hosts per leaf.
    pub down0: u32,
    /// Uplinks per leaf.
    pub up0: u32,
    pub leaves: u32,
    /// Leaves per pod (3 tiers) or all leaves (2 tiers).
    pub leaves_per_pod: u32,
    pub pods: u32,
    /// Rate (bit/s) of each link tier.
    pub tier_rates: Vec<u64>,
    /// Propagation latency (ps) of each link tier.
    pub tier_latencies: Vec<Time>,
    pub switch_latency: Time,
}

/// One hop of a path: a link of this rate, then this much delay until the next node handles
/// the packet (propagation plus, at a switch, its traversal latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub rate: u64,
    pub latency: Time,
}

impl FatTreeSpec {
    pub fn new(t: &TopologyConfig) -> Result<FatTreeSpec, ScenarioError> {
        ensure(t.tiers == 2 || t.tiers == 3, "topology.tiers", t.tiers, "allowed: 2 or 3")?;
        ensure(t.radix >= 2 && t.radix <= 1024, "topology.radix", t.radix, "allowed: 2 to 1024 ports")?;
        ensure(t.oversubscription >= 1, "topology.oversubscription", t.oversubscription, "allowed: 1 or more (down:up ratio)")?;
        let k = t.radix;
        ensure(
            k.is_multiple_of(1 + t.oversubscription),
            "topology.oversubscription",
            t.oversubscription,
            format!("allowed: a ratio o where radix ({k}) is divisible by 1 + o"),
        )?;
        let up0 = k / (1 + t.oversubscription);
        let down0 = k - up0;
        ensure(t.hosts >= 2, "topology.hosts", t.hosts, "allowed: at least 2")?;
        let tiers = t.tiers as usize;
        for (name, len) in
            [("topology.tier_link_rates", t.tier_link_rates.len()), ("topology.tier_link_latencies", t.tier_link_latencies.len())]
        {
            ensure(len == 0 || len == tiers, name, format!("{len} entries"), format!("allowed: none or one per link tier ({tiers})"))?;
        }
        let tier_rates: Vec<u64> =
            if t.tier_link_rates.is_empty() { vec![t.link_rate.0; tiers] } else { t.tier_link_rates.iter().map(|r| r.0).collect() };
        let tier_latencies: Vec<Time> = if t.tier_link_latencies.is_empty() {
            vec![t.link_latency.0; tiers]
        } else {
            t.tier_link_latencies.iter().map(|l| l.0).collect()
        };
        for (i, r) in tier_rates.iter().enumerate() {
            ensure(*r > 0, &format!("topology.tier_link_rates[{i}]"), format!("{r}bps"), "allowed: a positive rate")?;
        }
        ensure(t.link_rate.0 > 0, "topology.link_rate", t.link_rate, "allowed: a positive rate")?;

        let (leaves_per_pod, pods) = if t.tiers == 2 {
            ensure(
                t.hosts.is_multiple_of(down0),
                "topology.hosts",
                t.hosts,
                format!("allowed: a multiple of {down0} (hosts per leaf with radix {k} and oversubscription {})", t.oversubscription),
            )?;
            let leaves = t.hosts / down0;
            ensure(
                leaves <= k,
                "topology.hosts",
                t.hosts,
                format!("allowed: at most {} for a 2-tier tree of radix {k} (a spine has one port per leaf)", k * down0),
            )?;
            (leaves, 1)
        } else {
            let lpp = k / 2;
            let per_pod = down0 * lpp;
            ensure(
                t.hosts.is_multiple_of(per_pod),
                "topology.hosts",
                t.hosts,
                format!("allowed: a multiple of {per_pod} (hosts per pod: {lpp} leaves x {down0} hosts)"),
            )?;
            let pods = t.hosts / per_pod;
            ensure(
                pods <= k,
                "topology.hosts",
                t.hosts,
                format!("allowed: at most {} for a 3-tier tree of radix {k} (a core has one port per pod)", k * per_pod),
            )?;
            (lpp, pods)
        };
        Ok(FatTreeSpec {
            tiers: t.tiers,
            hosts: t.hosts,
            radix: k,
            down0,
            up0,
            leaves: t.hosts / down0,
            leaves_per_pod,
            pods,
            tier_rates,
            tier_latencies,
            switch_latency: t.switch_latency.0,
        })
    }

    /// Link tiers crossed between two hosts: [0, 0] under one leaf, [0, 1, 1, 0] within a
    /// pod (or any pair of a 2-tier tree), [0, 1, 2, 2, 1, 0] across pods.
    pub fn link_tiers(&self, src: u32, dst: u32) -> &'static [usize] {
        if src / self.down0 == dst / self.down0 {
            &[0, 0]
        } else if self.tiers == 2 || src / self.hosts_per_pod() == dst / self.hosts_per_pod() {
            &[0, 1, 1, 0]
        } else {
            &[0, 1, 2, 2, 1, 0]
        }
    }

    /// Up-ports of a switch at each tier that has them: leaves, then (3 tiers) aggregation.
    pub fn up_ports_per_tier(&self) -> Vec<u32> {
        if self.tiers == 2 {
            vec![self.up0]
        } else {
            vec![self.up0, self.radix - self.leaves_per_pod]
        }
    }

    /// Distinct shortest paths between two hosts: the up-port choices on the way up.
    pub fn path_count(&self, src: u32, dst: u32) -> usize {
        let ups = self.up_ports_per_tier();
        let climbs = self.link_tiers(src, dst).len() / 2 - 1; // switch tiers that choose an up-port
        ups.iter().take(climbs).map(|&n| n as usize).product()
    }

    pub fn hosts_per_pod(&self) -> u32 {
        self.down0 * self.leaves_per_pod
    }

    fn hops(&self, tiers: &[usize]) -> Vec<Hop> {
        let last = tiers.len() - 1;
        tiers
            .iter()
            .enumerate()
            .map(|(i, &t)| Hop {
                rate: self.tier_rates[t],
                latency: self.tier_latencies[t] + if i < last { self.switch_latency } else { 0 },
            })
            .collect()
    }

    /// The hops of any shortest path from `src` to `dst` (all such paths look alike).
    pub fn path(&self, src: u32, dst: u32) -> Vec<Hop> {
        self.hops(self.link_tiers(src, dst))
    }

    /// The hops of the longest shortest path (the fabric's diameter).
    pub fn diameter_path(&self) -> Vec<Hop> {
        self.hops(if self.tiers == 2 { &[0, 1, 1, 0] } else { &[0, 1, 2, 2, 1, 0] })
    }
}

/// A node: a host, or a switch with its routing range.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// Switch tier (0 = leaf); `None` for a host.
    pub tier: Option<u32>,
    /// Hosts reachable downwards: `lo..hi`, `span` hosts behind each down port.
    pub lo: u32,
    pub hi: u32,
    pub span: u32,
    pub first_port: u32,
    pub n_down: u32,
    pub n_up: u32,
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
}

/// The built fabric.
#[derive(Debug, Clone)]
pub struct Topology {
    pub spec: FatTreeSpec,
    pub nodes: Vec<Node>,
    pub ports: Vec<PortInfo>,
}

impl Topology {
    pub fn build(spec: &FatTreeSpec) -> Topology {
        let s = spec;
        let h = s.hosts;
        let k = s.radix;
        let (leaves, u) = (s.leaves, s.up0);
        let three = s.tiers == 3;
        let aggs = if three { s.pods * u } else { 0 };
        let agg_up = k - s.leaves_per_pod;
        let (mid_count, top_count) = if three { (aggs, u * agg_up) } else { (u, 0) };
        let leaf0 = h;
        let mid0 = leaf0 + leaves;
        let top0 = mid0 + mid_count;

        let mut topo = Topology { spec: s.clone(), nodes: Vec::new(), ports: Vec::new() };
        // Each entry: (name, tier, lo, hi, span, down neighbours, up neighbours).
        let add = |topo: &mut Topology, name: String, tier: Option<u32>, range: (u32, u32, u32), down: Vec<u32>, up: Vec<u32>| {
            let id = topo.nodes.len() as u32;
            let first_port = topo.ports.len() as u32;
            let (n_down, n_up) = (down.len() as u32, up.len() as u32);
            let link_tier_up = tier.map_or(0, |t| t + 1);
            let link_tier_down = tier.unwrap_or(0);
            for (i, to) in down.into_iter().enumerate() {
                topo.ports.push(port(s, format!("{name}:down{i}"), id, to, link_tier_down, false, h));
            }
            for (i, to) in up.into_iter().enumerate() {
                topo.ports.push(port(s, format!("{name}:up{i}"), id, to, link_tier_up, true, h));
            }
            topo.nodes.push(Node { name, tier, lo: range.0, hi: range.1, span: range.2, first_port, n_down, n_up });
        };
        for host in 0..h {
            add(&mut topo, format!("host{host}"), None, (host, host + 1, 1), vec![], vec![leaf0 + host / s.down0]);
        }
        for l in 0..leaves {
            let lo = l * s.down0;
            let up = if three {
                let pod = l / s.leaves_per_pod;
                (0..u).map(|j| mid0 + pod * u + j).collect()
            } else {
                (0..u).map(|j| mid0 + j).collect()
            };
            add(&mut topo, format!("leaf{l}"), Some(0), (lo, lo + s.down0, 1), (lo..lo + s.down0).collect(), up);
        }
        if three {
            let hp = s.hosts_per_pod();
            for a in 0..aggs {
                let (pod, g) = (a / u, a % u);
                let down = (0..s.leaves_per_pod).map(|i| leaf0 + pod * s.leaves_per_pod + i).collect();
                let up = (0..agg_up).map(|j| top0 + g * agg_up + j).collect();
                add(&mut topo, format!("agg{a}"), Some(1), (pod * hp, (pod + 1) * hp, s.down0), down, up);
            }
            for c in 0..top_count {
                let g = c / agg_up;
                let down = (0..s.pods).map(|p| mid0 + p * u + g).collect();
                add(&mut topo, format!("core{c}"), Some(2), (0, h, hp), down, vec![]);
            }
        } else {
            for sp in 0..u {
                add(&mut topo, format!("spine{sp}"), Some(1), (0, h, s.down0), (0..leaves).map(|l| leaf0 + l).collect(), vec![]);
            }
        }
        topo
    }

    pub fn hosts(&self) -> u32 {
        self.spec.hosts
    }

    pub fn switches(&self) -> usize {
        self.nodes.len() - self.spec.hosts as usize
    }

    /// After routing has excluded some links (`excluded[port]`), the up-ports each switch may
    /// still use towards each leaf: `out[(switch - hosts) * leaves + leaf]` is `Some(offsets
    /// among the switch's up-ports)` where some up-ports lead nowhere useful, `None` where all
    /// do (or none does: then nothing helps and the full group stays, packets are lost).
    pub fn usable_up_ports(&self, excluded: &[bool]) -> Vec<Option<Box<[u32]>>> {
        let hosts = self.hosts();
        let leaves = self.spec.leaves as usize;
        let switches = self.nodes.len() - hosts as usize;
        let mut memo = vec![0u8; switches * leaves];
        let mut out = vec![None; switches * leaves];
        for node in hosts..self.nodes.len() as u32 {
            let n = &self.nodes[node as usize];
            if n.n_up == 0 {
                continue;
            }
            let up = n.first_port + n.n_down;
            for leaf in 0..leaves as u32 {
                if (n.lo..n.hi).contains(&(leaf * self.spec.down0)) {
                    continue; // below this switch: routed down
                }
                let usable: Vec<u32> = (0..n.n_up)
                    .filter(|&i| {
                        let p = (up + i) as usize;
                        !excluded[p] && self.reaches(self.ports[p].to, leaf, excluded, &mut memo)
                    })
                    .collect();
                if !usable.is_empty() && usable.len() < n.n_up as usize {
                    out[(node - hosts) as usize * leaves + leaf as usize] = Some(usable.into_boxed_slice());
                }
            }
        }
        out
    }

    /// Whether `node` can still deliver to `leaf` over links routing has not excluded.
    fn reaches(&self, node: u32, leaf: u32, excluded: &[bool], memo: &mut [u8]) -> bool {
        let hosts = self.hosts();
        if node == hosts + leaf {
            return true;
        }
        let idx = (node - hosts) as usize * self.spec.leaves as usize + leaf as usize;
        if memo[idx] != 0 {
            return memo[idx] == 1;
        }
        let n = &self.nodes[node as usize];
        let host = leaf * self.spec.down0;
        let ok = if (n.lo..n.hi).contains(&host) {
            let p = (n.first_port + (host - n.lo) / n.span) as usize;
            !excluded[p] && self.reaches(self.ports[p].to, leaf, excluded, memo)
        } else {
            (0..n.n_up).any(|i| {
                let p = (n.first_port + n.n_down + i) as usize;
                !excluded[p] && self.reaches(self.ports[p].to, leaf, excluded, memo)
            })
        };
        memo[idx] = if ok { 1 } else { 2 };
        ok
    }

    /// Looks a port up by its stable name.
    pub fn port_by_name(&self, name: &str) -> Option<u32> {
        self.ports.iter().position(|p| p.name == name).map(|i| i as u32)
    }
}

fn port(s: &FatTreeSpec, name: String, from: u32, to: u32, tier: u32, up: bool, hosts: u32) -> PortInfo {
    let t = tier as usize;
    let to_switch = to >= hosts;
    PortInfo { name, from, to, tier, up, rate: s.tier_rates[t], delay: s.tier_latencies[t] + if to_switch { s.switch_latency } else { 0 } }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(tiers: u32, hosts: u32, radix: u32, oversub: u32) -> Result<Topology, ScenarioError> {
        let cfg = TopologyConfig { tiers, hosts, radix, oversubscription: oversub, ..Default::default() };
        Ok(Topology::build(&FatTreeSpec::new(&cfg)?))
    }

    fn count(t: &Topology, prefix: &str) -> usize {
        t.nodes.iter().filter(|n| n.name.starts_with(prefix)).count()
    }

    #[test]
    fn prime_table_one_and_leaf_spine_sizes_build() {
        // (tiers, hosts, radix) -> (leaves, tier-1 switches, tier-2 switches)
        for (tiers, hosts, radix, leaves, mid, top) in [
            (2, 128, 16, 16, 8, 0),
            (2, 2048, 64, 64, 32, 0),
            (2, 8192, 128, 128, 64, 0),
            (3, 1024, 16, 128, 128, 64),
            (2, 1024, 64, 32, 32, 0),
        ] {
            let t = build(tiers, hosts, radix, 1).unwrap();
            assert_eq!(count(&t, "leaf"), leaves, "{tiers} {hosts}");
            assert_eq!(count(&t, if tiers == 2 { "spine" } else { "agg" }), mid);
            assert_eq!(count(&t, "core"), top);
            // Every switch uses at most `radix` ports; links are full duplex.
            for n in &t.nodes[hosts as usize..] {
                assert!(n.n_down + n.n_up <= radix, "{}", n.name);
            }
            let mut pairs: Vec<(u32, u32)> = t.ports.iter().map(|p| (p.from.min(p.to), p.from.max(p.to))).collect();
            pairs.sort();
            assert!(pairs.chunks(2).all(|c| c.len() == 2 && c[0] == c[1]), "every link has two directions");
        }
    }

    #[test]
    fn oversubscription_splits_leaf_ports() {
        let t = build(2, 96, 16, 3).unwrap();
        let leaf = &t.nodes[96];
        assert_eq!((leaf.n_down, leaf.n_up), (12, 4));
        assert_eq!(count(&t, "spine"), 4);
    }

    #[test]
    fn down_routing_reaches_every_host() {
        for (tiers, hosts, radix) in [(2, 128, 16), (3, 128, 8)] {
            let t = build(tiers, hosts, radix, 1).unwrap();
            for dst in 0..hosts {
                // Start at the top-most switch that covers everything and walk down.
                let mut node = t.nodes.len() as u32 - 1;
                while node >= hosts {
                    let n = &t.nodes[node as usize];
                    assert!((n.lo..n.hi).contains(&dst));
                    let p = n.first_port + (dst - n.lo) / n.span;
                    node = t.ports[p as usize].to;
                }
                assert_eq!(node, dst);
            }
        }
    }

    #[test]
    fn path_counts() {
        let t2 = build(2, 128, 16, 1).unwrap().spec;
        assert_eq!((t2.path_count(0, 1), t2.path_count(0, 100)), (1, 8));
        let t3 = build(3, 128, 8, 1).unwrap().spec;
        // 4 hosts per leaf, 16 per pod; 4 aggregation uplinks per leaf, 4 core uplinks per agg
        assert_eq!((t3.path_count(0, 1), t3.path_count(0, 5), t3.path_count(0, 100)), (1, 4, 16));
    }

    #[test]
    fn a_dead_spine_link_is_avoided_for_that_leaf_only() {
        let t = build(2, 128, 16, 1).unwrap();
        let mut excluded = vec![false; t.ports.len()];
        let dead = t.port_by_name("leaf0:up3").unwrap() as usize;
        let back = t.port_by_name("spine3:down0").unwrap() as usize;
        excluded[dead] = true;
        excluded[back] = true;
        let sets = t.usable_up_ports(&excluded);
        let leaves = 16;
        // leaf 5 must not go via spine 3 to reach leaf 0, but may for leaf 1
        let leaf5 = 5;
        assert_eq!(sets[leaf5 * leaves].as_deref(), Some(&[0, 1, 2, 4, 5, 6, 7][..]));
        assert_eq!(sets[leaf5 * leaves + 1], None);
        // leaf 0 itself avoids its dead uplink for every destination
        assert_eq!(sets[2].as_deref(), Some(&[0, 1, 2, 4, 5, 6, 7][..]));
    }

    #[test]
    fn bad_shapes_are_rejected_with_the_field() {
        let e = build(2, 100, 16, 1).unwrap_err();
        assert_eq!(e.field, "topology.hosts");
        assert!(e.message.contains("multiple of 8"), "{e}");
        assert_eq!(build(4, 128, 16, 1).unwrap_err().field, "topology.tiers");
        assert_eq!(build(2, 256, 16, 1).unwrap_err().field, "topology.hosts");
        assert_eq!(build(2, 128, 16, 2).unwrap_err().field, "topology.oversubscription");
    }
}
