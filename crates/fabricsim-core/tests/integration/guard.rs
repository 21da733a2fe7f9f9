//! The run guard: a time or event budget ends the run as "incomplete", never a hang.

use super::{fabric128, run};

#[test]
fn time_and_event_limits_end_the_run_incomplete() {
    let r = run(&fabric128("[workload]\nkind = \"permutation\"\nsize = \"8MiB\"\n[stop]\nmax_time = \"50us\"\n"));
    assert_eq!(r.summary.status, "incomplete");
    assert_eq!(r.summary.stop_reason, "stop.max_time reached");
    assert_eq!(r.summary.completed, 0);
    assert!(r.summary.sim_time_ns <= 50_000.0);
    assert!(r.flows.bool("completed").iter().all(|c| !c));

    let r = run(&fabric128("[workload]\nkind = \"permutation\"\nsize = \"8MiB\"\n[stop]\nmax_events = 10000\n"));
    assert_eq!(r.summary.status, "incomplete");
    assert_eq!(r.summary.events, 10_000);
}

#[test]
fn the_wall_clock_guard_stops_a_long_run() {
    // a 128-host permutation of 64 MiB takes seconds of wall time; 200 ms of it are allowed
    let r = run(&fabric128("[workload]\nkind = \"permutation\"\nsize = \"64MiB\"\n[stop]\nmax_wall = \"200ms\"\n"));
    assert_eq!((r.summary.status, r.summary.stop_reason), ("incomplete", "stop.max_wall reached"));
    assert!(r.accounting.balanced());
}

#[test]
fn a_run_that_cannot_progress_stops_after_1000_rtos() {
    // host 9's link is dead and never comes back: its flow's ACKs die, the sender retransmits
    // into the void, and with 100 000 s allowed it would spin for billions of events. Once
    // routing has reconverged (10 ms) nothing new arrives and nothing is pending. The guard
    // looks every eighth of its window of 1000 RTOs (70 ms): it last saw the reconvergence
    // pending at 8.75 ms and stops the run at 78.75 ms
    let r = run(&fabric128(
        "[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 9, size = \"64KiB\"}]\n[stop]\nmax_time = \"100000s\"\n[[faults]]\nkind = \"link_down\"\nlink = \"host9:up0\"\n",
    ));
    assert_eq!(r.summary.status, "incomplete");
    assert!(r.summary.stop_reason.starts_with("no progress"), "{}", r.summary.stop_reason);
    assert_eq!(r.summary.sim_time_ns, 78_750_000.0);
    assert!(r.accounting.balanced());
    // the same dead link, but it comes back at 85 ms: the run waits for it and completes
    let r = run(&fabric128(
        "[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 9, size = \"64KiB\"}]\n[stop]\nmax_time = \"100000s\"\n[[faults]]\nkind = \"link_down\"\nlink = \"host9:up0\"\nend = \"85ms\"\n",
    ));
    assert_eq!(r.summary.status, "complete");
    // and a flow that starts late is not cut short by a stuck one before it
    let r = run(&fabric128(
        "[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 9, size = \"64KiB\"}, {src = 1, dst = 20, size = \"64KiB\", start = \"200ms\"}]\n[stop]\nmax_time = \"100000s\"\n[[faults]]\nkind = \"link_down\"\nlink = \"host9:up0\"\n",
    ));
    assert!(r.summary.stop_reason.starts_with("no progress"));
    assert_eq!(r.flows.bool("completed"), vec![false, true]);
    assert!(r.summary.sim_time_ns > 270_000_000.0);
}
