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
