//! A run cut into pieces gives the same results as the run in one piece: every golden
//! scenario (every load balancer, transport, congestion control, fault kind, samples, jobs,
//! a trace, late packets) in 2 and 3 pieces by leaf, and in pieces drawn at random per node
//! (a host apart from its leaf, a switch apart from its neighbours), renders exactly its
//! golden tables. A unit that read or wrote another unit's state instead of sending it a
//! packet or a notice would see the other piece's stale copy and move a number.

use std::path::PathBuf;

use fabricsim_core::Simulation;

use super::golden::{first_difference, render};

pub(super) fn golden_scenarios() -> Vec<(PathBuf, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/golden")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).expect("readable"))).collect()
}

/// A cut of `nodes` nodes into `pieces` pieces drawn from `seed` (a small LCG: the cut only
/// has to differ from the leaf blocks).
fn random_cut(nodes: usize, pieces: u16, seed: u64) -> Vec<u16> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..nodes)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % u64::from(pieces)) as u16
        })
        .collect()
}

#[test]
fn every_golden_scenario_gives_its_tables_in_any_pieces() {
    let mut failures = Vec::new();
    for (k, (path, text)) in golden_scenarios().into_iter().enumerate() {
        let scenario = super::scenario(&text).expect("valid scenario");
        let expected = std::fs::read_to_string(path.with_extension("out")).expect("golden output");
        let cuts: [(&str, Simulation); 4] = [
            ("2 pieces", Simulation::in_pieces(&scenario, 2).expect("builds")),
            ("3 pieces", Simulation::in_pieces(&scenario, 3).expect("builds")),
            ("a random cut into 4", Simulation::cut_by(&scenario, |t| random_cut(t.nodes.len(), 4, k as u64)).expect("builds")),
            // every host and switch alone: a unit that touched another's state would see a
            // copy that never changes
            ("one piece per node", Simulation::cut_by(&scenario, |t| (0..t.nodes.len() as u16).collect()).expect("builds")),
        ];
        for (name, mut sim) in cuts {
            sim.step(u64::MAX);
            let mid = render(&sim.results());
            let end = render(&sim.into_results());
            let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            if mid != end {
                failures.push(format!("{file} in {name}: results() and into_results() differ"));
            }
            if end != expected {
                let (line, one, cut) = first_difference(&expected, &end);
                failures.push(format!("{file} in {name}, line {line}:\n  one piece: {one}\n  cut:       {cut}"));
            }
        }
    }
    assert!(failures.is_empty(), "a cut run differs:\n{}", failures.join("\n"));
}

#[test]
fn links_without_latency_leave_no_window_and_the_run_says_so() {
    let scenario = super::scenario("[topology]\nhosts = 16\nradix = 8\nlink_latency = \"0ns\"\nswitch_latency = \"0ns\"\n").expect("valid");
    let sim = Simulation::with_threads(&scenario, 2).expect("builds");
    assert_eq!(sim.threads(), 1);
    assert!(sim.thread_note().is_some_and(|n| n.contains("no latency")), "{:?}", sim.thread_note());
    let sim = Simulation::with_threads(&super::scenario("[topology]\nhosts = 16\nradix = 8\n").expect("valid"), 2).expect("builds");
    assert_eq!((sim.threads(), sim.thread_note()), (2, None));
}

#[test]
fn a_cut_must_give_every_node_a_piece() {
    let scenario = super::scenario("[topology]\nhosts = 16\nradix = 8\n").expect("valid");
    let err = Simulation::cut_by(&scenario, |_| vec![0; 3]).err().expect("refused");
    assert!(err.to_string().contains("cut") && err.to_string().contains("3 pieces"), "{err}");
}

#[test]
fn every_golden_scenario_gives_its_tables_on_any_threads() {
    let mut failures = Vec::new();
    for (path, text) in golden_scenarios() {
        let scenario = super::scenario(&text).expect("valid scenario");
        let expected = std::fs::read_to_string(path.with_extension("out")).expect("golden output");
        let runs = [
            ("2 threads", Simulation::with_threads(&scenario, 2).expect("builds"), u64::MAX),
            // in small steps: a step ends between windows
            ("3 threads in steps", Simulation::with_threads(&scenario, 3).expect("builds"), 997),
            // 5 pieces drawn at random per node on 3 threads: hosts apart from their leaves (a
            // multi-plane host's ports kept together: apart, they tell each other at once and
            // leave no window)
            (
                "a random cut on 3 threads",
                Simulation::cut_by(&scenario, |t| {
                    let mut cut = random_cut(t.nodes.len(), 5, 7);
                    for h in 0..t.gpus() {
                        for p in 1..t.planes() {
                            cut[t.slot_on(h, p) as usize] = cut[t.slot(h) as usize];
                        }
                    }
                    cut
                })
                .expect("builds")
                .on_threads(3),
                u64::MAX,
            ),
        ];
        for (name, mut sim, chunk) in runs {
            assert!(sim.threads() > 1, "{name}: {:?}", sim.thread_note());
            while sim.step(chunk) == fabricsim_core::Status::Running {}
            assert!(sim.parallel_windows().1 > 0, "{name}: some windows run in parallel");
            let end = render(&sim.into_results());
            if end != expected {
                let (line, one, cut) = first_difference(&expected, &end);
                let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
                failures.push(format!("{file} on {name}, line {line}:\n  one: {one}\n  cut: {cut}"));
            }
        }
    }
    assert!(failures.is_empty(), "a parallel run differs:\n{}", failures.join("\n"));
}

