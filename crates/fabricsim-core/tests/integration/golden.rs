//! Golden results: the full tables of fixed scenarios, stored as readable text and compared
//! line by line with every build.
//!
//! `tests/golden/*.toml` cover every load balancer, switch rule, transport, congestion
//! control, fault kind (`switch_down` included), classes, `[mixed]`, samples, jobs on rails,
//! a trace on a shared buffer, a rate cap with an adaptive RTO, a run that ends incomplete,
//! and late packets (spurious retransmissions reaching receivers that already have
//! everything, under every transport and ACK kind, DCQCN and path-ID detection: 22-26), and
//! GPU servers with a scale-up network and a hierarchical collective (27). Each `NAME.toml`
//! has its expected results in `NAME.out`: the summary (without
//! the wall time), the packet accounting, and the flows, ports, reorder and samples tables as
//! CSV, with the jobs, steps and buckets tables where the run has jobs or a trace. A change
//! that moves a number on purpose re-blesses them in its own commit, saying why:
//!
//! ```text
//! FABRICSIM_BLESS=1 cargo test -p fabricsim-core --test integration golden
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use fabricsim_core::stats::{Column, RunResult, Table};
use fabricsim_core::Simulation;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden")
}

fn cell(col: &Column, row: usize) -> String {
    match col {
        Column::U64(v) => v[row].to_string(),
        // `{:?}` prints the shortest text that reads back as the same f64: exact comparison
        Column::F64(v) => format!("{:?}", v[row]),
        Column::Bool(v) => v[row].to_string(),
        Column::Str(v) => v[row].clone(),
        Column::Labels(v) => v.get(row).to_string(),
        // a value that does not exist is an empty cell, as in CSV
        Column::OptU64(v) => v.get(row).map(|x| x.to_string()).unwrap_or_default(),
        Column::OptF64(v) => v.get(row).map(|x| format!("{x:?}")).unwrap_or_default(),
    }
}

fn csv(out: &mut String, name: &str, table: &Table) {
    let _ = writeln!(out, "## {name}");
    let header: Vec<&str> = table.columns.iter().map(|(n, _)| *n).collect();
    let _ = writeln!(out, "{}", header.join(","));
    let n = table.columns.first().map_or(0, |(_, c)| c.len());
    for row in 0..n {
        let cells: Vec<String> = table.columns.iter().map(|(_, c)| cell(c, row)).collect();
        let _ = writeln!(out, "{}", cells.join(","));
    }
}

/// Everything a run returns except what depends on the machine (wall time).
pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    let mut summary = serde_json::to_value(&r.summary).expect("summary serializes");
    if let Some(map) = summary.as_object_mut() {
        map.remove("wall_s");
    }
    // keys sorted, as the golden files were written (a JSON map kept its keys sorted before
    // schemars' `preserve_order` made it keep them as inserted)
    let summary: std::collections::BTreeMap<String, serde_json::Value> = serde_json::from_value(summary).expect("a map");
    let _ = writeln!(out, "## summary\n{}", serde_json::to_string_pretty(&summary).expect("json"));
    let _ = writeln!(out, "## accounting\n{}", serde_json::to_string_pretty(&r.accounting).expect("json"));
    csv(&mut out, "flows", &r.flows);
    csv(&mut out, "ports", &r.ports);
    csv(&mut out, "reorder", &r.reorder);
    csv(&mut out, "samples", &r.samples);
    // sections only where the run has them: scenarios without jobs or a trace read as before
    for (name, table) in [("jobs", &r.jobs), ("steps", &r.steps)] {
        if table.columns.first().is_some_and(|(_, c)| !c.is_empty()) {
            csv(&mut out, name, table);
        }
    }
    if r.summary.offered_load.is_some() || r.jobs.columns.first().is_some_and(|(_, c)| !c.is_empty()) {
        csv(&mut out, "buckets", &r.buckets);
    }
    out
}

/// Where two renderings first differ: the line (from 1) and each one's text there (`<end>`
/// past its last line).
pub fn first_difference(expected: &str, actual: &str) -> (usize, String, String) {
    let first =
        expected.lines().zip(actual.lines()).position(|(a, b)| a != b).unwrap_or(expected.lines().count().min(actual.lines().count()));
    let show = |s: &str| s.lines().nth(first).unwrap_or("<end>").to_string();
    (first + 1, show(expected), show(actual))
}

/// The golden scenarios, by name.
fn golden_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("tests/golden exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn golden_results_are_unchanged() {
    let bless = std::env::var("FABRICSIM_BLESS").is_ok_and(|v| v == "1");
    let paths = golden_paths();
    assert!(paths.len() >= 12, "the golden set lost scenarios: {paths:?}");
    let mut failures = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("readable");
        let mut sim = Simulation::new(&super::scenario(&text).expect("valid scenario")).expect("builds");
        sim.step(u64::MAX);
        // reading the results mid-life and consuming the run give the same tables
        let actual = render(&sim.results());
        assert_eq!(actual, render(&sim.into_results()), "{}: into_results differs from results", path.display());
        let expected_path = path.with_extension("out");
        if bless {
            std::fs::write(&expected_path, &actual).expect("writable");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            let (line, want, got) = first_difference(&expected, &actual);
            failures.push(format!(
                "{}: first difference at line {line}:\n  expected: {want}\n  actual:   {got}",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    assert!(failures.is_empty(), "golden results changed (re-bless only on purpose, see golden.rs):\n{}", failures.join("\n"));
}

#[test]
fn a_run_stopped_half_way_reads_the_same_tables_mid_life_and_consumed() {
    // a run of one piece reads its connections from the last while the table gives their
    // rows back (`Ends::giving_back`); stopped half way, live halves hold part of the counts
    let paths = golden_paths();
    let mut stopped = 0;
    for path in &paths {
        let scenario = super::scenario(&std::fs::read_to_string(path).expect("readable")).expect("valid scenario");
        let mut whole = Simulation::new(&scenario).expect("builds");
        whole.step(u64::MAX);
        let mut sim = Simulation::new(&scenario).expect("builds");
        sim.step(whole.events() / 2);
        let mid = render(&sim.results());
        stopped += usize::from(mid.contains("null"));
        assert_eq!(mid, render(&sim.into_results()), "{}: stopped half way, into_results differs from results", path.display());
    }
    assert!(stopped > paths.len() / 2, "most runs stopped half way have messages without an end");
}
