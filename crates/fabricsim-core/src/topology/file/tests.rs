//! The graph reader's tests: a fat tree written and read back, costs, refusals.

use super::*;
use crate::topology::fat_tree::Config as FatTree;
use crate::topology::generators::graph::Config as Graph;
use crate::topology::TopologyConfig;
use crate::units::Rate;

fn graph_config(g: GraphConfig) -> Graph {
    Graph { graph: Some(g), ..Default::default() }
}

#[test]
fn a_fat_tree_written_as_a_graph_is_the_generators_fabric_port_for_port() {
    let gbps = |g: u64| Rate(g * 1_000_000_000);
    for cfg in [
        FatTree { tiers: 2, hosts: 32, radix: 8, ..Default::default() },
        FatTree { tiers: 2, hosts: 48, radix: 16, oversubscription: 3, switch_latency: Duration(0), ..Default::default() },
        FatTree { tiers: 3, hosts: 64, radix: 8, tier_link_rates: vec![gbps(100), gbps(200), gbps(400)], ..Default::default() },
        FatTree { tiers: 2, hosts: 64, radix: 16, nics_per_server: 4, rails: true, scale_up_rate: Some(gbps(3600)), ..Default::default() },
        // GPUs of two NICs (hosts that name their GPU), without and with rails
        FatTree { tiers: 2, hosts: 16, radix: 8, nics_per_server: 4, nics_per_gpu: 2, ..Default::default() },
        FatTree { tiers: 2, hosts: 16, radix: 8, nics_per_server: 4, nics_per_gpu: 2, rails: true, ..Default::default() },
    ] {
        let tree = TopologyConfig::FatTree(cfg.clone()).build(|_| Ok(())).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
        let g = GraphConfig::of(&tree, cfg.switch_latency.0);
        // the other fields say nothing the links do not
        let read = Graph { switch_latency: cfg.switch_latency, scale_up_rate: cfg.scale_up_rate, ..graph_config(g.clone()) };
        let back = TopologyConfig::Graph(read).build(|_| Ok(())).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
        assert_eq!(back.hosts, tree.hosts, "{cfg:?}");
        let node = |n: &Node| (n.name.clone(), n.tier);
        assert_eq!(back.nodes.iter().map(node).collect::<Vec<_>>(), tree.nodes.iter().map(node).collect::<Vec<_>>());
        let port = |p: &PortInfo| (p.name.clone(), p.from, p.to, p.tier, p.up, p.rate, p.delay);
        assert_eq!(back.ports.iter().map(port).collect::<Vec<_>>(), tree.ports.iter().map(port).collect::<Vec<_>>());
        // found tiers are the given ones
        let untiered = GraphConfig { switches: g.switches.iter().map(|s| GraphSwitch { tier: None, ..s.clone() }).collect(), ..g };
        let found = Graph { scale_up_rate: cfg.scale_up_rate, ..graph_config(untiered) };
        let found = TopologyConfig::Graph(found).build(|_| Ok(())).unwrap();
        assert!(found.nodes.iter().zip(&tree.nodes).all(|(a, b)| a.tier == b.tier));
    }
}

#[test]
fn switches_forward_on_the_least_cost_paths_and_refuse_a_cost_out_of_range() {
    // s0 - s1 - s2, and a direct s0 - s2 link: the direct one unless it costs more than
    // the two-link detour
    let host = |n: &str| GraphHost { name: n.into(), id: None, server: None, gpu: None };
    let switch = |n: &str| GraphSwitch { name: n.into(), tier: None };
    let link = |a: &str, b: &str, cost: Option<u32>| GraphLink { a: a.into(), b: b.into(), rate: None, latency: None, cost };
    let g = |cost: Option<u32>| GraphConfig {
        hosts: vec![host("h0"), host("h1")],
        switches: vec![switch("s0"), switch("s1"), switch("s2")],
        links: vec![link("h0", "s0", None), link("h1", "s2", None), link("s0", "s1", None), link("s1", "s2", None), link("s0", "s2", cost)],
    };
    let build = |cost| TopologyConfig::Graph(graph_config(g(cost))).build(|_| Ok(()));
    // the diameter counts the most links of a least-cost path: a tie counts the detour
    for (cost, links) in [(None, 3), (Some(2), 4), (Some(3), 4)] {
        let topo = build(cost).unwrap();
        assert_eq!(topo.tables.diameter(), links, "cost {cost:?}");
    }
    // a tie keeps both as a group: the direct link and the detour start at s0
    let topo = build(Some(2)).unwrap();
    assert_eq!(topo.tables.next_hops(topo.hosts(), 1).len(), 2);
    let e = build(Some(0)).unwrap_err();
    assert!(e.field == "topology.graph.links[4].cost" && e.to_string().contains("1 to 1000"), "{e}");
}

fn small() -> GraphConfig {
    let host = |n: &str| GraphHost { name: n.into(), id: None, server: None, gpu: None };
    let switch = |n: &str| GraphSwitch { name: n.into(), tier: None };
    let link = |a: &str, b: &str| GraphLink { a: a.into(), b: b.into(), rate: None, latency: None, cost: None };
    GraphConfig {
        hosts: vec![host("h0"), host("h1"), host("h2")],
        switches: vec![switch("s0"), switch("s1")],
        links: vec![link("h0", "s0"), link("h1", "s0"), link("h2", "s1"), link("s0", "s1")],
    }
}

