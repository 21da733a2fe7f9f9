//! Lossless Ethernet (`switch.overflow = "pfc"`): nothing dropped, congestion pushed back hop by
//! hop to the senders, a flow blocked behind a congested one on a paused port, and a cycle of
//! paused ports reported as a deadlock.

use super::conservation::check;
use super::{fabric128, run, scenario};
use fabricsim_core::Simulation;

const PFC: &str = "[switch]\noverflow = \"pfc\"\n";

/// Hosts a0-a3 on switch A, b0-b3 on B, c0 on C; A, B and C under one spine S; 400 Gb/s links
/// of 1 us (A's to the spine 800 Gb/s: two hosts' flows fit on it) and `extra`.
fn three_leaves(extra: &str) -> String {
    let hosts: Vec<String> =
        ["a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3", "c0"].iter().map(|h| format!("{{ name = \"{h}\" }}")).collect();
    let mut links: Vec<String> =
        (0..4).flat_map(|i| [format!("{{ a = \"a{i}\", b = \"A\" }}"), format!("{{ a = \"b{i}\", b = \"B\" }}")]).collect();
    links.extend(
        [
            "{ a = \"c0\", b = \"C\" }",
            "{ a = \"A\", b = \"S\", rate = \"800Gbps\" }",
            "{ a = \"B\", b = \"S\" }",
            "{ a = \"C\", b = \"S\" }",
        ]
        .map(String::from),
    );
    format!(
        "seed = 1\n[topology]\nkind = \"graph\"\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\ngraph.hosts = [{}]\n\
         graph.switches = [{{ name = \"A\" }}, {{ name = \"B\" }}, {{ name = \"C\" }}, {{ name = \"S\" }}]\ngraph.links = [{}]\n{extra}",
        hosts.join(", "),
        links.join(", ")
    )
}

#[test]
fn a_lone_flow_on_a_pfc_fabric_meets_its_ideal_exactly_and_pauses_nothing() {
    let r = run(&fabric128(&format!("{PFC}[workload]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 100, size = \"3MiB\" }}]\n")));
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.flows.opt_u64("fct_ps")[0], Some(r.flows.u64("ideal_fct_ps")[0]));
    assert_eq!(r.summary.pfc_frames, 0);
}

/// Windows of 4 BDP: more in flight than an ingress's `xoff`, so a congested queue fills to it.
const DEEP: &str = "[transport]\ninit_cwnd = \"4bdp\"\nmax_cwnd = \"4bdp\"\n";

#[test]
fn an_incast_on_pfc_drops_nothing_pauses_upstream_and_blocks_an_innocent_flow() {
    // b1-b3 and a0 send to b0 (host ids: a0-a3 0-3, b0-b3 4-7, c0 8); a1 sends to c0 over A's
    // uplink, which it shares with a0's flow and which carries both at their line rate: the
    // innocent flow, never slowed on a lossy fabric
    let flows = "[workload]\nkind = \"flows\"\nflows = [{ src = 5, dst = 4, size = \"4MiB\" }, { src = 6, dst = 4, size = \"4MiB\" }, \
                 { src = 7, dst = 4, size = \"4MiB\" }, { src = 0, dst = 4, size = \"4MiB\" }, { src = 1, dst = 8, size = \"4MiB\" }]\n";
    let innocent = |r: &fabricsim_core::stats::RunResult| r.flows.opt_f64("slowdown")[4].expect("complete");
    let lossless = check(&three_leaves(&format!("{PFC}{DEEP}{flows}")));
    let lossy = check(&three_leaves(&format!("{DEEP}{flows}")));
    assert_eq!(lossless.summary.status, "complete");
    assert_eq!((lossless.summary.drops, lossless.summary.trims, lossless.summary.control_drops), (0, 0, 0), "lossless");
    assert!(lossy.summary.trims > 0, "the same incast trims without PFC");
    // pauses pushed back hop by hop: b0's switch paused its hosts and the spine, the spine A's
    // uplink; nothing on the innocent flow's own path was paused
    let (names, frames, paused) = (lossless.ports.str("name"), lossless.ports.u64("pfc_frames"), lossless.ports.u64("paused_ps"));
    let at = |n: &str| names.iter().position(|x| x == n).unwrap_or_else(|| panic!("port {n}"));
    assert!(frames[at("B:down1")] > 0 && paused[at("b1:up0")] > 0, "B paused b1");
    assert!(frames[at("B:up0")] > 0 && paused[at("S:down1")] > 0, "B paused the spine");
    assert!(frames[at("S:down0")] > 0 && paused[at("A:up0")] > 0, "the spine paused A's uplink");
    assert_eq!(paused[at("S:down2")] + paused[at("C:down0")], 0, "nothing paused towards c0");
    assert_eq!(lossless.summary.pfc_frames, frames.iter().sum::<u64>());
    // switches that take time to cross make the wire into them longer than the wire back: the
    // headroom covers both directions, and still nothing is lost
    let slow_switches =
        check(&three_leaves(&format!("{PFC}{DEEP}{flows}")).replace("switch_latency = \"0ns\"", "switch_latency = \"1us\""));
    assert_eq!((slow_switches.summary.drops, slow_switches.summary.status), (0, "complete"));
    assert!(slow_switches.summary.pfc_frames > 0);
    // head-of-line blocking: the innocent flow waits behind a0's on A's paused uplink
    let (slow, fast) = (innocent(&lossless), innocent(&lossy));
    assert!(fast < 1.01, "without PFC the innocent flow runs at line rate: {fast}");
    assert!(slow > 1.5, "with PFC it waits behind the paused uplink: {slow}");
}

