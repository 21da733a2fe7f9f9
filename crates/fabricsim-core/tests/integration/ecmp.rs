//! ECMP's collision tail: two flows hashed onto one uplink share it; a permutation under
//! ECMP has a far worse tail than packet spraying. Hashing with one seed at every tier
//! polarizes; pinning paths by the destination's downlink index balances full racks and
//! piles half-allocated ones onto half the uplinks. A job's queue pairs a connection take
//! turns, and spread over the uplinks only where the switches hash the queue pair or the
//! NIC varies the source port.

use super::{fabric128, flows, run, scenario};
use fabricsim_core::Simulation;

#[test]
fn two_flows_on_one_uplink_each_take_twice_their_ideal() {
    // Find a seed where flows 0->16 and 1->24 (both leaf 0, different destination leaves)
    // hash onto the same leaf-0 uplink; then they share that link and nothing else.
    let toml_for = |seed: u64| {
        fabric128("[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 16, size = \"4MiB\"}, {src = 1, dst = 24, size = \"4MiB\"}]\n")
            .replace("seed = 1", &format!("seed = {seed}"))
    };
    let mut collided = None;
    for seed in 1..200 {
        let sim = Simulation::new(&scenario(&toml_for(seed)).unwrap()).unwrap();
        let p0 = sim.flow_path(0).expect("an ECMP flow has one path");
        let p1 = sim.flow_path(1).expect("an ECMP flow has one path");
        if p0[1] == p1[1] {
            assert_ne!(p0[3], p1[3], "different destination leaves");
            collided = Some(seed);
            break;
        }
    }
    let seed = collided.expect("some seed collides (probability 1/8 each)");
    let r = run(&toml_for(seed));
    assert_eq!(r.summary.status, "complete");
    for s in r.flows.opt_f64("slowdown") {
        let s = s.expect("complete");
        assert!((1.8..2.2).contains(&s), "slowdown {s}");
    }
}

#[test]
fn permutation_tail_is_heavy_under_ecmp_and_light_under_ops() {
    let perm = |lb: &str| run(&fabric128(&format!("[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"permutation\"\nsize = \"2MiB\"\n")));
    let ecmp = perm("ecmp");
    let ops = perm("ops");
    assert_eq!(ecmp.summary.status, "complete");
    assert_eq!(ops.summary.status, "complete");
    // 128 flows onto 8 uplinks per leaf: ECMP piles 3+ flows on some link.
    assert!(ecmp.summary.max_slowdown.unwrap() > 2.5, "ecmp max slowdown {}", ecmp.summary.max_slowdown.unwrap());
    assert!(ops.summary.max_slowdown.unwrap() < 2.0, "ops max slowdown {}", ops.summary.max_slowdown.unwrap());
    assert!(ecmp.summary.max_slowdown.unwrap() > 1.5 * ops.summary.max_slowdown.unwrap());
}

#[test]
fn one_hash_seed_for_every_switch_polarizes_a_3_tier_fabric_onto_one_uplink_an_aggregation_switch() {
    // 3 tiers, radix 8: 4 uplinks a leaf (to its pod's aggregation switches) and 4 an
    // aggregation switch (to the cores). With one seed everywhere a flow hashes alike at both
    // tiers: the leaf's choice i brings it to the pod's i-th aggregation switch, which picks
    // its uplink i again, so each aggregation switch sends on one uplink of its four
    let perm = |seed: &str| {
        let r = run(&format!(
            "seed = 1\n[topology]\ntiers = 3\nhosts = 128\nradix = 8\n[switch]\nhash_seed = \"{seed}\"\n[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"permutation\"\nsize = \"256KiB\"\n"
        ));
        assert_eq!(r.summary.status, "complete");
        let (names, data) = (r.ports.str("name"), r.ports.u64("data_packets"));
        let mut used = std::collections::BTreeMap::<String, usize>::new();
        for (n, &d) in names.iter().zip(data) {
            if let Some((agg, _)) = n.split_once(":up").filter(|(a, _)| a.starts_with("agg")) {
                *used.entry(agg.to_string()).or_default() += usize::from(d > 0);
            }
        }
        assert_eq!(used.len(), 32, "32 aggregation switches");
        (used.values().copied().max().unwrap_or(0), used.values().sum::<usize>(), r.summary.max_slowdown.unwrap())
    };
    let (most, all, fabric_tail) = perm("fabric");
    assert_eq!(most, 1, "every aggregation switch sends on one uplink");
    assert!(all <= 32);
    for seed in ["switch", "tier"] {
        let (most, all, tail) = perm(seed);
        assert!(most >= 3 && all > 64, "{seed}: {all} uplinks used, at most {most} a switch");
        assert!(tail < fabric_tail, "{seed}: max slowdown {tail} against {fabric_tail} polarized");
    }
}

#[test]
fn pinned_paths_give_full_racks_one_uplink_each_and_half_allocated_ones_half_the_uplinks() {
    // leaf 0's 8 hosts (slices 0-7) each send 2 MiB to a host of another leaf; the leaves have
    // 8 uplinks. To slices 0-7 every uplink (and every spine's link down) carries one flow; to
    // slices 0-3 only (racks half allocated) four uplinks carry two flows each
    let pinned = |slice: fn(u32) -> u32| {
        let list: Vec<(u32, u32, &str, &str)> = (0..8).map(|k| (k, 8 * (k + 1) + slice(k), "2MiB", "0us")).collect();
        let r = run(&fabric128(&format!("[switch]\nrouting = \"pin\"\n[lb]\nkind = \"ecmp\"\n{}", flows(&list))));
        assert_eq!(r.summary.status, "complete");
        let (names, data) = (r.ports.str("name"), r.ports.u64("data_packets"));
        let uplinks = names.iter().zip(data).filter(|(n, &d)| n.starts_with("leaf0:up") && d > 0).count();
        let slowdowns: Vec<f64> = r.flows.opt_f64("slowdown").iter().map(|s| s.expect("complete")).collect();
        (uplinks, slowdowns)
    };
    let (uplinks, full) = pinned(|k| k);
    assert_eq!(uplinks, 8);
    assert!(full.iter().all(|&s| s < 1.01), "one flow a path: {full:?}");
    let (uplinks, half) = pinned(|k| k % 4);
    assert_eq!(uplinks, 4);
    assert!(half.iter().all(|&s| (1.8..2.2).contains(&s)), "two flows an uplink: {half:?}");
}

