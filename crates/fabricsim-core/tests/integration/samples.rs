//! Port time series (`[samples]`).

use super::{fabric128, run};

#[test]
fn samples_record_queues_and_utilization_without_changing_results() {
    let base = "[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 100, size = \"2MiB\"}]\n";
    let plain = run(&fabric128(base));
    let sampled = run(&fabric128(&format!("{base}[samples]\nevery = \"5us\"\nports = [\"host0:up*\", \"leaf12:down4\"]\n")));
    assert_eq!(plain.flows, sampled.flows, "sampling only reads state");
    let (t, port, util) = (sampled.samples.u64("time_ps"), sampled.samples.u64("port"), sampled.samples.f64("utilization"));
    assert!(t.iter().all(|t| t % 5_000_000 == 0));
    assert_eq!(port.iter().collect::<std::collections::BTreeSet<_>>().len(), 2);
    // the NIC sends back to back: a full interval in the middle of the transfer is at line rate
    let host_port = port[0];
    let mid: Vec<f64> =
        (0..t.len()).filter(|&i| port[i] == host_port && (10_000_000..40_000_000).contains(&t[i])).map(|i| util[i]).collect();
    assert!(!mid.is_empty() && mid.iter().all(|u| (0.97..1.03).contains(u)), "{mid:?}");
}

#[test]
fn an_incast_queue_shows_in_the_samples() {
    let r = run(&fabric128(
        "[workload]\nkind = \"incast\"\nsenders = 8\nreceiver = 0\nsize = \"1MiB\"\n[samples]\nevery = \"2us\"\nports = [\"leaf0:down0\"]\n",
    ));
    assert!(r.samples.u64("queue_bytes").iter().any(|&q| q > 100_000), "8 senders into one port queue up");
    let e = fabricsim_core::Simulation::new(&super::scenario(&fabric128("[samples]\nevery = \"1us\"\nports = [\"nope*\"]\n")).unwrap())
        .err()
        .unwrap();
    assert_eq!(e.field, "samples.ports[0]");
}

#[test]
fn samples_change_nothing_in_a_run_cut_by_its_time_guard() {
    // the run ends at max_time whatever its last event was: a sample at 40 us must not move
    // the end (sim_time_ns) nor the mean queues integrated up to it
    let base = "[workload]\nkind = \"permutation\"\nsize = \"4MiB\"\n[stop]\nmax_time = \"43us\"\n";
    let plain = run(&fabric128(base));
    let sampled = run(&fabric128(&format!("{base}[samples]\nevery = \"10us\"\n")));
    assert_eq!(plain.summary.status, "incomplete");
    assert_eq!(plain.summary.sim_time_ns, 43_000.0);
    assert_eq!(sampled.summary.sim_time_ns, plain.summary.sim_time_ns);
    assert_eq!(plain.flows, sampled.flows);
    assert_eq!(plain.ports, sampled.ports, "mean queues integrated to the same end");
}

#[test]
fn samples_change_nothing_in_a_run_cut_by_its_event_guard() {
    // a sample is no event of the run: max_events cuts it at the same event (issue 61: the
    // samples counted, so a sampled run stopped earlier), and the event counts are the same
    let base = "[workload]\nkind = \"permutation\"\nsize = \"4MiB\"\n[stop]\nmax_events = 30000\nmax_time = \"1ms\"\n";
    let plain = run(&fabric128(base));
    let sampled = run(&fabric128(&format!("{base}[samples]\nevery = \"100ns\"\nports = [\"leaf0:*\"]\n")));
    assert_eq!(plain.summary.status, "incomplete");
    assert!(sampled.samples.u64("time_ps").len() > 100, "it sampled");
    assert_eq!((sampled.summary.events, sampled.summary.sim_time_ns), (plain.summary.events, plain.summary.sim_time_ns));
    assert_eq!(plain.flows, sampled.flows);
    assert_eq!(plain.ports, sampled.ports);
    let whole = run(&fabric128("[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n[samples]\nevery = \"1us\"\nports = [\"leaf0:*\"]\n[stop]\nmax_time = \"1ms\"\n"));
    let unsampled = run(&fabric128("[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n"));
    assert_eq!(whole.summary.events, unsampled.summary.events, "samples are not counted as events");
}

#[test]
fn a_workload_without_messages_ends_at_zero_with_or_without_samples() {
    // nothing to complete: the run ends with instant 0, whichever global duty has the first
    // event (a sample at 0, or the trace's window later on); it ran to the window before
    let base = "[workload]\nkind = \"trace\"\ncdf = \"websearch\"\nload = 0.001\nduration = \"5us\"\n";
    let plain = run(&fabric128(base));
    let sampled = run(&fabric128(&format!("{base}[samples]\nevery = \"1us\"\n")));
    assert_eq!((plain.summary.flows, plain.summary.status), (0, "complete"));
    assert_eq!(plain.summary.sim_time_ns, 0.0);
    assert_eq!(sampled.summary.sim_time_ns, plain.summary.sim_time_ns);
    assert_eq!(plain.ports, sampled.ports);
}

#[test]
fn utilization_splits_packets_across_intervals_and_adds_up() {
    // 50 ns intervals are shorter than a packet (83.2 ns): each interval gets the part of a
    // packet sent in it, so a saturated link reads exactly 1 and never more
    let r = run(&fabric128(
        "[workload]\nkind = \"permutation\"\nsize = \"256KiB\"\n[samples]\nevery = \"50ns\"\nports = [\"host*\", \"leaf0:up*\"]\n[stop]\nmax_time = \"1ms\"\n",
    ));
    assert_eq!(r.summary.status, "complete");
    let (port, util) = (r.samples.u64("port"), r.samples.f64("utilization"));
    assert!(util.iter().all(|&u| (0.0..=1.0).contains(&u)), "max {}", util.iter().copied().fold(0.0, f64::max));
    assert!(util.iter().filter(|&&u| u == 1.0).count() > 1000, "a sending NIC is busy for whole intervals");
    // the intervals add up to the port's busy time over the run (the ports table), less what
    // it sent after the last sample (under one interval)
    let host0 = port[0];
    let sampled: f64 = (0..port.len()).filter(|&i| port[i] == host0).map(|i| util[i] * 50_000.0).sum();
    let whole_run = r.ports.f64("utilization")[host0 as usize] * r.summary.sim_time_ns * 1000.0;
    assert!(sampled > 0.0 && sampled <= whole_run + 1.0 && whole_run - sampled < 50_000.0, "{sampled} ps of {whole_run} ps");
}
