//! A lone flow on an idle fabric completes in exactly its ideal FCT, to the picosecond.
//!
//! The ideal (DESIGN.md) is the single-path store-and-forward time. It is exact for every
//! load balancer when all packets are full, and for single-path routing (ECMP) always. A
//! sprayed message whose last packet is shorter can finish earlier: the short packet may take
//! another path and overtake the full one before it, saving at most its own serialization.

use super::run;

fn lone_flow(topology: &str, transport: &str, lb: &str, src: u32, dst: u32, size: &str) -> (u64, u64) {
    let r = run(&format!(
        "[topology]\n{topology}\n[transport]\n{transport}\n[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"flows\"\nflows = [{{src = {src}, dst = {dst}, size = \"{size}\", start = \"3us\"}}]\n"
    ));
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.flows.opt_u64("first_send_ps")[0].unwrap(), 3_000_000, "a lone flow starts sending at its start time");
    (r.flows.opt_u64("fct_ps")[0].unwrap(), r.flows.u64("ideal_fct_ps")[0])
}

#[test]
fn lone_flow_is_exactly_ideal_on_two_and_three_tiers() {
    let mut checked = 0;
    for tiers in ["tiers = 2\nhosts = 128\nradix = 16", "tiers = 3\nhosts = 128\nradix = 8"] {
        for rate in ["100Gbps", "400Gbps", "800Gbps"] {
            for (lat, sw) in [("1us", "0ns"), ("500ns", "500ns")] {
                // same leaf, same pod (3 tiers) / other leaf, and the far side of the fabric
                for (src, dst) in [(0, 1), (0, 9), (3, 100)] {
                    let topo = format!("{tiers}\nlink_rate = \"{rate}\"\nlink_latency = \"{lat}\"\nswitch_latency = \"{sw}\"");
                    for (lb, size) in [("ops", "1B"), ("ops", "4096B"), ("ops", "1MiB"), ("ecmp", "4097B"), ("ecmp", "1MiB")] {
                        let (fct, ideal) = lone_flow(&topo, "", lb, src, dst, size);
                        assert_eq!(fct, ideal, "{topo} {lb} {src}->{dst} {size}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 2 * 3 * 2 * 3 * 5);
}

#[test]
fn ideal_fct_has_the_closed_form_of_design_md() {
    // 8 MiB, 400 Gb/s, 1 us links, no switch latency, 4 hops: 2048 packets of 83.2 ns on the
    // wire, plus 3 more store-and-forwards of one packet and 4 propagation delays.
    let (fct, ideal) = lone_flow("link_latency = \"1us\"\nswitch_latency = \"0ns\"", "", "ops", 0, 100, "8MiB");
    assert_eq!(ideal, 2048 * 83_200 + 3 * 83_200 + 4 * 1_000_000);
    assert_eq!(fct, ideal);
}

const FAST_CORE: &str = "tiers = 3\nhosts = 128\nradix = 8\ntier_link_rates = [\"400Gbps\", \"800Gbps\", \"1600Gbps\"]\ntier_link_latencies = [\"200ns\", \"1us\", \"2us\"]\nswitch_latency = \"300ns\"";

#[test]
fn exact_with_faster_core_links_any_cc_and_ack_coalescing() {
    for transport in
        ["cc = \"dctcp\"", "cc = \"none\"", "ack_every = 4", "ack_every = 16\ncc = \"none\"", "mtu = \"9064B\"\nheader = \"64B\""]
    {
        for size in ["3MiB", "12345B"] {
            let (fct, ideal) = lone_flow(FAST_CORE, transport, "ecmp", 5, 120, size);
            assert_eq!(fct, ideal, "{transport} {size}");
        }
    }
}

#[test]
fn sprayed_short_last_packet_never_exceeds_ideal_and_saves_at_most_its_serialization() {
    // 2 packets: 4160 B and 65 B (at 100 Gb/s: 5.2 ns). Over seeds the short packet sometimes
    // shares the full packet's path (exactly ideal) and sometimes overtakes it.
    let mut outcomes = std::collections::BTreeSet::new();
    for seed in 1..40 {
        let r = run(&format!(
            "seed = {seed}\n[topology]\nlink_rate = \"100Gbps\"\n[lb]\nkind = \"ops\"\nevs_size = 8\n[workload]\nkind = \"flows\"\nflows = [{{src = 0, dst = 9, size = \"4097B\"}}]\n"
        ));
        let (fct, ideal) = (r.flows.opt_u64("fct_ps")[0].unwrap(), r.flows.u64("ideal_fct_ps")[0]);
        assert!(fct <= ideal && ideal - fct <= 5_200, "seed {seed}: fct {fct} ideal {ideal}");
        outcomes.insert(ideal - fct);
    }
    assert_eq!(outcomes.into_iter().collect::<Vec<_>>(), vec![0, 5_200]);
}
