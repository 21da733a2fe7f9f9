//! Bad input is rejected before the run, naming the field, the value and what is allowed.

use super::scenario;
use fabricsim_core::Simulation;

fn error_of(toml_text: &str) -> fabricsim_core::ScenarioError {
    match scenario(toml_text) {
        Err(e) => e,
        Ok(s) => Simulation::new(&s).err().expect("scenario should be rejected"),
    }
}

#[test]
fn each_bad_input_names_field_value_and_allowed() {
    let cases = [
        ("[lb]\nkind = \"magic\"\n", "lb.kind", "magic", "ecmp"),
        ("[workload]\nkind = \"permutation\"\nsize = \"-1MiB\"\n", "workload.size", "-1MiB", "MiB"),
        ("[workload]\nkind = \"permutation\"\nsize = 4096\n", "workload.size", "4096", "unit"),
        ("[workload]\nkind = \"permutation\"\nsize = \"0B\"\n", "workload.size", "0B", "positive"),
        ("[topology]\nhosts = 100\n", "topology.hosts", "100", "multiple of 8"),
        ("[switch.ecn]\nkmin = \"0.9bdp\"\nkmax = \"0.1bdp\"\n", "switch.ecn.kmin", "0.9bdp", "at most kmax"),
        // an explicit kmax above the buffer is refused; defaults follow the buffer (below)
        ("[switch]\nbuffer = \"0.3bdp\"\necn = { kmax = \"0.8bdp\" }\n", "switch.ecn.kmax", "0.8bdp", "at most the buffer"),
        (
            "[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 500, size = \"1MiB\"}]\n",
            "workload.flows[0].dst",
            "500",
            "from 0 to 127",
        ),
        // a fixed RTO under the base RTT resends every packet: refused (here a link latency in
        // ms where us was meant), not run to its stop guard
        ("[topology]\nlink_latency = \"1ms\"\n", "transport.rto", "70us", "base RTT (8003.338us)"),
        ("[switch]\nbufer = \"1bdp\"\n", "switch.bufer", "bufer", "buffer"),
        ("[switch]\nbuffer = { shared = \"8MiB\", alpha = 0.0 }\n", "switch.buffer.alpha", "0", "1/64 to 64"),
        ("[switch]\nbuffer = { shared = \"6KiB\" }\n", "switch.buffer.shared", "6KiB", "one queue holds a full packet"),
        ("[switch]\nbuffer = { shared = \"8MiB\", alfa = 2 }\n", "switch.buffer", "alfa", "alpha"),
        ("[switch]\nbuffer = 5\n", "switch.buffer", "5", "shared"),
        ("[transport]\nkind = \"gbn\"\nreorder_limit = 64\n", "transport.reorder_limit", "64", "only with kind = \"ooo\""),
        ("[transport]\nreorder_limit = 0\n", "transport.reorder_limit", "0", "1 to 16777216"),
        ("[topology]\n\" \" = 1\n", "topology.\" \"", "unknown field", "hosts"),
        ("[topology]\nlink_rate = \"400Gbs\"\n", "topology.link_rate", "400Gbs", "Gbps"),
        ("[lb]\nkind = \"ops\"\nevs_size = 0\n", "lb.evs_size", "0", "1 to"),
        ("[workload]\nkind = \"incast\"\n", "workload.senders", "missing", "must be given"),
        ("[mixed]\nclass = 1\n", "mixed.share", "missing", "must be given"),
        ("[topology]\nlink_rate = \"0Gbps\"\n", "topology.link_rate", "0bps", "positive"),
        ("[topology]\ntier_link_rates = [\"400Gbps\", \"0Gbps\"]\n", "topology.tier_link_rates[1]", "0bps", "positive"),
        // what cannot fit is refused before anything is built
        ("[topology]\ntiers = 3\nhosts = 268435456\nradix = 1024\n", "stop.max_memory", "GiB (fabric", "raise stop.max_memory"),
        ("[samples]\nevery = \"1ns\"\n", "stop.max_memory", "samples", "samples.every"),
        ("[stop]\nmax_memory = \"1MiB\"\n", "stop.max_memory", "needs about", "1.0 MiB"),
        // values whose sums would wrap the u64 picosecond clock
        ("[transport]\nrto = \"18446744s\"\n", "transport.rto", "18446744s", "at most 100000s"),
        ("[topology]\nswitch_latency = \"100001s\"\n", "topology.switch_latency", "100001s", "at most 100000s"),
        (
            "[[faults]]\nkind = \"delay\"\nlink = \"leaf0:up0\"\nextra = \"18446744073709551615ps\"\n",
            "faults[0].extra",
            "18446744073709551615ps",
            "at most 100000s",
        ),
        // PSNs are 32-bit: 4 GiB in 1-byte payloads is more packets than a message may have
        (
            "[transport]\nmtu = \"128B\"\nheader = \"127B\"\n[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 9, size = \"4GiB\"}]\n",
            "workload.flows[0].size",
            "4294967296 packets",
            "at most 4294967295 packets",
        ),
        // a degraded link is slower than its rate
        (
            "[[faults]]\nkind = \"degrade\"\nlink = \"leaf0:up0\"\nrate = \"800Gbps\"\n",
            "faults[0].rate",
            "800Gbps",
            "at most the link's rate (400Gbps)",
        ),
        (
            "[[faults]]\nkind = \"random_degrade\"\nlinks = \"leaf_up\"\nfraction = 0.5\nrate = \"1Tbps\"\n",
            "faults[0].rate",
            "1Tbps",
            "at most the link's rate",
        ),
    ];
    for (toml_text, field, value, allowed) in cases {
        let e = error_of(toml_text);
        let text = e.to_string();
        assert_eq!(e.field, field, "{toml_text} -> {text}");
        assert!(text.contains(value), "{toml_text}: value missing from {text}");
        assert!(text.contains(allowed), "{toml_text}: allowed missing from {text}");
    }
}

