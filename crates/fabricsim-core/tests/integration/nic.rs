//! NIC transports: Go-back-N, path-ID-assisted loss detection, reorder statistics, goodput.

use super::{fabric128, run};

fn one_flow(transport: &str, lb: &str, size: &str, extra: &str) -> fabricsim_core::stats::RunResult {
    run(&fabric128(&format!(
        "[transport]\n{transport}\n[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"flows\"\nflows = [{{src = 0, dst = 100, size = \"{size}\"}}]\n{extra}"
    )))
}

#[test]
fn go_back_n_is_exact_on_a_single_path() {
    let r = one_flow("kind = \"gbn\"", "ecmp", "3MiB", "");
    assert_eq!(r.flows.opt_u64("fct_ps")[0].unwrap(), r.flows.u64("ideal_fct_ps")[0]);
    assert_eq!(r.flows.u64("discarded")[0], 0);
}

#[test]
fn go_back_n_collapses_when_sprayed_paths_have_unequal_delay() {
    let big = "cc = \"none\"\ninit_cwnd = \"64bdp\"\nmax_cwnd = \"64bdp\"\nrto = \"1ms\"";
    let skew = "[switch]\nbuffer = \"64bdp\"\n[switch.ecn]\nenabled = false\n[[faults]]\nkind = \"delay\"\nlink = \"leaf0:up0\"\nextra = \"20us\"\n";
    let goodput = |kind: &str| {
        let r = one_flow(&format!("kind = \"{kind}\"\n{big}"), "ops", "16MiB", skew);
        assert_eq!(r.summary.status, "complete");
        (r.flows.opt_f64("goodput_gbps")[0].unwrap(), r.flows.u64("discarded")[0])
    };
    let (ooo, ooo_discarded) = goodput("ooo");
    let (gbn, gbn_discarded) = goodput("gbn");
    assert_eq!(ooo_discarded, 0);
    assert!(gbn_discarded > 1000, "{gbn_discarded}");
    assert!(ooo > 300.0, "ooo {ooo}");
    assert!(gbn < 0.2 * ooo, "gbn {gbn} ooo {ooo}");
}

#[test]
fn path_id_detection_recovers_a_loss_in_about_one_rtt_not_one_rto() {
    let outage = "[[faults]]\nkind = \"link_down\"\nlink = \"leaf0:up3\"\nstart = \"84us\"\nend = \"85us\"\n";
    let extra = |det: &str| {
        let r = one_flow(&format!("loss_detection = \"{det}\""), "ops", "4MiB", outage);
        assert!(r.flows.u64("drops")[0] >= 1, "the outage must cost a packet");
        (r.flows.opt_u64("fct_ps")[0].unwrap() - r.flows.u64("ideal_fct_ps")[0], r.flows.u64("fast_nacks")[0], r.flows.u64("timeouts")[0])
    };
    let (rto_extra, rto_nacks, rto_timeouts) = extra("rto");
    let (pid_extra, pid_nacks, pid_timeouts) = extra("path_id");
    let base_rtt = 8_337_920;
    assert!(rto_extra > 60_000_000 && rto_timeouts >= 1 && rto_nacks == 0, "{rto_extra}");
    assert!(pid_extra < 2 * base_rtt && pid_nacks >= 1 && pid_timeouts == 0, "{pid_extra}");
}

#[test]
fn path_id_detection_never_nacks_what_is_merely_reordered() {
    // spraying with paths of unequal delay reorders a lot, but nothing is lost
    let r =
        one_flow("loss_detection = \"path_id\"", "ops", "4MiB", "[[faults]]\nkind = \"delay\"\nlink = \"leaf0:up2\"\nextra = \"3us\"\n");
    assert_eq!(r.flows.u64("fast_nacks")[0], 0);
    assert_eq!(r.flows.u64("retransmits")[0], 0);
}

#[test]
fn reorder_distribution_counts_every_new_arrival() {
    let r = one_flow("", "ops", "2MiB", "[[faults]]\nkind = \"delay\"\nlink = \"leaf0:up1\"\nextra = \"2us\"\n");
    let arrivals: u64 = r.reorder.u64("arrivals").iter().sum();
    assert_eq!(arrivals, r.flows.u64("packets")[0], "one entry per new packet");
    let far: u64 = r.reorder.u64("distance").iter().zip(r.reorder.u64("arrivals")).filter(|(d, _)| **d > 0).map(|(_, n)| n).sum();
    assert!(far > 0, "packets on the slow path arrive late");
    let single = one_flow("", "ecmp", "2MiB", "");
    assert_eq!(single.reorder.u64("distance"), &[0], "one path: all in order");
}

#[test]
fn goodput_accounts_for_header_overhead_as_in_the_juniper_post() {
    // 4096 B of payload in 4194 B on the wire at 100 Gb/s: 97.66 Gb/s
    let r = run(
        "[topology]\nlink_rate = \"100Gbps\"\n[transport]\nmtu = \"4194B\"\nheader = \"98B\"\n[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 100, size = \"64MiB\"}]\n",
    );
    assert!((r.summary.line_goodput_gbps - 97.66).abs() < 0.01, "{}", r.summary.line_goodput_gbps);
    let g = r.flows.opt_f64("goodput_gbps")[0].unwrap();
    assert!(g < r.summary.line_goodput_gbps && g > 0.99 * r.summary.line_goodput_gbps, "{g}");
}

#[test]
fn a_nic_serves_its_connections_round_robin_at_line_rate() {
    // two 16-packet messages from host 0 to two other leaves, started together: the NIC sends
    // 32 packets back to back, so the later ends 16 packet times after a lone message would.
    // The first connection sent its first packet alone (the second starts at the same
    // picosecond, after it) and the round-robin pointer then wrapped to it: it sends two in a
    // row, then they alternate, and they end two packet times apart.
    let packet: u64 = 83_200; // 4160 B at 400 Gb/s, in ps
    let r = run(&fabric128(
        "[lb]\nkind = \"ops\"\n[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 40, size = \"64KiB\"}, {src = 0, dst = 100, size = \"64KiB\"}]\n",
    ));
    let end = r.flows.opt_u64("end_ps");
    let (a, b) = (end[0].unwrap(), end[1].unwrap());
    assert_eq!(a.abs_diff(b), 2 * packet, "alternating packets: {a} vs {b}");
    let ideal = r.flows.u64("ideal_fct_ps")[0];
    assert_eq!(a.max(b), ideal + 16 * packet);
    assert_eq!(r.ports.u64("max_queue_bytes").iter().max(), Some(&0), "the NIC is the only bottleneck");
}
