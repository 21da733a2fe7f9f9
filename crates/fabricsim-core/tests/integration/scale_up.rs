//! GPU servers with a scale-up network (`topology.scale_up_rate`): a message between two GPUs
//! of one server crosses it, never the fabric; alone it takes exactly its ideal.

use super::{flows, run, scenario};
use fabricsim_core::Simulation;

/// 8 servers of 4 GPUs (32 hosts, radix 8: 4 hosts per leaf, one server per leaf), a
/// 7.2 Tb/s scale-up network of 300 ns, with `extra` appended.
fn servers(extra: &str) -> String {
    format!(
        "seed = 1\n[topology]\nhosts = 32\nradix = 8\nnics_per_server = 4\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n\
         scale_up_rate = \"7200Gbps\"\n{extra}"
    )
}

#[test]
fn a_lone_message_inside_a_server_takes_exactly_latency_plus_size_over_rate() {
    let r = run(&servers(&flows(&[(0, 1, "9MB", "0ns"), (0, 4, "1MB", "0ns")])));
    assert_eq!(r.summary.status, "complete");
    let (fct, ideal, up) = (r.flows.opt_u64("fct_ps"), r.flows.u64("ideal_fct_ps"), r.flows.bool("scale_up"));
    assert_eq!(up, &[true, false]);
    // 9 MB at 7.2 Tb/s is 10 us, plus 300 ns
    assert_eq!(ideal[0], 10_300_000);
    assert_eq!(fct[0], Some(ideal[0]));
    assert_eq!(r.flows.u64("delivered_bytes")[0], 9_000_000);
    assert_eq!(r.flows.u64("data_packets")[0], 0, "no packet on the fabric");
    // the fabric carried only the other message's packets
    let packets: u64 = r.ports.u64("data_packets").iter().sum();
    let per_hop = r.flows.u64("data_packets")[1];
    assert_eq!(packets, per_hop * 4, "server 0 and server 1 are on different leaves: 4 hops");
    assert_eq!(fct[1], Some(ideal[1]));
}

#[test]
fn two_messages_into_one_gpu_take_its_port_in_turn() {
    // GPUs 1 and 2 send 9 MB each to GPU 0 at once; GPU 3 sends 9 MB to GPU 0 10 us later
    let r = run(&servers(&flows(&[(1, 0, "9MB", "0ns"), (2, 0, "9MB", "0ns"), (3, 1, "9MB", "0ns")])));
    let end = r.flows.opt_u64("end_ps");
    let mut both = [end[0].unwrap(), end[1].unwrap()];
    both.sort_unstable();
    assert_eq!(both, [10_300_000, 20_300_000], "one after the other through GPU 0's port");
    assert_eq!(end[2], Some(10_300_000), "GPU 1's own port is free to receive meanwhile");
}

#[test]
fn a_gpus_port_sends_one_message_at_a_time_its_streams_in_turn() {
    // one message to each of three GPUs, released 1 us apart: one after another
    let r = run(&servers(&flows(&[(0, 1, "9MB", "0ns"), (0, 2, "9MB", "1us"), (0, 3, "9MB", "2us")])));
    let (first, end) = (r.flows.opt_u64("first_send_ps"), r.flows.opt_u64("end_ps"));
    assert_eq!(first, &[Some(0), Some(10_000_000), Some(20_000_000)]);
    assert_eq!(end, &[Some(10_300_000), Some(20_300_000), Some(30_300_000)]);
    // three messages to GPU 1 at once, then one to GPU 3 (1 us) and one to GPU 2 (2 us): start
    // tags 0, 9 M and 18 M bytes for GPU 1's stream, 0 for the others, so the port sends GPU
    // 1's first, then GPU 2's and GPU 3's (least start tag, ties in the streams' order), then
    // GPU 1's two others; first come first served would send GPU 1's three first
    let r = run(&servers(&flows(&[
        (0, 1, "9MB", "0ns"),
        (0, 1, "9MB", "0ns"),
        (0, 1, "9MB", "0ns"),
        (0, 3, "9MB", "1us"),
        (0, 2, "9MB", "2us"),
    ])));
    let first = r.flows.opt_u64("first_send_ps");
    assert_eq!(first, &[Some(0), Some(30_000_000), Some(40_000_000), Some(20_000_000), Some(10_000_000)]);
}

#[test]
fn without_a_scale_up_network_the_same_messages_cross_the_fabric() {
    let text = servers(&flows(&[(0, 1, "9MB", "0ns")])).replace("scale_up_rate = \"7200Gbps\"\n", "");
    let r = run(&text);
    assert_eq!(r.flows.bool("scale_up"), &[false]);
    assert!(r.flows.u64("data_packets")[0] > 0);
}

