//! A trace drawn as the run goes (`sim::generate`): the same run, to the picosecond, as its
//! messages given up front, whenever they join it.

use super::scenario;
use fabricsim_core::engine::rng::{Rng, Stream};
use fabricsim_core::stats::RunResult;
use fabricsim_core::units::{Duration, Size};
use fabricsim_core::workload::flows::{self, FlowEntry};
use fabricsim_core::workload::{Hosts, Workload, WorkloadConfig};
use fabricsim_core::{Scenario, Simulation, Status};

/// A trace of a few hundred messages on 16 hosts (a batch of the run's draws is 16 of them),
/// stopped at `max_time` or after `max_events`.
fn trace(max_time: &str, max_events: u64) -> Scenario {
    on("[topology]\nhosts = 16\nradix = 8\nlink_latency = \"1us\"\n[lb]\nkind = \"ops\"\n", 0.7, max_time, max_events)
}

/// FB Hadoop at `load` for 200 us from 2 us on the fabric and load balancer of `fabric`.
fn on(fabric: &str, load: f64, max_time: &str, max_events: u64) -> Scenario {
    let text = format!(
        "seed = 3\n{fabric}[workload]\nkind = \"trace\"\ncdf = \"fb_hadoop\"\nload = {load}\nduration = \"200us\"\nstart = \"2us\"\n\
         [stop]\nmax_time = \"{max_time}\"\nmax_events = {max_events}\n"
    );
    scenario(&text).expect("valid")
}

/// The trace's messages given up front: the same scenario with its messages as a flow list.
fn up_front(s: &Scenario) -> Scenario {
    let Some(WorkloadConfig::Trace(t)) = &s.workload else { panic!("a trace") };
    let hosts = s.resolve().expect("resolves").topo.gpus();
    let messages = t.messages(&Hosts::new(hosts), &mut Rng::stream(s.seed, Stream::Workload, 0)).expect("draws");
    let flows = messages
        .iter()
        .map(|m| FlowEntry {
            src: m.src,
            dst: m.dst,
            size: Size(m.bytes),
            start: Duration(m.start),
            class: m.class,
            id: None,
            after: Vec::new(),
            delay: Duration(0),
            cpu: None,
        })
        .collect();
    let mut given = s.clone();
    given.workload = Some(WorkloadConfig::Flows(flows::Config { flows, ..flows::Config::default() }));
    given
}

/// What the two runs share: every message's and port's row, the packets' accounting, the
/// events, the clock and how the run ended (the jobs table names the workload's kind, and only
/// a trace has a load, and the two events that read it at its window's half and end).
fn tables(r: &RunResult) -> String {
    let s = &r.summary;
    // the trace's window: 2 us + 100 us and 2 us + 200 us
    let windows = [102e3, 202e3].into_iter().filter(|&t| s.offered_load.is_some() && t <= s.sim_time_ns).count() as u64;
    let events = s.events - windows;
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        r.flows,
        r.ports,
        r.reorder,
        r.accounting,
        (events, s.sim_time_ns, s.status, &s.stop_detail, s.flows, s.completed)
    )
}

#[test]
fn a_trace_drawn_as_the_run_goes_runs_as_its_messages_given_up_front() {
    for (max_time, max_events) in [("1s", 1u64 << 40), ("60us", 1 << 40), ("1s", 20_000)] {
        let drawn = trace(max_time, max_events);
        let given = up_front(&drawn);
        let want = Simulation::new(&given).expect("builds").run();
        // the estimate counts the same messages, drawn or listed, and so does the survey
        let (a, b) = (drawn.resolve().expect("resolves"), given.resolve().expect("resolves"));
        assert!(a.arrivals.is_some() && b.arrivals.is_none() && a.messages.is_empty());
        assert_eq!(a.need, b.need);
        let (a, b) = (drawn.survey().expect("surveys").expect("a survey"), given.survey().expect("surveys").expect("a survey"));
        assert_eq!((a.need, a.events), (b.need, b.events));
        let n = want.summary.flows as usize;
        assert!(n > 200, "{n} messages: many batches of 16");
        let stop = [Status::Complete, Status::TimeLimit, Status::EventLimit]
            [usize::from(max_time == "60us") + 2 * usize::from(max_events < 1 << 40)];
        assert_eq!(want.summary.status, stop.label(), "a run stopped early stops before its trace is drawn");
        for how in ["one piece", "3 pieces", "2 threads"] {
            let mut sim = match how {
                "one piece" => Simulation::new(&drawn),
                "3 pieces" => Simulation::in_pieces(&drawn, 3),
                _ => Simulation::with_threads(&drawn, 2),
            }
            .expect("builds");
            assert_eq!(sim.flow_count() as usize, n, "{how}: counts the messages not drawn yet");
            let left = sim.model().arrivals.as_ref().map_or(0, |a| a.left() as usize);
            assert!(left >= n - 32, "{how}: the build took one batch ({} of {n} messages)", n - left);
            sim.step(u64::MAX);
            let mid = tables(&sim.results());
            let got = sim.into_results();
            assert_same(&tables(&got), &tables(&want), &format!("{how}, stop.max_time {max_time}, max_events {max_events}"));
            assert_same(&mid, &tables(&got), &format!("{how}: results() and into_results()"));
            assert!(got.summary.offered_load.is_some_and(|l| l > 0.5));
        }
    }
}

/// The same on a dragonfly under UGAL (72 hosts, paths through other groups), on one and two
/// threads.
#[test]
fn a_trace_drawn_as_the_run_goes_on_a_dragonfly_runs_as_given_up_front() {
    let fabric = "[topology]\nkind = \"dragonfly\"\nlink_latency = \"1us\"\ngroup_routing = \"ugal\"\n[lb]\nkind = \"ops\"\n";
    let drawn = on(fabric, 0.3, "1s", 1 << 40);
    let want = Simulation::new(&up_front(&drawn)).expect("builds").run();
    assert!(want.summary.flows > 500 && want.summary.status == Status::Complete.label(), "{} messages", want.summary.flows);
    for threads in [1, 2] {
        let got = Simulation::with_threads(&drawn, threads).expect("builds").run();
        assert_same(&tables(&got), &tables(&want), &format!("dragonfly, {threads} threads"));
    }
}

/// `got` is `want`, or the test fails showing where they first differ.
fn assert_same(got: &str, want: &str, what: &str) {
    if let Some(i) =
        got.bytes().zip(want.bytes()).position(|(a, b)| a != b).or((got.len() != want.len()).then(|| got.len().min(want.len())))
    {
        let near = |s: &str| s.get(i.saturating_sub(300)..(i + 100).min(s.len())).unwrap_or("").to_string();
        panic!("{what}: differs at byte {i}:\n  got:  ...{}\n  want: ...{}", near(got), near(want));
    }
}
