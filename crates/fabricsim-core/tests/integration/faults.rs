//! Faults: transient and steady phases of a failure, flaps, degradation, delay, loss.

use super::{fabric128, run, scenario};
use fabricsim_core::stats::Column;
use fabricsim_core::{Simulation, Status};

fn port_index(r: &fabricsim_core::stats::RunResult, name: &str) -> usize {
    match r.ports.get("name") {
        Some(Column::Str(v)) => v.iter().position(|n| n == name).unwrap(),
        _ => unreachable!(),
    }
}

/// Runs until `t` (ps) and returns the dead port's drop and data-packet counters.
fn counters_at(sim: &mut Simulation, t: u64, port: &str) -> (u64, u64) {
    while sim.now() < t && sim.step(1) == Status::Running {}
    let r = sim.results();
    let i = port_index(&r, port);
    (r.ports.u64("drops")[i], r.ports.u64("data_packets")[i])
}

#[test]
fn a_failure_loses_packets_until_routing_converges_then_none() {
    // leaf0-spine3 dies at 20 us; routing excludes it at 20 + 10 + 40 = 70 us. OPS sprays onto
    // it until then (transient phase), never after (steady phase), from any leaf.
    let text = fabric128(
        "[lb]\nkind = \"ops\"\n[workload]\nkind = \"permutation\"\nsize = \"4MiB\"\n[[faults]]\nkind = \"link_down\"\nlink = \"leaf0:up3\"\nstart = \"20us\"\ndetection = \"10us\"\nreconvergence = \"40us\"\n",
    );
    let mut sim = Simulation::new(&scenario(&text).unwrap()).unwrap();
    let (at_converge, _) = counters_at(&mut sim, 75_000_000, "leaf0:up3");
    let (later, _) = counters_at(&mut sim, 150_000_000, "leaf0:up3");
    let (spine_side, _) = counters_at(&mut sim, 150_000_000, "spine3:down0");
    assert!(at_converge > 100, "transient losses: {at_converge}");
    assert_eq!(later, at_converge, "no new losses once routing has converged");
    assert!(spine_side > 0, "the other direction died too");
    let r = sim.run();
    assert_eq!(r.summary.status, "complete");
    assert!(r.accounting.balanced());
}

#[test]
fn a_link_that_comes_back_is_used_again_after_reconvergence() {
    let text = fabric128(
        "[lb]\nkind = \"ops\"\n[workload]\nkind = \"permutation\"\nsize = \"8MiB\"\n[[faults]]\nkind = \"link_down\"\nlink = \"leaf0:up3\"\nstart = \"10us\"\nend = \"60us\"\ndetection = \"5us\"\nreconvergence = \"5us\"\n",
    );
    let mut sim = Simulation::new(&scenario(&text).unwrap()).unwrap();
    let (_, before_back) = counters_at(&mut sim, 69_000_000, "leaf0:up3");
    let (_, still_excluded) = counters_at(&mut sim, 69_500_000, "leaf0:up3");
    let (_, after) = counters_at(&mut sim, 100_000_000, "leaf0:up3");
    assert_eq!(still_excluded, before_back, "up at 60 us but excluded until 70 us");
    assert!(after > before_back + 100, "traffic returns: {before_back} -> {after}");
}

#[test]
fn flaps_and_random_loss_are_recovered_and_conserve_packets() {
    let r = run(&fabric128(
        "[transport]\nrto = \"30us\"\n[workload]\nkind = \"permutation\"\nsize = \"2MiB\"\n[[faults]]\nkind = \"flap\"\nlink = \"spine2:down7\"\nstart = \"5us\"\ndown_for = \"10us\"\nup_for = \"20us\"\ndetection = \"1ms\"\n[[faults]]\nkind = \"random_loss\"\nlink = \"leaf4:up1\"\nprobability = 0.01\n",
    ));
    assert_eq!(r.summary.status, "complete");
    assert!(r.accounting.balanced(), "{:?}", r.accounting);
    assert!(r.accounting.data_dropped > 0);
    assert!(r.ports.u64("drops")[port_index(&r, "leaf4:up1")] > 0);
    assert!(r.flows.u64("timeouts").iter().sum::<u64>() > 0, "silent losses need the RTO");
}

