//! What posting a message costs its host (`transport.message_overhead` and `message_gap`,
//! LogGOPSim's `o` and `g` at the sender): a connection's first packet leaves `o` after it is
//! posted, a host posts one message per `g`, the flows' ideal FCT (first bit to last) is
//! untouched and the jobs' ideal bound counts `o`.

use super::{fabric128, flows, run};

#[test]
fn a_lone_message_leaves_its_posting_later_and_still_meets_its_ideal() {
    let plain = run(&fabric128(&flows(&[(0, 127, "1MiB", "3us")])));
    let posted = run(&fabric128(&format!("[transport]\nmessage_overhead = \"2us\"\n{}", flows(&[(0, 127, "1MiB", "3us")]))));
    for r in [&plain, &posted] {
        assert_eq!(r.flows.opt_u64("fct_ps")[0], Some(r.flows.u64("ideal_fct_ps")[0]));
    }
    let (ready, first) = (posted.flows.opt_u64("ready_ps")[0], posted.flows.opt_u64("first_send_ps")[0]);
    assert_eq!((ready, first), (Some(3_000_000), Some(5_000_000)));
    assert_eq!(posted.flows.opt_u64("end_ps")[0].unwrap() - plain.flows.opt_u64("end_ps")[0].unwrap(), 2_000_000);
}

#[test]
fn a_host_posts_one_message_per_gap() {
    // four messages of host 0 released at once, a gap of 1 us: message k's first packet leaves
    // once it is posted (k us), after the packet under way and, the NIC taking the active
    // connections in turn, at most one packet of each of the k before it (83.2 ns each)
    let list: Vec<(u32, u32, &str, &str)> = (1..=4).map(|d| (0, 16 * d, "256KiB", "0us")).collect();
    let r = run(&fabric128(&format!("[transport]\nmessage_gap = \"1us\"\n{}", flows(&list))));
    let first = r.flows.opt_u64("first_send_ps");
    for (k, f) in first.iter().enumerate() {
        let (f, at) = (f.unwrap(), k as u64 * 1_000_000);
        assert!((at..=at + (k as u64 + 1) * 83_200).contains(&f), "message {k}: first packet at {f} ps, posted at {at} ps");
    }
    // without the gap all four start at once
    let r = run(&fabric128(&flows(&list)));
    assert!(r.flows.opt_u64("first_send_ps").iter().all(|f| f.unwrap() <= 4 * 83_200));
}

#[test]
fn a_jobs_ideal_bound_counts_the_posting_of_each_step() {
    // a 4-rank ring allreduce, one message a step (tests/integration/jobs.rs): 6 steps back to
    // back; each step's message now leaves 5 us after its release, after the final ACK of what
    // the rank received (so that ACK no longer delays it), and the bound counts the 5 us
    let job = "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nsize = \"8MiB\"\nranks = 4\n";
    let r = run(&fabric128(&format!("[transport]\nack_every = 1024\nmessage_overhead = \"5us\"\n{job}")));
    let fct = r.flows.u64("ideal_fct_ps")[0];
    assert_eq!(r.jobs.opt_u64("jct_ps")[0], Some(6 * (fct + 5_000_000)));
    assert_eq!(r.jobs.u64("ideal_jct_ps")[0], 6 * (fct + 5_000_000));
}

#[test]
fn posting_runs_alike_in_any_pieces_and_its_fields_are_checked() {
    use super::golden::render;
    use fabricsim_core::Simulation;
    let text = fabric128(
        "[transport]\nmessage_overhead = \"300ns\"\nmessage_gap = \"200ns\"\n[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n",
    );
    let scenario = super::scenario(&text).expect("valid");
    let one = render(&Simulation::new(&scenario).expect("builds").run());
    for pieces in [2, 4] {
        assert!(render(&Simulation::in_pieces(&scenario, pieces).expect("builds").run()) == one, "{pieces} pieces");
    }
    for field in ["message_overhead", "message_gap"] {
        let e = super::scenario(&fabric128(&format!("[transport]\n{field} = \"2s\"\n"))).and_then(|s| s.resolve().map(|_| ())).unwrap_err();
        assert_eq!((e.field.clone(), e.message.contains("0ns (none) to 1s")), (format!("transport.{field}"), true), "{e}");
    }
}
