//! `[[jobs]]`: collectives as dependent messages on placed ranks.

use super::{fabric128, run, scenario};
use fabricsim_core::Simulation;

fn job(spec: &str) -> String {
    fabric128(&format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\n{spec}\n"))
}

#[test]
fn a_lone_ring_allreduce_runs_its_steps_and_stays_near_its_ideal() {
    // 8 ranks, 2 iterations of 2 MiB: 2 x 7 steps per iteration, 8 messages of 256 KiB each
    let r = run(&job("collective = \"allreduce\"\nsize = \"2MiB\"\nranks = 8\niterations = 2\ncompute = \"5us\""));
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.flows.u64("bytes").len(), 2 * 14 * 8);
    assert!(r.flows.u64("bytes").iter().all(|&b| b == 256 << 10));
    let steps = r.steps.u64("messages");
    assert_eq!(steps.len(), 2 * 14);
    assert!(steps.iter().all(|&m| m == 8));
    let (jct, ideal) = (r.jobs.opt_u64("jct_ps"), r.jobs.u64("ideal_jct_ps"));
    for it in 0..2 {
        let (jct, ideal) = (jct[it].unwrap(), ideal[it]);
        // a rank's NIC carries its sends and the ACKs of what it receives, one 64 B ACK per
        // 4160 B packet: the ideal counts only the data (docs/workloads.md), which the ACKs
        // delay by 1.5 % where they queue ahead of it; with ACKs held back the job meets its
        // ideal exactly (docs/workloads.md, "Exactness"). Bound: twice the ACKs' share
        assert!(jct >= ideal && (jct as f64) < 1.03 * ideal as f64, "iteration {it}: {jct} vs {ideal}");
    }
    // the second iteration's first messages wait for the first's, then the compute gap
    let (ready, end, tag_it) = (r.flows.opt_u64("ready_ps"), r.flows.opt_u64("end_ps"), r.steps.u64("iteration"));
    assert_eq!(tag_it.iter().filter(|&&i| i == 1).count(), 14);
    let first_of_second = 14 * 8; // message ids follow (iteration, step, rank)
                                  // rank 0 learns that its last send is done when its final ACK arrives: 64 B over two
                                  // links of 1 us at 400 Gb/s (ranks 0 and 1 share a leaf), 2 x (1 us + 1.28 ns) after the end
    let ack_flight = 2 * (1_000_000 + 1_280);
    let rank0_done = (end[13 * 8].unwrap() + ack_flight).max(end[13 * 8 + 7].unwrap()); // its last send and receive
    assert_eq!(ready[first_of_second], Some(rank0_done + 5_000_000));
    // nccl-tests' bus bandwidth: algbw x 2(n-1)/n
    let (alg, bus) = (r.jobs.opt_f64("algbw_gbps")[0].unwrap(), r.jobs.opt_f64("busbw_gbps")[0].unwrap());
    assert!((bus / alg - 2.0 * 7.0 / 8.0).abs() < 1e-12);
    assert!(bus < 400.0 && bus > 200.0, "{bus}");
    assert_eq!(r.summary.max_jct_ns, Some(jct.iter().flatten().max().copied().unwrap() as f64 / 1e3));
}

#[test]
fn a_ring_step_waits_for_its_data_not_for_the_ack_of_its_own_send() {
    // 4 ranks under one leaf, 8 MiB: 6 steps of 2 MiB. Each step is released the instant
    // the rank has received the step before (no wait for the ACK of its own send, as NCCL's
    // ring), so on an idle fabric with ACKs only at a message's end (ack_every above its
    // packets) the iteration is 6 ideal FCTs back to back; at each of the 5 step boundaries
    // the rank's NIC first sends the final ACK of what it just received (64 B, 1.28 ns at
    // 400 Gb/s). Before this change each boundary also waited for the ACK of the rank's own
    // send to fly back (2 x (1 us + 1.28 ns))
    let r = run(&fabric128("[transport]\nack_every = 1024\n[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nsize = \"8MiB\"\nranks = 4\n"));
    let (ready, end, src, dst) = (r.flows.opt_u64("ready_ps"), r.flows.opt_u64("end_ps"), r.flows.u64("src"), r.flows.u64("dst"));
    assert_eq!(ready.len(), 6 * 4);
    for s in 1..6 {
        for k in 0..4 {
            let m = s * 4 + k;
            // the message of step s - 1 that this rank received
            let got = (0..4).map(|j| (s - 1) * 4 + j).find(|&j| dst[j] == src[m]).unwrap();
            assert_eq!(ready[m], end[got], "step {s}, rank {}: released when its data arrived", src[m]);
        }
    }
    let fct = r.flows.u64("ideal_fct_ps")[0];
    assert!(r.flows.u64("ideal_fct_ps").iter().all(|&f| f == fct));
    assert_eq!(r.jobs.opt_u64("jct_ps")[0], Some(6 * fct + 5 * 1_280));
    // the bound: 6 ideal FCTs (the ACKs are left out of it: the run may send one after the
    // data released at its instant)
    assert_eq!(r.jobs.u64("ideal_jct_ps")[0], 6 * fct);
}

