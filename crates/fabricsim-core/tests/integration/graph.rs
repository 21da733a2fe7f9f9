//! A fabric given as a graph (`kind = "graph"`) is the fabric it describes: every golden
//! scenario, its fat tree written out as a graph (`GraphConfig::of`, what
//! `fabricsim topology --export` writes) and read back, renders exactly its golden tables
//! (oversubscribed, 3 tiers, rails with a scale-up network, faults named by port and by tier),
//! and the golden graph read back from its export renders its own.

use fabricsim_core::topology::file::GraphConfig;
use fabricsim_core::topology::generators::graph;
use fabricsim_core::topology::TopologyConfig;
use fabricsim_core::Simulation;

use super::golden::{first_difference, render};
use super::pieces::golden_scenarios;

#[test]
fn every_golden_scenario_on_its_fat_tree_written_as_a_graph_gives_its_tables() {
    let mut failures = Vec::new();
    for (path, text) in golden_scenarios() {
        let mut scenario = super::scenario(&text).expect("valid scenario");
        // a fat tree, or a graph read back from its own export (a dragonfly routes between
        // groups, a rail-only fabric relays and a multi-plane one stripes: what a graph does not)
        if !matches!(scenario.topology, TopologyConfig::FatTree(_) | TopologyConfig::Graph(_)) {
            continue;
        }
        let t = scenario.topology.shared();
        let graph = GraphConfig::of(&scenario.resolve().expect("resolves").topo, t.switch_latency.0);
        scenario.topology = TopologyConfig::Graph(graph::Config {
            graph: Some(graph),
            switch_latency: t.switch_latency,
            scale_up_rate: t.scale_up_rate,
            scale_up_latency: t.scale_up_latency,
            scale_up_nvls: t.scale_up_nvls,
            ..Default::default()
        });
        let mut sim = Simulation::new(&scenario).expect("the graph builds");
        sim.step(u64::MAX);
        let expected = std::fs::read_to_string(path.with_extension("out")).expect("golden output");
        let actual = render(&sim.into_results());
        if actual != expected {
            let (line, tree, graph) = first_difference(&expected, &actual);
            let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            failures.push(format!("{file}, line {line}:\n  tree:  {tree}\n  graph: {graph}"));
        }
    }
    assert!(failures.is_empty(), "a fabric read as a graph differs from the tree:\n{}", failures.join("\n"));
}

/// A ring of four switches (s0-s1-s2-s3-s0) with a chord s0-s2, two hosts on each: links of
/// three rates and two latencies, paths of 2, 3 and 4 links, one or two of them.
fn ring(rates: [&str; 3]) -> String {
    let [host, ring, chord] = rates;
    let mut links: Vec<String> = (0..8).map(|h| format!("{{ a = \"h{h}\", b = \"s{}\", rate = \"{host}\" }}", h / 2)).collect();
    for (a, b, rate, latency) in [(0, 1, ring, "1us"), (1, 2, ring, "1us"), (2, 3, ring, "1us"), (3, 0, ring, "1us"), (0, 2, chord, "2us")]
    {
        links.push(format!("{{ a = \"s{a}\", b = \"s{b}\", rate = \"{rate}\", latency = \"{latency}\" }}"));
    }
    let hosts: Vec<String> = (0..8).map(|h| format!("{{ name = \"h{h}\" }}")).collect();
    let switches: Vec<String> = (0..4).map(|s| format!("{{ name = \"s{s}\" }}")).collect();
    format!(
        "[topology]\nkind = \"graph\"\nswitch_latency = \"300ns\"\ngraph.hosts = [{}]\ngraph.switches = [{}]\ngraph.links = [{}]\n",
        hosts.join(", "),
        switches.join(", "),
        links.join(", ")
    )
}

#[test]
fn a_lone_flow_on_a_graph_meets_its_ideal_exactly_and_never_beats_it() {
    let mut exact = 0;
    for rates in [["400Gbps", "400Gbps", "400Gbps"], ["100Gbps", "400Gbps", "200Gbps"], ["800Gbps", "200Gbps", "400Gbps"]] {
        for (src, dst) in [(0, 1), (0, 3), (0, 5), (2, 7), (3, 6)] {
            for (lb, size) in [("ops", "4096B"), ("ops", "1MiB"), ("ecmp", "1MiB"), ("reps", "256KiB")] {
                let flows = format!(
                    "[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"flows\"\nflows = [{{src = {src}, dst = {dst}, size = \"{size}\"}}]\n"
                );
                let r = super::run(&format!("{}{flows}", ring(rates)));
                assert_eq!(r.summary.status, "complete");
                let (fct, ideal) = (r.flows.opt_u64("fct_ps")[0].unwrap(), r.flows.u64("ideal_fct_ps")[0]);
                // s1 to s3 has two paths (via s0, via s2); every other pair one shortest path
                let two_paths = (src / 2, dst / 2) == (1, 3);
                assert!(fct >= ideal, "{rates:?} {lb} {src}->{dst} {size}: {fct} < ideal {ideal}");
                if !two_paths {
                    assert_eq!(fct, ideal, "{rates:?} {lb} {src}->{dst} {size}");
                    exact += 1;
                }
                let links = if src / 2 == dst / 2 {
                    2
                } else if two_paths {
                    4
                } else {
                    3
                };
                assert_eq!(r.flows.u64("path_links")[0], links, "{src}->{dst}");
            }
        }
    }
    assert_eq!(exact, 3 * 3 * 4);
}

