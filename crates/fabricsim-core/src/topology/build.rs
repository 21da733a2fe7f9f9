//! The fat tree generator: the nodes and ports of a 2- or 3-tier tree; routing is the
//! forwarding tables built from them (`topology::tables`).

use super::{FatTreeSpec, HostMap, Node, PortInfo, Topology};
use crate::error::ScenarioError;

impl Topology {
    /// The fat tree of `spec`, with its tables.
    pub fn build(spec: &FatTreeSpec) -> Result<Topology, ScenarioError> {
        let (nodes, ports) = Self::tree(spec);
        let g = spec.per_gpu;
        let mut hosts = HostMap::new(spec.hosts / g, spec.nics / g, spec.scale_up);
        if g > 1 {
            // GPU `h`'s NIC `i` is the tree's NIC `h * g + i`, the GPU's port `i`
            // (`HostMap::planes`: `node_of[i * gpus + h]`)
            let gpus = spec.hosts / g;
            hosts.planes = g;
            hosts.node_of = (0..spec.hosts).map(|v| spec.slot((v % gpus) * g + v / gpus)).collect();
            hosts.host_at = (0..spec.hosts).map(|s| spec.host(s) / g).collect();
        } else if spec.rails {
            hosts.node_of = (0..spec.hosts).map(|h| spec.slot(h)).collect();
            hosts.host_at = (0..spec.hosts).map(|s| spec.host(s)).collect();
        }
        Topology::from_graph(hosts, nodes, ports)
    }

    fn tree(spec: &FatTreeSpec) -> (Vec<Node>, Vec<PortInfo>) {
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

        let mut topo = (Vec::new(), Vec::new());
        // each node's ports: down (towards hosts), then up, in neighbour order
        let add = |(nodes, ports): &mut (Vec<Node>, Vec<PortInfo>), name: String, tier: Option<u32>, down: Vec<u32>, up: Vec<u32>| {
            let id = nodes.len() as u32;
            let link_tier_up = tier.map_or(0, |t| t + 1);
            let link_tier_down = tier.unwrap_or(0);
            for (i, to) in down.into_iter().enumerate() {
                ports.push(port(s, format!("{name}:down{i}"), id, to, link_tier_down, false, h));
            }
            for (i, to) in up.into_iter().enumerate() {
                ports.push(port(s, format!("{name}:up{i}"), id, to, link_tier_up, true, h));
            }
            nodes.push(Node { name, tier });
        };
        // host nodes are leaf slots, named by the host the scenario numbers there
        for slot in 0..h {
            let name = match (s.host(slot), s.per_gpu) {
                (x, 1) => format!("host{x}"),
                (x, g) => format!("host{}n{}", x / g, x % g),
            };
            add(&mut topo, name, None, vec![], vec![leaf0 + slot / s.down0]);
        }
        for l in 0..leaves {
            let lo = l * s.down0;
            let up = if three {
                let pod = l / s.leaves_per_pod;
                (0..u).map(|j| mid0 + pod * u + j).collect()
            } else {
                (0..u).map(|j| mid0 + j).collect()
            };
            add(&mut topo, format!("leaf{l}"), Some(0), (lo..lo + s.down0).collect(), up);
        }
        if three {
            for a in 0..aggs {
                let (pod, g) = (a / u, a % u);
                let down = (0..s.leaves_per_pod).map(|i| leaf0 + pod * s.leaves_per_pod + i).collect();
                let up = (0..agg_up).map(|j| top0 + g * agg_up + j).collect();
                add(&mut topo, format!("agg{a}"), Some(1), down, up);
            }
            for c in 0..top_count {
                let g = c / agg_up;
                let down = (0..s.pods).map(|p| mid0 + p * u + g).collect();
                add(&mut topo, format!("core{c}"), Some(2), down, vec![]);
            }
        } else {
            for sp in 0..u {
                add(&mut topo, format!("spine{sp}"), Some(1), (0..leaves).map(|l| leaf0 + l).collect(), vec![]);
            }
        }
        topo
    }
}

fn port(s: &FatTreeSpec, name: String, from: u32, to: u32, tier: u32, up: bool, hosts: u32) -> PortInfo {
    let t = tier as usize;
    let to_switch = to >= hosts;
    PortInfo {
        name,
        from,
        to,
        tier,
        up,
        rate: s.tier_rates[t],
        delay: s.tier_latencies[t] + if to_switch { s.switch_latency } else { 0 },
        cost: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ScenarioError;
    use crate::topology::fat_tree::Config as TopologyConfig;

    fn build(tiers: u32, hosts: u32, radix: u32, oversub: u32) -> Result<Topology, ScenarioError> {
        let cfg = TopologyConfig { tiers, hosts, radix, oversubscription: oversub, ..Default::default() };
        Topology::build(&FatTreeSpec::new(&cfg)?)
    }

    #[test]
    fn rails_put_nic_i_of_a_group_on_leaf_i() {
        // 2 tiers, radix 8: 4 hosts per leaf; 4 NICs per server: a rail group is 4 servers
        let cfg = TopologyConfig { hosts: 32, radix: 8, nics_per_server: 4, rails: true, ..Default::default() };
        let spec = FatTreeSpec::new(&cfg).unwrap();
        let t = Topology::build(&spec).unwrap();
        let leaf_of = |host: u32| t.ports[t.tables.out_of_host(spec.slot(host)) as usize].to - 32;
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
            for (i, n) in t.nodes.iter().enumerate().skip(hosts as usize) {
                assert!(t.ports.iter().filter(|p| p.from as usize == i).count() <= radix as usize, "{}", n.name);
            }
            let mut pairs: Vec<(u32, u32)> = t.ports.iter().map(|p| (p.from.min(p.to), p.from.max(p.to))).collect();
            pairs.sort();
            assert!(pairs.chunks(2).all(|c| c.len() == 2 && c[0] == c[1]), "every link has two directions");
        }
    }

    #[test]
    fn oversubscription_splits_leaf_ports() {
        let t = build(2, 96, 16, 3).unwrap();
        let ports = |up: bool| t.ports.iter().filter(|p| p.from == 96 && p.up == up).count();
        assert_eq!((ports(false), ports(true)), (12, 4));
        assert_eq!(count(&t, "spine"), 4);
    }

    #[test]
    fn the_tables_lead_from_the_top_down_to_every_host() {
        for (tiers, hosts, radix) in [(2, 128, 16), (3, 128, 8)] {
            let t = build(tiers, hosts, radix, 1).unwrap();
            for dst in 0..hosts {
                // from the last (top) switch: one next hop at every switch down to dst
                let mut node = t.nodes.len() as u32 - 1;
                while node >= hosts {
                    let next = t.tables.next_hops(node, dst);
                    assert_eq!(next.len(), 1, "{tiers} tiers: below a top switch there is one path");
                    node = t.ports[next[0] as usize].to;
                }
                assert_eq!(node, dst);
            }
        }
    }

    #[test]
    fn the_size_a_tree_states_before_it_is_built_is_its_size() {
        for (tiers, hosts, radix, oversub) in [(2, 128, 16, 1), (2, 96, 16, 3), (3, 128, 8, 1), (3, 48, 8, 3), (3, 16, 4, 1)] {
            let cfg = TopologyConfig { tiers, hosts, radix, oversubscription: oversub, ..Default::default() };
            let spec = FatTreeSpec::new(&cfg).unwrap();
            let t = Topology::build(&spec).unwrap();
            assert_eq!(spec.size(), t.size(), "{tiers} tiers, {hosts} hosts");
            assert_eq!(t.size().switches * t.size().classes, t.tables.size().0 as u64);
        }
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