#[test]
fn a_scale_up_network_needs_servers_of_several_gpus() {
    for (text, field) in [
        (servers("").replace("nics_per_server = 4", "nics_per_server = 1"), "topology.scale_up_rate"),
        (servers("").replace("7200Gbps", "0Gbps"), "topology.scale_up_rate"),
        (servers("").replace("scale_up_rate = \"7200Gbps\"", "scale_up_latency = \"1us\""), "topology.scale_up_latency"),
        (
            servers("").replace("scale_up_rate = \"7200Gbps\"", "scale_up_rate = \"7200Gbps\"\nscale_up_latency = \"0ns\""),
            "topology.scale_up_latency",
        ),
    ] {
        let e = Simulation::new(&scenario(&text).unwrap()).err().unwrap_or_else(|| panic!("{field} accepted"));
        assert_eq!(e.field, field, "{e}");
    }
}

#[test]
fn scale_up_runs_give_the_same_tables_in_any_pieces_and_threads() {
    // a ring allreduce over two servers' GPUs: intra-server steps on the scale-up network,
    // the step between servers on the fabric, every release heard across pieces
    // rails: a server's GPUs hang on 4 leaves, so cutting by leaf splits every server
    let job = "[[jobs]]\ncollective = \"allreduce\"\nsize = \"4MiB\"\nranks = 8\niterations = 2\ncompute = \"2us\"\n";
    let text = servers(job).replace("nics_per_server = 4", "nics_per_server = 4\nrails = true");
    let s = scenario(&text).unwrap();
    let one = Simulation::new(&s).unwrap().run();
    assert_eq!(one.summary.status, "complete");
    assert!(one.flows.bool("scale_up").iter().filter(|&&u| u).count() > 0);
    for pieces in [2, 3, 8] {
        let r = Simulation::in_pieces(&s, pieces).unwrap().run();
        assert_eq!((r.flows, r.jobs), (one.flows.clone(), one.jobs.clone()), "{pieces} pieces");
    }
    let r = Simulation::cut_by(&s, |topo| (0..topo.nodes.len()).map(|n| (n % 3) as u16).collect()).unwrap().run();
    assert_eq!((r.flows, r.jobs), (one.flows.clone(), one.jobs.clone()), "every third node in one piece");
    for threads in [2, 4] {
        let sim = Simulation::with_threads(&s, threads).unwrap();
        assert_eq!(sim.threads(), threads);
        let r = sim.run();
        assert_eq!((r.flows, r.jobs), (one.flows.clone(), one.jobs.clone()), "{threads} threads");
    }
}

#[test]
fn a_lone_hierarchical_allreduce_meets_its_ideal_jct_to_the_picosecond() {
    // 4 servers of 4 GPUs, rail-optimized (NIC j of every server on leaf j): the rings inside a
    // server cross its scale-up network, the ring of each rail stays under its leaf. ACKs only
    // at a message's end, as for the ring (docs/workloads.md): nothing shares a rank's NIC or
    // port with its data, and every JCT equals its bound plus the final ACKs between steps
    for op in ["allreduce", "reduce_scatter", "allgather"] {
        let text = format!(
            "seed = 1\n[topology]\nhosts = 16\nradix = 8\nnics_per_server = 4\nrails = true\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n\
             scale_up_rate = \"7200Gbps\"\n[transport]\nack_every = 1024\n[[jobs]]\ncollective = \"{op}\"\nalgorithm = \"hierarchical\"\n\
             size = \"8MiB\"\nranks = 16\niterations = 2\ncompute = \"1us\"\n"
        );
        let r = run(&text);
        assert_eq!(r.summary.status, "complete", "{op}");
        let (fct, ideal_fct) = (r.flows.opt_u64("fct_ps"), r.flows.u64("ideal_fct_ps"));
        assert!(fct.iter().zip(ideal_fct).all(|(f, i)| f.unwrap() == *i), "{op}: every message at its ideal FCT");
        let (jct, ideal) = (r.jobs.opt_u64("jct_ps"), r.jobs.u64("ideal_jct_ps"));
        // at the bound but for the final ACKs (1.28 ns at 400 Gb/s) the rail rings' step
        // boundaries hold on the critical path (the bound leaves them out: jobs.rs)
        for (j, &i) in jct.iter().zip(ideal) {
            let over = j.unwrap() - i;
            assert!(over % 1280 == 0 && over <= 8 * 1280, "{op}: {j:?} against {i}");
        }
        // the rings inside the servers carry the 3/4 of the bytes that stay in a server; the
        // fabric carries each rank's 1/4 share across servers
        let (up, bytes) = (r.flows.bool("scale_up"), r.flows.u64("bytes"));
        let on = |want: bool| up.iter().zip(bytes).filter(|(&u, _)| u == want).map(|(_, &b)| b).sum::<u64>();
        let per_iteration = match op {
            "allreduce" => [2 * 16 * 3 * (2 << 20), 2 * 16 * 3 * (512 << 10)],
            "reduce_scatter" => [16 * 3 * (2 << 20), 16 * 3 * (512 << 10)],
            _ => [16 * 3 * (2 << 20), 16 * 3 * (512 << 10)],
        };
        assert_eq!([on(true), on(false)], per_iteration.map(|b| 2 * b), "{op}: bytes on the scale-up network and on the fabric");
    }
}
