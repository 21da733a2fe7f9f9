//! A fat tree whose GPUs have several NICs (`topology.nics_per_gpu`): each NIC is its own port
//! on the fabric (with rails, on its own rail), a message between servers is cut into one equal
//! part per NIC, each at its ideal alone, and the GPU's NICs together carry what one NIC of
//! their summed rate would.

/// 16 GPUs, 4 a server, 2 NICs of 200 Gb/s each, on a leaf-spine of radix 8, 1 us links.
fn fabric(rails: bool, per_gpu: u32, rate: &str) -> String {
    format!(
        "seed = 1\n[topology]\nhosts = 16\nradix = 8\nnics_per_server = 4\nnics_per_gpu = {per_gpu}\nrails = {rails}\n\
         link_rate = \"{rate}\"\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n"
    )
}

#[test]
fn each_nic_of_a_gpu_is_a_port_of_its_own_and_with_rails_on_its_own_rail() {
    for rails in [false, true] {
        let topo = super::scenario(&fabric(rails, 2, "200Gbps")).expect("valid").resolve().expect("builds").topo;
        assert_eq!((topo.gpus(), topo.hosts(), topo.planes(), topo.nics()), (16, 32, 2, 4));
        let leaf = |node: u32| topo.ports[topo.tables.out_of_host(node) as usize].to;
        let mut seen = std::collections::HashSet::new();
        for h in 0..16 {
            let (a, b) = (topo.slot_on(h, 0), topo.slot_on(h, 1));
            assert!(seen.insert(a) && seen.insert(b), "GPU {h}: nodes {a}, {b} taken");
            assert_eq!((topo.host(a), topo.host(b), topo.slot(h)), (h, h, a));
            assert_eq!(topo.nodes[b as usize].name, format!("host{h}n1"));
            // without rails a GPU's NICs are consecutive (under one leaf of 4); with rails
            // each of a server's 8 NICs hangs on its own leaf, shared with the other servers'
            assert_eq!(leaf(a) == leaf(b), !rails, "GPU {h}, rails {rails}");
        }
        if rails {
            for server in 0..4 {
                let leaves: std::collections::HashSet<u32> =
                    (server * 4..server * 4 + 4).flat_map(|h| [leaf(topo.slot_on(h, 0)), leaf(topo.slot_on(h, 1))]).collect();
                assert_eq!(leaves.len(), 8, "server {server}: one rail a NIC");
            }
        }
    }
}

#[test]
fn a_message_between_servers_is_cut_into_a_part_per_nic_each_at_its_ideal() {
    // without rails GPUs 0 and 1 share a leaf, with rails GPUs 0 and 4 (GPU 0 of two servers)
    // share the leaves of their two rails: each part has its own links (between leaves, the
    // parts are two connections that ECMP may hash onto one uplink, as a GPU's queue pairs on
    // its NICs can be); no scale-up network, so GPUs 0 and 1 talk over the fabric
    for (rails, src, dst) in [(false, 0, 1), (true, 0, 4)] {
        let r = super::run(&format!("{}{}", fabric(rails, 2, "200Gbps"), super::flows(&[(src, dst, "1MiB", "0us")])));
        assert_eq!(r.summary.status, "complete");
        assert_eq!(r.flows.u64("bytes"), &[1 << 19; 2]);
        assert_eq!((r.flows.u64("src"), r.flows.u64("dst")), (&[src.into(); 2][..], &[dst.into(); 2][..]));
        let (fct, ideal) = (r.flows.opt_u64("fct_ps"), r.flows.u64("ideal_fct_ps"));
        assert_eq!((fct[0], fct[1]), (Some(ideal[0]), Some(ideal[1])), "rails {rails}, {src} to {dst}");
    }
    // with a scale-up network, GPUs of one server never touch a NIC: that message stays whole
    let up = fabric(true, 2, "200Gbps").replace("nics_per_gpu", "scale_up_rate = \"3600Gbps\"\nnics_per_gpu");
    let r = super::run(&format!("{up}{}", super::flows(&[(0, 15, "1MiB", "0us"), (1, 2, "1MiB", "0us")])));
    assert_eq!(r.flows.u64("bytes"), &[1 << 19, 1 << 20, 1 << 19]);
}