#[test]
fn a_jobs_connections_exist_only_while_their_messages_are_under_way() {
    // 8 ranks, 3 iterations of 14 ring steps: 336 messages, each rank with at most its send and
    // the one it awaits under way; the results are those of the full state (golden scenarios)
    let mut sim =
        Simulation::new(&scenario(&job("collective = \"allreduce\"\nsize = \"2MiB\"\nranks = 8\niterations = 3")).unwrap()).unwrap();
    assert_eq!(sim.peak_live_connections(), 0, "nothing is built before it starts");
    sim.step(u64::MAX);
    let r = sim.results();
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.flows.u64("bytes").len(), 3 * 14 * 8);
    let live = sim.peak_live_connections();
    assert!((8..=16).contains(&live), "{live} connections at once");
    // a done connection's row still reports what it did
    let (sent, packets) = (r.flows.u64("data_packets"), r.flows.u64("packets"));
    assert!(sent.iter().zip(packets).all(|(&s, &p)| p > 0 && s >= p), "every packet sent at least once");
    assert_eq!(r.flows.u64("delivered_bytes").iter().sum::<u64>(), 3 * 14 * 8 * (256 << 10));
}

#[test]
fn a_lone_job_meets_its_ideal_jct_to_the_picosecond_when_acks_do_not_interleave() {
    // ACKs only at a message's end (ack_every above its 64 packets): nothing shares a rank's
    // NIC with its data but the final ACK of what it received. 8 ranks under one leaf, two
    // iterations with a compute gap: every message at its ideal FCT, and every iteration at
    // its bound plus those ACKs (64 B, 1.28 ns at 400 Gb/s) where they went ahead of the next
    // step's data, to the picosecond. The bound leaves them out: the run sends such an ACK
    // before or after data released at its instant (both happen: the check below), so a
    // bound cannot count it.
    for alg in ["ring", "halving_doubling"] {
        let r = run(&fabric128(&format!(
            "[transport]\nack_every = 1024\n[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nalgorithm = \"{alg}\"\nsize = \"2MiB\"\nranks = 8\niterations = 2\ncompute = \"1us\"\n"
        )));
        let (fct, ideal_fct) = (r.flows.opt_u64("fct_ps"), r.flows.u64("ideal_fct_ps"));
        assert!(fct.iter().zip(ideal_fct).all(|(f, i)| f.unwrap() == *i), "{alg}: every message at its ideal FCT");
        let (jct, ideal) = (r.jobs.opt_u64("jct_ps"), r.jobs.u64("ideal_jct_ps"));
        // the ring's 13 step boundaries on its critical path each hold one ACK; the
        // butterfly's 5 boundaries wait for the rank's own send (its ACK's flight is in the
        // bound) and hold none
        let acks = if alg == "ring" { 13 } else { 0 };
        assert!(jct.iter().zip(ideal).all(|(j, &i)| j.unwrap() == i + acks * 1280), "{alg}: {jct:?} against {ideal:?}");
        // a step released as the rank receives its last packet goes out at once or behind
        // that packet's ACK
        let (ready, first) = (r.flows.opt_u64("ready_ps"), r.flows.opt_u64("first_send_ps"));
        assert!(ready.iter().zip(first).all(|(r, f)| matches!(f.unwrap() - r.unwrap(), 0 | 1280)), "{alg}");
    }
}

