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
    // adapt and the decrease on marked, delayed ACKs hold the senders near their share
    assert!(fixed.summary.trims > 20 * nscc.summary.trims, "none {} nscc {}", fixed.summary.trims, nscc.summary.trims);
    assert!(nscc.summary.ecn_marks > 0);
    // the receiver's link stays busy: the last byte arrives within 5% of the drain time
    let bytes = 16.0 * 2.0 * 1024.0 * 1024.0 * 4160.0 / 4096.0;
    let drain_ns = bytes * 8.0 / 400.0;
    let max_fct = nscc.summary.max_fct_ns.unwrap();
    assert!(max_fct < 1.05 * drain_ns, "max FCT {max_fct} ns, drain {drain_ns} ns");
}

#[test]
fn dcqcn_cuts_an_incast_with_at_most_one_cnp_per_50us() {
    let fixed = incast("kind = \"gbn\"\ncc = \"none\"");
    let dcqcn = incast("kind = \"gbn\"\ncc = \"dcqcn\"");
    assert_eq!(dcqcn.summary.status, "complete");
    // the first 50 us at line rate overflow whatever DCQCN does (it needs about four CNPs to
    // reach a 16th of the line); then the rate holds the queue
    assert!(fixed.summary.trims > 5 * dcqcn.summary.trims, "none {} dcqcn {}", fixed.summary.trims, dcqcn.summary.trims);
    assert_eq!(fixed.flows.u64("cnps").iter().sum::<u64>(), 0, "CNPs belong to DCQCN");
    let (cnps, first, end) = (dcqcn.flows.u64("cnps"), dcqcn.flows.opt_u64("first_send_ps"), dcqcn.flows.opt_u64("end_ps"));
    for i in 0..16 {
        let windows = (end[i].unwrap() - first[i].unwrap()) / 50_000_000;
        assert!(cnps[i] >= 4 && cnps[i] <= windows + 1, "flow {i}: {} CNPs in {windows} windows of 50 us", cnps[i]);
    }
}
