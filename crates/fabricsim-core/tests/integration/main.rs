//! Whole-system behaviour of the core, one file per property.

mod buffer;
mod cc;
mod connections;
mod conservation;
mod determinism;
mod dragonfly;
mod ecmp;
mod errors;
mod exactness;
mod faults;
mod generate;
mod golden;
mod graph;
mod guard;
mod jobs;
mod lb;
mod multi_plane;
mod nccl;
mod nic;
mod nvls;
mod params;
mod parser_fuzz;
mod pfc;
mod pieces;
mod posting;
mod rail_only;
mod ranks;
mod samples;
mod scale_up;
mod session;
mod several_nics;
mod survey;
mod training;

use fabricsim_core::stats::RunResult;
use fabricsim_core::{Scenario, ScenarioError, Simulation};

/// Parses a TOML scenario the way a user writes it.
pub fn scenario(toml_text: &str) -> Result<Scenario, ScenarioError> {
    let table: toml::Table = toml::from_str(toml_text).expect("test TOML is well formed");
    Scenario::from_deserializer(table)
}

pub fn run(toml_text: &str) -> RunResult {
    Simulation::new(&scenario(toml_text).expect("valid scenario")).expect("builds").run()
}

/// The 128-host 2-tier 400 Gb/s fabric of the papers (16 leaves x 8 hosts, 8 spines),
/// 1 us links and no switch latency, with extra TOML appended.
pub fn fabric128(extra: &str) -> String {
    format!("seed = 1\n[topology]\nhosts = 128\nradix = 16\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n{extra}")
}

/// A `[workload]` of explicit flows: (src, dst, size, start) each.
pub fn flows(list: &[(u32, u32, &str, &str)]) -> String {
    let rows: Vec<String> =
        list.iter().map(|(s, d, size, start)| format!("{{ src = {s}, dst = {d}, size = \"{size}\", start = \"{start}\" }}")).collect();
    format!("[workload]\nkind = \"flows\"\nflows = [{}]\n", rows.join(", "))
}
