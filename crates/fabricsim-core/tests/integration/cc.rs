//! Window control on the whole fabric: what each algorithm does to an incast.

use super::{fabric128, run};

/// 16 hosts send 2 MiB each to one, with `transport` as the `[transport]` table.
fn incast(transport: &str) -> fabricsim_core::stats::RunResult {
    run(&fabric128(&format!("[transport]\n{transport}\n[workload]\nkind = \"incast\"\nsenders = 16\nsize = \"2MiB\"\n")))
}

/// An incast under window control `cc` with the reference simulator's 1.5-BDP window.
fn windowed_incast(cc: &str) -> fabricsim_core::stats::RunResult {
    incast(&format!("cc = \"{cc}\"\ninit_cwnd = \"1.5bdp\"\nmax_cwnd = \"1.5bdp\""))
}

#[test]
fn nscc_tames_an_incast_that_a_fixed_window_floods() {
    let fixed = windowed_incast("none");
    let nscc = windowed_incast("nscc");
    assert_eq!(nscc.summary.status, "complete");
    // the first RTT's 24 BDP cannot fit a 1-BDP buffer whatever the window does; after it, quick
    // adapt and the decrease on marked, delayed ACKs hold the senders near their share: NSCC
    // loses at most its first windows (16 x 1.5 BDP of packets), a fixed window floods again
    // every RTT of a drain about 80 RTTs long (over 10 times as much)
    let first_windows = 16 * (nscc.summary.bdp_bytes * 3 / 2).div_ceil(4160);
    assert!(nscc.summary.trims <= first_windows, "nscc {} against {first_windows}", nscc.summary.trims);
    assert!(fixed.summary.trims > 10 * first_windows, "none {} against {first_windows}", fixed.summary.trims);
    assert!(nscc.summary.ecn_marks > 0);
    // the receiver's link stays busy: the last byte arrives within the drain time plus two
    // base RTTs (the first packets' flight, and one round to resend what was trimmed)
    let bytes = 16.0 * 2.0 * 1024.0 * 1024.0 * 4160.0 / 4096.0;
    let drain_ns = bytes * 8.0 / 400.0;
    let max_fct = nscc.summary.max_fct_ns.unwrap();
    let rtt = nscc.summary.base_rtt_ns;
    assert!(max_fct < drain_ns + 2.0 * rtt, "max FCT {max_fct} ns, drain {drain_ns} ns, base RTT {rtt} ns");
}

#[test]
fn dcqcn_cuts_an_incast_with_at_most_one_cnp_per_50us() {
    let fixed = incast("kind = \"gbn\"\ncc = \"none\"");
    let dcqcn = incast("kind = \"gbn\"\ncc = \"dcqcn\"");
    assert_eq!(dcqcn.summary.status, "complete");
    // the first 50 us at line rate overflow whatever DCQCN does (it needs about four CNPs, 200
    // us, to reach a 16th of the line); then the rate holds the queue. A fixed rate floods for
    // the whole drain (about 680 us): more than 3 times as long, so more than 3 times the trims
    assert!(fixed.summary.trims > 3 * dcqcn.summary.trims, "none {} dcqcn {}", fixed.summary.trims, dcqcn.summary.trims);
    assert_eq!(fixed.flows.u64("cnps").iter().sum::<u64>(), 0, "CNPs belong to DCQCN");
    let (cnps, first, end) = (dcqcn.flows.u64("cnps"), dcqcn.flows.opt_u64("first_send_ps"), dcqcn.flows.opt_u64("end_ps"));
    for i in 0..16 {
        let windows = (end[i].unwrap() - first[i].unwrap()) / 50_000_000;
        assert!(cnps[i] >= 4 && cnps[i] <= windows + 1, "flow {i}: {} CNPs in {windows} windows of 50 us", cnps[i]);
    }
}
