//! The rail-only generator (Wang et al., 2023): one network per rail and no link between two,
//! and a message between rails of two servers relayed through its source server's scale-up
//! network (`workload::support::relay`).

/// Two servers of 8 GPUs, each rail one switch, 1 us links.
const RAILS: &str = "seed = 1\n[topology]\nkind = \"rail_only\"\nhosts = 16\nnics_per_server = 8\nscale_up_rate = \"3600Gbps\"\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n";

fn flows(list: &[(u32, u32)]) -> String {
    let rows: Vec<String> = list.iter().map(|(s, d)| format!("{{src = {s}, dst = {d}, size = \"1MiB\"}}")).collect();
    format!("[workload]\nkind = \"flows\"\nflows = [{}]\n", rows.join(", "))
}

#[test]
fn each_rail_is_a_network_of_its_own() {
    let topo = super::scenario(RAILS).expect("valid").resolve().expect("builds").topo;
    assert_eq!((topo.hosts(), topo.switches()), (16, 8));
    for h in 0..16 {
        let port = &topo.ports[topo.tables.out_of_host(h) as usize];
        assert_eq!(topo.nodes[port.to as usize].name, format!("rail{}", h % 8));
    }
    assert!(topo.tables.reachable(0, 8) && topo.tables.reachable(3, 11));
    assert!(!topo.tables.reachable(0, 9) && !topo.tables.reachable(0, 1));
}

#[test]
fn a_rail_larger_than_a_switch_is_a_leaf_spine_and_a_lone_flow_takes_its_ideal() {
    // 32 servers of 2 GPUs, radix 8: each rail 8 leaves of 4 servers and 4 spines
    let text = RAILS.replace("hosts = 16\nnics_per_server = 8", "hosts = 64\nnics_per_server = 2\nradix = 8");
    let topo = super::scenario(&text).expect("valid").resolve().expect("builds").topo;
    assert_eq!(topo.switches(), 2 * (8 + 4));
    assert_eq!(topo.route(0, 62).hops.len(), 4, "host, leaf, spine, leaf, host");
    let r = super::run(&format!("{text}{}", flows(&[(0, 62)])));
    assert_eq!(r.flows.opt_u64("fct_ps")[0], Some(r.flows.u64("ideal_fct_ps")[0]));
}

#[test]
fn a_message_between_rails_crosses_the_scale_up_network_then_the_destinations_rail() {
    // 0 -> 8 stays on rail 0; 1 -> 10 goes to GPU 2 of server 0 over NVLink, then on rail 2
    let r = super::run(&format!("{RAILS}{}", flows(&[(0, 8), (1, 10)])));
    assert_eq!(r.summary.status, "complete");
    assert_eq!((r.flows.u64("src"), r.flows.u64("dst")), (&[0, 2, 1][..], &[8, 10, 2][..]), "the relay's NVLink part is appended");
    assert_eq!(r.flows.bool("scale_up"), &[false, false, true]);
    let (fct, ideal) = (r.flows.opt_u64("fct_ps"), r.flows.u64("ideal_fct_ps"));
    let (ready, end) = (r.flows.opt_u64("ready_ps"), r.flows.opt_u64("end_ps"));
    // the fabric part is released when the NVLink part ends, and each is alone on its path
    assert_eq!(ready[1], end[2]);
    assert!(ready[1] > Some(0));
    for i in 0..3 {
        assert_eq!(fct[i], Some(ideal[i]), "row {i}");
    }
}

#[test]
fn islands_need_a_scale_up_network_and_a_relay_that_reaches() {
    let e = super::scenario(&RAILS.replace("scale_up_rate = \"3600Gbps\"\n", "")).expect("parses").resolve().err().map(|e| e.field);
    assert_eq!(e.as_deref(), Some("topology.scale_up_rate"));
    // two servers of two GPUs, each server an island: nothing joins server 0 to server 1
    let islands = "seed = 1\n[topology]\nkind = \"graph\"\nnics_per_server = 2\nscale_up_rate = \"3600Gbps\"\n\
        graph = { hosts = [{name = \"a\"}, {name = \"b\"}, {name = \"c\"}, {name = \"d\"}], switches = [{name = \"s\"}, {name = \"t\"}], \
        links = [{a = \"a\", b = \"s\"}, {a = \"b\", b = \"s\"}, {a = \"c\", b = \"t\"}, {a = \"d\", b = \"t\"}] }\n";
    let Err(e) = super::scenario(&format!("{islands}{}", flows(&[(1, 0), (0, 2)]))).expect("parses").resolve() else { panic!("refused") };
    assert_eq!(e.field, "workload.flows[1].dst", "{e}");
    assert!(e.to_string().contains("cannot reach host 2"), "{e}");
    // without a scale-up network, islands are a fabric that is not connected
    let Err(e) = super::scenario(&islands.replace("scale_up_rate = \"3600Gbps\"\n", "")).expect("parses").resolve() else {
        panic!("refused")
    };
    assert!(e.field == "topology.graph" && e.to_string().contains("not connected"), "{e}");
}
