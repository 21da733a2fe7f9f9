//! `algorithm = "auto"`: ring or tree as NCCL's tuner picks them.
//!
//! NCCL estimates each (algorithm, protocol) as `latency + bytes / bandwidth` and runs the
//! fastest (`ncclTopoGetAlgoTime` in `src/graph/tuning.cc`, with its constants and refinements
//! from `ncclTopoTuneModel` in the same file). fabricsim runs one protocol (its messages are
//! NCCL's Simple: data sent as it is, no LL flags) and two of NCCL's allreduce algorithms, ring
//! and the double binary tree, so it compares those two under Simple, with each rank its own
//! node (one GPU per node, `ppn = 1`; a Hopper GPU and an Intel host, the defaults):
//!
//! - latency, us: ring `8.4 + 2 (n-1) x 14`, times 1.4 once each rank's share of a channel is 64
//!   bytes or more (the "plateau" refinement); tree `8.4 + 2 log2(n) x 14` (8.4: Simple's base
//!   latency; 14: the network's, which NCCL uses for both with one GPU per node);
//! - bandwidth, GB/s of the buffer: ring `B n / (2 (n-1))`; tree `0.5 min(0.92 B, 36 c)` times
//!   the tree correction factor of the buffer's size (`treeCorrectionFactor`, Simple's row), `B`
//!   the NIC's rate and `c` the channels (36 GB/s: Hopper's per-channel tree ceiling with four or
//!   more nodes).
//!
//! Other collectives run as NCCL runs them over a network without PAT or NVLS: reduce_scatter,
//! allgather and broadcast on the ring, alltoall as direct sends. Simplified: NCCL's LL and
//! LL128 protocols (its choice for small buffers), CollNet, NVLS and PAT, and the topology
//! search that sets `B` per channel, are not modelled; NCCL's own tuner may differ where those
//! would win or where a server holds several ranks.

use super::super::{AlgorithmKind, Op};
use crate::registry::AlgorithmInfo;

/// `algorithm = "auto"`, as `fabricsim list` and the registry show it.
pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "auto",
    summary: "what NCCL's tuner runs: an allreduce on the ring or the tree by its cost model (Simple protocol, one GPU per node); alltoall direct; the rest on the ring",
    reference: "NCCL src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime)",
};

/// Simple's base latency, us (`baseLatencies`, Tree and Ring).
const BASE_LATENCY: f64 = 8.4;
/// The network's latency per step with one GPU per node, us (`hwLatencies[NET][Tree][Simple]`).
const NET_LATENCY: f64 = 14.0;
/// Hopper's per-channel tree bandwidth with four or more nodes, GB/s (`perChMaxTreeBws`).
const TREE_CHANNEL_MAX: f64 = 36.0;
/// Simple's tree correction by log2(bytes / 64), 64 B to 256 MiB (`treeCorrectionFactor`).
const TREE_CORRECTION: [f64; 24] =
    [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9, 0.9];

/// NCCL's estimate of `op` by `algorithm` on `n` ranks, `bytes` a rank, `rate_bps` a NIC, over
/// `channels`: microseconds (`None`: NCCL has no such algorithm for it here).
pub fn estimate_us(algorithm: AlgorithmKind, op: Op, n: usize, bytes: u64, rate_bps: u64, channels: u32) -> Option<f64> {
    if op != Op::Allreduce || n < 2 {
        return None;
    }
    let (nf, b) = (n as f64, rate_bps as f64 / 8e9);
    let size = bytes as f64;
    match algorithm {
        AlgorithmKind::Ring => {
            let steps = 2.0 * (nf - 1.0);
            let mut latency = BASE_LATENCY + steps * NET_LATENCY;
            if bytes / (u64::from(channels) * n as u64) >= 64 {
                latency *= 1.4;
            }
            Some(latency + size / (1000.0 * b * nf / steps))
        }
        AlgorithmKind::Tree => {
            let latency = BASE_LATENCY + 2.0 * f64::from(usize::BITS - 1 - n.leading_zeros()) * NET_LATENCY;
            let log = (bytes >> 6).checked_ilog2().map_or(-1, |l| l as i64);
            let correction = usize::try_from(log).ok().and_then(|l| TREE_CORRECTION.get(l).copied()).unwrap_or(1.0);
            let bw = 0.5 * (0.92 * b).min(TREE_CHANNEL_MAX * f64::from(channels)) * correction;
            Some(latency + size / (1000.0 * bw))
        }
        _ => None,
    }
}

/// The algorithm NCCL's tuner picks for `op` (see the module).
pub fn choose(op: Op, n: usize, bytes: u64, rate_bps: u64, channels: u32) -> AlgorithmKind {
    match op {
        Op::Allreduce => {
            let ring = estimate_us(AlgorithmKind::Ring, op, n, bytes, rate_bps, channels).unwrap_or(f64::INFINITY);
            let tree = estimate_us(AlgorithmKind::Tree, op, n, bytes, rate_bps, channels).unwrap_or(f64::INFINITY);
            // NCCL keeps the first of equal times, in its algorithm order (tree before ring)
            if tree <= ring {
                AlgorithmKind::Tree
            } else {
                AlgorithmKind::Ring
            }
        }
        other => AlgorithmKind::default_for(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G400: u64 = 400_000_000_000;

    #[test]
    fn the_tree_wins_where_latency_rules_and_the_ring_where_bandwidth_does() {
        // 16 ranks: the ring's 30 steps of 14 us lose to the tree's 8 until the buffer is large
        assert_eq!(choose(Op::Allreduce, 16, 1 << 10, G400, 2), AlgorithmKind::Tree);
        assert_eq!(choose(Op::Allreduce, 16, 4 << 30, G400, 2), AlgorithmKind::Ring);
        // 1024 ranks: the ring's 2046 steps cost 40 ms; the tree wins up to a few GB
        assert_eq!(choose(Op::Allreduce, 1024, 256 << 20, G400, 2), AlgorithmKind::Tree);
        // the crossover at 16 ranks, found by the estimates themselves, is between 1 and 256 MiB
        let cross = (10..=40).map(|k| 1u64 << k).find(|&s| choose(Op::Allreduce, 16, s, G400, 2) == AlgorithmKind::Ring).unwrap();
        assert!((1 << 20..=256 << 20).contains(&cross), "{cross}");
        // other collectives run as NCCL runs them over a network
        assert_eq!(choose(Op::Allgather, 16, 1 << 10, G400, 2), AlgorithmKind::Ring);
        assert_eq!(choose(Op::Alltoall, 16, 1 << 10, G400, 2), AlgorithmKind::Direct);
        // by hand: ring, 16 ranks, 1 GiB, 50 GB/s: 1.4 x (8.4 + 30 x 14) us + 2^30 / (1000 x 50 x 16 / 30) us
        let t = estimate_us(AlgorithmKind::Ring, Op::Allreduce, 16, 1 << 30, G400, 2).unwrap();
        assert!((t - (1.4 * 428.4 + (1u64 << 30) as f64 / (1000.0 * 50.0 * 16.0 / 30.0))).abs() < 1e-6, "{t}");
    }
}
