//! `algorithm = "nvls"`: NCCL's NVLink SHARP collectives through a server's scale-up switch,
//! which reduces and multicasts (docs/workloads.md, "NVLink SHARP").

use super::{run, scenario};
use fabricsim_core::stats::RunResult;
use fabricsim_core::Simulation;

/// 8 servers of 4 GPUs (32 hosts, radix 8, rails: a server's GPUs on 4 leaves), a 7.2 Tb/s
/// scale-up network of 300 ns (9 MB in 10 us), and a job of `extra` on the GPUs of server 0.
fn server(ranks: u32, extra: &str) -> String {
    // NCCL's costs and protocol only where a test asks for them (the jobs' defaults count them)
    let costs = if extra.contains("costs") { "" } else { "costs = \"none\"\n" };
    let protocol = if extra.contains("protocol") { "" } else { "protocol = \"simple\"\n" };
    let extra = format!("{costs}{protocol}{extra}");
    format!(
        "seed = 1\n[topology]\nhosts = 32\nradix = 8\nnics_per_server = 4\nrails = true\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n\
         scale_up_rate = \"7200Gbps\"\n[[jobs]]\nranks = {ranks}\n{extra}\n"
    )
}

fn jct(r: &RunResult) -> u64 {
    assert_eq!(r.summary.status, "complete");
    let jct = r.jobs.opt_u64("jct_ps")[0].unwrap();
    assert!(jct >= r.jobs.u64("ideal_jct_ps")[0], "never below its bound");
    jct
}

#[test]
fn an_nvls_allreduce_goes_through_the_switch_leg_by_leg_to_the_picosecond() {
    // 2 GPUs, 18 MB: each head's 9 MB part (10 us on a port) in one piece; L = 0.3 us (none
    // from a GPU to itself). Each port sends its part for head 0, then for head 1, unless its
    // store is waiting (start-time fair queueing: a stream that has not sent goes first).
    // Head 0: both parts' first bits are in at 0.3, so its sum comes out as they arrive (it
    // cuts through) into its port 0.3-10.3, and its store is released at 0.3: GPU 0's port
    // sends it 10-20 (before its part for head 1: both streams' start tags are 0, the store's
    // stream comes first), its copies leave as it goes in, at 10: GPU 0's port 10.3-20.3
    // (behind the sum), GPU 1's 10.3-20.3. Head 1: GPU 1's part 10-20, GPU 0's 20-30 (first
    // bit at 20.3): the sum 20.3-30.3 into GPU 1's port, the store 20.3-30.3 from it (idle
    // since 20), the copies at 20.3: GPU 0's port 20.6-30.6, GPU 1's behind its sum, 30.3-40.3.
    // Done at 40.3 us (store-and-forward legs took 50.6).
    let r = run(&server(2, "collective = \"allreduce\"\nalgorithm = \"nvls\"\nsize = \"18MB\"\nslice = \"9MB\""));
    assert_eq!(jct(&r), 40_300_000);
    let (up, bytes) = (r.flows.bool("scale_up"), r.flows.u64("bytes"));
    // per head: 2 parts in, its sum out, its store in, 2 copies out (the ranks' joins carry none)
    assert_eq!(bytes.iter().filter(|&&b| b == 9_000_000).count(), 12);
    assert!(up.iter().zip(bytes).all(|(&u, &b)| u || b == 0), "every leg is on the scale-up network");
    assert_eq!(r.flows.u64("data_packets").iter().sum::<u64>(), 0, "nothing on the fabric");
    // the same with no slice: NCCL's 128 KiB chunk cuts each part into 69 pieces that pipeline
    let piped = run(&server(2, "collective = \"allreduce\"\nalgorithm = \"nvls\"\nsize = \"18MB\""));
    assert_eq!(piped.flows.u64("bytes").iter().filter(|&&b| b > 0).count(), 12 * 69);
    assert!(jct(&piped) < 40_000_000, "{}", jct(&piped));
}