#[test]
fn the_event_guard_ends_a_run_the_same_on_any_threads() {
    // near the guard (within four of the widest spans of one lookahead) the run goes on in
    // turns, in the one key order of all pieces: the events it ran before the guard stopped it
    // do not depend on the threads
    let text = super::fabric128("[workload]\nkind = \"permutation\"\nsize = \"8MiB\"\n[stop]\nmax_events = 300001\n");
    let scenario = super::scenario(&text).expect("valid");
    let one = render(&Simulation::with_threads(&scenario, 1).expect("builds").run());
    assert!(one.contains("stop.max_events reached"));
    for threads in [2, 3] {
        let mut sim = Simulation::with_threads(&scenario, threads).expect("builds");
        while sim.step(9973) == fabricsim_core::Status::Running {}
        assert!(sim.parallel_windows().1 > 0, "{threads} threads: some windows run in parallel");
        assert!(render(&sim.into_results()) == one, "{threads} threads differ from one");
    }
}

#[test]
fn an_event_guard_inside_the_first_window_stops_the_run_there_on_any_threads() {
    // 1 000 events are fewer than the first window of this fabric holds (1 664 on 2 threads):
    // the guard used to wait for half its count before it ran in turns, and a window carried
    // the run past it (2 threads stopped at 1 664 events, 1 thread at 1 000)
    let text = super::fabric128("[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n[stop]\nmax_events = 1000\n");
    let scenario = super::scenario(&text).expect("valid");
    let one = Simulation::with_threads(&scenario, 1).expect("builds").run();
    assert_eq!(one.summary.events, 1000);
    for threads in [2, 3] {
        let r = Simulation::with_threads(&scenario, threads).expect("builds").run();
        assert_eq!(r.summary.events, 1000, "{threads} threads");
        assert!(render(&r) == render(&one), "{threads} threads differ from one");
    }
}

#[test]
fn an_event_guard_just_after_a_burst_stops_the_run_there_on_any_threads() {
    // one flow, then a quiet spell, then 63 flows at once: the spans before the burst are
    // narrow, and a window measured by them alone crossed a guard 50-400 events past 20 us
    // (2 threads stopped at 980); the events queued at the window's start tell the burst
    let mut list = vec![(0, 127, "64KiB", "0us")];
    list.extend((1..64).map(|i| (i, i + 64, "64KiB", "20us")));
    let base = super::fabric128(&super::flows(&list));
    let quiet = super::scenario(&format!("{base}[stop]\nmax_time = \"20us\"\n")).expect("valid");
    let before = Simulation::with_threads(&quiet, 1).expect("builds").run().summary.events;
    for k in [50, 200, 400] {
        let scenario = super::scenario(&format!("{base}[stop]\nmax_events = {}\n", before + k)).expect("valid");
        let one = Simulation::with_threads(&scenario, 1).expect("builds").run();
        assert_eq!(one.summary.events, before + k);
        for threads in [2, 3] {
            let r = Simulation::with_threads(&scenario, threads).expect("builds").run();
            assert_eq!(r.summary.events, before + k, "{threads} threads, {k} past the burst");
            assert!(render(&r) == render(&one), "{threads} threads differ from one");
        }
    }
}

#[test]
fn the_memory_guard_counts_the_pieces_and_a_run_takes_the_threads_that_fit() {
    let base = "[topology]\nhosts = 1024\nradix = 64\n[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n";
    let one = Simulation::new(&super::scenario(base).expect("valid")).expect("builds").model().need.total();
    // room for one thread and 4 MiB more: 16 pieces hold more than that
    let tight = super::scenario(&format!("{base}[stop]\nmax_memory = \"{}B\"\n", one + (4 << 20))).expect("valid");
    assert!(Simulation::with_threads(&tight, 1).is_ok());
    let err = Simulation::cut_by(&tight, |t| (0..t.nodes.len()).map(|i| (i % 16) as u16).collect()).err().expect("refused");
    assert!(err.to_string().contains("stop.max_memory") && err.to_string().contains("threads"), "{err}");
    // asked for 16 threads, the run takes as many as fit, and says so
    let sim = Simulation::with_threads(&tight, 16).expect("builds on fewer threads");
    assert!(sim.threads() < 16 && sim.thread_note().is_some_and(|n| n.contains("stop.max_memory")), "{:?}", sim.thread_note());
}