#[test]
fn a_bad_graph_is_refused_naming_the_entry() {
    assert!(TopologyConfig::Graph(graph_config(small())).build(|_| Ok(())).is_ok());
    type Change = Box<dyn Fn(&mut GraphConfig)>;
    let cases: Vec<(Change, &str, &str)> = vec![
        (Box::new(|g| g.links[1].b = "s9".into()), "topology.graph.links[1].b", "\"s9\""),
        (Box::new(|g| g.switches[1].name = "h1".into()), "topology.graph.switches[1].name", "hosts[1]"),
        (Box::new(|g| g.links.remove(2).a.clear()), "topology.graph.hosts[2]", "no link"),
        (Box::new(|g| g.links.push(GraphLink { b: "s1".into(), ..g.links[0].clone() })), "topology.graph.hosts[0]", "more than one"),
        (Box::new(|g| g.links[3].b = "s0".into()), "topology.graph.links[3].b", "another node"),
        (Box::new(|g| g.links[0].b = "h1".into()), "topology.graph.links[0].b", "a switch"),
        (Box::new(|g| g.hosts[1].id = Some(1)), "topology.graph.hosts[1].id", "every host or on none"),
        (Box::new(|g| g.hosts[2].server = Some(1)), "topology.graph.hosts[2].server", "on every host or on none"),
        (Box::new(|g| g.switches[0].tier = Some(u32::MAX)), "topology.graph.switches[0].tier", "0 to 63"),
    ];
    for (change, field, says) in cases {
        let mut g = small();
        change(&mut g);
        let e = TopologyConfig::Graph(graph_config(g)).build(|_| Ok(())).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
    // a switch on its own; two islands, which the tables cannot route between
    let mut g = small();
    g.switches.push(GraphSwitch { name: "s2".into(), tier: None });
    let e = TopologyConfig::Graph(graph_config(g)).build(|_| Ok(())).unwrap_err();
    assert!(e.field == "topology.graph.switches[2]" && e.to_string().contains("reaches no host"), "{e}");
    let mut g = small();
    g.links.pop();
    let e = TopologyConfig::Graph(graph_config(g)).build(|_| Ok(())).unwrap_err();
    assert!(e.field == "topology.graph" && e.to_string().contains("cannot reach"), "{e}");
}

#[test]
fn a_multi_plane_fabric_written_as_a_graph_reads_back_as_its_planes() {
    use crate::topology::generators::multi_plane::Config as Planes;
    let planes = Planes { hosts: 16, radix: 8, ..Default::default() };
    let built = TopologyConfig::MultiPlane(planes.clone()).build(|_| Ok(())).unwrap();
    let g = GraphConfig::of(&built, planes.switch_latency.0);
    assert!(g.hosts.iter().all(|x| x.gpu.is_some() && x.id.is_none()));
    let back = TopologyConfig::Graph(Graph { switch_latency: planes.switch_latency, ..graph_config(g) }).build(|_| Ok(())).unwrap();
    assert_eq!(back.hosts, built.hosts);
    let port = |p: &PortInfo| (p.name.clone(), p.from, p.to, p.rate, p.delay);
    assert_eq!(back.ports.iter().map(port).collect::<Vec<_>>(), built.ports.iter().map(port).collect::<Vec<_>>());
}

#[test]
fn hosts_that_name_their_gpu_are_checked() {
    // four hosts, two GPUs of two NICs: h0 and h2 are GPU 0's, h1 and h3 GPU 1's
    let two = |g: &mut GraphConfig| {
        g.hosts.push(GraphHost { name: "h3".into(), id: None, server: None, gpu: None });
        g.links.push(GraphLink::new("h3", "s1"));
        for (x, gpu) in g.hosts.iter_mut().zip([0, 1, 0, 1]) {
            x.gpu = Some(gpu);
        }
    };
    let mut g = small();
    two(&mut g);
    let topo = TopologyConfig::Graph(graph_config(g)).build(|_| Ok(())).unwrap();
    assert_eq!((topo.gpus(), topo.planes(), topo.slot_on(0, 1), topo.slot_on(1, 0), topo.host(2)), (2, 2, 2, 1, 0));
    type Change = Box<dyn Fn(&mut GraphConfig)>;
    let cases: Vec<(Change, &str, &str)> = vec![
        (Box::new(|g| g.hosts[1].gpu = None), "topology.graph.hosts[1].gpu", "on every host or on none"),
        (Box::new(|g| g.hosts[0].id = Some(0)), "topology.graph.hosts[0].id", "none where hosts name their gpu"),
        (Box::new(|g| g.hosts[3].gpu = Some(0)), "topology.graph.hosts", "GPU 1 with 1 NICs"),
        (Box::new(|g| g.hosts[2].gpu = Some(9)), "topology.graph.hosts[2].gpu", "0 to 3"),
        (Box::new(|g| g.hosts[0].server = Some(0)), "topology.graph.hosts[2].server", "its GPU's first NIC's (0)"),
    ];
    for (change, field, says) in cases {
        let mut g = small();
        two(&mut g);
        change(&mut g);
        let e = TopologyConfig::Graph(graph_config(g)).build(|_| Ok(())).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
}