#[test]
fn the_ideal_jct_is_the_critical_path_of_ideal_fcts_and_final_acks() {
    // a 2-rank reduce_scatter is one step: each rank sends half its buffer to the other
    let r = run(&job("collective = \"reduce_scatter\"\nsize = \"1MiB\"\nhosts = [0, 100]"));
    let ideal_fct = r.flows.u64("ideal_fct_ps");
    assert_eq!(ideal_fct.len(), 2);
    assert_eq!(r.jobs.u64("ideal_jct_ps")[0], ideal_fct[0]);
    // a 4-rank halving-doubling allreduce: 4 steps of 512, 256, 256, 512 KiB, each waiting
    // for the one before: the ideal is the sum of the steps' ideals, plus at each of the 3
    // step boundaries the flight of the final ACK (64 B) that tells the rank its send is done:
    // two links of 1 us at 400 Gb/s (the ranks share a leaf), 2 x (1 us + 1.28 ns)
    let r = run(&job("collective = \"allreduce\"\nalgorithm = \"halving_doubling\"\nsize = \"1MiB\"\nranks = 4"));
    let bytes = r.flows.u64("bytes");
    assert_eq!(bytes.iter().step_by(4).copied().collect::<Vec<_>>(), vec![512 << 10, 256 << 10, 256 << 10, 512 << 10]);
    let ideal_fct = r.flows.u64("ideal_fct_ps");
    let sum: u64 = (0..4).map(|s| ideal_fct[s * 4]).sum::<u64>() + 3 * 2 * (1_000_000 + 1280);
    assert_eq!(r.jobs.u64("ideal_jct_ps")[0], sum);
    let jct = r.jobs.opt_u64("jct_ps")[0].unwrap();
    assert!(jct >= sum && (jct as f64) < 1.03 * sum as f64);
}

#[test]
fn a_double_binary_tree_allreduce_pipelines_both_trees_near_its_ideal() {
    for n in [2, 7, 16] {
        let r = run(&job(&format!(
            "collective = \"allreduce\"\nalgorithm = \"tree\"\nsize = \"2MiB\"\nranks = {n}\niterations = 2\ncompute = \"3us\""
        )));
        assert_eq!(r.summary.status, "complete");
        // 2 trees x 8 pieces x (n-1 up + n-1 down), each piece 1/16 of the buffer
        let bytes = r.flows.u64("bytes");
        assert_eq!(bytes.len(), 2 * 2 * 8 * 2 * (n - 1));
        assert!(bytes.iter().all(|&b| b == 128 << 10));
        // with n even no rank is interior in both trees: none sends more than 2 x size per
        // iteration (3 halves as an interior node, 1 as a leaf), as in a ring
        let src = r.flows.u64("src");
        for h in 0..n as u64 {
            let sent: u64 = (0..bytes.len()).filter(|&i| src[i] == h).map(|i| bytes[i]).sum::<u64>() / 2;
            let most = if n % 2 == 0 { 2 } else { 3 } * (2 << 20);
            assert!(sent <= most && sent >= 1 << 20, "n {n} host {h}: {sent}");
        }
        let (jct, ideal) = (r.jobs.opt_u64("jct_ps"), r.jobs.u64("ideal_jct_ps"));
        for it in 0..2 {
            let (jct, ideal) = (jct[it].unwrap(), ideal[it]);
            // the ideal is a lower bound (docs/workloads.md, "The ideal is a bound"): a rank's
            // sends up and down share its NIC packet by packet, which the bound's critical path
            // leaves out (each piece as if alone) and its NIC term counts only in total. On
            // this idle fabric the tree runs 1.09x (n 2), 1.46x (n 7) and 1.31-1.38x (n 16)
            // its bound; 1.6 is that excess with room, a guard against a regression
            assert!(jct >= ideal && (jct as f64) < 1.6 * ideal as f64, "n {n} iteration {it}: {jct} vs {ideal}");
        }
        assert_eq!(r.steps.u64("step").iter().max(), Some(&15));
    }
}

