//! A survey (`Scenario::survey`: the jobs' messages counted as they are made, never held)
//! says what a run's resolve says: the same warnings, expected events and memory estimate, and
//! the same error where the scenario is refused.

use std::path::Path;

use fabricsim_core::sim::threads::expected_events;
use fabricsim_core::Scenario;

use super::{fabric128, scenario};

/// The survey of `s` against its resolve; whether the survey answered (it may leave a fabric
/// that rewrites messages to the resolve).
fn agrees(name: &str, s: &Scenario) -> bool {
    let listed = s.resolve().map(|m| (m.warnings.clone(), expected_events(&m), m.need));
    match (s.survey(), listed) {
        (Ok(Some(sv)), Ok((warnings, events, need))) => {
            assert_eq!((sv.warnings, sv.events, sv.need), (warnings, events, need), "{name}");
            true
        }
        (Ok(None), Ok(_)) => false,
        (Err(a), Err(b)) => {
            assert_eq!((a.field, a.message), (b.field, b.message), "{name}");
            true
        }
        (a, b) => panic!("{name}: the survey gives {:?}, the resolve {:?}", a.map(|s| s.map(|s| s.events)), b.map(|b| b.1)),
    }
}

#[test]
fn a_survey_says_what_a_resolve_says() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden");
    let mut answered = 0;
    let mut paths: Vec<_> = std::fs::read_dir(&golden).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    for p in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
        let s = scenario(&std::fs::read_to_string(p).unwrap()).unwrap();
        answered += usize::from(agrees(&p.display().to_string(), &s));
    }
    let jobs = [
        // a training job (tensor-parallel rings on the scale-up network, pipeline, data parallel)
        "[topology]\nhosts = 64\nradix = 16\nnics_per_server = 8\nrails = true\nscale_up_rate = \"7200Gbps\"\n[[jobs]]\nranks = 64\nmodel = { preset = \"llama3-8b\", layers = 4 }\nparallel = { tp = 8, pp = 2, dp = 4, micro_batches = 4, gpu_tflops = 400 }\niterations = 2".to_string(),
        // collectives: channels and slices, a tree, an alltoall, two jobs
        fabric128("[[jobs]]\ncollective = \"allreduce\"\nsize = \"8MiB\"\nranks = 64\nchannels = 4\nslice = \"256KiB\"\niterations = 2\n[[jobs]]\ncollective = \"alltoall\"\nsize = \"1MiB\"\nranks = 32\n"),
        fabric128("[[jobs]]\ncollective = \"allreduce\"\nalgorithm = \"tree\"\nsize = \"4MiB\"\nranks = 128\nclass = 1\n[switch]\nclasses = 2\n"),
        // background traffic beside a job, in a mixed class
        fabric128("[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n[[jobs]]\ncollective = \"allgather\"\nsize = \"1MiB\"\nranks = 16\n[mixed]\nshare = 0.5\n[switch]\nclasses = 2\n"),
        // rings of several queue pairs a connection, in LL, and the fabric alone
        fabric128("[transport]\nconnections = \"per_pair\"\n[[jobs]]\ncollective = \"reduce_scatter\"\nsize = \"3MiB\"\nranks = 24\nqps = 4\nprotocol = \"ll\"\nchannels = 2\n[[jobs]]\ncollective = \"allgather\"\nsize = \"5000KiB\"\nranks = 40\ncosts = \"none\"\nslice = \"8KiB\"\n"),
        // rings counted in closed form: chunks of two sizes, members on one server's scale-up
        // network and across the fabric, two iterations, several channels
        "[topology]\nhosts = 64\nradix = 16\nnics_per_server = 8\nscale_up_rate = \"7200Gbps\"\n[[jobs]]\ncollective = \"allreduce\"\nsize = \"1000003B\"\nranks = 48\niterations = 2\nchannels = 2\n[[jobs]]\ncollective = \"reduce_scatter\"\nsize = \"777777B\"\nranks = 16\nprotocol = \"ll128\"\n".to_string(),
        // flows waiting for flows
        fabric128("[workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 9, size = \"1MiB\" }, { src = 9, dst = 20, size = \"2MiB\", after = [0] }]\n"),
        // refused: a class the switches lack, a message of too many packets, too much memory
        fabric128("[[jobs]]\ncollective = \"allreduce\"\nsize = \"1MiB\"\nranks = 8\nclass = 3\n"),
        fabric128("[transport]\nmtu = \"128B\"\nheader = \"120B\"\n[[jobs]]\ncollective = \"broadcast\"\nsize = \"1024GiB\"\nranks = 8\n"),
        fabric128("[stop]\nmax_memory = \"50MiB\"\n[[jobs]]\ncollective = \"allreduce\"\nsize = \"1MiB\"\nranks = 128\niterations = 40\n"),
    ];
    let refused = [None, None, None, None, None, None, None, Some("jobs[0].class"), Some("jobs[0].size"), Some("stop.max_memory")];
    for (i, text) in jobs.iter().enumerate() {
        let s = scenario(text).unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert!(agrees(&format!("case {i}"), &s), "case {i}: the survey answers");
        assert_eq!(s.survey().err().map(|e| e.field), refused[i].map(String::from), "case {i}");
    }
    assert!(answered >= 20, "the survey answers most golden scenarios ({answered})");
}

