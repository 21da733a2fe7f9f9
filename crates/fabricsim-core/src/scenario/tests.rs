//! Resolving scenarios: the BDP example of the design notes, and errors that name the field.

use super::*;

fn parse(toml_text: &str) -> Result<Model, ScenarioError> {
    let value: toml::Table = toml::from_str(toml_text).expect("test TOML parses");
    Scenario::from_deserializer(value)?.resolve()
}

#[test]
fn design_md_bdp_example() {
    // DESIGN.md: 400 Gb/s, 1 us links, 0 switch latency, 4160 B packets, 64 B ACKs, 2 tiers:
    // base RTT 8.338 us, 1 BDP = 101 packets = 420 160 B.
    let m = parse("[topology]\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n")
        .unwrap();
    assert_eq!(m.base_rtt, 8_337_920);
    assert_eq!(m.bdp_packets, 101);
    assert_eq!(m.bdp_bytes, 420_160);
    assert_eq!(m.switch.buffer, 420_160);
    assert_eq!(m.switch.ecn, Some((21 * 4160, 81 * 4160, crate::switch::EcnMark::Dequeue)));
}

#[test]
fn errors_name_field_value_and_allowed() {
    let e = parse("[switch.ecn]\nkmin = \"0.9bdp\"\nkmax = \"0.5bdp\"\n").unwrap_err();
    assert_eq!(e.field, "switch.ecn.kmin");
    assert!(e.message.contains("0.9bdp") && e.message.contains("at most kmax"), "{e}");

    let e = parse("[topology]\nlink_rate = 400\n").unwrap_err();
    assert_eq!(e.field, "topology.link_rate");
    assert!(e.message.contains("unit-less"), "{e}");

    let e = parse("[topology]\nhostz = 4\n").unwrap_err();
    assert_eq!(e.field, "topology.hostz");
    assert!(e.message.contains("hostz"), "{e}");

    let e = parse("[transport]\nheader = \"5000B\"\n").unwrap_err();
    assert_eq!(e.field, "transport.header");
}