#[test]
fn a_run_takes_at_most_one_thread_per_leaf() {
    // 16 hosts of radix 8: 4 leaves
    let sim = Simulation::with_threads(&super::scenario("[topology]\nhosts = 16\nradix = 8\n").expect("valid"), 1_000_000).expect("builds");
    assert_eq!(sim.threads(), 4);
    assert!(sim.thread_note().is_some_and(|n| n.contains("1000000 threads asked, 4 used")), "{:?}", sim.thread_note());
}

#[test]
fn one_thread_runs_a_large_fabric_in_pieces_for_the_cache_with_the_same_results() {
    // 512 hosts sending one message each: cut into 2 pieces that one thread runs window
    // after window (`piece::blocks`), with the tables of the run in one piece
    let fabric = "seed = 3\n[topology]\nhosts = 512\nradix = 32\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n";
    let scenario = super::scenario(&format!("{fabric}[workload]\nkind = \"permutation\"\nsize = \"256KiB\"\n")).expect("valid");
    let mut blocked = Simulation::with_threads(&scenario, 1).expect("builds");
    assert_eq!((blocked.threads(), blocked.thread_note()), (1, None));
    blocked.step(u64::MAX);
    assert!(blocked.parallel_windows().1 > 0, "the pieces ran in windows");
    let one = render(&Simulation::new(&scenario).expect("builds").run());
    assert!(render(&blocked.into_results()) == one, "in pieces on one thread differs from one piece");
    // a ring allreduce over the same hosts sends 1 022 messages a host: one piece, no windows
    let scenario =
        super::scenario(&format!("{fabric}[[jobs]]\ncollective = \"allreduce\"\nsize = \"1MiB\"\nranks = 512\n")).expect("valid");
    let mut sim = Simulation::with_threads(&scenario, 1).expect("builds");
    sim.step(200_000);
    assert_eq!(sim.parallel_windows(), (0, 0), "a run of many messages a host stays in one piece");
}

#[test]
fn auto_runs_a_small_run_on_one_thread_and_a_large_one_on_the_cpus() {
    use fabricsim_core::sim::threads::{available_cpus, MIN_EVENTS};
    // 16 flows of 64 KiB: far below MIN_EVENTS
    let small = super::scenario(&super::fabric128("[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n")).expect("valid");
    let sim = Simulation::auto(&small).expect("builds");
    assert_eq!((sim.threads(), sim.thread_note()), (1, None), "a small run on one thread");
    // 128 flows of 8 MiB: about 3.9 M events, above it; as many threads as CPUs (a leaf each
    // at most), the same results as one thread
    let text = super::fabric128("[workload]\nkind = \"permutation\"\nsize = \"8MiB\"\n[stop]\nmax_events = 1500000\n");
    let large = super::scenario(&text).expect("valid");
    const { assert!(MIN_EVENTS < 3_000_000) };
    let mut sim = Simulation::auto(&large).expect("builds");
    assert_eq!(sim.threads(), available_cpus().min(16), "one thread per CPU available");
    assert_eq!(sim.thread_note(), None, "the engine's own choice needs no note");
    while sim.step(10_007) == fabricsim_core::Status::Running {}
    if available_cpus() > 1 {
        assert!(sim.parallel_windows().0 > 0, "windows ran on every thread");
    }
    let one = render(&Simulation::with_threads(&large, 1).expect("builds").run());
    assert!(render(&sim.into_results()) == one, "auto differs from one thread");
}

#[test]
fn an_auto_run_with_sparse_windows_runs_them_on_one_thread_with_the_same_results() {
    // a ring allreduce of 4 KiB among 64 ranks, 30 times: enough packets for threads (an
    // estimate above MIN_EVENTS), in windows of a few hundred events
    let text = super::fabric128("[[jobs]]\ncollective = \"allreduce\"\nsize = \"4KiB\"\nranks = 64\niterations = 30\n");
    let scenario = super::scenario(&text).expect("valid");
    let one = render(&Simulation::with_threads(&scenario, 1).expect("builds").run());
    let mut auto = Simulation::auto(&scenario).expect("builds");
    while auto.step(u64::MAX) == fabricsim_core::Status::Running {}
    if fabricsim_core::sim::threads::available_cpus() > 1 {
        assert!(auto.threads() > 1, "an estimate above MIN_EVENTS");
        assert!(auto.solo_windows() > 0, "sparse windows ran on one thread");
    }
    assert!(render(&auto.into_results()) == one, "auto differs from one thread");
}
