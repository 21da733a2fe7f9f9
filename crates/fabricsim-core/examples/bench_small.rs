//! A small run for callgrind: 128-host permutation of 2 MiB with `ops`.
use fabricsim_core::{Scenario, Simulation};
fn main() {
    let s = Scenario::from_json(
        r#"{"topology": {"hosts": 128, "radix": 16, "link_latency": "1us", "switch_latency": "0ns"},
        "workload": {"kind": "permutation", "size": "2MiB"}}"#,
    )
    .expect("valid");
    let r = Simulation::new(&s).expect("builds").run();
    println!("events {} max slowdown {:.3}", r.summary.events, r.summary.max_slowdown);
}
