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
fn the_wall_clock_guard_stops_a_run_that_cannot_finish() {
    // host 9's link is dead and never comes back: its flow retransmits into the void until a
    // guard stops it; with 100 000 s of simulated time allowed, the wall guard is the one
    let r = run(&fabric128(
        "[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 9, size = \"64KiB\"}]\n[stop]\nmax_time = \"100000s\"\nmax_wall = \"200ms\"\n[[faults]]\nkind = \"link_down\"\nlink = \"host9:up0\"\n",
    ));
    assert_eq!((r.summary.status, r.summary.stop_reason), ("incomplete", "stop.max_wall reached"));
    assert!(r.accounting.balanced());
}