#[test]
fn alltoall_keeps_at_most_max_connections_per_rank() {
    let r = run(&job("collective = \"alltoall\"\nsize = \"512KiB\"\nranks = 16\nplacement = \"spread\"\nmax_connections = 3"));
    assert_eq!(r.summary.status, "complete");
    let (src, ready, end) = (r.flows.u64("src"), r.flows.opt_u64("ready_ps"), r.flows.opt_u64("end_ps"));
    assert_eq!(src.len(), 16 * 15);
    // spread: rank i on leaf i (8 hosts per leaf)
    let mut hosts: Vec<u64> = src.to_vec();
    hosts.sort_unstable();
    hosts.dedup();
    assert_eq!(hosts, (0..16).map(|i| i * 8).collect::<Vec<_>>());
    for &h in &hosts {
        let mine: Vec<usize> = (0..src.len()).filter(|&i| src[i] == h).collect();
        for (j, &i) in mine.iter().enumerate().skip(3) {
            assert!(ready[i].unwrap() >= end[mine[j - 3]].unwrap(), "host {h}: message {j} before {}", j - 3);
        }
        // never more than 3 released and unfinished at once
        for &i in &mine {
            let t = ready[i].unwrap();
            let active = mine.iter().filter(|&&k| ready[k].unwrap() <= t && end[k].unwrap() > t).count();
            assert!(active <= 3, "host {h} at {t}: {active}");
        }
    }
}

#[test]
fn spraying_beats_ecmp_on_a_large_alltoall() {
    // 64 KiB per peer, 15 under way per rank: a sender learns that a message is done by its
    // final ACK (about 4 us back across the spines), so with only 3 under way (1.3 us of data
    // each) it would mostly wait and the fabric would stay lightly loaded (ECMP 1.20x, OPS
    // 1.13x its ideal); 15 keep it busy (ECMP 1.45x, OPS 1.19x)
    let jct = |lb: &str| {
        let r = run(&fabric128(&format!(
            "[lb]\nkind = \"{lb}\"\n[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"alltoall\"\nsize = \"8MiB\"\nranks = 128\nmax_connections = 16\n"
        )));
        r.jobs.opt_f64("slowdown")[0].unwrap()
    };
    // the direction only: ECMP stacks whole messages on an uplink where spraying spreads
    // their packets over all 8 (the size of the gap depends on the collisions one seed draws)
    let (ecmp, ops) = (jct("ecmp"), jct("ops"));
    assert!(ecmp > ops, "ecmp {ecmp} ops {ops}");
}

#[test]
fn eight_jobs_on_four_servers_finish_far_sooner_sprayed_than_on_ecmp() {
    // China Mobile's setup (scenarios/china_mobile_8_jobs.toml) at 4 MiB per rank: every ring
    // step crosses the spines, where ECMP collides whole flows and spraying spreads packets.
    // Their slides report packet-level JCT at about one third of flow-level; over seeds 1-4
    // fabricsim gives 0.34-0.48 with PRIME, 0.36-0.48 with OPS (docs/workloads.md).
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/china_mobile_8_jobs.toml")).unwrap();
    let text = text.replace("\"64MiB\"", "\"4MiB\"");
    let jct = |lb: &str| {
        let r = run(&text.replace("kind = \"ops\"", &format!("kind = \"{lb}\"")));
        assert_eq!(r.summary.status, "complete");
        assert_eq!(r.jobs.u64("ranks"), &[4; 8]);
        r.summary.max_jct_ns.unwrap()
    };
    let (ecmp, ops, prime) = (jct("ecmp"), jct("ops"), jct("prime"));
    assert!(ops < 0.5 * ecmp && prime < 0.5 * ecmp, "ecmp {ecmp} ops {ops} prime {prime}");
    assert!(prime <= ops, "PRIME does at least as well as oblivious spraying here");
}

