//! Long-lived connections (`transport.connections = "per_pair"`): a pair's messages go one
//! after another through one queue pair whose state outlives them, pipelined under one window.

use super::{fabric128, flows, run, scenario};
use fabricsim_core::Simulation;

#[test]
fn a_pairs_messages_wait_for_each_other_on_one_queue_pair() {
    let two = flows(&[(0, 9, "1MiB", "0ns"), (0, 9, "1MiB", "0ns"), (0, 10, "1MiB", "0ns")]);
    let apart = run(&fabric128(&two));
    let paired = run(&fabric128(&format!("[transport]\nconnections = \"per_pair\"\n{two}")));
    let (first, end) = (paired.flows.opt_u64("first_send_ps"), paired.flows.opt_u64("end_ps"));
    // the second message to host 9 starts once the first has sent its last new packet, as
    // a queue pair sends its work requests back to back: the first's 256 packets share the
    // NIC with the message to host 10 packet by packet, so its last leaves in slot 510 of
    // 83.2 ns and the second message's first in slot 511, before the first has ended
    assert_eq!(first[1], Some(511 * 83_200), "{first:?} {end:?}");
    assert!(first[1].unwrap() < end[0].unwrap(), "{first:?} {end:?}");
    // a message to another host has its own pair: it starts at once
    assert!(first[2].unwrap() < end[0].unwrap(), "{first:?}");
    // each connection apart: both messages to host 9 start at once and share the NIC
    let (first, end) = (apart.flows.opt_u64("first_send_ps"), apart.flows.opt_u64("end_ps"));
    assert!(first[1].unwrap() < end[0].unwrap(), "{first:?} {end:?}");
    assert_eq!(paired.summary.status, "complete");
    assert_eq!(paired.flows.u64("delivered_bytes"), apart.flows.u64("delivered_bytes"));
}

#[test]
fn one_window_covers_a_pairs_messages() {
    // a window of 4 packets: two messages to one host each get one of their own with a
    // connection each, and share one as a queue pair: the second waits until the first's
    // packets in flight are acknowledged (an ACK per 4 packets: its last ACK), and the two
    // take twice as long as side by side
    let two = flows(&[(0, 9, "256KiB", "0ns"), (0, 9, "256KiB", "0ns")]);
    let window = "[transport]\ninit_cwnd = \"16640B\"\nmax_cwnd = \"16640B\"\n";
    let apart = run(&fabric128(&format!("{window}{two}")));
    let paired = run(&fabric128(&format!("{window}connections = \"per_pair\"\n{two}")));
    let (first, end) = (paired.flows.opt_u64("first_send_ps"), paired.flows.opt_u64("end_ps"));
    assert!(first[1].unwrap() > end[0].unwrap(), "{first:?} {end:?}");
    let last = |r: &fabricsim_core::stats::RunResult| r.flows.opt_u64("end_ps").iter().map(|e| e.unwrap()).max().unwrap();
    assert!(last(&paired) as f64 > 1.9 * last(&apart) as f64, "{} vs {}", last(&paired), last(&apart));
}

#[test]
fn a_pairs_load_balancer_outlives_its_messages() {
    // eight messages one after another from host 0 to host 9 (another leaf) under ECMP: with
    // a connection each they hash onto several of leaf 0's uplinks, with one queue pair all
    // of them keep its entropy, so one uplink carries everything
    let list: Vec<(u32, u32, &str, String)> = (0..8).map(|i| (0, 9, "64KiB", format!("{}us", 20 * i))).collect();
    let list: Vec<(u32, u32, &str, &str)> = list.iter().map(|(s, d, z, t)| (*s, *d, *z, t.as_str())).collect();
    let uplinks = |text: &str| {
        let r = run(text);
        assert_eq!(r.summary.status, "complete");
        let (names, data) = (r.ports.str("name"), r.ports.u64("data_packets"));
        names.iter().zip(data).filter(|(n, &d)| n.starts_with("leaf0:up") && d > 0).count()
    };
    let base = format!("[lb]\nkind = \"ecmp\"\n{}", flows(&list));
    assert!(uplinks(&fabric128(&base)) > 1, "a connection per message spreads over the uplinks");
    assert_eq!(uplinks(&fabric128(&format!("[transport]\nconnections = \"per_pair\"\n{base}"))), 1);
}