/// Five switches in a ring, a host on each; host i sends to host i + 2, two hops clockwise
/// (the shortest way): each ring link carries two flows into a link of one flow's rate, so
/// under PFC with deep windows (`DEADLOCK`) each switch pauses the one before it, and the
/// pauses close the ring.
pub(super) fn ring(extra: &str) -> String {
    let n = 5;
    let hosts: Vec<String> = (0..n).map(|i| format!("{{ name = \"h{i}\" }}")).collect();
    let switches: Vec<String> = (0..n).map(|i| format!("{{ name = \"s{i}\" }}")).collect();
    let mut links: Vec<String> = (0..n).map(|i| format!("{{ a = \"h{i}\", b = \"s{i}\" }}")).collect();
    links.extend((0..n).map(|i| format!("{{ a = \"s{i}\", b = \"s{}\" }}", (i + 1) % n)));
    let flows: Vec<String> = (0..n).map(|i| format!("{{ src = {i}, dst = {}, size = \"16MiB\" }}", (i + 2) % n)).collect();
    format!(
        "seed = 1\n[topology]\nkind = \"graph\"\nlink_latency = \"1us\"\ngraph.hosts = [{}]\ngraph.switches = [{}]\ngraph.links = [{}]\n\
         {extra}[workload]\nkind = \"flows\"\nflows = [{}]\n",
        hosts.join(", "),
        switches.join(", "),
        links.join(", "),
        flows.join(", ")
    )
}

/// What [`ring`] needs to deadlock, and the cycle it names.
pub(super) const DEADLOCK: &str = "[switch]\noverflow = \"pfc\"\n[transport]\ninit_cwnd = \"4bdp\"\nmax_cwnd = \"4bdp\"\n";
pub(super) const CYCLE: &str = "ports s0:peer0 -> s1:peer1 -> s2:peer1 -> s3:peer1 -> s4:peer1 paused for class 0 in a cycle";

#[test]
fn a_cycle_of_paused_ports_is_reported_as_a_deadlock() {
    let r = check(&ring(DEADLOCK));
    assert_eq!(r.summary.status, "incomplete");
    assert_eq!(r.summary.stop_reason, "PFC deadlock: ports paused in a cycle, each waiting on the next");
    // the clockwise ring ports (a switch's ports to its peers in the order of the links: s0's first is to s1)
    assert!(r.summary.stop_detail.contains(CYCLE), "{}", r.summary.stop_detail);
    assert_eq!(r.summary.drops, 0);
    // with 1-BDP windows no ingress passes xoff, and without PFC the ring trims and finishes
    assert_eq!(check(&ring(PFC)).summary.status, "complete");
    assert_eq!(check(&ring(DEEP)).summary.status, "complete");
}

#[test]
fn pfc_settings_are_checked_before_the_run() {
    for (extra, field) in [
        ("[switch]\n[switch.pfc]\nxoff = \"100KB\"\n", "switch.pfc"),
        ("[switch]\noverflow = \"pfc\"\n[switch.pfc]\nxoff = \"4KB\"\n", "switch.pfc.xoff"),
        ("[switch]\noverflow = \"pfc\"\n[switch.pfc]\nxoff = \"100KB\"\nxon = \"200KB\"\n", "switch.pfc.xon"),
        ("[switch]\noverflow = \"pfc\"\nbuffer = \"20KB\"\n", "switch.buffer"),
        ("[switch]\noverflow = \"pfc\"\n[switch.pfc]\nheadroom = \"1KB\"\n", "switch.pfc.headroom"),
    ] {
        let text = fabric128(&format!("{extra}[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n"));
        let e = scenario(&text).and_then(|s| Simulation::new(&s).map(|_| ())).unwrap_err();
        assert_eq!(e.field, field, "{extra}: {e}");
    }
}
