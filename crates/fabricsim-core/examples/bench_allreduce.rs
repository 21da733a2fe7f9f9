//! The jobs path's benchmark without Python: a ring allreduce on every host of a 2-tier fabric
//! (radix 64, 400 Gb/s, 1 us links), `ops`, one thread; `fabricsim bench --only allreduce-1024`
//! is `1024 64MiB`. For instruction counts under `valgrind --tool=cachegrind`, a smaller one.
//! `cargo run --release --example bench_allreduce [hosts] [size]`
use fabricsim_core::{Scenario, Simulation};
fn main() {
    let hosts: u32 = std::env::args().nth(1).map_or(1024, |h| h.parse().unwrap());
    let size = std::env::args().nth(2).unwrap_or_else(|| "64MiB".into());
    let json = format!(
        r#"{{"seed": 1, "topology": {{"hosts": {hosts}, "radix": 64, "link_latency": "1us", "switch_latency": "0ns"}}, "lb": {{"kind": "ops"}}, "jobs": [{{"collective": "allreduce", "costs": "none", "protocol": "simple", "size": "{size}", "ranks": {hosts}}}]}}"#
    );
    let scenario = Scenario::from_json(&json).expect("valid");
    let t = std::time::Instant::now();
    let mut sim = Simulation::with_threads(&scenario, 1).expect("builds");
    sim.step(u64::MAX);
    let r = sim.into_results();
    let wall = t.elapsed().as_secs_f64();
    println!("events {} wall {wall:.2}s -> {:.2} M events/s", r.summary.events, r.summary.events as f64 / wall / 1e6);
}