#[test]
fn random_degrade_picks_a_seeded_share_of_one_tier() {
    let degraded = |seed: u64| {
        let r = run(&fabric128(
            "[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n[[faults]]\nkind = \"random_degrade\"\nlinks = \"leaf_up\"\nfraction = 0.1\nrate = \"200Gbps\"\n",
        )
        .replace("seed = 1", &format!("seed = {seed}")));
        let names = match r.ports.get("name") {
            Some(Column::Str(v)) => v.clone(),
            _ => unreachable!(),
        };
        let rates = r.ports.u64("rate_bps").to_vec();
        let mut slow: Vec<String> = names.into_iter().zip(rates).filter(|(_, r)| *r == 200_000_000_000).map(|(n, _)| n).collect();
        slow.sort();
        slow
    };
    let a = degraded(1);
    // 10% of the 128 leaf uplinks: 13 links, both directions of each
    assert_eq!(a.len(), 26);
    assert_eq!(a.iter().filter(|n| n.starts_with("leaf")).count(), 13);
    assert_eq!(a, degraded(1));
    assert_ne!(a, degraded(2));
}

#[test]
fn extra_delay_on_the_path_adds_exactly_to_a_lone_flow() {
    // A window of 4 BDP covers the longer RTT; with the default 1-BDP window the flow would be
    // window-limited by the extra latency (as it would be on a real fabric).
    let base = "[transport]\ncc = \"none\"\ninit_cwnd = \"4bdp\"\nmax_cwnd = \"4bdp\"\n[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 100, size = \"1MiB\"}]\n";
    let sim = Simulation::new(&scenario(&fabric128(base)).unwrap()).unwrap();
    let uplink = sim.topology().ports[sim.flow_path(0).unwrap()[1] as usize].name.clone();
    let r = run(&fabric128(&format!("{base}[[faults]]\nkind = \"delay\"\nlink = \"{uplink}\"\nextra = \"7us\"\n")));
    assert_eq!(r.flows.opt_u64("fct_ps")[0].unwrap(), r.flows.u64("ideal_fct_ps")[0] + 7_000_000);
}

#[test]
fn an_unreachable_host_ends_the_run_at_the_guard_not_a_hang() {
    let r = run(&fabric128(
        "[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 100, size = \"1MiB\"}, {src = 1, dst = 50, size = \"1MiB\"}]\n[[faults]]\nkind = \"link_down\"\nlink = \"host100:up0\"\n[stop]\nmax_time = \"2ms\"\n",
    ));
    assert_eq!(r.summary.status, "incomplete");
    assert_eq!(r.summary.completed, 1);
    assert_eq!(r.flows.bool("completed"), &[false, true]);
    assert!(r.accounting.balanced());
}

#[test]
fn a_seeded_share_of_a_tier_can_fail_and_routing_avoids_all_of_it() {
    // 5% of the 128 leaf uplinks (6 links) dead from the start, routing already converged
    let r = run(&fabric128(
        "[lb]\nkind = \"ops\"\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n[[faults]]\nkind = \"link_down\"\nlinks = \"leaf_up\"\nfraction = 0.05\ndetection = \"0ns\"\nreconvergence = \"0ns\"\n",
    ));
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.summary.drops, 0, "every switch routes around every dead link");
    let dead = r
        .ports
        .u64("data_packets")
        .iter()
        .zip(r.ports.u64("tier"))
        .zip(r.ports.bool("up"))
        .filter(|((d, t), u)| **d == 0 && **t == 1 && **u)
        .count();
    assert!(dead >= 6, "at least the 6 dead uplinks carry nothing: {dead}");
    let err = |extra: &str| Simulation::new(&scenario(&fabric128(extra)).unwrap()).err().unwrap();
    assert_eq!(
        err("[[faults]]\nkind = \"link_down\"\nlink = \"leaf0:up1\"\nlinks = \"leaf_up\"\nfraction = 0.1\n").field,
        "faults[0].links"
    );
    assert_eq!(err("[[faults]]\nkind = \"link_down\"\nlinks = \"leaf_up\"\n").field, "faults[0].fraction");
    assert_eq!(err("[[faults]]\nkind = \"link_down\"\n").field, "faults[0].link");
}

