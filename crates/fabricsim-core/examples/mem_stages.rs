//! Memory by stage of the 1024-rank ring allreduce (`fabricsim bench`'s
//! `allreduce-1024-64MiB-ring-ops` without Python): the peak (VmHWM) and current (VmRSS)
//! resident memory after building, running and collecting the results.
//! `cargo run --release --example mem_stages [size] [columns]` (default 64MiB; the message
//! count, and so most of the memory, does not depend on it: 1MiB runs in seconds; `columns`:
//! the flows table's columns to keep, comma-separated, as `fabricsim run` without `--out`
//! keeps `bytes,job,traffic,path_links,slowdown,completed`; all by default). Linux only.
use fabricsim_core::engine::Status;
use fabricsim_core::stats::Keep;
use fabricsim_core::{Scenario, Simulation};

fn rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mb = |key: &str| {
        status.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()).unwrap_or(0) / 1024
    };
    format!("peak {} MB, now {} MB", mb("VmHWM"), mb("VmRSS"))
}

fn main() {
    let size = std::env::args().nth(1).unwrap_or_else(|| "64MiB".into());
    let json = format!(
        r#"{{"seed": 1, "topology": {{"tiers": 2, "hosts": 1024, "radix": 64, "link_rate": "400Gbps", "link_latency": "1us", "switch_latency": "0ns"}},
        "lb": {{"kind": "ops"}}, "jobs": [{{"collective": "allreduce", "costs": "none", "protocol": "simple", "size": "{size}", "ranks": 1024}}]}}"#
    );
    let scenario = Scenario::from_json(&json).expect("valid");
    let mut sim = Simulation::new(&scenario).expect("builds");
    println!("built:     {} (estimate {} MB)", rss(), sim.model().need.total() >> 20);
    let t = std::time::Instant::now();
    while sim.step(1_000_000_000) == Status::Running {}
    println!(
        "ran:       {} ({:.1} s, {} events, {} connections live at most)",
        rss(),
        t.elapsed().as_secs_f64(),
        sim.events(),
        sim.peak_live_connections()
    );
    let keep = match std::env::args().nth(2) {
        Some(cols) => Keep::only(&cols.split(',').collect::<Vec<_>>()).expect("the flows table's columns"),
        None => Keep::all(),
    };
    let r = sim.into_results_keeping(&keep);
    println!(
        "collected: {} ({} flows, status {}; the run's state freed as its tables were built)",
        rss(),
        r.summary.flows,
        r.summary.status
    );
}