#[test]
fn a_stop_before_a_jobs_least_time_is_warned_of_and_the_least_time_bounds_the_run() {
    use fabricsim_core::units::Duration;
    use fabricsim_core::Simulation;
    let least = |s: &Scenario| fabricsim_core::warnings(s).unwrap().into_iter().filter(|w| w.contains("least time")).collect::<Vec<_>>();
    let cases = [
        "[topology]\nhosts = 64\nradix = 16\nnics_per_server = 8\nrails = true\nscale_up_rate = \"7200Gbps\"\n[[jobs]]\nname = \"step\"\nranks = 64\nmodel = { preset = \"llama3-8b\", layers = 2 }\nparallel = { tp = 8, pp = 2, dp = 4, micro_batches = 2, gpu_tflops = 400 }".to_string(),
        fabric128("[[jobs]]\nname = \"ring\"\ncollective = \"allreduce\"\nsize = \"4MiB\"\nranks = 32\nchannels = 2\nslice = \"256KiB\"\niterations = 2\ncompute = \"5us\"\n[[jobs]]\ncollective = \"alltoall\"\nsize = \"1MiB\"\nranks = 16\n"),
        fabric128("[lb]\nkind = \"ecmp\"\n[[jobs]]\ncollective = \"allreduce\"\nalgorithm = \"tree\"\nsize = \"2MiB\"\nranks = 64\n"),
    ];
    for (i, text) in cases.iter().enumerate() {
        let mut s = scenario(text).unwrap();
        assert!(least(&s).is_empty(), "case {i}: the default stop.max_time leaves time");
        let r = Simulation::new(&s).unwrap().run();
        assert_eq!(r.summary.status, "complete", "case {i}");
        // the least time is a bound: a stop at the run's own end is not warned of ...
        let end = r.jobs.opt_u64("end_ps").iter().map(|e| e.unwrap()).max().unwrap();
        s.stop.max_time = Duration(end);
        assert!(least(&s).is_empty(), "case {i}: {:?}", least(&s));
        assert!(agrees(&format!("case {i} at its end"), &s));
        // ... and one well before it is, naming the job, in the survey and the resolve alike
        s.stop.max_time = Duration(end / 4);
        let said = least(&s);
        assert!(!said.is_empty() && said[0].contains("jobs[0]"), "case {i}: {said:?}");
        assert!(agrees(&format!("case {i} stopped early"), &s));
        let listed = s.resolve().unwrap().warnings;
        assert!(said.iter().all(|w| listed.contains(w)), "case {i}");
        // a run stopped there does not complete the job
        let r = Simulation::new(&s).unwrap().run();
        assert_ne!(r.summary.status, "complete", "case {i}");
    }
    // the [workload]'s least time: its last message's ideal finish
    let mut s = scenario(&fabric128("[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n")).unwrap();
    let r = Simulation::new(&s).unwrap().run();
    let end = r.flows.opt_u64("end_ps").iter().map(|e| e.unwrap()).max().unwrap();
    s.stop.max_time = Duration(end);
    assert!(least(&s).is_empty(), "{:?}", least(&s));
    s.stop.max_time = Duration(end / 2);
    assert!(least(&s).iter().any(|w| w.contains("the [workload]")), "{:?}", least(&s));
    assert!(agrees("the workload stopped early", &s));
}