#[test]
fn a_flapping_link_loses_packets_only_while_down() {
    // leaf0-spine3 flaps from 10 us: down 20 us, up 20 us (10-30 down, 30-50 up, 50-70 down,
    // ...); routing never reacts within the run (a 1 ms lag). OPS keeps spraying onto it.
    let text = fabric128(
        "[lb]\nkind = \"ops\"\n[workload]\nkind = \"permutation\"\nsize = \"8MiB\"\n[[faults]]\nkind = \"flap\"\nlink = \"leaf0:up3\"\nstart = \"10us\"\ndown_for = \"20us\"\nup_for = \"20us\"\ndetection = \"500us\"\nreconvergence = \"500us\"\n",
    );
    let mut sim = Simulation::new(&scenario(&text).unwrap()).unwrap();
    let mut at = |us: u64| counters_at(&mut sim, us * 1_000_000, "leaf0:up3");
    let (d10, p10) = at(10);
    let (d30, p30) = at(30);
    let (d50, p50) = at(50);
    let (d70, p70) = at(70);
    assert_eq!(d10, 0, "up before the first flap");
    assert!(d30 > 50, "down 10-30 us: losses {d30}");
    assert_eq!(p30, p10, "nothing crosses while down");
    assert!(d50 - d30 <= 1, "up 30-50 us: at most the packet on the wire when it came back: {d30} -> {d50}");
    assert!(p50 > p30 + 50, "up 30-50 us: traffic crosses again: {p30} -> {p50}");
    assert!(d70 > d50 + 50 && p70 <= p50 + 1, "down again 50-70 us: {d50} -> {d70}, {p50} -> {p70}");
}

/// A lone ECMP flow from host 0 to host 100 over `fault` on its own uplink, starting at
/// `start`: (FCT, ideal FCT).
fn lone_flow_after(fault: &str, start: &str) -> (u64, u64) {
    // find the flow's uplink first: the fault must be on its path
    let flow = format!(
        "[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"flows\"\nflows = [{{src = 0, dst = 100, size = \"256KiB\", start = \"{start}\"}}]\n"
    );
    let sim = Simulation::new(&scenario(&fabric128(&flow)).unwrap()).unwrap();
    let uplink = sim.topology().ports[sim.flow_path(0).unwrap()[1] as usize].name.clone();
    let r = run(&fabric128(&format!("{flow}[[faults]]\nlink = \"{uplink}\"\n{fault}\n")));
    (r.flows.opt_u64("fct_ps")[0].unwrap(), r.flows.u64("ideal_fct_ps")[0])
}

#[test]
fn degrade_delay_and_loss_give_the_link_back_at_their_end() {
    // While the fault holds, a lone flow on the link is slower than its ideal; a flow that
    // starts after `end` finishes exactly at its ideal: rate, latency and loss were restored.
    let cases = [
        "kind = \"degrade\"\nrate = \"100Gbps\"\nend = \"50us\"",
        "kind = \"delay\"\nextra = \"3us\"\nend = \"50us\"",
        "kind = \"random_loss\"\nprobability = 0.2\nend = \"50us\"",
    ];
    for fault in cases {
        let (during, ideal) = lone_flow_after(fault, "0us");
        assert!(during > ideal, "{fault}: {during} vs ideal {ideal}");
        let (after, ideal) = lone_flow_after(fault, "60us");
        assert_eq!(after, ideal, "{fault}: restored at end");
    }
}

