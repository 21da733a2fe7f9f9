//! A session (`sim::session`): messages sent into a running run, completions polled.

use super::{fabric128, scenario};
use fabricsim_core::sim::session::Session;
use fabricsim_core::stats::RunResult;
use fabricsim_core::{Simulation, Status};

const FOREVER: u64 = u64::MAX / 4;

fn session(extra: &str, threads: usize) -> Session {
    Session::new(&scenario(&fabric128(extra)).expect("valid"), Some(threads)).expect("builds")
}

/// The tables of a result's messages and packets (the summary's events and time also count
/// what ran after the last completion, which a session that waits for more runs on to).
fn tables(r: &RunResult) -> String {
    format!("{:?}\n{:?}\n{:?}", r.flows, r.reorder, r.accounting)
}

#[test]
fn a_lone_message_sent_into_an_empty_session_meets_its_ideal_fct_exactly() {
    for threads in [1, 2] {
        let mut s = session("", threads);
        assert_eq!(s.run_until(3_000_000).unwrap(), Status::Running, "an empty session idles");
        assert_eq!(s.now(), 3_000_000);
        let id = s.send(0, 100, 1 << 20, Some(5_000_000)).unwrap();
        assert_eq!(id, 0);
        assert_eq!(s.run_until_completion(FOREVER).unwrap(), Status::Running);
        let done = s.completions();
        assert_eq!(done.len(), 1);
        let r = s.results();
        let ideal = r.flows.u64("ideal_fct_ps")[0];
        assert_eq!((done[0].start, done[0].fct), (5_000_000, ideal), "threads {threads}");
        assert_eq!(done[0].end, s.now());
        assert_eq!(r.flows.opt_u64("fct_ps")[0], Some(ideal));
        assert!(s.completions().is_empty(), "each completion is reported once");
    }
}

#[test]
fn messages_sent_while_it_runs_give_the_tables_of_the_same_messages_given_up_front() {
    // collisions on shared uplinks, two messages of one host at one instant, a message that
    // starts while others are under way; sent in the order of their starts
    let list: [(u32, u32, u64, u64); 8] = [
        (0, 64, 512 << 10, 0),
        (1, 65, 512 << 10, 0),
        (1, 66, 256 << 10, 0),
        (2, 64, 256 << 10, 3_000_000),
        (3, 100, 1 << 20, 3_000_000),
        (0, 127, 128 << 10, 7_500_000),
        (64, 0, 1 << 20, 9_000_000),
        (65, 1, 64 << 10, 20_000_000),
    ];
    let up_front: Vec<String> =
        list.iter().map(|&(s, d, b, t)| format!("{{ src = {s}, dst = {d}, size = \"{b}B\", start = \"{}ps\" }}", t)).collect();
    // every load balancer, those that draw at random when built and while they send included
    for lb in ["ecmp", "arcane", "ops", "prime", "co_prime", "round_robin", "bitmap", "mptcp"] {
        let extra = format!("[lb]\nkind = \"{lb}\"\n");
        let closed = format!("{extra}[workload]\nkind = \"flows\"\nflows = [{}]\n", up_front.join(", "));
        let expected = tables(&Simulation::new(&scenario(&fabric128(&closed)).unwrap()).unwrap().run());
        for threads in [1, 2] {
            let mut s = session(&extra, threads);
            assert_eq!(s.simulation().threads(), threads);
            for &(src, dst, bytes, at) in &list {
                // run up to the instant before the message's start, then send it
                s.run_until(at.saturating_sub(1)).unwrap();
                s.send(src, dst, bytes, Some(at)).unwrap();
            }
            assert_eq!(s.run_until(FOREVER).unwrap(), Status::Running);
            assert_eq!(s.completions().len(), list.len());
            assert_eq!(tables(&s.into_results()), expected, "lb {lb}, threads {threads}");
        }
    }
}

