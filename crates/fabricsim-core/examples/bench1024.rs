//! The core issue's standard benchmark without Python: 1024-host 2-tier (32 x 32, 32 spines)
//! 400 Gb/s permutation of 8 MiB with `ops`, on one thread unless more are named.
//! `cargo run --release --example bench1024 [lb] [threads]`
use fabricsim_core::{Scenario, Simulation};

fn main() {
    let lb = std::env::args().nth(1).unwrap_or_else(|| "ops".into());
    let threads: usize = std::env::args().nth(2).map_or(1, |t| t.parse().expect("threads: a count"));
    let json = format!(
        r#"{{"seed": 1,
        "topology": {{"hosts": 1024, "radix": 64, "link_latency": "1us", "switch_latency": "0ns"}},
        "lb": {{"kind": "{lb}"}},
        "workload": {{"kind": "permutation", "size": "8MiB"}}}}"#
    );
    let scenario = Scenario::from_json(&json).expect("valid");
    let t = std::time::Instant::now();
    let mut sim = Simulation::with_threads(&scenario, threads).expect("builds");
    sim.step(u64::MAX);
    let (windows, in_windows) = sim.parallel_windows();
    let threads = sim.threads();
    let r = sim.into_results();
    let wall = t.elapsed().as_secs_f64();
    let s = &r.summary;
    println!(
        "{lb} on {threads} threads: status {} events {} data packets {} wall {wall:.2}s -> {:.2} M events/s, {:.2} M data pkts/s; max slowdown {:.3} mean {:.3}; {windows} parallel windows held {in_windows} events",
        s.status,
        s.events,
        s.data_packets,
        s.events as f64 / wall / 1e6,
        s.data_packets as f64 / wall / 1e6,
        s.max_slowdown.unwrap_or(f64::NAN),
        s.mean_slowdown.unwrap_or(f64::NAN)
    );
}
