//! `[[jobs]] protocol` and `costs = "nccl"`: NCCL's protocols' bytes and its latency per
//! collective and per step (docs/workloads.md, "NCCL's protocols and latencies").

use super::{fabric128, run, scenario};
use fabricsim_core::stats::RunResult;
use fabricsim_core::Simulation;

/// A 4-rank ring allreduce of `size` under one leaf (ranks 0-3: 2 us apart, two 1 us links),
/// ACKs at a message's end, with `extra` job fields.
fn ring4(size: &str, extra: &str) -> String {
    let extra = raw_unless_given(extra);
    fabric128(&format!("[transport]\nack_every = 1024\n[[jobs]]\ncollective = \"allreduce\"\nsize = \"{size}\"\nranks = 4\n{extra}\n"))
}

/// `extra` with `costs = "none"` and `protocol = "simple"` where it names neither (the jobs'
/// defaults are NCCL's costs and its tuner's protocol).
fn raw_unless_given(extra: &str) -> String {
    let costs = if extra.contains("costs") { "" } else { "costs = \"none\"\n" };
    let protocol = if extra.contains("protocol") { "" } else { "protocol = \"simple\"\n" };
    format!("{costs}{protocol}{extra}")
}

/// GPT-3 1.3B cut to `layers` on 2 servers of 8 GPUs with NVLink (tp 8 inside a server, two
/// pipeline stages across the fabric), with `extra` job fields.
fn gpt3_on_two_servers(layers: u32, extra: &str) -> String {
    format!(
        "seed = 1\n[topology]\nhosts = 128\nradix = 16\nnics_per_server = 8\nscale_up_rate = \"7200Gbps\"\nlink_latency = \"1us\"\n\
         [[jobs]]\nmodel = {{ preset = \"gpt3-1.3b\", layers = {layers} }}\nranks = 16\nparallel = {{ tp = 8, pp = 2, gpu_tflops = 400 }}\n{extra}\n"
    )
}

/// The data messages' (ready, end), without the ranks' calls (compute tasks), in id order.
fn data(r: &RunResult) -> Vec<(u64, u64)> {
    let (ready, end, bytes) = (r.flows.opt_u64("ready_ps"), r.flows.opt_u64("end_ps"), r.flows.u64("bytes"));
    (0..bytes.len()).filter(|&i| bytes[i] > 0).map(|i| (ready[i].unwrap(), end[i].unwrap())).collect()
}

/// Each message of step s >= 1 of an n-rank ring is released `added` after the message its
/// rank received in step s - 1 ended (data message ids follow (step, rank)).
fn steps_wait(r: &RunResult, n: usize, added: u64) {
    let d = data(r);
    assert!(d.len() > n);
    for m in n..d.len() {
        let (s, k) = (m / n, m % n);
        let prev = (s - 1) * n + (k + n - 1) % n;
        assert_eq!(d[m].0, d[prev].1 + added, "message {m}");
    }
}