#[test]
fn a_field_of_another_topology_kind_is_refused_by_name() {
    // a graph has no radix; a fat tree has no graph: each kind reads only its own fields and
    // the shared ones (topology/generators), and names the one it does not know
    let e = super::scenario("[topology]\nkind = \"graph\"\nradix = 16\n").expect_err("a fat tree's field on a graph");
    assert!(e.field == "topology.radix" && e.to_string().contains("unknown field"), "{e}");
    let e = super::scenario("[topology]\nhosts = 16\nradix = 8\nfile = \"x.toml\"\n").expect_err("a graph's field on a fat tree");
    assert!(e.field == "topology.file" && e.to_string().contains("unknown field"), "{e}");
    // the shared ones are every kind's
    let both = "link_rate = \"100Gbps\"\nswitch_latency = \"0ns\"\nnics_per_server = 2\n";
    super::scenario(&format!("[topology]\nhosts = 16\nradix = 8\n{both}")).expect("a fat tree reads them");
    let e = super::scenario(&format!("[topology]\nkind = \"graph\"\n{both}")).map(|s| s.resolve().map(drop)).expect("they parse");
    assert!(e.is_err_and(|e| e.field == "topology.graph"), "a graph with no graph is refused at the graph");
}

/// Three leaves of two hosts and three spines, the third leaf with two uplinks: the leaves'
/// next-hop groups are of sizes 3, 3 and 2 (issue 61: the multi-part EV read a tier's part
/// modulo its largest group and indexed past the smaller one).
fn uneven_leaves(extra: &str) -> String {
    let hosts: Vec<String> = (0..6).map(|h| format!("{{ name = \"h{h}\" }}")).collect();
    let mut links: Vec<String> = (0..6).map(|h| format!("{{ a = \"h{h}\", b = \"l{}\" }}", h / 2)).collect();
    for (l, spines) in [(0, 3), (1, 3), (2, 2)] {
        links.extend((0..spines).map(|s| format!("{{ a = \"l{l}\", b = \"s{s}\" }}")));
    }
    format!(
        "seed = 3\n[topology]\nkind = \"graph\"\ngraph.hosts = [{}]\ngraph.switches = [{}]\ngraph.links = [{}]\n{extra}",
        hosts.join(", "),
        ["l0", "l1", "l2", "s0", "s1", "s2"].map(|s| format!("{{ name = \"{s}\" }}")).join(", "),
        links.join(", ")
    )
}

#[test]
fn the_multi_part_ev_routes_over_groups_of_unequal_size() {
    for (lb, routing) in [("prime", "auto"), ("co_prime", "auto"), ("round_robin", "auto"), ("ops", "mp_ev"), ("ecmp", "mp_ev")] {
        let text = uneven_leaves(&format!(
            "[lb]\nkind = \"{lb}\"\n[switch]\nrouting = \"{routing}\"\n[workload]\nkind = \"permutation\"\nsize = \"256KiB\"\n"
        ));
        let r = super::run(&text);
        assert_eq!(r.summary.status, "complete", "{lb}/{routing}");
        assert!(r.accounting.balanced(), "{lb}/{routing}: {:?}", r.accounting);
        // every byte of every flow arrived, and none faster than its ideal
        assert_eq!(r.flows.u64("bytes"), r.flows.u64("delivered_bytes"), "{lb}/{routing}");
        let ideal = r.flows.u64("ideal_fct_ps");
        for (i, fct) in r.flows.opt_u64("fct_ps").iter().enumerate() {
            assert!(fct.unwrap() >= ideal[i], "{lb}/{routing} flow {i}");
        }
        // the leaf with two uplinks sends on both (a sprayer's flows; ECMP keeps one EV a
        // flow): its ports to s0 and s1 carry packets, and it has no third
        if lb == "ecmp" {
            continue;
        }
        let (from, to, sent) = (r.ports.str("from"), r.ports.str("to"), r.ports.u64("packets"));
        let used: Vec<&str> =
            (0..from.len()).filter(|&p| from[p] == "l2" && to[p].starts_with('s') && sent[p] > 0).map(|p| to[p].as_str()).collect();
        assert_eq!(used, ["s0", "s1"], "{lb}/{routing}");
    }
}

#[test]
fn the_summary_names_the_switches_whose_links_differ_from_their_tiers() {
    use fabricsim_core::topology::graph::summary;
    let topo = |text: &str| super::scenario(text).expect("valid").resolve().expect("builds").topo;
    // the third leaf has two uplinks where the others have three, and the third spine has
    // two leaves below it where the others have three
    let s = summary(&topo(&uneven_leaves("")));
    assert_eq!(s.irregular_count, 2, "{:?}", s.irregular);
    assert_eq!(
        s.irregular,
        [
            "l2: links to 2 hosts and 2 switches, where 2 l switches have 2 and 3",
            "s2: links to 0 hosts and 2 switches, where 2 s switches have 0 and 3"
        ]
    );
    // a fat tree, a dragonfly: none
    assert_eq!(summary(&topo("[topology]\nhosts = 128\nradix = 16\n")).irregular_count, 0);
    assert_eq!(summary(&topo("[topology]\nkind = \"dragonfly\"\n")).irregular_count, 0);
    assert_eq!(summary(&topo("[topology]\ntiers = 3\nhosts = 128\nradix = 8\n")).irregular_count, 0);
    let planes = "[topology]\nkind = \"multi_plane\"\nplanes = 2\nhosts = 16\nradix = 8\n";
    assert_eq!(summary(&topo(planes)).irregular_count, 0);
}
