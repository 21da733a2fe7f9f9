//! Runs a scenario given as JSON (what `fabricsim.Scenario.to_json()` writes) without Python,
//! for peak-memory and wall-time comparisons between builds (docs/performance.md).
//! `cargo run --release --example run_scenario FILE.json [threads | whole | pieces=N]`: `whole`
//! runs it in one piece on one thread (a large fabric is otherwise cut into pieces for the
//! cache), `pieces=N` in N pieces on one thread, `pieces=N,T` on T threads.
use fabricsim_core::{Scenario, Simulation};

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_scenario FILE.json [threads | whole | pieces=N]");
    let how = std::env::args().nth(2).unwrap_or_else(|| "1".into());
    let text = std::fs::read_to_string(&path).expect("a readable file");
    let scenario = Scenario::from_json(&text).expect("a valid scenario");
    let t = std::time::Instant::now();
    let mut sim = match how.as_str() {
        "whole" => Simulation::cut_by(&scenario, |topo| vec![0; topo.nodes.len()]),
        // a cut by hand, its pieces in windows on one thread (to measure what the cut for the
        // cache would give a run it does not cut)
        n if n.starts_with("pieces=") => {
            let (pieces, threads) = n["pieces=".len()..].split_once(',').unwrap_or((&n["pieces=".len()..], "1"));
            let threads = threads.parse().expect("pieces=N,T");
            Simulation::in_pieces(&scenario, pieces.parse().expect("pieces=N")).map(|sim| sim.on_threads(threads))
        }
        n => Simulation::with_threads(&scenario, n.parse().expect("threads: a count or whole")),
    }
    .expect("builds");
    let (threads, pieces) = (sim.threads(), sim.pieces());
    sim.step(u64::MAX);
    let r = sim.into_results();
    let s = &r.summary;
    println!(
        "{path} ({how}): {threads} threads, {pieces} pieces, status {}, {} events, max JCT {} ns, wall {:.2} s",
        s.status,
        s.events,
        s.max_jct_ns.map_or("-".into(), |t| format!("{t:.0}")),
        t.elapsed().as_secs_f64()
    );
}
