//! Jobs made as the run goes give the tables of the same jobs made before it, to the
//! picosecond, with readers looked for only a few messages ahead (so that these small runs do
//! take their messages as they go), on collectives, training with NVLS legs that cut through,
//! jobs that start later, and runs stopped by each guard.

use crate::scenario::making::REACH;
use crate::stats::RunResult;
use crate::{Scenario, Simulation};

fn scenario(text: &str) -> Scenario {
    let value: toml::Table = toml::from_str(text).expect("test TOML parses");
    Scenario::from_deserializer(value).expect("valid")
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/golden/{name}.toml", env!("CARGO_MANIFEST_DIR"))).expect("a golden scenario")
}

/// The run of `s` in one piece with readers looked for `reach` messages ahead (`Some(0)`: the
/// jobs made before the run), how many messages had joined when it was built, and the most
/// added lists of dependents it held.
fn run(s: &Scenario, reach: Option<u32>) -> (RunResult, usize, usize) {
    REACH.set(reach);
    let mut sim = Simulation::new(s).expect("builds");
    REACH.set(None);
    let joined = sim.pieces[0].nics.messages().len();
    let mut lists = 0;
    while sim.step(200) == crate::engine::Status::Running {
        lists = lists.max(sim.pieces[0].nics.more_len());
    }
    let mut r = sim.into_results();
    r.summary.wall_s = 0.0;
    (r, joined, lists)
}

fn same(a: &RunResult, b: &RunResult, case: &str) {
    assert_eq!(a.flows, b.flows, "{case}: flows");
    assert_eq!(a.jobs, b.jobs, "{case}: jobs");
    assert_eq!(a.steps, b.steps, "{case}: steps");
    assert_eq!(a.ports, b.ports, "{case}: ports");
    assert_eq!(a.reorder, b.reorder, "{case}: reorder");
    assert_eq!(a.buckets, b.buckets, "{case}: buckets");
    assert_eq!(a.summary, b.summary, "{case}: summary");
}

const TRAINING: &str = "seed = 3\n[topology]\nhosts = 32\nradix = 8\nnics_per_server = 4\nrails = true\nlink_latency = \"1us\"\n\
    switch_latency = \"100ns\"\nscale_up_rate = \"7200Gbps\"\n[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 32\n\
    model = { layers = 2, hidden = 512, seq = 256, vocab = 4000, experts = 4, top_k = 2 }\n\
    parallel = { tp = 4, pp = 2, dp = 4, ep = 2, micro_batches = 2, gpu_tflops = 50 }\n";

/// A dense training job of 8 data-parallel replicas: their passes are written in lockstep, so
/// that only each replica's first pass joins at 0.
const REPLICAS: &str = "seed = 4\n[topology]\nhosts = 32\nradix = 8\nnics_per_server = 4\nrails = true\n\
    scale_up_rate = \"3600Gbps\"\n[lb]\nkind = \"ops\"\n[[jobs]]\nranks = 32\n\
    model = { layers = 4, hidden = 1024, heads = 8, seq = 512, vocab = 2000 }\n\
    parallel = { tp = 2, pp = 2, dp = 8, micro_batches = 4, gpu_tflops = 100 }\n";

const LATER: &str = "seed = 9\n[topology]\nhosts = 16\nradix = 8\n[[jobs]]\ncollective = \"allreduce\"\nsize = \"256KiB\"\n\
    ranks = 8\niterations = 3\ncompute = \"2us\"\n[[jobs]]\ncollective = \"allgather\"\nsize = \"512KiB\"\nranks = 8\n\
    start = \"40us\"\niterations = 2\n";

/// Golden 34's fabric with a training job of one replica whose tensor-parallel allreduces run
/// NVLS (legs that cut through), and a leg-by-leg NVLS allreduce of four iterations.
const NVLS: &str = "seed = 5\n[topology]\nhosts = 32\nradix = 8\nnics_per_server = 4\nrails = true\nlink_latency = \"1us\"\n\
    switch_latency = \"100ns\"\nscale_up_rate = \"3600Gbps\"\nscale_up_latency = \"300ns\"\n[lb]\nkind = \"prime\"\n\
    [[jobs]]\nname = \"dense\"\nranks = 8\nmodel = { layers = 2, hidden = 2048, heads = 16, seq = 2048, vocab = 1000 }\n\
    parallel = { tp = 4, pp = 2, dp = 1, micro_batches = 2, gpu_tflops = 400 }\n[[jobs]]\nname = \"sharp\"\n\
    collective = \"allreduce\"\nalgorithm = \"nvls\"\nsize = \"4MiB\"\nslice = \"256KiB\"\nhosts = \"16-19\"\n\
    iterations = 4\ncompute = \"2us\"\n";

#[test]
fn jobs_made_as_the_run_goes_give_the_tables_of_jobs_made_before_it() {
    let cases = [
        ("19", golden("19_jobs_rails_steps")),
        ("27", golden("27_scale_up_hierarchical")),
        ("32", golden("32_graph_uneven_prime_trim")),
        ("34", golden("34_training_nvls_rails")),
        ("training", TRAINING.to_string()),
        ("replicas", REPLICAS.to_string()),
        ("later", LATER.to_string()),
        ("nvls", NVLS.to_string()),
        // beside a [workload] whose messages wait for none, made before the run as always
        ("background", format!("{LATER}[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n")),
    ];
    // (most of the others' messages join at 0: made whole, `Making::front_heavy`)
    let lazy = ["27", "training", "replicas", "later", "nvls", "background"];
    for (case, text) in &cases {
        let s = scenario(text);
        let (before, all, _) = run(&s, Some(0));
        assert_eq!(before.summary.status, "complete", "{case}");
        // in pieces: made whole from the planner's thread (after the [workload]'s)
        REACH.set(Some(1));
        let sim = Simulation::in_pieces(&s, 3);
        REACH.set(None);
        let mut pieces = sim.expect("builds").run();
        pieces.summary.wall_s = 0.0;
        same(&pieces, &before, &format!("{case} in pieces"));
        for reach in [1, 7, 64] {
            let (going, joined, lists) = run(&s, Some(reach));
            same(&going, &before, &format!("{case}, reach {reach}"));
            if lazy.contains(case) {
                assert!(reach > 1 || joined < all, "{case}, reach {reach}: {joined} of {all} messages joined at the build");
                assert!(lists > 0, "{case}: the added lists held");
            }
            if *case == "replicas" && reach == 1 {
                // the replicas' first passes (of their first stage) and what comes before
                assert!(joined * 8 < all, "{case}: {joined} of {all} messages joined at the build");
            }
        }
    }
}

/// A run stopped by its event guard, or its time guard, has the rows of the messages it never
/// made, as the run whose jobs were made before it.
#[test]
fn a_stopped_run_takes_the_rest_of_its_jobs_for_its_tables() {
    for (guard, stop) in [("events", "[stop]\nmax_events = 3000\n"), ("time", "[stop]\nmax_time = \"30us\"\n")] {
        let s = scenario(&format!("{LATER}{stop}"));
        let (before, all, _) = run(&s, Some(0));
        assert_ne!(before.summary.status, "complete", "{guard}");
        let (going, joined, _) = run(&s, Some(7));
        same(&going, &before, guard); // (the rows of the messages it never made, too)
        assert!(joined < all);
    }
}
