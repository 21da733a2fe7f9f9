//! A mid-size run for deterministic instruction counts (callgrind): the 128-host 2-tier
//! 400 Gb/s permutation (16 leaves x 8 hosts, 8 spines) of 2 MiB messages, `ops`, unless an
//! algorithm and a size are named.
//!
//! ```text
//! cargo build --profile profiling --example bench_mid
//! valgrind --tool=callgrind target/profiling/examples/bench_mid [lb] [size]
//! ```
use fabricsim_core::{Scenario, Simulation};

fn main() {
    let lb = std::env::args().nth(1).unwrap_or_else(|| "ops".into());
    let size = std::env::args().nth(2).unwrap_or_else(|| "2MiB".into());
    let json = format!(
        r#"{{"seed": 1,
        "topology": {{"hosts": 128, "radix": 16, "link_latency": "1us", "switch_latency": "0ns"}},
        "lb": {{"kind": "{lb}"}},
        "workload": {{"kind": "permutation", "size": "{size}"}}}}"#
    );
    let scenario = Scenario::from_json(&json).expect("valid");
    let r = Simulation::new(&scenario).expect("builds").run();
    let s = &r.summary;
    println!(
        "{lb}: status {} events {} data packets {} max slowdown {:.3}",
        s.status,
        s.events,
        s.data_packets,
        s.max_slowdown.unwrap_or(f64::NAN)
    );
}
