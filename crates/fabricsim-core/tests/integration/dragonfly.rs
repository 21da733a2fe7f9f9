//! The dragonfly generator (Kim et al., ISCA 2008): its shape (one global link between every
//! two groups, at most 3 hops between routers), a lone flow at exactly its ideal FCT, and minimal
//! routing's known weakness: adversarial traffic between two groups shares their one global
//! link, while a permutation over all groups does not.

use fabricsim_core::topology::graph::summary;
use fabricsim_core::Simulation;

/// The paper's balanced dragonfly at p = 2 (a = 4, h = 2, g = 9: 72 hosts), 1 us links.
const FLY: &str = "[topology]\nkind = \"dragonfly\"\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n";

#[test]
fn every_two_groups_share_one_global_link_and_a_path_takes_at_most_three_router_hops() {
    let topo = super::scenario(FLY).expect("valid").resolve().expect("builds").topo;
    let (g, a, p) = (9, 4, 2);
    assert_eq!((topo.hosts(), topo.switches()), (g * a * p, (g * a) as usize));
    let group = |n: u32| topo.nodes[n as usize].name[1..].split('r').next().unwrap().parse::<u32>().unwrap();
    let mut global = std::collections::BTreeSet::new();
    for port in topo.ports.iter().filter(|x| x.from >= topo.hosts() && x.to >= topo.hosts()) {
        let (x, y) = (group(port.from), group(port.to));
        if x != y {
            assert!(global.insert((x, y)), "groups {x} and {y} joined twice");
        }
    }
    assert_eq!(global.len() as u32, g * (g - 1), "every ordered pair of groups, once");
    // host, then local, global and local hops between routers, then host: 5 links at most
    assert_eq!(summary(&topo).diameter, 5);
}

#[test]
fn a_lone_flow_across_groups_takes_exactly_its_ideal_fct() {
    let r = super::run(&format!("{FLY}[workload]\nkind = \"flows\"\nflows = [{{src = 0, dst = 70, size = \"1MiB\"}}]\n"));
    assert_eq!(r.flows.opt_u64("fct_ps")[0], Some(r.flows.u64("ideal_fct_ps")[0]));
}

#[test]
fn adversarial_traffic_shares_one_global_link_under_minimal_routing() {
    // every host of group i sends to the host 8 ids on, in group i + 1: the 8 flows of a group
    // cross its one global link to the next group (minimal routing: "each minimally routed
    // packet traverses at most one global channel", Kim et al.)
    let size = 1u64 << 20;
    let run = |dst: &dyn Fn(u32) -> u32| {
        let flows: Vec<String> = (0..72).map(|s| format!("{{src = {s}, dst = {}, size = \"1MiB\"}}", dst(s))).collect();
        let text = format!("{FLY}[lb]\nkind = \"ops\"\n[workload]\nkind = \"flows\"\nflows = [{}]\n", flows.join(", "));
        let r = Simulation::new(&super::scenario(&text).expect("valid")).expect("builds").run();
        assert_eq!(r.summary.status, "complete");
        r.flows.opt_u64("fct_ps").iter().map(|f| f.expect("done")).max().expect("flows")
    };
    let shifted = run(&|s| (s + 8) % 72);
    // 8 MiB and their headers through one 400 Gb/s link: at least 8 x 21 us
    let one_flow = size * 8 * 1000 / 400; // ps at 400 Gb/s, payload only
    assert!(shifted >= 8 * one_flow, "{shifted} ps: the global link carries all 8");
    // a permutation that sends each group's 8 hosts to the 8 other groups, one each, finds a
    // global link per flow
    let spread = run(&|s| ((s / 8 + s % 8 + 1) % 9) * 8 + s % 8);
    assert!(spread * 2 < shifted, "spread {spread} ps against shifted {shifted} ps");
}