#[test]
fn nccls_latencies_add_its_base_once_and_its_step_latency_less_the_fabrics_to_each_step() {
    // Simple, one rank a server: base 8.4 us, a step 14 us (the tree's network latency, as
    // NCCL takes it with one GPU per node), of which the fabric's 2 us are simulated
    let none = run(&ring4("64B", ""));
    let nccl = run(&ring4("64B", "costs = \"nccl\""));
    let fct = none.flows.u64("ideal_fct_ps")[0];
    let sent = |r: &RunResult| r.flows.u64("bytes").iter().copied().filter(|&b| b > 0).collect::<Vec<u64>>();
    assert_eq!(sent(&nccl), sent(&none), "Simple sends the data as it is");
    // the iteration starts at the ranks' calls (compute tasks, not in the flows table)
    assert_eq!(nccl.jobs.opt_u64("start_ps")[0], Some(0));
    // without NCCL's costs the rank's NIC sends the final ACK of what it received (1.28 ns)
    // before each next step; with them the step's latency has long covered it
    assert_eq!(none.jobs.opt_u64("jct_ps")[0], Some(6 * fct + 5 * 1_280));
    let jct = nccl.jobs.opt_u64("jct_ps")[0].unwrap();
    assert_eq!(jct, 8_400_000 + 6 * (12_000_000 + fct));
    assert_eq!(data(&nccl)[0].0, 8_400_000 + 12_000_000);
    steps_wait(&nccl, 4, 12_000_000);
    assert!(jct >= nccl.jobs.u64("ideal_jct_ps")[0]);
    // LL: 16-byte lines of 8 data bytes (16 B a rank's chunk: 32 on the wire), base 6.6 us,
    // a step 5 us; LL128: 128-byte lines of 120
    let ll = run(&ring4("64B", "costs = \"nccl\"\nprotocol = \"ll\""));
    assert!(sent(&ll).iter().all(|&b| b == 32));
    let fct_ll = ll.flows.u64("ideal_fct_ps")[0];
    assert_eq!(ll.jobs.opt_u64("jct_ps")[0], Some(6_600_000 + 6 * (3_000_000 + fct_ll)));
    steps_wait(&ll, 4, 3_000_000);
    let ll128 = run(&ring4("64B", "protocol = \"ll128\""));
    assert!(ll128.flows.u64("bytes").iter().all(|&b| b == 128));
    // a protocol without NCCL's latencies: its bytes alone
    assert_eq!(ll128.jobs.opt_u64("jct_ps")[0], Some(6 * ll128.flows.u64("ideal_fct_ps")[0] + 5 * 1_280));
}

#[test]
fn a_step_inside_a_server_takes_nvlinks_latency() {
    // 8 ranks on one server of 8 GPUs with NVLink: a ring step is 3.4 us (Simple), of which
    // the scale-up network's 300 ns are simulated
    let text = "seed = 1\n[topology]\nhosts = 128\nradix = 16\nnics_per_server = 8\nscale_up_rate = \"7200Gbps\"\nlink_latency = \"1us\"\n\
                [[jobs]]\ncollective = \"allreduce\"\nsize = \"1KiB\"\nranks = 8\ncosts = \"nccl\"\nprotocol = \"simple\"\n";
    let r = run(text);
    assert_eq!(r.summary.status, "complete");
    assert_eq!(data(&r)[0].0, 8_400_000 + 3_100_000);
    steps_wait(&r, 8, 3_100_000);
}

#[test]
fn auto_picks_the_protocol_nccls_tuner_picks() {
    // 8 ranks, ring, 400 Gb/s, one channel: NCCL's estimates put LL below about 1.5 MB, LL128
    // to about 12 MB, Simple above (the bytes of a rank's chunk say which ran)
    let chunk = |size: &str, extra: &str| {
        let extra = raw_unless_given(extra);
        let text = fabric128(&format!("[[jobs]]\ncollective = \"allreduce\"\nsize = \"{size}\"\nranks = 8\n{extra}\n"));
        let model = scenario(&text).unwrap().resolve().unwrap();
        (model.messages.len(), model.messages[0].bytes)
    };
    let ring = "algorithm = \"ring\"\nprotocol = \"auto\"";
    assert_eq!(chunk("64KiB", ring), (2 * 7 * 8, (8 << 10) / 8 * 16), "LL");
    assert_eq!(chunk("4MiB", ring), (2 * 7 * 8, (512u64 << 10).div_ceil(120) * 128), "LL128");
    assert_eq!(chunk("64MiB", ring), (2 * 7 * 8, 8 << 20), "Simple");
    // both left to the tuner: a tiny allreduce on the tree (6.8 + 2 x 3 x 5 us) under LL
    let tree = chunk("64B", "algorithm = \"tree\"").0;
    assert_eq!(chunk("64B", "algorithm = \"auto\"\nprotocol = \"auto\"").0, tree);
    // an algorithm the tuner has no estimate for runs Simple
    assert_eq!(chunk("64KiB", "algorithm = \"halving_doubling\"\nprotocol = \"auto\"").1, 32 << 10);
}

#[test]
fn unknown_protocols_and_costs_are_refused_with_the_allowed_names() {
    for (extra, allowed) in [("protocol = \"ll64\"", "ll128"), ("costs = \"all\"", "nccl")] {
        let err = scenario(&ring4("64B", extra)).expect_err(extra);
        assert!(err.message.contains(allowed), "{extra}: {}", err.message);
    }
}

