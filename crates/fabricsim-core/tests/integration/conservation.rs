//! Every data packet sent is delivered, trimmed, dropped or still in flight; completed flows
//! received exactly their bytes.

use super::{fabric128, scenario};
use fabricsim_core::Simulation;

pub(super) fn check(toml_text: &str) -> fabricsim_core::stats::RunResult {
    let mut sim = Simulation::new(&scenario(toml_text).unwrap()).unwrap();
    // Balanced at every point of the run, not only at the end.
    while sim.step(50_000) == fabricsim_core::Status::Running {
        let a = sim.accounting();
        assert!(a.balanced(), "mid-run at {} ps: {a:?}", sim.now());
    }
    let r = sim.results();
    assert!(r.accounting.balanced(), "{:?}", r.accounting);
    // the summary's drops are the flows' data drops; what else the ports lost is apart
    let flow_drops: u64 = r.flows.u64("drops").iter().sum();
    let port_drops: u64 = r.ports.u64("drops").iter().sum();
    assert_eq!(r.summary.drops, flow_drops);
    assert_eq!(r.summary.drops, r.accounting.data_dropped);
    assert_eq!(r.summary.drops + r.summary.control_drops, port_drops);
    let (bytes, got, done) = (r.flows.u64("bytes"), r.flows.u64("delivered_bytes"), r.flows.bool("completed"));
    for i in 0..bytes.len() {
        if done[i] {
            assert_eq!(bytes[i], got[i], "flow {i}");
        } else {
            assert!(got[i] < bytes[i]);
        }
    }
    r
}

#[test]
fn trimming_under_pressure_conserves_packets() {
    // Small buffers make an incast trim heavily.
    let r = check(&fabric128(
        "[switch]\nbuffer = \"0.1bdp\"\necn = { kmin = \"0.02bdp\", kmax = \"0.08bdp\" }\n[workload]\nkind = \"incast\"\nsenders = 16\nsize = \"256KiB\"\n",
    ));
    assert_eq!(r.summary.status, "complete");
    assert!(r.accounting.data_trimmed > 100, "{:?}", r.accounting);
    assert_eq!(r.accounting.data_trimmed, r.accounting.headers_delivered + r.accounting.headers_dropped);
    assert!(r.summary.retransmits >= r.accounting.data_trimmed - r.accounting.headers_dropped);
}

#[test]
fn tail_drop_recovers_by_timeout_and_conserves() {
    let r = check(&fabric128(
        "[switch]\noverflow = \"drop\"\nbuffer = \"0.1bdp\"\necn = { kmin = \"0.02bdp\", kmax = \"0.08bdp\" }\n[transport]\nrto = \"30us\"\n[workload]\nkind = \"incast\"\nsenders = 8\nsize = \"128KiB\"\n",
    ));
    assert_eq!(r.summary.status, "complete");
    assert!(r.accounting.data_dropped > 0);
    assert_eq!(r.accounting.data_trimmed, 0);
    let timeouts: u64 = r.flows.u64("timeouts").iter().sum();
    assert!(timeouts > 0, "drops are only recovered by the RTO");
}

#[test]
fn a_run_cut_short_counts_packets_in_flight() {
    let r = check(&fabric128("[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n[stop]\nmax_time = \"20us\"\n"));
    assert_eq!(r.summary.status, "incomplete");
    assert!(r.accounting.data_in_flight > 0);
}