/// A message sent with `after` waits as the same message given up front with `after` does:
/// its source hears that each completed at once where it received it, at the final ACK where
/// it sent it, by the receiver's notice elsewhere; the same tables on 1 and 2 threads. One
/// sent once what it waits for has completed starts when it is sent.
#[test]
fn messages_sent_with_after_wait_as_the_same_messages_given_up_front() {
    // (src, dst, bytes, after): the receiver of 0 goes on, its sender goes on, a third host
    // hears of 0 and 1 by notices, and a chain of those
    let list: [(u32, u32, u64, &[u32]); 6] = [
        (0, 64, 512 << 10, &[]),
        (1, 65, 256 << 10, &[]),
        (64, 2, 256 << 10, &[0]),
        (0, 3, 128 << 10, &[0]),
        (5, 70, 64 << 10, &[0, 1]),
        (70, 6, 32 << 10, &[4, 2, 3]),
    ];
    let up_front: Vec<String> =
        list.iter().map(|&(s, d, b, after)| format!("{{ src = {s}, dst = {d}, size = \"{b}B\", after = {after:?} }}")).collect();
    for lb in ["ops", "ecmp"] {
        let extra = format!("[lb]\nkind = \"{lb}\"\n");
        let closed = format!("{extra}[workload]\nkind = \"flows\"\nflows = [{}]\n", up_front.join(", "));
        // (a flows list with `after` is a trace: its rows say so; a session's are background)
        let timed = |r: &RunResult| {
            let f = &r.flows;
            let opt = ["ready_ps", "first_send_ps", "end_ps", "fct_ps"].map(|c| f.opt_u64(c));
            let counts = ["src", "dst", "packets", "data_packets", "retransmits", "max_reorder"].map(|c| f.u64(c));
            format!("{opt:?}\n{counts:?}\n{:?}\n{:?}", r.reorder, r.accounting)
        };
        let expected = timed(&Simulation::new(&scenario(&fabric128(&closed)).unwrap()).unwrap().run());
        for threads in [1, 2] {
            let mut s = session(&extra, threads);
            for &(src, dst, bytes, after) in &list {
                s.send_after(src, dst, bytes, Some(0), after).unwrap();
            }
            assert_eq!(s.run_until(FOREVER).unwrap(), Status::Running);
            assert_eq!(s.completions().len(), list.len());
            assert_eq!(timed(&s.into_results()), expected, "lb {lb}, threads {threads}");
        }
    }
    // sent after what it waits for completed (and its notice arrived): it starts when sent
    for threads in [1, 2] {
        let mut s = session("", threads);
        let first = s.send(0, 64, 64 << 10, None).unwrap();
        s.run_until(50_000_000).unwrap();
        assert_eq!(s.completions().len(), 1);
        let late = s.send_after(9, 100, 64 << 10, Some(60_000_000), &[first]).unwrap();
        s.run_until(FOREVER).unwrap();
        let done = s.completions();
        assert_eq!((done[0].id, done[0].start), (late, 60_000_000), "threads {threads}");
        let r = s.results();
        assert_eq!(r.flows.opt_u64("fct_ps")[1], Some(r.flows.u64("ideal_fct_ps")[1]), "alone: its ideal FCT");
    }
    // sent as what it waits for completes, the receiver's notice still on its way: released
    // when the notice arrives, as given up front
    let closed = "[workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 64, size = \"64KiB\" }, { src = 9, dst = 100, size = \"64KiB\", after = [0] }]\n";
    let ready = Simulation::new(&scenario(&fabric128(closed)).unwrap()).unwrap().run().flows.opt_u64("ready_ps")[1].unwrap();
    for threads in [1, 2] {
        let mut s = session("", threads);
        let first = s.send(0, 64, 64 << 10, None).unwrap();
        s.run_until_completion(FOREVER).unwrap();
        assert!(s.now() < ready, "the notice is on its way");
        s.send_after(9, 100, 64 << 10, None, &[first]).unwrap();
        s.run_until(FOREVER).unwrap();
        assert_eq!(s.results().flows.opt_u64("ready_ps")[1], Some(ready), "threads {threads}");
    }
    // what it may wait for
    let mut s = session("", 1);
    let e = s.send_after(0, 1, 10, None, &[0]).unwrap_err();
    assert_eq!(e.field, "after");
    assert!(e.message.contains("already in the session"), "{e}");
}