#[test]
fn likely_mistakes_are_warned_in_the_summary_not_refused() {
    let warned = |toml_text: &str, expected: &str| {
        let s = scenario(toml_text).expect("valid");
        let before = fabricsim_core::warnings(&s).unwrap();
        assert!(before.iter().any(|w| w.contains(expected)), "{toml_text}: {before:?}");
        let r = Simulation::new(&s).unwrap().run();
        assert_eq!(r.summary.warnings, before, "the run lists what was printed before it");
    };
    let small = "[topology]\nhosts = 16\nradix = 8\n[workload]\nsize = \"64KiB\"\n";
    // an estimated RTO backs off and recovers: its floor under the base RTT is only warned
    warned(
        &format!("{small}[transport]\nrto = \"adaptive\"\nrto_min = \"1us\"\n[stop]\nmax_time = \"200us\"\n"),
        "transport.rto_min (1us) is below the fabric's base RTT",
    );
    warned(
        &format!("{small}[[faults]]\nkind = \"link_down\"\nlink = \"leaf0:up0\"\nstart = \"200ms\"\n"),
        "faults[0] starts at 200ms, at or after stop.max_time (100ms)",
    );
    warned(&format!("{small}[samples]\nevery = \"5ns\"\nports = [\"leaf0:up*\"]\n"), "more than 10000000");
    let quiet = scenario(small).unwrap();
    assert!(fabricsim_core::warnings(&quiet).unwrap().is_empty());
}

#[test]
fn default_ecn_thresholds_follow_a_smaller_buffer() {
    for (buffer, kmin, kmax) in [("0.3bdp", "0.06bdp", "0.24bdp"), ("100000B", "20KB", "80KB"), ("1bdp", "0.2bdp", "0.8bdp")] {
        let s = scenario(&format!("[switch]\nbuffer = \"{buffer}\"\n")).expect("valid");
        let ecn = s.filled().switch.ecn;
        assert_eq!((ecn.kmin.unwrap().to_string(), ecn.kmax.unwrap().to_string()), (kmin.to_string(), kmax.to_string()));
        Simulation::new(&s).expect("a buffer alone is enough");
    }
}