#[test]
fn jobs_default_to_queue_pairs_other_traffic_to_a_connection_per_message() {
    use fabricsim_core::host::Connections;
    let job = "[[jobs]]\ncollective = \"allreduce\"\nsize = \"1MiB\"\nranks = 8\n";
    for (extra, want) in [
        (job.to_string(), Connections::PerPair),
        (String::new(), Connections::PerMessage),
        (format!("[transport]\ncc = \"dcqcn\"\n{job}"), Connections::PerMessage),
        (format!("[lb]\nkind = \"mptcp\"\n{job}"), Connections::PerMessage),
        (format!("[transport]\nconnections = \"per_message\"\n{job}"), Connections::PerMessage),
    ] {
        let s = scenario(&fabric128(&extra)).unwrap();
        assert_eq!(s.connections(), want, "{extra}");
        // the scenario as run says which it used
        assert_eq!(s.filled().transport.connections, Some(want), "{extra}");
        Simulation::new(&s).unwrap_or_else(|e| panic!("{extra}: {e}"));
    }
}

#[test]
fn per_pair_is_refused_where_its_state_cannot_carry() {
    for (extra, field) in [
        ("[transport]\nconnections = \"per_pair\"\ncc = \"dcqcn\"\n", "transport.connections"),
        ("[transport]\nconnections = \"per_pair\"\n[lb]\nkind = \"mptcp\"\n", "transport.connections"),
        ("[transport]\nconnections = \"per_flow\"\n", "transport.connections"),
    ] {
        let text = fabric128(extra);
        let e = scenario(&text).and_then(|s| Simulation::new(&s).map(drop)).err().unwrap_or_else(|| panic!("{extra} accepted"));
        assert!(e.field.starts_with(field), "{extra}: {e}");
    }
}

#[test]
fn per_pair_runs_give_the_same_tables_in_any_pieces_and_threads() {
    let text = fabric128(
        "[lb]\nkind = \"arcane\"\n[transport]\nconnections = \"per_pair\"\n[[jobs]]\ncollective = \"allreduce\"\nsize = \"1MiB\"\nranks = 16\nplacement = \"spread\"\niterations = 2\n",
    );
    let s = scenario(&text).unwrap();
    let one = Simulation::new(&s).unwrap().run();
    assert_eq!(one.summary.status, "complete");
    for threads in [2, 4] {
        let r = Simulation::with_threads(&s, threads).unwrap().run();
        assert_eq!((r.flows, r.jobs), (one.flows.clone(), one.jobs.clone()), "{threads} threads");
    }
    let r = Simulation::in_pieces(&s, 3).unwrap().run();
    assert_eq!(r.flows, one.flows, "3 pieces");
}

#[test]
fn a_pairs_messages_report_the_path_their_packets_took() {
    let list: Vec<(u32, u32, &str, String)> = (0..8).map(|i| (0, 9, "64KiB", format!("{}us", 20 * i))).collect();
    let list: Vec<(u32, u32, &str, &str)> = list.iter().map(|(s, d, z, t)| (*s, *d, *z, t.as_str())).collect();
    let text = fabric128(&format!("[lb]\nkind = \"ecmp\"\n[transport]\nconnections = \"per_pair\"\n{}", flows(&list)));
    let mut sim = Simulation::new(&scenario(&text).unwrap()).unwrap();
    sim.step(u64::MAX);
    let r = sim.results();
    let paths: Vec<Vec<u32>> = (0..8).map(|c| sim.flow_path(c).expect("ecmp has one path")).collect();
    assert!(paths.iter().all(|p| *p == paths[0]), "{paths:?}");
    // the reported path's first uplink is the one that carried every data packet
    let data = r.ports.u64("data_packets");
    assert_eq!(data[paths[0][1] as usize], 8 * 16, "{paths:?}");
}