/// On rails a host's id is not its place at its leaf (`Topology::slot`): a message sent into a
/// session goes between the hosts it names, as the same message given up front does.
#[test]
fn a_message_sent_on_rails_goes_between_the_hosts_it_names() {
    let rails = "seed = 1\n[topology]\nhosts = 128\nradix = 16\nnics_per_server = 8\nrails = true\n";
    let list: [(u32, u32, u64); 3] = [(1, 9, 1 << 20), (3, 12, 256 << 10), (17, 100, 512 << 10)];
    let up_front: Vec<String> = list.iter().map(|&(s, d, b)| format!("{{ src = {s}, dst = {d}, size = \"{b}B\" }}")).collect();
    let closed = format!("{rails}[workload]\nkind = \"flows\"\nflows = [{}]\n", up_front.join(", "));
    let expected = tables(&Simulation::new(&scenario(&closed).unwrap()).unwrap().run());
    for threads in [1, 2] {
        let mut s = Session::new(&scenario(rails).unwrap(), Some(threads)).unwrap();
        for &(src, dst, bytes) in &list {
            s.send(src, dst, bytes, None).unwrap();
        }
        assert_eq!(s.run_until(FOREVER).unwrap(), Status::Running);
        let r = s.into_results();
        assert_eq!(r.flows.u64("src"), list.iter().map(|m| u64::from(m.0)).collect::<Vec<_>>(), "threads {threads}");
        assert_eq!(tables(&r), expected, "threads {threads}");
    }
}

#[test]
fn a_ring_allreduce_driven_from_outside_gives_the_native_rings_jct_to_the_picosecond() {
    // 8 ranks on hosts 0-7 (one leaf) and on a rank per leaf: 2(n-1) steps of size/n, rank r
    // sends step s + 1 to rank r + 1 the instant it has received step s from rank r - 1
    let n = 8u32;
    let size = 4u64 << 20;
    for hosts in ["\"0-7\"", "[0, 16, 32, 48, 64, 80, 96, 112]"] {
        let native = format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nalgorithm = \"ring\"\nsize = \"{size}B\"\nhosts = {hosts}\n");
        let r = Simulation::new(&scenario(&fabric128(&native)).unwrap()).unwrap().run();
        let jct = r.jobs.opt_u64("jct_ps")[0].unwrap();
        let host: Vec<u32> = if hosts.contains('-') { (0..n).collect() } else { (0..n).map(|r| 16 * r).collect() };
        for threads in [1, 2] {
            let mut s = session("[transport]\nconnections = \"per_pair\"\n", threads);
            assert_eq!(s.simulation().threads(), threads);
            // (rank, step) of each message sent
            let mut sent = Vec::new();
            for rank in 0..n {
                let id = s.send(host[rank as usize], host[((rank + 1) % n) as usize], size / u64::from(n), Some(0)).unwrap();
                assert_eq!(id as usize, sent.len());
                sent.push((rank, 0));
            }
            let mut last = 0;
            while s.run_until_completion(FOREVER).unwrap() == Status::Running {
                let done = s.completions();
                if done.is_empty() {
                    break;
                }
                for c in done {
                    let (rank, step) = sent[c.id as usize];
                    last = last.max(c.end);
                    let next = (rank + 1) % n;
                    if step + 1 < 2 * (n - 1) {
                        s.send(host[next as usize], host[((next + 1) % n) as usize], size / u64::from(n), None).unwrap();
                        sent.push((next, step + 1));
                    }
                }
            }
            assert_eq!(sent.len() as u32, 2 * (n - 1) * n);
            assert_eq!(last, jct, "hosts {hosts}, threads {threads}");
        }
    }
}