#[test]
fn a_training_step_pays_nccls_latencies_on_its_collectives_and_sends() {
    // GPT-3 1.3B on 2 servers of 8 GPUs with NVLink: tensor parallel inside a server (its
    // allreduces on NVLink), two pipeline stages across the fabric (their activations sent
    // point to point: Simple above 16 KiB)
    let text = |extra: &str| gpt3_on_two_servers(4, &raw_unless_given(extra));
    let none = run(&text(""));
    let nccl = run(&text("costs = \"nccl\"\nprotocol = \"auto\""));
    assert_eq!(nccl.summary.status, "complete");
    let (a, b) = (none.jobs.opt_u64("jct_ps")[0].unwrap(), nccl.jobs.opt_u64("jct_ps")[0].unwrap());
    assert!(b > a, "NCCL's latencies on every collective and send: {b} against {a}");
    // compute-only is every message in no time, NCCL's latencies too: the same critical
    // path of compute with or without them, so that they count as exposed communication
    let compute_only = |r: &RunResult| r.jobs.opt_u64("compute_only_ps")[0].unwrap();
    assert_eq!(compute_only(&nccl), compute_only(&none));
    let exposed = |r: &RunResult| r.jobs.opt_u64("exposed_comm_ps")[0].unwrap();
    assert_eq!(exposed(&nccl) - exposed(&none), b - a);
    // the bytes of each kind of work (the steps table): the pipeline's sends (MiB each)
    // carry their data as it is (Simple above 16 KiB), the same bytes as without; the
    // tensor-parallel allreduces of 8 MiB over the 8 GPUs of a switch that reduces run NVLS,
    // which the tuner picks over the ring under any protocol (Simple only: the same bytes),
    // each GPU's (n + 1)/n of the buffer into the switch and out: 2 (n + 1) = 18 times the
    // buffer's n-th a GPU, against the ring's 2 (n - 1) = 14
    let kind = |r: &RunResult, k: &str| -> u64 {
        let (bytes, kinds) = (r.steps.u64("bytes"), r.steps.str("kind"));
        (0..bytes.len()).filter(|&i| kinds[i] == k).map(|i| bytes[i]).sum()
    };
    assert!(kind(&none, "pp") > 0);
    assert_eq!(kind(&nccl, "pp"), kind(&none, "pp"));
    let (tp0, tp1) = (kind(&none, "tp"), kind(&nccl, "tp"));
    assert_eq!(tp1, tp0, "NVLS under both");
    let ring = run(&text("algorithm = \"ring\""));
    assert_eq!(kind(&ring, "tp") / 14 * 18, tp0, "NVLS's bytes against the ring's");
    // on the ring (`algorithm = "ring"`), the protocol the tuner picks there, LL128 (16/15 of
    // the bytes, rounded up to lines)
    let ring_nccl = run(&text("algorithm = \"ring\"\ncosts = \"nccl\"\nprotocol = \"auto\""));
    let (tp0, tp1) = (kind(&ring, "tp"), kind(&ring_nccl, "tp"));
    assert!(tp1 >= tp0 / 120 * 128 && tp1 < tp0 / 15 * 16 + tp0 / 1000, "{tp1} against {tp0}");
    // under LL, twice the bytes
    let ll = run(&text("protocol = \"ll\""));
    assert_eq!(kind(&ll, "pp"), 2 * kind(&none, "pp"));
    // the same on two threads
    let two = Simulation::with_threads(&scenario(&text("costs = \"nccl\"\nprotocol = \"auto\"")).unwrap(), 2).unwrap().run();
    assert_eq!(two.jobs.opt_u64("jct_ps"), nccl.jobs.opt_u64("jct_ps"));
}

