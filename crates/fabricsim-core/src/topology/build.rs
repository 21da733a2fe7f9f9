//! Building the nodes and ports of a fat tree, and what routing can still reach after
//! links are excluded.

use super::FatTreeSpec;
use crate::time::Time;

/// A node: a host, or a switch with its routing range.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// Switch tier (0 = leaf); `None` for a host.
    pub tier: Option<u32>,
    pub reach: Reach,
}

/// Where a node's ports lead: hosts `lo..hi` lie below it, `span` behind each of its `n_down`
/// down ports (ports `first_port..`), followed by its `n_up` up ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    pub lo: u32,
    pub hi: u32,
    pub span: u32,
    pub first_port: u32,
    pub n_down: u32,
    pub n_up: u32,
}

impl Reach {
    /// The down port towards `host`, if `host` lies below: routing down is arithmetic.
    #[inline]
    pub fn down_port(&self, host: u32) -> Option<u32> {
        (self.lo..self.hi).contains(&host).then(|| self.first_port + (host - self.lo) / self.span)
    }

    /// The first up port (up-port offsets count from it).
    #[inline]
    pub fn first_up(&self) -> u32 {
        self.first_port + self.n_down
    }
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
            topo.nodes.push(Node { name, tier, reach: Reach { lo: range.0, hi: range.1, span: range.2, first_port, n_down, n_up } });
        };
        // host nodes are leaf slots, named by the host the scenario numbers there
        for slot in 0..h {
            add(&mut topo, format!("host{}", s.host(slot)), None, (slot, slot + 1, 1), vec![], vec![leaf0 + slot / s.down0]);
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
            if n.reach.n_up == 0 {
                continue;
            }
            let up = n.reach.first_port + n.reach.n_down;
            for leaf in 0..leaves as u32 {
                if n.reach.down_port(leaf * self.spec.down0).is_some() {
                    continue; // below this switch: routed down
                }
                let usable: Vec<u32> = (0..n.reach.n_up)
                    .filter(|&i| {
                        let p = (up + i) as usize;
                        !excluded[p] && self.reaches(self.ports[p].to, leaf, excluded, &mut memo)
                    })
                    .collect();
                if !usable.is_empty() && usable.len() < n.reach.n_up as usize {
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
        let ok = if let Some(p) = n.reach.down_port(host) {
            let p = p as usize;
            !excluded[p] && self.reaches(self.ports[p].to, leaf, excluded, memo)
        } else {
            (0..n.reach.n_up).any(|i| {
                let p = (n.reach.first_port + n.reach.n_down + i) as usize;
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
    use crate::error::ScenarioError;
    use crate::topology::TopologyConfig;

    fn build(tiers: u32, hosts: u32, radix: u32, oversub: u32) -> Result<Topology, ScenarioError> {
        let cfg = TopologyConfig { tiers, hosts, radix, oversubscription: oversub, ..Default::default() };
        Ok(Topology::build(&FatTreeSpec::new(&cfg)?))
    }

    #[test]
    fn rails_put_nic_i_of_a_group_on_leaf_i() {
        // 2 tiers, radix 8: 4 hosts per leaf; 4 NICs per server: a rail group is 4 servers
        let cfg = TopologyConfig { hosts: 32, radix: 8, nics_per_server: 4, rails: true, ..Default::default() };
        let spec = FatTreeSpec::new(&cfg).unwrap();
        let t = Topology::build(&spec);
        let leaf_of = |host: u32| t.nodes[spec.slot(host) as usize].reach.lo / spec.down0;
        for server in 0..8 {
            for nic in 0..4 {
                let h = server * 4 + nic;
                assert_eq!(leaf_of(h), (server / 4) * 4 + nic, "host {h}");
                assert_eq!(t.nodes[spec.slot(h) as usize].name, format!("host{h}"));
                assert_eq!(spec.host(spec.slot(h)), h);
            }
        }
        // without rails, a server's NICs are consecutive hosts under one leaf
        let plain = FatTreeSpec::new(&TopologyConfig { rails: false, ..cfg.clone() }).unwrap();
        assert!((0..32).all(|h| plain.slot(h) == h && plain.host(h) == h));
        for (bad, field) in [
            (TopologyConfig { hosts: 16 + 4, ..cfg.clone() }, "topology.hosts"),
            (TopologyConfig { nics_per_server: 1, ..cfg.clone() }, "topology.rails"),
            (TopologyConfig { nics_per_server: 0, ..cfg.clone() }, "topology.nics_per_server"),
            (TopologyConfig { nics_per_server: 3, rails: false, hosts: 32, ..cfg.clone() }, "topology.hosts"),
        ] {
            assert_eq!(FatTreeSpec::new(&bad).unwrap_err().field, field, "{bad:?}");
        }
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
                assert!(n.reach.n_down + n.reach.n_up <= radix, "{}", n.name);
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
        assert_eq!((leaf.reach.n_down, leaf.reach.n_up), (12, 4));
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
                    let p = n.reach.down_port(dst).expect("the top switch covers every host, and each one below covers dst");
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
