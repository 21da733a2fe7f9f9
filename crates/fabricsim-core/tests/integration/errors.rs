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
        ("[workload]\nkind = \"flows\"\nflows = [{src = 0, dst = 500, size = \"1MiB\"}]\n", "workload.flows[0].dst", "500", "0..128"),
        ("[switch]\nbufer = \"1bdp\"\n", "switch.bufer", "bufer", "buffer"),
        ("[topology]\nlink_rate = \"400Gbs\"\n", "topology.link_rate", "400Gbs", "Gbps"),
        ("[lb]\nkind = \"ops\"\nevs_size = 0\n", "lb.evs_size", "0", "1 to"),
    ];
    for (toml_text, field, value, allowed) in cases {
        let e = error_of(toml_text);
        let text = e.to_string();
        assert_eq!(e.field, field, "{toml_text} -> {text}");
        assert!(text.contains(value), "{toml_text}: value missing from {text}");
        assert!(text.contains(allowed), "{toml_text}: allowed missing from {text}");
    }
}
