//! A lone flow on an idle fabric completes in exactly its ideal FCT, to the picosecond.
//!
//! The ideal (docs/model.md) is the best the idle fabric allows: the message's packets through
//! the store-and-forward tandem where each hop may use every parallel link of that position.
//! Where every packet is full (or there is one), a lone flow on one path or sprayed achieves it
//! exactly. A message whose last packet is short can do better than one path allows: sprayed,
//! the short packet takes another link and overtakes the full one before it; on one path
//! (ECMP) it cannot, and its FCT is exactly the single-path tandem, a few ns above the ideal.

use super::{run, scenario};
use fabricsim_core::stats::{ideal_fct, message_packets};
use fabricsim_core::topology::Hop;

fn toml(topology: &str, transport: &str, lb: &str, src: u32, dst: u32, size: &str) -> String {
    format!(
        "[topology]\n{topology}\n[transport]\n{transport}\n[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"flows\"\nflows = [{{src = {src}, dst = {dst}, size = \"{size}\", start = \"3us\"}}]\n"
    )
}

fn lone_flow(topology: &str, transport: &str, lb: &str, src: u32, dst: u32, size: &str) -> (u64, u64) {
    let r = run(&toml(topology, transport, lb, src, dst, size));
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.flows.opt_u64("first_send_ps")[0].unwrap(), 3_000_000, "a lone flow starts sending at its start time");
    (r.flows.opt_u64("fct_ps")[0].unwrap(), r.flows.u64("ideal_fct_ps")[0])
}

/// The store-and-forward tandem of one path: what a single-path flow takes alone.
fn one_path(topology: &str, transport: &str, src: u32, dst: u32, size: &str) -> u64 {
    let m = scenario(&toml(topology, transport, "ecmp", src, dst, size)).unwrap().resolve().unwrap();
    let path: Vec<Hop> = m.topo.route(src, dst).hops.into_iter().map(|h| Hop { links: 1, ..h }).collect();
    ideal_fct(&path, &message_packets(m.messages[0].bytes, m.transport.mtu, m.transport.header, 1), &[])
}