#[test]
fn a_connections_queue_pairs_take_turns_across_iterations_on_each_channel() {
    // a ring of 3 ranks, 2 channels, 4 queue pairs a connection, 3 iterations: each rank sends
    // its successor 4 messages a channel an iteration; the k-th on channel c goes on c * 4 + k mod 4
    let job = |qps: &str| {
        fabric128(&format!(
            "[[jobs]]\ncollective = \"allreduce\"\nsize = \"3MiB\"\nhosts = [0, 8, 16]\nchannels = 2\niterations = 3\n{qps}\n"
        ))
    };
    let model = scenario(&job("qps = 4")).unwrap().resolve().unwrap();
    let mut seen = std::collections::BTreeMap::<(u32, u32, u16), Vec<u16>>::new();
    for m in model.messages.iter().filter(|m| m.src != m.dst) {
        seen.entry((m.src, m.dst, m.qp / 4)).or_default().push(m.qp);
    }
    assert_eq!(seen.len(), 3 * 2, "3 ring links, 2 channels");
    for ((_, _, c), qps) in &seen {
        assert_eq!(qps.len(), 4 * 3);
        assert!(qps.iter().enumerate().all(|(k, &q)| q == c * 4 + (k % 4) as u16), "channel {c}: {qps:?}");
    }
    let one = scenario(&job("")).unwrap().resolve().unwrap();
    assert!(one.messages.iter().all(|m| m.qp < 2), "one queue pair a channel by default");
    for bad in ["qps = 0", "qps = 129"] {
        let e = scenario(&job(bad)).and_then(|s| s.resolve()).unwrap_err();
        assert_eq!(e.field, "jobs[0].qps", "{bad}: {e}");
        assert!(e.message.contains("1 to 128"), "{e}");
    }
}

#[test]
fn queue_pairs_spread_over_the_uplinks_only_where_the_switches_hash_them_or_the_nic_varies_the_port() {
    // two ranks on leaves 0 and 1 exchange 4 messages each way, one at a time; a NIC that
    // sends every queue pair from one source port (`evs_size = 1`): with 4 queue pairs a
    // connection the switches that hash the destination queue pair (enhanced ECMP) put
    // them on several of leaf 0's 8 uplinks; on the 5-tuple alone they share one
    let uplinks = |fields: &str, qps: u32, evs: u32| {
        let r = run(&fabric128(&format!(
            "[switch]\nhash_fields = \"{fields}\"\n[lb]\nkind = \"ecmp\"\nevs_size = {evs}\n[[jobs]]\ncollective = \"allreduce\"\nsize = \"1MiB\"\nhosts = [0, 8]\niterations = 4\nqps = {qps}\n"
        )));
        assert_eq!(r.summary.status, "complete");
        let (names, data) = (r.ports.str("name"), r.ports.u64("data_packets"));
        names.iter().zip(data).filter(|(n, &d)| n.starts_with("leaf0:up") && d > 0).count()
    };
    assert_eq!(uplinks("five_tuple", 4, 1), 1, "one 5-tuple, one path");
    assert_eq!(uplinks("five_tuple_qp", 1, 1), 1, "one queue pair, one path");
    assert!(uplinks("five_tuple_qp", 4, 1) >= 2, "4 queue pairs hashed apart");
    // a source port a queue pair (the default EVS): apart on the 5-tuple too
    assert!(uplinks("five_tuple", 4, 65536) >= 2, "4 source ports hashed apart");
}

#[test]
fn an_xor_hash_sends_flows_of_one_source_xor_destination_on_one_uplink_where_a_crc_spreads_them() {
    // leaf 0's 8 hosts each send to host k + 16 (leaf 2): source XOR destination is 16 for every
    // flow, and with one source port a NIC (evs_size = 1) and no queue pair hashed, a fold of
    // XORs gives them one hash, so one uplink; a CRC or the mix spreads them
    let uplinks = |function: &str| {
        let list: Vec<(u32, u32, &str, &str)> = (0..8).map(|k| (k, k + 16, "1MiB", "0us")).collect();
        let text = fabric128(&format!(
            "[switch]\nhash_fields = \"five_tuple\"\nhash_function = \"{function}\"\n[lb]\nkind = \"ecmp\"\nevs_size = 1\n{}",
            flows(&list)
        ));
        let r = run(&text);
        assert_eq!(r.summary.status, "complete");
        let (names, data) = (r.ports.str("name"), r.ports.u64("data_packets"));
        names.iter().zip(data).filter(|(n, &d)| n.starts_with("leaf0:up") && d > 0).count()
    };
    assert_eq!(uplinks("xor"), 1);
    for function in ["crc32", "crc16", "mix"] {
        assert!(uplinks(function) >= 3, "{function}: {} uplinks", uplinks(function));
    }
    let err = scenario(&fabric128("[switch]\nhash_function = \"md5\"\n")).expect_err("md5");
    assert!(err.message.contains("crc32"), "{}", err.message);
}
