//! A run across ranks (`sim::ranks`, here threads standing in for processes, and its results
//! gathered on rank 0 through the bytes processes send) gives the tables of the run in one
//! process: every golden scenario that runs across ranks, on 1, 2 and 3 ranks of one thread
//! and 2 ranks of 2 threads, renders exactly its golden tables, from `results()` while it could go on and from
//! `into_results()`; the event guard stops at the same event; what does not run across ranks
//! yet is refused with its field.

use fabricsim_core::sim::ranks::Local;
use fabricsim_core::{Scenario, ScenarioError, Simulation, Status};

use super::golden::{first_difference, render};
use super::pieces::golden_scenarios;

/// `scenario` on `ranks` ranks of one process (threads), each running its pieces on `threads`
/// threads, gathered on rank 0 for its results through the bytes a run across processes sends.
fn across(scenario: &Scenario, ranks: usize, threads: usize) -> Result<Simulation, ScenarioError> {
    let sims = (0..ranks).map(|r| Simulation::ranked(scenario, ranks, r, threads)).collect::<Result<Vec<_>, _>>()?;
    let gathered: Vec<Option<Simulation>> = std::thread::scope(|s| {
        let running: Vec<_> = sims
            .into_iter()
            .zip(Local::group(ranks))
            .map(|(mut sim, ex)| {
                s.spawn(move || {
                    sim.run_ranked(&ex);
                    sim.gather(&ex).then_some(sim)
                })
            })
            .collect();
        running.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
    });
    let mut holders = gathered.into_iter().flatten();
    let whole = holders.next().expect("rank 0 holds the results");
    assert!(holders.next().is_none(), "only rank 0 holds them");
    Ok(whole)
}

#[test]
fn every_golden_scenario_gives_its_tables_across_ranks() {
    let (mut failures, mut ran, mut refused) = (Vec::new(), 0, Vec::new());
    for (path, text) in golden_scenarios() {
        let scenario = super::scenario(&text).expect("valid scenario");
        let expected = std::fs::read_to_string(path.with_extension("out")).expect("golden output");
        let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        for (ranks, threads) in [(1, 1), (2, 1), (3, 1), (2, 2)] {
            match across(&scenario, ranks, threads) {
                Ok(sim) => {
                    ran += 1;
                    let mid = render(&sim.results());
                    let end = render(&sim.into_results());
                    if mid != end {
                        failures.push(format!("{file} on {ranks} ranks x {threads} threads: results() and into_results() differ"));
                    }
                    if end != expected {
                        let (line, one, cut) = first_difference(&expected, &end);
                        failures.push(format!(
                            "{file} on {ranks} ranks x {threads} threads, line {line}:\n  one process: {one}\n  ranks:       {cut}"
                        ));
                    }
                }
                Err(e) => refused.push(format!("{file} on {ranks} x {threads}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "a run across ranks differs:\n{}", failures.join("\n"));
    // what is refused is a fabric of fewer pieces than ranks, nothing else
    for r in &refused {
        assert!(r.contains("pieces"), "refused: {r}");
    }
    assert!(ran >= 4 * 33, "{ran} runs across ranks; refused: {refused:#?}");
}

#[test]
fn a_run_stopped_early_stops_at_the_same_event_on_any_ranks() {
    let base = "[topology]\nhosts = 128\nradix = 16\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n[stop]\n";
    // the guard in the first span (rank 0's hosts start first), past it (every rank's
    // packets in flight), and the time guard
    for (stop, events, status) in [
        ("max_events = 1000", Some(1000), Status::EventLimit),
        ("max_events = 150000", Some(150_000), Status::EventLimit),
        ("max_time = \"20us\"", None, Status::TimeLimit),
    ] {
        let scenario = super::scenario(&format!("{base}{stop}\n")).expect("valid");
        let one = Simulation::new(&scenario).expect("builds").run();
        assert!(one.accounting.data_in_flight > 0, "{stop}: packets in flight at the stop");
        for (ranks, threads) in [(1, 1), (2, 1), (3, 1), (2, 2)] {
            let sim = across(&scenario, ranks, threads).expect("runs across ranks");
            let on = format!("{stop} on {ranks} ranks x {threads} threads");
            assert_eq!(sim.status(), status, "{on}");
            if let Some(events) = events {
                assert_eq!(sim.events(), events, "{on}");
            }
            let r = sim.into_results();
            assert_eq!(r.accounting, one.accounting, "{on}");
            assert!(render(&r) == render(&one), "{on}: the tables differ");
        }
    }
}

#[test]
fn a_pfc_deadlock_is_found_across_ranks_as_in_one_process() {
    // the ring of five switches whose pauses close a cycle (pfc.rs): each rank holds some of
    // its ports, and the check reads what they all told; the cycle named is one process's
    let scenario = super::scenario(&super::pfc::ring(super::pfc::DEADLOCK)).expect("valid");
    let one = Simulation::new(&scenario).expect("builds").run();
    assert!(one.summary.stop_detail.contains(super::pfc::CYCLE), "{}", one.summary.stop_detail);
    for (ranks, threads) in [(2, 1), (3, 1), (2, 2)] {
        let sim = across(&scenario, ranks, threads).expect("runs across ranks");
        assert_eq!(sim.status(), Status::PfcDeadlock, "{ranks} x {threads}");
        let r = sim.into_results();
        assert_eq!(r.summary.stop_detail, one.summary.stop_detail, "{ranks} x {threads}");
        assert!(render(&r) == render(&one), "{ranks} x {threads}: the tables differ");
    }
}

#[test]
fn what_does_not_run_across_ranks_is_refused_with_its_field() {
    let base = "[topology]\nhosts = 32\nradix = 8\n";
    let scenario = super::scenario(base).expect("valid");
    let e = Simulation::ranked(&scenario, 64, 0, 1).err().expect("more ranks than pieces refused");
    assert_eq!(e.field, "ranks", "{e}");
    assert!(Simulation::ranked(&scenario, 2, 2, 1).is_err(), "rank 2 of 2 refused");
}

#[test]
fn the_last_instants_run_in_windows_across_ranks() {
    // every host's message completes in the run's last microseconds: across ranks they run
    // in windows that stop at the last completion's instant (sim/ranks/finish.rs), not in
    // turns of two collective calls each
    let scenario =
        super::scenario("[topology]\nhosts = 128\nradix = 16\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n").expect("valid");
    let one = Simulation::new(&scenario).expect("builds").run();
    let sim = across(&scenario, 2, 1).expect("runs across ranks");
    let (windows, in_windows) = sim.parallel_windows();
    let events = sim.events();
    // in turns: the first span of one lookahead (1 664 events); with the last instants in
    // turns too, 6 090
    assert!(events - in_windows < 3000, "{windows} windows hold {in_windows} of {events} events");
    assert!(render(&sim.into_results()) == render(&one), "the tables differ");
}

#[test]
fn the_wall_guard_stops_every_rank_at_the_same_step() {
    // rank 0's clock decides for all: a guard already passed stops every rank before its first
    // step, and the results are gathered as for any stopped run
    let scenario = super::scenario(
        "[topology]\nhosts = 128\nradix = 16\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n[stop]\nmax_wall = \"1ns\"\n",
    )
    .expect("valid");
    for (ranks, threads) in [(1, 1), (3, 1), (2, 2)] {
        let sim = across(&scenario, ranks, threads).expect("runs across ranks");
        assert_eq!((sim.status(), sim.events()), (Status::WallLimit, 0), "{ranks} x {threads}");
        let r = sim.into_results();
        assert_eq!(r.summary.completed, 0);
    }
}