#[test]
fn a_send_the_session_cannot_take_is_refused_naming_the_argument() {
    let mut s = session("", 1);
    s.run_until(1_000).unwrap();
    for (src, dst, bytes, at, field) in
        [(128, 1, 1, None, "src"), (0, 999, 1, None, "dst"), (3, 3, 1, None, "dst"), (0, 1, 0, None, "bytes"), (0, 1, 1, Some(999), "at")]
    {
        let e = s.send(src, dst, bytes, at).unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
    assert_eq!(s.run_until(5).unwrap_err().field, "t");
    assert_eq!(s.run_until_completion(5).unwrap_err().field, "limit");
    // a start past the time guard never comes (and stays far from u64's end)
    assert_eq!(s.send(0, 1, 1, Some(u64::MAX - 1)).unwrap_err().field, "at");
}

#[test]
fn a_send_that_a_closed_run_would_stripe_or_relay_is_refused() {
    let multi = "seed = 1\n[topology]\nkind = \"multi_plane\"\nhosts = 16\nradix = 8\n";
    let mut s = Session::new(&scenario(multi).unwrap(), Some(1)).unwrap();
    assert_eq!(s.send(0, 9, 4096, None).unwrap_err().field, "src");
    // a fat tree of two NICs a GPU likewise
    let nics = "seed = 1\n[topology]\nhosts = 16\nradix = 8\nnics_per_gpu = 2\n";
    let mut s = Session::new(&scenario(nics).unwrap(), Some(1)).unwrap();
    let e = s.send(0, 9, 4096, None).unwrap_err();
    assert!(e.field == "src" && e.message.contains("this one has 2, in planes or a GPU's NICs"), "{e:?}");
    // rail-only: GPU 0 of server 0 reaches GPU 0 of server 1 over its rail and GPU 1 of its own
    // server over the scale-up network, not GPU 1 of server 1 (that needs a relay)
    let rails = "seed = 1\n[topology]\nkind = \"rail_only\"\nhosts = 64\nradix = 16\nnics_per_server = 4\nscale_up_rate = \"3600Gbps\"\n";
    let mut s = Session::new(&scenario(rails).unwrap(), Some(1)).unwrap();
    s.send(0, 4, 4096, None).unwrap();
    s.send(0, 1, 4096, None).unwrap();
    assert_eq!(s.send(0, 5, 4096, None).unwrap_err().field, "dst");
    s.run_until(FOREVER).unwrap();
    assert_eq!(s.completions().len(), 2);
}

#[test]
fn faults_samples_and_the_time_guard_act_in_a_session_as_in_a_closed_run() {
    // a spine link fails mid-run and the fabric is sampled: the session's messages, sent just
    // before their starts, give the closed run's tables and samples
    let extra = "[lb]\nkind = \"ops\"\n[[faults]]\nkind = \"link_down\"\nlink = \"leaf0:up3\"\nstart = \"20us\"\ndetection = \"10us\"\nreconvergence = \"40us\"\n\
                 [samples]\nevery = \"5us\"\nports = [\"leaf0:up*\"]\n";
    let list: Vec<(u32, u32, u64)> = (0..8).map(|k| (k, 64 + k, k as u64 * 4_000_000)).collect();
    let rows: Vec<String> =
        list.iter().map(|&(s, d, t)| format!("{{ src = {s}, dst = {d}, size = \"2MiB\", start = \"{t}ps\" }}")).collect();
    let closed = format!("{extra}[workload]\nkind = \"flows\"\nflows = [{}]\n", rows.join(", "));
    let expected = Simulation::new(&scenario(&fabric128(&closed)).unwrap()).unwrap().run();
    for threads in [1, 2] {
        let mut s = session(extra, threads);
        for &(src, dst, at) in &list {
            s.run_until(at.saturating_sub(1)).unwrap();
            s.send(src, dst, 2 << 20, Some(at)).unwrap();
        }
        // to the closed run's end: the samples it took are those taken up to then
        let end = expected.flows.opt_u64("end_ps").iter().flatten().copied().max().unwrap();
        s.run_until(end).unwrap();
        let r = s.results();
        assert_eq!(tables(&r), tables(&expected), "threads {threads}");
        assert_eq!(format!("{:?}", r.samples), format!("{:?}", expected.samples), "threads {threads}");
    }
    // the time guard ends a session; a send afterwards is refused
    let mut s = session("[stop]\nmax_time = \"50us\"\n", 1);
    s.send(0, 100, 64 << 20, Some(0)).unwrap();
    assert_eq!(s.run_until(FOREVER).unwrap(), Status::TimeLimit);
    assert_eq!(s.send(1, 2, 1, None).unwrap_err().field, "session");
}

#[test]
fn a_message_between_gpus_of_a_server_crosses_its_scale_up_network_in_a_session() {
    let servers = "seed = 1\n[topology]\nhosts = 32\nradix = 8\nnics_per_server = 4\nscale_up_rate = \"7200Gbps\"\n";
    let mut s = Session::new(&scenario(servers).unwrap(), Some(1)).unwrap();
    let id = s.send(0, 1, 9_000_000, Some(1_000)).unwrap();
    assert_eq!(s.run_until_completion(FOREVER).unwrap(), Status::Running);
    let done = s.completions();
    let r = s.results();
    assert!(r.flows.bool("scale_up")[0]);
    assert_eq!(done.len(), 1);
    assert_eq!((done[0].id, done[0].start), (id, 1_000));
    assert_eq!(Some(done[0].end), r.flows.opt_u64("end_ps")[0]);
}
