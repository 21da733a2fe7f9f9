//! The multi-plane generator (Alibaba HPN: a NIC's ports in independent planes): planes share
//! no link, a message is striped over them with each part at its ideal, and what waits for a
//! message waits for every part.

/// 16 hosts, two planes of 200 Gb/s ports, each a leaf-spine of radix 8, 1 us links.
const PLANES: &str = "seed = 1\n[topology]\nkind = \"multi_plane\"\nplanes = 2\nhosts = 16\nradix = 8\nlink_rate = \"200Gbps\"\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n";

#[test]
fn each_host_has_a_port_in_every_plane_and_the_planes_share_no_link() {
    let topo = super::scenario(PLANES).expect("valid").resolve().expect("builds").topo;
    assert_eq!((topo.gpus(), topo.hosts(), topo.planes(), topo.switches()), (16, 32, 2, 16));
    let plane = |n: u32| topo.nodes[n as usize].name.rsplit('p').next().unwrap().parse::<u32>().unwrap();
    for port in &topo.ports {
        assert_eq!(plane(port.from), plane(port.to), "{}", port.name);
    }
    for h in 0..16 {
        assert_eq!((topo.slot_on(h, 0), topo.slot_on(h, 1)), (h, 16 + h));
        assert_eq!((topo.host(h), topo.host(16 + h)), (h, h));
        assert_eq!(topo.nodes[topo.slot_on(h, 1) as usize].name, format!("host{h}p1"));
    }
    assert!(!topo.tables.reachable(0, 17) && topo.tables.reachable(16, 31));
}

#[test]
fn a_message_is_striped_over_the_planes_each_part_at_its_ideal() {
    let r = super::run(&format!("{PLANES}[workload]\nkind = \"flows\"\nflows = [{{src = 0, dst = 15, size = \"1MiB\"}}]\n"));
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.flows.u64("bytes"), &[1 << 19, 1 << 19]);
    assert_eq!((r.flows.u64("src"), r.flows.u64("dst")), (&[0, 0][..], &[15, 15][..]));
    let (fct, ideal) = (r.flows.opt_u64("fct_ps"), r.flows.u64("ideal_fct_ps"));
    assert_eq!((fct[0], fct[1]), (Some(ideal[0]), Some(ideal[1])));
    // an odd size: the first part takes what does not divide
    let r = super::run(&format!("{PLANES}[workload]\nkind = \"flows\"\nflows = [{{src = 0, dst = 15, size = \"1001B\"}}]\n"));
    assert_eq!(r.flows.u64("bytes"), &[501, 500]);
}

#[test]
fn what_waits_for_a_message_waits_for_every_part() {
    // 1 waits for 0: both of 1's parts are released when the later of 0's ends; 0's plane-1
    // part shares its plane with a 4 MiB flow, so it ends last
    let flows = "flows = [{id = 0, src = 0, dst = 15, size = \"1MiB\"}, {id = 1, src = 15, dst = 3, size = \"1MiB\", after = [0]}, \
                 {id = 2, src = 1, dst = 15, size = \"8MiB\"}]";
    let r = super::run(&format!("{PLANES}[workload]\nkind = \"flows\"\n{flows}\n"));
    assert_eq!(r.summary.status, "complete");
    let (ready, end) = (r.flows.opt_u64("ready_ps"), r.flows.opt_u64("end_ps"));
    // rows: 0 (plane 0), 1 (plane 0), 2 (plane 0), then 0, 1 and 2 on plane 1
    let zero_done = end[0].max(end[3]);
    assert_eq!((ready[1], ready[4]), (zero_done, zero_done));
}

#[test]
fn any_cut_gives_the_same_results() {
    use super::golden::render;
    use fabricsim_core::Simulation;
    // a job's dependent messages, notices between hosts and between a host's ports included
    let text =
        format!("{PLANES}[[jobs]]\nname = \"ring\"\ncollective = \"allreduce\"\nsize = \"1MiB\"\nranks = 16\nplacement = \"spread\"\n");
    let scenario = super::scenario(&text).expect("valid");
    let one = render(&Simulation::new(&scenario).expect("builds").run());
    assert!(one.contains("complete"));
    for pieces in [2, 4] {
        assert!(render(&Simulation::in_pieces(&scenario, pieces).expect("builds").run()) == one, "{pieces} pieces");
    }
    // every node alone: a host's ports apart, so no window, the same results
    let alone = Simulation::cut_by(&scenario, |t| (0..t.nodes.len() as u16).collect()).expect("builds");
    assert!(render(&alone.run()) == one, "one piece per node");
}
