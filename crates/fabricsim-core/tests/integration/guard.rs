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
    assert_eq!(r.summary.stop_detail, "1 of 1 messages unfinished; no new data for 70000.000 us (1000 RTOs) and nothing pending");
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

#[test]
fn an_incomplete_run_says_what_it_left_unfinished_and_what_it_waited_for() {
    // host 9's link dies at once and routing would take 1 s to notice: the sender retransmits
    // into it, new data stops, but the guard waits for the pending reconvergence; the time
    // guard at 500 ms ends the run, and the summary says why it did not stop sooner
    let r = run(&fabric128(
        "[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 9, size = \"64KiB\"}, {src = 1, dst = 20, size = \"64KiB\"}]\n[stop]\nmax_time = \"500ms\"\n[[faults]]\nkind = \"link_down\"\nlink = \"host9:up0\"\ndetection = \"1s\"\n",
    ));
    assert_eq!(r.summary.stop_reason, "stop.max_time reached");
    let detail = &r.summary.stop_detail;
    assert!(detail.starts_with("1 of 2 messages unfinished; new data last seen by the no-progress check at 8750.000 us"), "{detail}");
    assert!(detail.ends_with("was pending at 1010000.000 us, so the guard kept waiting"), "{detail}");
    // a complete run has nothing to say
    let r = run(&fabric128("[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 9, size = \"64KiB\"}]\n"));
    assert_eq!((r.summary.status, r.summary.stop_detail.as_str()), ("complete", ""));
}