#[test]
fn jobs_and_a_workload_run_together_and_placements_differ() {
    let r = run(&fabric128(
        "[workload]\nkind = \"flows\"\nflows = [{src = 127, dst = 126, size = \"64KiB\"}]\n[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nname = \"a\"\ncollective = \"broadcast\"\nsize = \"256KiB\"\nhosts = \"8-11\"\n[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allgather\"\nsize = \"256KiB\"\nranks = 4\nplacement = \"random\"\n",
    ));
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.flows.u64("src")[0], 127, "the workload's messages come first");
    assert_eq!(r.jobs.u64("job"), &[0, 1]);
    // broadcast: 8 chunks down the chain 8 -> 9 -> 10 -> 11
    assert_eq!(r.steps.u64("job").iter().filter(|&&j| j == 0).count(), 8);
    let s = scenario(&fabric128("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allgather\"\nsize = \"256KiB\"\nranks = 4\nplacement = \"random\"\n")).unwrap();
    let m = s.resolve().unwrap();
    let mut hosts: Vec<u32> = m.messages.iter().map(|x| x.src).collect();
    hosts.sort_unstable();
    hosts.dedup();
    assert_ne!(hosts, vec![0, 1, 2, 3], "random placement draws hosts");
    // a scenario with only jobs has no default permutation
    assert!(s.filled().workload.is_none());
}

/// 32 hosts = 8 servers x 4 NICs on a 2-tier tree of radix 8 (4 hosts per leaf, 4 spines).
fn servers(rails: bool, extra: &str) -> String {
    format!(
        "seed = 1\n[topology]\nhosts = 32\nradix = 8\nnics_per_server = 4\nrails = {rails}\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n{extra}"
    )
}

#[test]
fn rails_attach_nic_i_to_leaf_i_and_results_keep_the_scenarios_host_ids() {
    // host 1 -> 5 is NIC 1 of servers 0 and 1: one rail, one leaf; host 8 -> 10 is NICs 0 and 2
    // of server 2: two rails, so through a spine (both whole packets: exactly their ideal)
    let flows = "[workload]\nkind = \"flows\"\nflows = [{src = 1, dst = 5, size = \"40960B\"}, {src = 8, dst = 10, size = \"40960B\"}]\n";
    let r = run(&servers(true, flows));
    assert_eq!(r.flows.u64("src"), &[1, 8]);
    assert_eq!(r.flows.u64("dst"), &[5, 10]);
    let (fct, ideal) = (r.flows.opt_u64("fct_ps"), r.flows.u64("ideal_fct_ps"));
    assert_eq!(fct.iter().map(|f| f.unwrap()).collect::<Vec<_>>(), ideal.to_vec());
    assert!(ideal[0] + 2_000_000 < ideal[1], "one leaf (2 links) vs through a spine (4): {ideal:?}");
    // without rails a server's 4 NICs share a leaf: the same two flows swap which is local
    let plain = run(&servers(false, flows));
    assert_eq!(plain.flows.u64("ideal_fct_ps"), &[ideal[1], ideal[0]]);
    // the host ports carry the scenario's names
    let (names, to) = (r.ports.str("name"), r.ports.str("to"));
    assert_eq!(names.iter().filter(|n| n.starts_with("host")).count(), 32);
    let at = names.iter().position(|n| n == "host5:up0").unwrap();
    assert_eq!(to[at], "leaf1", "NIC 1 of server 1 is on rail 1's leaf");

    // rail placement: each 8-rank job takes one rail (NIC i of every server); on a
    // rail-optimized fabric a rail group is 4 servers, so a job spans two leaves
    let jobs = "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allgather\"\nsize = \"64KiB\"\nranks = 8\nplacement = \"rail\"\n".repeat(4);
    let r = run(&servers(true, &jobs));
    assert_eq!(r.summary.status, "complete");
    let (src, tag) = (r.flows.u64("src"), r.steps.u64("job"));
    assert!(!tag.is_empty());
    let job_of = |i: usize| i / (src.len() / 4); // equal jobs, in order
    for (i, &h) in src.iter().enumerate() {
        assert_eq!(h % 4, job_of(i) as u64, "message {i} from host {h}");
    }
    // a fifth placed job finds no free host
    let e = Simulation::new(
        &scenario(&servers(
            true,
            &(jobs + "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allgather\"\nsize = \"64KiB\"\nranks = 2\n"),
        ))
        .unwrap(),
    )
    .err()
    .unwrap();
    assert_eq!(e.field, "jobs[4].ranks");
    assert!(e.message.contains("no earlier job holds"), "{e}");
}