#[test]
fn an_estimated_rto_recovers_every_flow_after_a_switch_dies() {
    // spine1 dies at 5 us (108 packets of one flow and others die with it) and is routed
    // around at 35 us. With an estimated RTO, an expiry declares what is still in flight lost
    // and backs off once: before, each expired packet doubled the RTO while the resends
    // waited behind packets that would never be acknowledged, and the run stalled at 30 ms.
    for lb in ["ecmp", "ops", "arcane", "prime"] {
        let r = run(&format!(
            "seed = 13\n[topology]\nhosts = 32\nradix = 8\nlink_latency = \"1us\"\nswitch_latency = \"100ns\"\n[transport]\nrto = \"adaptive\"\nrto_min = \"30us\"\n[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"permutation\"\nsize = \"512KiB\"\n[[faults]]\nkind = \"switch_down\"\nswitch = \"spine1\"\nstart = \"5us\"\ndetection = \"20us\"\nreconvergence = \"10us\"\n"
        ));
        assert_eq!(r.summary.status, "complete", "{lb}: {}", r.summary.stop_reason);
        assert!(r.accounting.balanced() && r.accounting.data_dropped > 0, "{lb}: {:?}", r.accounting);
        assert!(r.summary.max_fct_ns.unwrap() < 200_000.0, "{lb}: {:?}", r.summary.max_fct_ns);
    }
}

#[test]
fn an_estimated_rto_on_a_sprayed_flow_resends_only_what_its_late_path_carried() {
    // one 16 MiB flow sprayed over 8 spines, one uplink 100 us slower: its packets there
    // outlast the estimated RTO, and an expiry declares lost what is in flight on that path
    // (its EVs), not the packets on the 7 healthy ones (5.5 % of the data packets were resent
    // under OPS, 6.0 % under REPS, when an expiry declared everything in flight lost)
    for lb in ["ops", "reps"] {
        let r = run(&format!(
            "seed = 1\n[topology]\nhosts = 128\nradix = 16\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n[transport]\nrto = \"adaptive\"\n[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"flows\"\nflows = [{{src = 0, dst = 127, size = \"16MiB\"}}]\n[[faults]]\nkind = \"delay\"\nlink = \"leaf0:up3\"\nextra = \"100us\"\nstart = \"0us\"\n"
        ));
        assert_eq!(r.summary.status, "complete", "{lb}");
        let (retx, data) = (r.flows.u64("retransmits")[0], r.flows.u64("data_packets")[0]);
        assert!(r.flows.u64("timeouts")[0] > 0, "{lb}: the late path's packets time out");
        assert!(retx * 100 < data, "{lb}: {retx} of {data} data packets resent");
    }
}

/// A fault on a port or switch that does not exist says which do (issue 68): the ports of the
/// node it names, or the hosts and switches as ranges.
#[test]
fn a_fault_on_a_name_that_does_not_exist_says_which_exist() {
    let refused = |fault: &str| {
        let text = fabric128(&format!("[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n[[faults]]\n{fault}start = \"0us\"\n"));
        let e = scenario(&text).and_then(|s| Simulation::new(&s).map(|_| ())).expect_err("refused");
        (e.field, e.message)
    };
    let (field, message) = refused("kind = \"link_down\"\nlink = \"leaf0:up9\"\n");
    assert_eq!(field, "faults[0].link");
    assert!(message.contains("one of leaf0's ports, leaf0:down0-leaf0:down7, leaf0:up0-leaf0:up7"), "{message}");
    let (_, message) = refused("kind = \"link_down\"\nlink = \"leafX\"\n");
    assert!(message.contains("a host (host0-host127) or a switch (leaf0-leaf15, spine0-spine7)"), "{message}");
    let (field, message) = refused("kind = \"switch_down\"\nswitch = \"spine12\"\n");
    assert_eq!(field, "faults[0].switch");
    assert!(message.ends_with("as its ports carry it: leaf0-leaf15, spine0-spine7"), "{message}");
}
