//! Switch buffers: per-port limits and a shared pool with dynamic thresholds.

use super::{fabric128, run};
use fabricsim_core::stats::RunResult;

/// Incasts of 8 MiB from hosts of other leaves: `groups[k]` senders to host k (all on leaf 0).
fn incasts(buffer: &str, groups: &[u32]) -> RunResult {
    let mut flows = Vec::new();
    let mut src = 8;
    for (dst, &n) in groups.iter().enumerate() {
        for _ in 0..n {
            flows.push(format!("{{src = {src}, dst = {dst}, size = \"2MiB\"}}"));
            src += 1;
        }
    }
    run(&fabric128(&format!(
        "[switch]\nbuffer = {buffer}\n[transport]\ncc = \"none\"\n[lb]\nkind = \"ops\"\n[workload]\nkind = \"flows\"\nflows = [{}]\n",
        flows.join(", ")
    )))
}

/// The largest queue of the leaf-0 port towards host `h`.
fn max_queue_to_host(r: &RunResult, h: u64) -> u64 {
    let (from, to, q) = (r.ports.str("from"), r.ports.str("to"), r.ports.u64("max_queue_bytes"));
    (0..q.len()).find(|&i| from[i] == "leaf0" && to[i] == format!("host{h}")).map(|i| q[i]).expect("the port exists")
}

const BDP: u64 = 420_160; // 101 packets of 4160 B on this fabric

#[test]
fn a_shared_pool_gives_one_congested_queue_alpha_over_one_plus_alpha() {
    let per_port = incasts("\"1bdp\"", &[16]);
    assert!(per_port.summary.trims > 0);
    let q = max_queue_to_host(&per_port, 0);
    assert!(q <= BDP && q > BDP - 4160, "per-port: fills its own buffer, {q}");
    // alone in a pool of 4 BDP with alpha = 1: q <= alpha (P - q), so q reaches P / 2
    let shared = incasts("{ shared = \"4bdp\", alpha = 1.0 }", &[16]);
    let q = max_queue_to_host(&shared, 0);
    assert!(q <= 2 * BDP && q > 2 * BDP - 2 * 4160, "shared, alone: {q}");
    assert!(shared.summary.trims < per_port.summary.trims);
    // alpha = 3: three quarters of the pool
    let q = max_queue_to_host(&incasts("{ shared = \"4bdp\", alpha = 3.0 }", &[16]), 0);
    assert!(q <= 3 * BDP && q > 3 * BDP - 4 * 4160, "alpha 3: {q}");
}

#[test]
fn two_congested_queues_split_the_pool() {
    // two queues at their threshold: q = alpha (P - 2q), so each holds P / 3 (1 BDP here),
    // a little more while the other drains, never the P / 2 (1.5 BDP) one reaches alone
    let r = incasts("{ shared = \"3bdp\", alpha = 1.0 }", &[12, 12]);
    for h in [0, 1] {
        let q = max_queue_to_host(&r, h);
        assert!((BDP - 2 * 4160..=5 * BDP / 4).contains(&q), "queue to host {h}: {q}");
    }
    // the pool is never exceeded: with both at their peak together it would be 2 P / 3
    assert!(max_queue_to_host(&r, 0) + max_queue_to_host(&r, 1) <= 3 * BDP);
}
