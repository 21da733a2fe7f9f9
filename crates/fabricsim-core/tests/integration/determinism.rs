//! Same scenario and seed: identical results. Another seed: different results.

use super::{fabric128, run};

fn permutation(seed: u64) -> fabricsim_core::stats::RunResult {
    run(&fabric128("[lb]\nkind = \"ops\"\n[workload]\nkind = \"permutation\"\nsize = \"512KiB\"\n")
        .replace("seed = 1", &format!("seed = {seed}")))
}

#[test]
fn same_seed_same_results_other_seed_differs() {
    let a = permutation(7);
    let b = permutation(7);
    let c = permutation(8);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.ports, b.ports);
    assert_eq!(a.summary.events, b.summary.events);
    assert_ne!(a.flows.opt_u64("fct_ps"), c.flows.opt_u64("fct_ps"));
    assert_ne!(a.flows.u64("dst"), c.flows.u64("dst"), "the permutation itself is seeded");
}

/// A caller that keeps some of the flows table's columns (`Keep::only`) gets them, in their
/// declared order, as the whole table has them, and the same summary and other tables; a
/// name the table does not declare is refused, naming it and the columns there are.
#[test]
fn a_run_keeping_some_flow_columns_gives_them_as_the_whole_table_does() {
    use fabricsim_core::stats::Keep;
    use fabricsim_core::Simulation;
    let jobs = "[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"permutation\"\nsize = \"2MiB\"\n\
                [[jobs]]\ncollective = \"allreduce\"\nsize = \"1MiB\"\nranks = 16\n\
                [[jobs]]\ncollective = \"alltoall\"\nsize = \"256KiB\"\nranks = 8\n";
    let s = super::scenario(&super::fabric128(jobs)).expect("valid");
    let whole = Simulation::new(&s).expect("builds").run();
    let mut sim = Simulation::new(&s).expect("builds");
    sim.step(u64::MAX);
    let part = sim.into_results_keeping(&Keep::only(&["trims", "traffic", "slowdown", "bytes"]).expect("declared columns"));
    let names: Vec<&str> = part.flows.columns.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["bytes", "traffic", "slowdown", "trims"]);
    for (name, col) in &part.flows.columns {
        assert_eq!(Some(col), whole.flows.get(name), "{name}");
    }
    assert!(whole.summary.trims > 0 && whole.flows.strs("traffic").contains(&"background"));
    let mut summary = (serde_json::to_value(&whole.summary).unwrap(), serde_json::to_value(&part.summary).unwrap());
    summary.0["wall_s"] = 0.into();
    summary.1["wall_s"] = 0.into();
    assert_eq!(summary.0, summary.1);
    assert_eq!((&whole.ports, &whole.jobs, &whole.steps, &whole.buckets), (&part.ports, &part.jobs, &part.steps, &part.buckets));
    let e = Keep::only(&["traffik"]).unwrap_err();
    assert_eq!(e.field, "columns");
    assert!(e.message.contains("\"traffik\"") && e.message.contains("traffic, path_links"), "{}", e.message);
}