#[test]
fn lone_flow_is_exactly_ideal_on_two_and_three_tiers() {
    let mut checked = 0;
    for tiers in ["tiers = 2\nhosts = 128\nradix = 16", "tiers = 3\nhosts = 128\nradix = 8"] {
        for rate in ["100Gbps", "400Gbps", "800Gbps"] {
            for (lat, sw) in [("1us", "0ns"), ("500ns", "500ns")] {
                // same leaf, same pod (3 tiers) / other leaf, and the far side of the fabric
                for (src, dst) in [(0, 1), (0, 9), (3, 100)] {
                    let topo = format!("{tiers}\nlink_rate = \"{rate}\"\nlink_latency = \"{lat}\"\nswitch_latency = \"{sw}\"");
                    for (lb, size) in [("ops", "1B"), ("ops", "4096B"), ("ops", "1MiB"), ("ecmp", "4096B"), ("ecmp", "1MiB")] {
                        let (fct, ideal) = lone_flow(&topo, "", lb, src, dst, size);
                        assert_eq!(fct, ideal, "{topo} {lb} {src}->{dst} {size}");
                        checked += 1;
                    }
                    // a short last packet on one path: the single-path tandem, never below the ideal
                    let (fct, ideal) = lone_flow(&topo, "", "ecmp", src, dst, "4097B");
                    assert_eq!(fct, one_path(&topo, "", src, dst, "4097B"), "{topo} {src}->{dst}");
                    assert!(fct >= ideal && (fct > ideal) == (src / 8 != dst / 8 || tiers.contains("= 3") && src / 4 != dst / 4));
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 2 * 3 * 2 * 3 * 6);
}

#[test]
fn ideal_fct_has_the_closed_form_of_design_md() {
    // 8 MiB, 400 Gb/s, 1 us links, no switch latency, 4 hops: 2048 packets of 83.2 ns on the
    // wire, plus 3 more store-and-forwards of one packet and 4 propagation delays.
    let (fct, ideal) = lone_flow("link_latency = \"1us\"\nswitch_latency = \"0ns\"", "", "ops", 0, 100, "8MiB");
    assert_eq!(ideal, 2048 * 83_200 + 3 * 83_200 + 4 * 1_000_000);
    assert_eq!(fct, ideal);
}

const FAST_CORE: &str = "tiers = 3\nhosts = 128\nradix = 8\ntier_link_rates = [\"400Gbps\", \"800Gbps\", \"1600Gbps\"]\ntier_link_latencies = [\"200ns\", \"1us\", \"2us\"]\nswitch_latency = \"300ns\"";

#[test]
fn exact_with_faster_core_links_any_cc_and_ack_coalescing() {
    for transport in [
        "cc = \"dctcp\"",
        "cc = \"nscc\"",
        "kind = \"gbn\"\ncc = \"dcqcn\"",
        "cc = \"none\"",
        "ack_every = 4",
        "ack_every = 16\ncc = \"none\"",
        "mtu = \"9064B\"\nheader = \"64B\"",
    ] {
        for size in ["3MiB", "12345B"] {
            let (fct, ideal) = lone_flow(FAST_CORE, transport, "ecmp", 5, 120, size);
            assert_eq!(fct, one_path(FAST_CORE, transport, 5, 120, size), "{transport} {size}");
            assert!(fct >= ideal);
        }
    }
}

#[test]
fn sprayed_short_last_packet_reaches_the_ideal_when_it_overtakes() {
    // 2 packets: 4160 B and 65 B (at 100 Gb/s: 5.2 ns). Over seeds the short packet sometimes
    // overtakes the full one on another path (exactly the ideal) and sometimes shares its path
    // (the single-path tandem, 5.2 ns more).
    let mut outcomes = std::collections::BTreeSet::new();
    for seed in 1..40 {
        let r = run(&format!(
            "seed = {seed}\n[topology]\nlink_rate = \"100Gbps\"\n[lb]\nkind = \"ops\"\nevs_size = 8\n[workload]\nkind = \"flows\"\nflows = [{{src = 0, dst = 9, size = \"4097B\"}}]\n"
        ));
        let (fct, ideal) = (r.flows.opt_u64("fct_ps")[0].unwrap(), r.flows.u64("ideal_fct_ps")[0]);
        assert!(fct >= ideal, "seed {seed}: fct {fct} ideal {ideal}");
        outcomes.insert(fct - ideal);
    }
    assert_eq!(outcomes.into_iter().collect::<Vec<_>>(), vec![0, 5_200]);
}

#[test]
fn sprayed_over_slow_uplinks_the_ideal_is_their_sum() {
    // 400G host links, 100G uplinks to 4 spines: one path is a quarter of the host rate,
    // all four together match it. A lone 1 MiB flow: ECMP takes 3.5x the ideal, spraying
    // comes close to it, and nothing beats it.
    let topo = "hosts = 32\nradix = 8\ntier_link_rates = [\"400Gbps\", \"100Gbps\"]";
    let (ecmp, ideal) = lone_flow(topo, "", "ecmp", 0, 20, "1MiB");
    assert_eq!(ecmp, one_path(topo, "", 0, 20, "1MiB"));
    assert!(ecmp as f64 / ideal as f64 > 3.0, "ecmp {ecmp} ideal {ideal}");
    for lb in ["ops", "reps", "arcane", "prime", "mptcp"] {
        let (fct, ideal) = lone_flow(topo, "", lb, 0, 20, "1MiB");
        assert!(fct >= ideal && (fct as f64) < 2.0 * ideal as f64, "{lb}: fct {fct} ideal {ideal}");
    }
}

#[test]
fn a_split_single_packet_pipelines_and_its_ideal_says_so() {
    // MPTCP cuts a 4096 B message into 8 packets of 576 B: through 4 store-and-forward hops
    // they are faster than one 4160 B packet, and the ideal is computed from them.
    let (fct, ideal) = lone_flow("hosts = 128\nradix = 16", "", "mptcp", 0, 100, "4096B");
    let (whole, _) = lone_flow("hosts = 128\nradix = 16", "", "ecmp", 0, 100, "4096B");
    assert!(fct >= ideal && ideal < whole, "mptcp {fct} ideal {ideal} one packet {whole}");
}

#[test]
fn a_dependent_message_is_released_when_its_dependencies_complete_plus_its_delay() {
    // 0 -> 9 and 20 -> 30 first; 9 -> 40 waits for both, then 2 us of compute; 40 -> 41 waits
    // for that one only. On an idle fabric each releases exactly then and takes its ideal.
    // Host 9 knows at once when 0 -> 9 is done (it received it); it hears of 20 -> 30 by a
    // notice from 30, an empty packet's flight: 4 links of 1 us (different leaves, no switch
    // latency).
    let r = run(&super::fabric128(
        "[workload]\nkind = \"flows\"\nflows = [\n{id = 10, src = 0, dst = 9, size = \"64KiB\"},\n{id = 11, src = 20, dst = 30, size = \"256KiB\"},\n{src = 9, dst = 40, size = \"128KiB\", after = [10, 11], delay = \"2us\"},\n{src = 40, dst = 41, size = \"4KiB\", after = [2], start = \"1ms\"},\n]\n",
    ));
    assert_eq!(r.summary.status, "complete");
    let (ready, first, end, fct, ideal) = (
        r.flows.opt_u64("ready_ps"),
        r.flows.opt_u64("first_send_ps"),
        r.flows.opt_u64("end_ps"),
        r.flows.opt_u64("fct_ps"),
        r.flows.u64("ideal_fct_ps"),
    );
    let last = end[0].unwrap().max(end[1].unwrap() + 4_000_000);
    assert_eq!(ready[2], Some(last + 2_000_000));
    assert_eq!(first[2], ready[2]);
    // its own start is later than its dependency: the start wins
    assert_eq!(ready[3], Some(1_000_000_000));
    for i in 0..4 {
        assert_eq!(fct[i], Some(ideal[i]), "message {i} alone on the fabric");
    }
    // a flows list with dependencies is a trace: one more row in the jobs table, its span from
    // the first release to the last end, at its ideal on the idle fabric, and a steps row per
    // rank (what it sends or receives)
    assert_eq!((r.jobs.str("collective"), r.jobs.str("name")), (&["trace".to_string()][..], &["workload".to_string()][..]));
    let last_end = end.iter().map(|e| e.unwrap()).max().unwrap();
    assert_eq!(r.jobs.opt_u64("start_ps")[0], Some(0));
    assert_eq!(r.jobs.opt_u64("jct_ps")[0], Some(last_end));
    assert_eq!(r.jobs.u64("ideal_jct_ps")[0], last_end, "each message at its ideal: the trace at its bound");
    assert_eq!(r.jobs.u64("size_bytes")[0], (64 + 256 + 128 + 4) << 10);
    assert_eq!(r.jobs.u64("ranks")[0], 6);
    let (rank, kind, count) = (r.steps.u64("step"), r.steps.str("kind"), r.steps.u64("messages"));
    assert_eq!(rank, &[0, 9, 20, 30, 40, 41]);
    assert!(kind.iter().all(|k| k == "rank"));
    assert_eq!(count, &[1, 1, 1, 0, 1, 0], "the messages each rank sends");
    let (rank_end, rank_ideal) = (r.steps.opt_u64("end_ps"), r.steps.u64("ideal_end_ps"));
    // rank 9 received 0 -> 9 and then sent 9 -> 40; rank 30 only received
    assert_eq!(rank_end, vec![end[0], end[2], end[1], end[1], end[3], end[3]]);
    assert_eq!(rank_end.iter().map(|e| e.unwrap()).collect::<Vec<_>>(), rank_ideal);
}

#[test]
fn a_rate_capped_lone_flow_is_exactly_its_paced_ideal() {
    let topo = "hosts = 128\nradix = 16\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"";
    for (cap, gbps, lb) in [("100Gbps", 100, "ecmp"), ("100Gbps", 100, "ops"), ("333Gbps", 333, "ecmp"), ("100Gbps", 100, "mptcp")] {
        let transport = format!("rate_cap = \"{cap}\"");
        let (fct, ideal) = lone_flow(topo, &transport, lb, 5, 120, "1MiB");
        if lb == "mptcp" {
            // 8 subflows, each capped and each with an eighth of the window: never faster
            // than the ideal, within 2% of it
            assert!(fct >= ideal && fct * 100 <= ideal * 102, "{cap} {lb}: {fct} vs {ideal}");
            continue; // 8 x 100 Gb/s together exceed the line rate: the cap does not bind
        }
        assert_eq!(fct, ideal, "{cap} {lb}");
        // the cap is the bottleneck: at least 256 packets of 4160 B at the cap
        let at_cap = 256 * 4160 * 8 * 1000 / gbps;
        let (uncapped, _) = lone_flow(topo, "", lb, 5, 120, "1MiB");
        assert!(fct >= at_cap && fct > uncapped, "{cap} {lb}: {fct} vs {at_cap} at the cap, {uncapped} uncapped");
    }
}

#[test]
fn entries_on_one_cpu_run_one_at_a_time_in_the_order_they_get_ready() {
    // host 5: two 10 us compute tasks on CPU 0 (ids 0, 1) and one on CPU 1 (id 2), all ready at
    // 0; then messages waiting for them. CPU 0 runs 0 then 1 (done at 10 and 20 us); CPU 1 runs
    // 2 beside them (done at 10 us). A message on CPU 0 ready at 10 us waits for the CPU until
    // 20 us; without a CPU it leaves at 10 us; one with 3 us of work on CPU 0, ready at 20 us,
    // leaves at 23 us (LogGOPSim's per-CPU `nexto`).
    let us = 1_000_000u64;
    let r = run(&super::fabric128(
        "[workload]\nkind = \"flows\"\nflows = [\n\
         {src = 5, dst = 5, size = \"0B\", delay = \"10us\", cpu = 0},\n\
         {src = 5, dst = 5, size = \"0B\", delay = \"10us\", cpu = 0},\n\
         {src = 5, dst = 5, size = \"0B\", delay = \"10us\", cpu = 1},\n\
         {src = 5, dst = 9, size = \"64KiB\", after = [0], cpu = 0},\n\
         {src = 5, dst = 9, size = \"64KiB\", after = [0]},\n\
         {src = 5, dst = 10, size = \"64KiB\", after = [2], cpu = 1},\n\
         {src = 5, dst = 11, size = \"64KiB\", after = [1], delay = \"3us\", cpu = 0},\n]\n",
    ));
    assert_eq!(r.summary.status, "complete");
    let ready = r.flows.opt_u64("ready_ps");
    assert_eq!(ready, vec![Some(20 * us), Some(10 * us), Some(10 * us), Some(23 * us)]);
    // without `cpu` the same tasks overlap: every message ready at 10 us (13 us with its delay)
    let free = run(&super::fabric128(
        "[workload]\nkind = \"flows\"\nflows = [\n\
         {src = 5, dst = 5, size = \"0B\", delay = \"10us\"},\n\
         {src = 5, dst = 5, size = \"0B\", delay = \"10us\"},\n\
         {src = 5, dst = 9, size = \"64KiB\", after = [0]},\n\
         {src = 5, dst = 11, size = \"64KiB\", after = [1], delay = \"3us\"},\n]\n",
    ));
    assert_eq!(free.flows.opt_u64("ready_ps"), vec![Some(10 * us), Some(13 * us)]);
    let text = super::fabric128("[workload]\nkind = \"flows\"\nflows = [{src = 5, dst = 9, size = \"1KiB\", start = \"1us\", cpu = 0}]\n");
    let refused = fabricsim_core::Simulation::new(&super::scenario(&text).unwrap()).err().expect("refused");
    assert_eq!(refused.field, "workload.flows[0].start");
}