#[test]
fn two_nics_of_200g_carry_an_allreduce_as_one_of_400g_would() {
    let job =
        "[[jobs]]\nname = \"ar\"\ncollective = \"allreduce\"\nalgorithm = \"ring\"\nsize = \"16MiB\"\nranks = 16\n[lb]\nkind = \"ops\"\n";
    let jct = |text: String| {
        let r = super::run(&format!("{text}{job}"));
        assert_eq!(r.summary.status, "complete");
        r.summary.max_jct_ns.expect("a job")
    };
    let one = jct(fabric(false, 1, "400Gbps"));
    let two = jct(fabric(false, 2, "200Gbps"));
    // one NIC of 200 Gb/s would take about twice as long: the parts really go on both
    let half = jct(fabric(false, 1, "200Gbps"));
    let ratio = two / one;
    assert!((0.99..1.03).contains(&ratio), "2 x 200G {two} ns against 1 x 400G {one} ns: {ratio:.4}");
    assert!(half > 1.7 * one, "1 x 200G {half} ns against 1 x 400G {one} ns");
}

#[test]
fn a_jobs_channel_goes_whole_on_the_nic_nccl_puts_it_on() {
    // NCCL puts channel c on NIC c mod 2: with 2 or 4 channels each message stays whole, and
    // the channels split each GPU's bytes evenly over its NICs; with one channel (fewer than
    // NICs, which NCCL would not open) every message is cut into a part a NIC
    let job = |channels: u32| {
        format!("[[jobs]]\nname = \"ar\"\ncollective = \"allreduce\"\nsize = \"4MiB\"\nranks = 16\nchannels = {channels}\n")
    };
    let data_on = |r: &fabricsim_core::stats::RunResult, nic: &str| -> u64 {
        let (names, data) = (r.ports.str("name"), r.ports.u64("data_packets"));
        names.iter().zip(data).filter(|(n, _)| n.starts_with("host") && n.ends_with(&format!("n{nic}:up0"))).map(|(_, &d)| d).sum()
    };
    for channels in [1, 2, 4] {
        let one = super::run(&format!("{}{}", fabric(true, 1, "400Gbps"), job(channels)));
        let two = super::run(&format!("{}{}", fabric(true, 2, "200Gbps"), job(channels)));
        assert_eq!(two.summary.status, "complete");
        let parts = if channels == 1 { 2 } else { 1 };
        assert_eq!(two.flows.u64("bytes").len(), parts * one.flows.u64("bytes").len(), "{channels} channels");
        let (nic0, nic1) = (data_on(&two, "0"), data_on(&two, "1"));
        assert!(nic0 > 0 && nic0.abs_diff(nic1) * 100 <= nic0, "{channels} channels: {nic0} and {nic1} packets");
    }
}

#[test]
fn any_cut_gives_the_same_results_with_a_gpus_nics_on_different_rails() {
    use super::golden::render;
    use fabricsim_core::Simulation;
    let text =
        format!("{}[[jobs]]\nname = \"ring\"\ncollective = \"allreduce\"\nsize = \"1MiB\"\nranks = 16\n", fabric(true, 2, "200Gbps"));
    let scenario = super::scenario(&text).expect("valid");
    let one = render(&Simulation::new(&scenario).expect("builds").run());
    assert!(one.contains("complete"));
    for pieces in [2, 4, 8] {
        assert!(render(&Simulation::in_pieces(&scenario, pieces).expect("builds").run()) == one, "{pieces} pieces");
    }
}

#[test]
fn several_nics_a_gpu_are_checked_before_anything_is_built() {
    let refused = |text: String| super::scenario(&text).and_then(|s| s.resolve().map(|_| ())).expect_err("refused");
    for bad in [0, 17] {
        let e = refused(fabric(false, bad, "200Gbps"));
        assert_eq!((e.field.as_str(), e.message.as_str()), ("topology.nics_per_gpu", format!("got {bad}; allowed: 1 to 16").as_str()));
    }
    // the tree's counts are of NICs, and the error says so
    let e = refused(fabric(false, 4, "200Gbps"));
    assert_eq!(e.field, "topology.hosts");
    assert!(e.message.contains("counted in NICs (4 a GPU, 64 in all): at most 32 for a 2-tier tree of radix 8"), "{}", e.message);
}