#[test]
fn bad_jobs_are_refused_naming_the_field() {
    let cases = [
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nranks = 6\nalgorithm = \"halving_doubling\"", "jobs[0].algorithm", "power-of-two"),
        ("collective = \"alltoall\"\nsize = \"1MiB\"\nranks = 4\nalgorithm = \"ring\"", "jobs[0].algorithm", "direct"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nranks = 4\nmax_connections = 2", "jobs[0].max_connections", "alltoall"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nranks = 4\nhosts = [0, 1]", "jobs[0].ranks", "both"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"", "jobs[0].ranks", "missing"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nranks = 500", "jobs[0].ranks", "2 to 128"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nhosts = [0, 0]", "jobs[0].hosts[1]", "once"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nhosts = \"5-200\"", "jobs[0].hosts[123]", "from 0 to 127"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nhosts = \"x\"", "jobs[0].hosts", "range"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nranks = 128\niterations = 10000", "stop.max_memory", "messages"),
        // past what a run numbers, whatever the memory: refused before any message is made
        (
            "collective = \"allreduce\"\nsize = \"1MiB\"\nranks = 128\niterations = 1000000",
            "workload",
            "at most 2147483648 messages in a run",
        ),
        (
            "collective = \"allreduce\"\nsize = \"1MiB\"\nranks = 128\niterations = 1000000\n[stop]\nmax_memory = \"1024GiB\"",
            "workload",
            "at most 2147483648 messages in a run",
        ),
        ("collective = \"gossip\"\nsize = \"1MiB\"\nranks = 4", "jobs[0].collective", "allreduce"),
        ("collective = \"allreduce\"\nsize = \"1MiB\"\nranks = 4\nplacement = \"rail\"", "jobs[0].placement", "nics_per_server"),
    ];
    for (spec, field, part) in cases {
        let e = match scenario(&job(spec)) {
            Err(e) => e,
            Ok(s) => Simulation::new(&s).err().expect("refused"),
        };
        assert_eq!(e.field, field, "{spec}: {e}");
        assert!(e.message.contains(part), "{spec}: {e}");
    }
}

#[test]
fn a_long_trace_achieves_its_target_load() {
    // 8 ms of WebSearch at 60 % on 16 hosts: what the trace delivers in the second half of its
    // window (the first is warm-up: its 30 MB flows take that long) is what it offers
    let r = run(
        "seed = 1\n[topology]\nhosts = 16\nradix = 8\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n[lb]\nkind = \"prime\"\n[workload]\nkind = \"trace\"\ncdf = \"websearch\"\nload = 0.6\nduration = \"8ms\"\n"
    );
    assert_eq!(r.summary.status, "complete");
    let (offered, achieved) = (r.summary.offered_load.unwrap(), r.summary.achieved_load.unwrap());
    // what Poisson arrivals of these sizes offer varies by sqrt(E[X^2]) / (E[X] sqrt(n)) of
    // their mean; 4 such errors bound the draw, and what the fabric delivers once warm is
    // what arrives
    let se = sampling_error(&r);
    assert!((offered / 0.6 - 1.0).abs() < 4.0 * se, "offered {offered} for 0.6 (error {se})");
    assert!((achieved / offered - 1.0).abs() < 4.0 * se, "achieved {achieved}, offered {offered} (error {se})");
}

#[test]
fn a_websearch_trace_runs_and_reports_slowdown_by_size() {
    let r = run(&fabric128("[workload]\nkind = \"trace\"\ncdf = \"websearch\"\nload = 0.5\nduration = \"300us\"\n"));
    assert_eq!(r.summary.status, "complete");
    let n = r.flows.u64("bytes").len() as u64;
    assert_eq!(r.buckets.u64("messages").iter().sum::<u64>(), n);
    // 300 us of a heavy-tailed distribution: near the target within the draw's error (as in
    // a_long_trace_achieves_its_target_load), not exactly it
    let offered = r.summary.offered_load.unwrap();
    let se = sampling_error(&r);
    assert!(n > 100 && (offered / 0.5 - 1.0).abs() < 4.0 * se, "{n} messages offer {offered} for 0.5 (error {se})");
    // 300 us is all warm-up: the second half delivers less than arrives
    assert!(r.summary.achieved_load.unwrap() < offered);
    assert!(r.buckets.opt_f64("p99_slowdown").iter().take(2).all(|s| s.is_some_and(|s| s >= 1.0)));
    // the arrivals are spread over the duration
    let last = *r.flows.u64("start_ps").iter().max().unwrap();
    assert!((270_000_000..300_000_000).contains(&last), "{last}");
}