#[test]
fn pipelined_nvls_moves_n_plus_one_nths_of_the_buffer_a_port_where_the_ring_moves_2_n_minus_1_nths() {
    // 4 GPUs, 32 MiB: NVLS carries 5/4 of it each way a port (40 MiB: 46.6 us at 7.2 Tb/s), the
    // ring 6/4 (48 MiB: 55.9 us)
    let size = "collective = \"allreduce\"\nsize = \"32MiB\"";
    let nvls = jct(&run(&server(4, &format!("{size}\nalgorithm = \"nvls\""))));
    let ring = jct(&run(&server(4, &format!("{size}\nalgorithm = \"ring\"\nslice = \"128KiB\""))));
    let port = |bytes: u64| bytes * 80 / 72;
    // NVLS: 47.3 us, 1.5 % over its ports' time (the first and last pieces fill and drain the
    // pipeline); the ring, sliced alike: 56.2 us
    assert!(nvls >= port(40 << 20) && nvls <= port(40 << 20) * 103 / 100, "nvls {nvls} against {}", port(40 << 20));
    assert!(ring >= port(48 << 20), "ring {ring}");
    assert!(nvls * 105 < ring * 100, "nvls {nvls} ring {ring}");
    // the figures docs/workloads.md ("NVLink SHARP") quotes
    assert_eq!([nvls, ring, port(40 << 20)].map(|t| format!("{:.1}", t as f64 / 1e6)), ["47.3", "56.2", "46.6"]);
    // reduce_scatter: every GPU's whole buffer into the switch (32 MiB a port: 37.3 us), its
    // part's sum out; allgather: its part in once, every part out to it (32 MiB a port)
    for op in ["reduce_scatter", "allgather"] {
        let half = jct(&run(&server(4, &format!("collective = \"{op}\"\nsize = \"32MiB\"\nalgorithm = \"nvls\""))));
        assert!(half >= port(32 << 20) && half <= port(32 << 20) * 105 / 100, "{op}: {half} against {}", port(32 << 20));
    }
}

#[test]
fn nccls_nvls_latency_is_25_us_once_a_call() {
    // each iteration's call waits NCCL's whole NVLS latency before its first legs, nothing more
    let job = "collective = \"allreduce\"\nalgorithm = \"nvls\"\nsize = \"1MiB\"\niterations = 2\ncompute = \"5us\"";
    let none = run(&server(4, job));
    let nccl = run(&server(4, &format!("{job}\ncosts = \"nccl\"\nprotocol = \"auto\"")));
    let (a, b) = (none.jobs.opt_u64("jct_ps"), nccl.jobs.opt_u64("jct_ps"));
    assert_eq!(a.len(), 2);
    for (x, y) in a.iter().zip(b) {
        assert_eq!(y.unwrap(), x.unwrap() + 25_000_000);
    }
    assert_eq!(nccl.flows.u64("bytes"), none.flows.u64("bytes"), "NVLS runs Simple: the bytes as they are");
}

#[test]
fn nvls_runs_the_same_in_any_pieces_and_threads() {
    let s = scenario(&server(4, "collective = \"allreduce\"\nalgorithm = \"nvls\"\nsize = \"2MiB\"\niterations = 2\ncompute = \"1us\""))
        .unwrap();
    let one = Simulation::new(&s).unwrap().run();
    assert_eq!(one.summary.status, "complete");
    for pieces in [2, 4] {
        let r = Simulation::in_pieces(&s, pieces).unwrap().run();
        assert_eq!((r.flows, r.jobs), (one.flows.clone(), one.jobs.clone()), "{pieces} pieces");
    }
    let r = Simulation::with_threads(&s, 2).unwrap().run();
    assert_eq!((r.flows, r.jobs), (one.flows.clone(), one.jobs.clone()), "2 threads");
}

