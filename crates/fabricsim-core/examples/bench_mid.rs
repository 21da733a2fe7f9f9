//! A mid-size run for cache simulation (valgrind --tool=callgrind --cache-sim=yes): the
//! 1024-host leaf-spine of the standard benchmark with 512 KiB messages.
use fabricsim_core::{Scenario, Simulation};
fn main() {
    let s = Scenario::from_json(
        r#"{"topology": {"hosts": 1024, "radix": 64, "link_latency": "1us", "switch_latency": "0ns"},
        "workload": {"kind": "permutation", "size": "512KiB"}}"#,
    )
    .expect("valid");
    let r = Simulation::new(&s).expect("builds").run();
    println!("events {} max slowdown {:.3}", r.summary.events, r.summary.max_slowdown);
}