/// The relative standard error of the load that Poisson arrivals of a run's message sizes
/// offer: sqrt(E[X^2]) / (E[X] sqrt(n)) (a compound Poisson sum's spread over its mean).
fn sampling_error(r: &fabricsim_core::stats::RunResult) -> f64 {
    let bytes = r.flows.u64("bytes");
    let n = bytes.len() as f64;
    let mean = bytes.iter().map(|&b| b as f64).sum::<f64>() / n;
    let square = bytes.iter().map(|&b| (b as f64) * (b as f64)).sum::<f64>() / n;
    square.sqrt() / (mean * n.sqrt())
}

#[test]
fn slices_pipeline_a_ring_and_channels_split_it_over_their_own_queue_pairs() {
    // 4 ranks under one leaf, 8 MiB, ACKs at a message's end. Whole steps: 6 ideal FCTs of
    // 2 MiB back to back, and between two steps each NIC idles while the step's last packet
    // crosses the fabric. In 256 KiB slices a rank forwards each slice as it arrives, so its
    // NIC never idles: the iteration is its 48 slices' wire time plus one slice's flight
    let base = "[transport]\nack_every = 1024\n[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nsize = \"8MiB\"\nranks = 4\n";
    let whole = run(&fabric128(base));
    let sliced = run(&fabric128(&format!("{base}slice = \"256KiB\"\n")));
    let (w, s) = (whole.jobs.opt_u64("jct_ps")[0].unwrap(), sliced.jobs.opt_u64("jct_ps")[0].unwrap());
    assert_eq!(sliced.flows.u64("bytes").len(), 8 * 6 * 4, "8 slices a step");
    assert_eq!(sliced.flows.u64("bytes").iter().sum::<u64>(), whole.flows.u64("bytes").iter().sum::<u64>());
    let fct = whole.flows.u64("ideal_fct_ps")[0];
    assert_eq!(w, 6 * fct + 5 * 1_280);
    // a slice: 64 packets of 4160 B at 400 Gb/s on the wire
    let wire = 64 * 4160 * 8 * 1000 / 400;
    let slice_fct = sliced.flows.u64("ideal_fct_ps")[0];
    assert!(s >= 48 * wire && s <= 47 * wire + slice_fct + 48 * 1_280, "sliced {s}: 48 x {wire} + one slice's {slice_fct}");
    assert!(w - s > 4 * (slice_fct - wire), "whole {w} vs sliced {s}: the 5 idle step boundaries");
    assert!(s >= sliced.jobs.u64("ideal_jct_ps")[0]);
    // two channels: half the buffer each, on queue pairs of their own, the same bytes in all
    let two = run(&fabric128(&format!("{base}channels = 2\n")));
    assert_eq!(two.flows.u64("bytes").len(), 2 * 6 * 4);
    assert!(two.flows.u64("bytes").iter().all(|&b| b == 1 << 20));
    assert_eq!(two.summary.status, "complete");
    let model = scenario(&fabric128(&format!("{base}channels = 2\n"))).unwrap().resolve().unwrap();
    let qps: std::collections::BTreeSet<u16> = model.messages.iter().map(|m| m.qp).collect();
    assert_eq!(qps.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    // refused: channels out of range, a slice of nothing or for an algorithm without steps
    for (extra, field) in [
        ("channels = 0", "jobs[0].channels"),
        ("channels = 65", "jobs[0].channels"),
        ("slice = \"0B\"", "jobs[0].slice"),
        ("slice = \"1MiB\"\nalgorithm = \"tree\"", "jobs[0].slice"),
    ] {
        let err = Simulation::new(&scenario(&fabric128(&format!("{base}{extra}\n"))).unwrap()).err().expect(extra);
        assert_eq!(err.field, field, "{extra}");
    }
}

#[test]
fn auto_picks_the_algorithm_nccls_tuner_picks() {
    // 8 ranks: a small allreduce on the tree (latency), a large one on the ring (bandwidth);
    // the messages made say which ran (the ring: 2 x 7 steps of 8 messages; the double binary
    // tree: 2 trees x 7 edges, up and down, in 8 pieces)
    let made = |size: &str, algorithm: &str| {
        let text = fabric128(&format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nsize = \"{size}\"\nranks = 8\nalgorithm = \"{algorithm}\"\n"));
        scenario(&text).unwrap().resolve().unwrap().messages.len()
    };
    assert_eq!((made("1GiB", "ring"), made("4KiB", "tree")), (2 * 7 * 8, 2 * 7 * 2 * 8));
    assert_eq!(made("1GiB", "auto"), made("1GiB", "ring"));
    assert_eq!(made("4KiB", "auto"), made("4KiB", "tree"));
    let err =
        scenario(&fabric128("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nsize = \"4KiB\"\nranks = 8\nalgorithm = \"fastest\"\n")).err().unwrap();
    assert!(err.to_string().contains("allowed: auto, ring"), "{err}");
}