#[test]
fn a_training_job_runs_its_tensor_parallel_allreduces_as_nvls_on_a_switch_that_reduces() {
    // GPT-3 1.3B (2 layers), tp 8 on each server's NVSwitch, the jobs' defaults (NCCL's costs,
    // the tuner's protocol): its activations' allreduces (8 MiB) run NVLS, which NCCL's tuner
    // picks over the ring there; `algorithm = "ring"` or a switch that only forwards keeps the
    // ring, and no other algorithm is a training job's
    let text = |extra: &str| gpt3_on_two_servers(2, extra);
    let step = |r: &RunResult| {
        assert_eq!(r.summary.status, "complete");
        let jct = r.jobs.opt_u64("jct_ps")[0].unwrap();
        assert!(jct >= r.jobs.u64("ideal_jct_ps")[0], "never below its bound");
        jct
    };
    let (auto, ring) = (run(&text("")), run(&text("algorithm = \"ring\"")));
    let forwards = run(&text("").replace("scale_up_rate = \"7200Gbps\"", "scale_up_rate = \"7200Gbps\"\nscale_up_nvls = false"));
    assert!(step(&auto) < step(&ring), "NVLS {} against the ring's {}", step(&auto), step(&ring));
    assert_eq!(step(&forwards), step(&ring));
    assert_eq!(forwards.flows.u64("bytes"), ring.flows.u64("bytes"));
    // 16 calls (2 layers, 2 a pass, forward and backward, 2 stages): on NVLS two legs a GPU
    // (into the switch and out: `nvls::streamed`), against the ring's 2 (n - 1) n = 112
    // messages; a call a rank (NCCL's costs), and NVLS joins each rank's part once
    let tp = |r: &RunResult| r.steps.u64("messages")[r.steps.str("kind").iter().position(|k| k == "tp").unwrap()];
    assert_eq!((tp(&auto), tp(&ring)), (16 * (16 + 8 + 8), 16 * (112 + 8)));
    // the same tables in pieces that split the servers (rails: a leg's notice crosses pieces)
    // and on threads
    let s = scenario(&text("").replace("nics_per_server = 8\n", "nics_per_server = 8\nrails = true\n")).unwrap();
    let one = Simulation::new(&s).unwrap().run();
    assert_eq!(one.summary.status, "complete");
    for pieces in [2, 4, 8] {
        let r = Simulation::in_pieces(&s, pieces).unwrap().run();
        assert_eq!((&r.flows, &r.jobs), (&one.flows, &one.jobs), "{pieces} pieces");
    }
    let r = Simulation::with_threads(&s, 2).unwrap().run();
    assert_eq!((&r.flows, &r.jobs), (&one.flows, &one.jobs), "2 threads");
    let e = Simulation::new(&scenario(&text("algorithm = \"tree\"")).unwrap()).err().expect("tree refused");
    assert_eq!(e.field, "jobs[0].algorithm", "{e}");
    assert!(e.message.contains("\"ring\""), "{e}");
}

#[test]
fn every_algorithm_runs_with_nccls_costs_within_its_bounds_and_one_call_a_rank_and_iteration() {
    // 16 ranks on 2 servers of 8 GPUs with NVLink, 2 iterations 5 us apart: every algorithm
    // (channels and slices on the ring) completes, each iteration at or above its ideal, the
    // second starting at its first ranks' calls (the compute time after the first's parts)
    let fabric =
        "seed = 1\n[topology]\nhosts = 128\nradix = 16\nnics_per_server = 8\nscale_up_rate = \"7200Gbps\"\nlink_latency = \"1us\"\n";
    for (algorithm, op, extra) in [
        ("ring", "allreduce", "channels = 2\nslice = \"16KiB\""),
        ("tree", "allreduce", ""),
        ("halving_doubling", "allreduce", ""),
        ("hierarchical", "allreduce", ""),
        ("ring", "broadcast", ""),
        ("direct", "alltoall", "max_connections = 3"),
    ] {
        let text = format!(
            "{fabric}[[jobs]]\ncollective = \"{op}\"\nalgorithm = \"{algorithm}\"\nsize = \"256KiB\"\nranks = 16\niterations = 2\ncompute = \"5us\"\ncosts = \"nccl\"\nprotocol = \"ll128\"\n{extra}\n"
        );
        let r = run(&text);
        assert_eq!(r.summary.status, "complete", "{algorithm} {op}");
        let (jct, ideal, start) = (r.jobs.opt_u64("jct_ps"), r.jobs.u64("ideal_jct_ps"), r.jobs.opt_u64("start_ps"));
        for it in 0..2 {
            assert!(jct[it].unwrap() >= ideal[it], "{algorithm} {op} iteration {it}: {:?} < {}", jct[it], ideal[it]);
        }
        // the second iteration starts at its first call: the compute time after a rank's part
        // of the first, whose last part ends with the first iteration (and its final ACKs, up to
        // four links back)
        let (s0, s1, end0) = (start[0].unwrap(), start[1].unwrap(), start[0].unwrap() + jct[0].unwrap());
        assert!(s1 >= s0 + 5_000_000 && s1 <= end0 + 5_000_000 + 6_000_000, "{algorithm} {op}: {s0} {s1} {end0}");
        // the same on two threads
        let two = Simulation::with_threads(&scenario(&text).unwrap(), 2).unwrap().run();
        assert_eq!(two.jobs.opt_u64("jct_ps"), jct, "{algorithm} {op} on 2 threads");
    }
}