#[test]
fn nvls_needs_one_servers_switch_and_nccls_simple_protocol() {
    let job = "collective = \"allreduce\"\nalgorithm = \"nvls\"\nsize = \"1MiB\"";
    let forwards_only = "scale_up_rate = \"7200Gbps\"\nscale_up_nvls = false";
    for (text, field, says) in [
        (server(4, job).replace("scale_up_rate = \"7200Gbps\"\n", ""), "jobs[0].algorithm", "scale_up_rate"),
        (server(4, job).replace("scale_up_rate = \"7200Gbps\"", forwards_only), "jobs[0].algorithm", "scale_up_nvls"),
        (server(4, job).replace("scale_up_rate = \"7200Gbps\"", "scale_up_nvls = true"), "topology.scale_up_nvls", "scale_up_rate"),
        (server(8, job), "jobs[0].algorithm", "one server"),
        (server(4, &format!("{job}\nprotocol = \"ll\"")), "jobs[0].protocol", "simple"),
        (
            server(4, "collective = \"alltoall\"\nalgorithm = \"nvls\"\nsize = \"1MiB\""),
            "jobs[0].algorithm",
            "allreduce, reduce_scatter, allgather",
        ),
    ] {
        let e = Simulation::new(&scenario(&text).unwrap()).err().unwrap_or_else(|| panic!("{field} accepted"));
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains(says), "{e}");
    }
}

#[test]
fn auto_takes_nvls_for_a_large_allreduce_on_a_switch_that_reduces() {
    // 4 GPUs at 900 GB/s: NCCL's estimates put NVLS ahead of the ring from about 1 MB (LL
    // below); a switch that only forwards leaves the ring
    let job = |size: &str| format!("collective = \"allreduce\"\nalgorithm = \"auto\"\nprotocol = \"auto\"\nsize = \"{size}\"");
    let nvls = jct(&run(&server(4, &format!("{}\nalgorithm = \"nvls\"", job("64MiB").replace("algorithm = \"auto\"\n", "")))));
    let auto = jct(&run(&server(4, &job("64MiB"))));
    assert_eq!(auto, nvls, "auto runs NVLS");
    let plain = server(4, &job("64MiB")).replace("scale_up_rate = \"7200Gbps\"", "scale_up_rate = \"7200Gbps\"\nscale_up_nvls = false");
    let ring = jct(&run(&plain));
    assert!(ring > nvls, "ring {ring} nvls {nvls}");
    // 64 KiB: LL on the ring, NVLS's 25 us latency too dear (the bytes double on the wire)
    let small = run(&server(4, &job("64KiB")));
    assert!(small.flows.u64("bytes").iter().all(|&b| b == 32 << 10), "LL: each 16 KiB chunk as 32 KiB of lines");
}

#[test]
fn a_training_jobs_nvls_takes_its_ports_time_plus_two_latencies_as_the_legs_do_in_nccls_chunks() {
    // one layer, tp 8 on one server (7.2 Tb/s, L = 300 ns), one micro-batch: four allreduces
    // of the activations (4 096 tokens x 4 096 x 2 B = 32 MiB), each between two computes
    let one = "seed = 1\n[topology]\nhosts = 8\nradix = 8\nnics_per_server = 8\nscale_up_rate = \"7200Gbps\"\n";
    let job = "[[jobs]]\nranks = 8\ncosts = \"none\"\nprotocol = \"simple\"\nmodel = { layers = 1, hidden = 4096, heads = 32, seq = 4096, vocab = 8 }\n\
               parallel = { tp = 8, micro_batches = 1, gpu_tflops = 400 }\n";
    let r = run(&format!("{one}{job}"));
    assert_eq!(r.summary.status, "complete");
    // each GPU's two legs: 32 MiB + 4 MiB into the switch and out, cutting through: the
    // ports' time (41.943 04 us) plus 2 L
    let each = (36u64 << 20) * 8 * 1_000_000 / 7_200_000 + 600_000;
    assert_eq!(r.jobs.opt_u64("exposed_comm_ps")[0], Some(4 * each));
    let tp = r.steps.str("kind").iter().position(|k| k == "tp").unwrap();
    assert_eq!(r.steps.u64("messages")[tp], 4 * (8 * 2 + 8), "two legs and a join a GPU a call");
    // the job's leg-by-leg NVLS in NCCL's 128 KiB chunks (4 608 legs) takes 2.0 % more (the
    // pipeline's fill and drain, 32 chunks a head)
    let legs = run(&format!("{one}[[jobs]]\nranks = 8\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nalgorithm = \"nvls\"\nsize = \"32MiB\"\n"));
    let jct = legs.jobs.opt_u64("jct_ps")[0].unwrap();
    assert!(jct >= each && jct * 1000 <= each * 1025, "{jct} against {each}");
}