#[test]
fn the_ideal_jct_bounds_a_nic_that_interleaves_its_messages() {
    // a 3-rank alltoall whose ranks send two messages each: the NIC interleaves their
    // packets, so a message's last packet need not queue behind its own full ones, and the
    // NIC bound's tail is a lone packet's (it was the message-alone tail, 20 ps too high here)
    let r = super::run(
        "seed = 493\n[topology]\nhosts = 32\nradix = 8\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n\
         [transport]\nack_every = 1\n[lb]\nkind = \"ops\"\n[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"alltoall\"\nalgorithm = \"direct\"\n\
         ranks = 3\nsize = \"100KiB\"\nplacement = \"random\"\nmax_connections = 2\n",
    );
    let (jct, ideal) = (r.jobs.opt_u64("jct_ps")[0].expect("done"), r.jobs.u64("ideal_jct_ps")[0]);
    assert!(ideal <= jct, "ideal {ideal} ps above the run's {jct} ps");
}

#[test]
fn a_sliced_ring_over_iterations_costs_dependencies_in_proportion_to_its_slices() {
    // 4 ranks, 2 channels, 3 iterations, k slices a step: each rank's next iteration waits
    // for its 2k pieces of each channel's last step. Joined once per rank and channel, the
    // lists hold at most about two entries a message at any k (issue 61: k pieces each
    // waiting for 2k made them quadratic, 10 GB for a 256 MiB ring in 4 KiB slices)
    let job = |slice: &str| {
        fabric128(&format!(
            "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nalgorithm = \"ring\"\nsize = \"1MiB\"\nranks = 4\niterations = 3\nchannels = 2\ncompute = \"3us\"\nslice = \"{slice}\"\n"
        ))
    };
    for (slice, k) in [("64KiB", 2u64), ("8KiB", 16), ("1KiB", 128)] {
        let model = scenario(&job(slice)).unwrap().resolve().unwrap();
        // a slice below a packet's payload (4096 B) is said to be message-bound
        let warned = model.warnings.iter().any(|w| w.starts_with("jobs[0].slice"));
        assert_eq!(warned, slice == "1KiB", "{slice}: {:?}", model.warnings);
        let pieces = 3 * 2 * 6 * 4 * k;
        let joins = 2 * 2 * 4;
        assert_eq!(model.messages.len() as u64, pieces + joins, "{slice}");
        assert!((model.deps.len() as u64) < 2 * pieces, "{slice}: {} entries for {pieces} pieces", model.deps.len());
    }
    // the join changes nothing of the run: every iteration starts its compute gap after the
    // last, and each takes what the first does, its pieces in the flows table, the joins
    // not in the job's spans
    let r = run(&job("64KiB"));
    assert_eq!(r.summary.status, "complete");
    let (start, end, jct) = (r.jobs.opt_u64("start_ps"), r.jobs.opt_u64("end_ps"), r.jobs.opt_u64("jct_ps"));
    let ideal = r.jobs.u64("ideal_jct_ps");
    assert!(ideal.iter().all(|&i| i == ideal[0]), "{ideal:?}");
    for it in 1..3 {
        assert!(start[it].unwrap() >= end[it - 1].unwrap() + 3_000_000, "iteration {it} starts after the gap");
        assert!(jct[it].unwrap() >= ideal[it]);
    }
    let steps = r.steps.u64("messages");
    assert!(steps.iter().all(|&m| m == 4 * 2 * 2), "{steps:?}: 4 ranks x 2 channels x 2 slices a step, no join");
}