#[test]
fn a_steps_latency_reads_its_hosts_idle_latency_on_a_fabric_that_renumbers_them() {
    // rails: NIC 0 of servers 0 and 1 (hosts 0 and 8) hang on one leaf, 2 us apart, though
    // host 8 is not the leaf's 9th port; each step waits NCCL's 14 us less those 2 us
    let text = "seed = 1\n[topology]\nhosts = 128\nradix = 16\nnics_per_server = 8\nrails = true\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n\
                [transport]\nack_every = 1024\n[[jobs]]\ncollective = \"allreduce\"\nsize = \"64B\"\nhosts = [0, 8]\ncosts = \"nccl\"\nprotocol = \"simple\"\n";
    let r = run(text);
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.flows.u64("path_links")[0], 2, "one leaf");
    steps_wait(&r, 2, 12_000_000);
}

#[test]
fn a_jobs_defaults_are_nccls_costs_and_its_tuners_protocol() {
    // a collective and a training job that name neither field run as with costs = "nccl" and
    // protocol = "auto" (issue 65: a collective costs what NCCL's costs), and not as the
    // fabric alone
    let collective = |extra: &str| fabric128(&format!("[[jobs]]\ncollective = \"allreduce\"\nsize = \"64KiB\"\nranks = 4\n{extra}\n"));
    let training = |extra: &str| gpt3_on_two_servers(2, extra);
    for text in [&collective as &dyn Fn(&str) -> String, &training] {
        let (default, nccl, alone) =
            (run(&text("")), run(&text("costs = \"nccl\"\nprotocol = \"auto\"")), run(&text("costs = \"none\"\nprotocol = \"simple\"")));
        let jct = |r: &RunResult| r.jobs.opt_u64("jct_ps")[0].unwrap();
        assert_eq!(jct(&default), jct(&nccl));
        assert_eq!(default.flows.u64("bytes"), nccl.flows.u64("bytes"));
        assert!(jct(&default) > jct(&alone), "NCCL's latencies: {} against {}", jct(&default), jct(&alone));
    }
}

#[test]
fn an_alltoall_takes_nccls_point_to_point_protocol() {
    // nccl-tests' alltoall is grouped sends and receives: each peer's share goes LL up to
    // NCCL_P2P_LL_THRESHOLD (16 KiB: twice its bytes on the wire), Simple above
    let a2a = |size: &str| run(&fabric128(&format!("[[jobs]]\ncollective = \"alltoall\"\nsize = \"{size}\"\nranks = 4\n")));
    let wire = |r: &RunResult| -> Vec<u64> { r.flows.u64("bytes").iter().copied().filter(|&b| b > 0).collect() };
    let (small, large) = (a2a("64KiB"), a2a("128KiB"));
    assert!(!wire(&small).is_empty() && wire(&small).iter().all(|&b| b == 2 * 16384), "{:?}", wire(&small));
    assert!(!wire(&large).is_empty() && wire(&large).iter().all(|&b| b == 32768), "{:?}", wire(&large));
}