#[test]
fn bad_dependencies_name_the_entry() {
    let flows = |list: &str| format!("[workload]\nkind = \"flows\"\nflows = [{list}]\n");
    let cases = [
        (flows("{src = 0, dst = 1, size = \"1KiB\", after = [7]}"), "workload.flows[0].after[0]", "7"),
        (flows("{src = 0, dst = 1, size = \"1KiB\", after = [0]}"), "workload.flows[0].after[0]", "not its own"),
        (
            flows("{id = 3, src = 0, dst = 1, size = \"1KiB\"}, {id = 3, src = 1, dst = 2, size = \"1KiB\", after = [3]}"),
            "workload.flows[1].id",
            "workload.flows[0]",
        ),
        // a duplicate id is refused even where nothing waits for it (a CSV or `.cm` list)
        (
            flows("{id = 5, src = 0, dst = 1, size = \"1KiB\"}, {id = 5, src = 1, dst = 2, size = \"1KiB\"}"),
            "workload.flows[1].id",
            "workload.flows[0]",
        ),
        (
            flows("{src = 0, dst = 1, size = \"1KiB\", after = [1]}, {src = 1, dst = 2, size = \"1KiB\", after = [0]}"),
            "workload.flows[0].after",
            "cycle",
        ),
    ];
    for (text, field, part) in cases {
        let e = error_of(&text);
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains(part), "{e}");
    }
}

#[test]
fn a_mixed_share_of_a_trace_that_draws_nothing_runs_empty() {
    // 0.1 % load for 5 us draws no message: nothing to mix, nothing to run (it panicked)
    let s = scenario(
        "[topology]\nhosts = 16\nradix = 8\n[switch]\nclasses = 2\n[workload]\nkind = \"trace\"\ncdf = \"websearch\"\nload = 0.001\nduration = \"5us\"\n[mixed]\nshare = 0.5\nclass = 1\n",
    )
    .expect("valid");
    let r = Simulation::new(&s).expect("accepted").run();
    assert_eq!((r.summary.flows, r.summary.status), (0, "complete"));
}

#[test]
fn a_table_given_as_an_array_is_refused_naming_it() {
    // serde reads a struct from an array of its fields in order: `topology = ["fat_tree", 2,
    // 16, 8]` ran as some fat tree
    let cases = [
        (r#"{"topology": ["fat_tree", 2, 16, 8]}"#, "topology"),
        (r#"{"topology": [2, 16, 8]}"#, "topology"),
        (r#"{"stop": ["1ms"]}"#, "stop"),
        (r#"{"jobs": [{"collective": "allreduce", "size": "1MiB", "ranks": 4}, ["allreduce", "1MiB"]]}"#, "jobs[1]"),
        // a job's model as a list ran as its first field, the preset
        (r#"{"jobs": [{"model": ["gpt3-1.3b"], "parallel": {"gpu_tflops": 100}}]}"#, "jobs[0].model"),
        (r#"{"jobs": [{"model": {"preset": "gpt3-1.3b"}, "parallel": [2, 2]}]}"#, "jobs[0].parallel"),
    ];
    for (json, field) in cases {
        let e = fabricsim_core::Scenario::from_json(json).err().unwrap_or_else(|| panic!("{json} accepted"));
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains("got an array") && e.message.contains("table"), "{e}");
    }
    // lists that are lists stay lists
    assert!(fabricsim_core::Scenario::from_json(r#"{"faults": [], "topology": {"hosts": 16, "radix": 8}}"#).is_ok());
    assert!(
        fabricsim_core::Scenario::from_json(r#"{"jobs": [{"collective": "allreduce", "size": "1MiB", "hosts": [0, 1, 2, 3]}]}"#).is_ok()
    );
}

/// A flows list of more than 2^16 flows whose last waits for its first (one dependency in all)
/// resolves: its least times read the first from far back, which the pass that finds such
/// messages missed when it counted lists by their entries (a panic, "was not counted far").
#[test]
fn a_long_flows_list_with_one_far_dependency_resolves() {
    let n = (1 << 16) + 8;
    let mut flows: Vec<String> =
        (0..n).map(|i| format!("{{id = {i}, src = {}, dst = {}, size = \"4KiB\"}}", i % 16, (i + 1) % 16)).collect();
    flows.push("{src = 3, dst = 5, size = \"4KiB\", after = [0]}".to_string());
    let text = format!("[topology]\nhosts = 16\nradix = 8\n[workload]\nkind = \"flows\"\nflows = [{}]\n", flows.join(", "));
    let m = scenario(&text).expect("valid").resolve().expect("resolves");
    assert_eq!(m.messages.len(), n + 1);
}
