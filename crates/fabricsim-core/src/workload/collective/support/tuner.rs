//! `algorithm = "auto"` and `protocol = "auto"`: what NCCL's tuner picks.
//!
//! NCCL estimates each (algorithm, protocol) as `latency + bytes / bandwidth` and runs the
//! fastest (`ncclTopoGetAlgoTime` in `src/graph/tuning.cc`, with its constants and refinements
//! from `ncclTopoTuneModel` in the same file). fabricsim has two of NCCL's allreduce algorithms,
//! ring and the double binary tree, and NCCL's three protocols (LL, LL128, Simple:
//! [`super::nccl`]), so it compares those, with each rank its own node (one GPU per node,
//! `ppn = 1`; a Hopper GPU and an Intel host, the defaults):
//!
//! - latency, us: ring `base + 2 (n-1) x net`, under Simple times 1.4 once each rank's share of
//!   a channel is 64 bytes or more (the "plateau" refinement); tree `base + 2 log2(n) x net`
//!   (`base`: the protocol's base latency, 6.6 / 14 / 8.4 for the ring's LL / LL128 / Simple,
//!   6.8 / 14 / 8.4 the tree's; `net`: the network's step latency, which NCCL takes from the
//!   tree for both with one GPU per node: 5 / 8.5 / 14);
//! - bandwidth, GB/s of the buffer: ring `bus n / (2 (n-1))` (`n / (n-1)` for reduce_scatter
//!   and allgather) with `bus` = `B` under Simple, `min(0.5 B, 20.4)` under LL,
//!   `min(0.92 B, 36.7 c)` under LL128; tree `0.5 bus` with `bus` = `min(0.92 B, 36 c)` under
//!   Simple, its `min(bus / 3.8, 20.4)` under LL and `min(bus x 120/128, 29 c)` under LL128,
//!   times the tree correction factor of the buffer's size and protocol
//!   (`treeCorrectionFactor`), `B` the NIC's rate and `c` the channels (Hopper's per-channel
//!   ceilings with four or more nodes; 20.4 GB/s: LL's ceiling across nodes on Intel hosts).
//!
//! Other collectives run as NCCL runs them over a network without PAT or NVLS: reduce_scatter,
//! allgather and broadcast on the ring, alltoall as direct sends; a protocol left to the tuner
//! where it has no estimate (broadcast, alltoall, the algorithms NCCL lacks) is Simple.
//! Simplified: CollNet and PAT, and the topology search that sets `B` per channel, are not
//! modelled, and NVLS (`algorithm = "nvls"`) runs only where a job names it; NCCL's own tuner may
//! differ where those would win or where a server holds several ranks.

use super::super::{AlgorithmKind, Op};
use super::nccl::{self, Hw, Protocol, ProtocolChoice};
use crate::registry::AlgorithmInfo;

/// `algorithm = "auto"`, as `fabricsim list` and the registry show it.
pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "auto",
    summary: "what NCCL's tuner runs: an allreduce on the ring or the tree by its cost model (one GPU per node; with protocol = \"auto\" its protocol too); alltoall direct; the rest on the ring",
    reference: "NCCL src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime)",
};

/// Hopper's per-channel tree bandwidth with four or more nodes, GB/s (`perChMaxTreeBws`) ...
const TREE_CHANNEL_MAX: f64 = 36.0;
/// ... its per-channel ring and tree bandwidths under LL128 (`perChMaxRingLL128Bws`,
/// `perChMaxTreeLL128Bws`) ...
const RING_LL128_CHANNEL_MAX: f64 = 36.7;
const TREE_LL128_CHANNEL_MAX: f64 = 29.0;
/// ... and LL's ceiling across nodes on an Intel host (`llMaxBws`).
const LL_MAX: f64 = 20.4;
/// The tree's correction by log2(bytes / 64), 64 B to 256 MiB, a row per protocol (LL, LL128,
/// Simple: `treeCorrectionFactor`).
const TREE_CORRECTION: [[f64; 24]; 3] = [
    [1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0],
    [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9, 0.9],
];

/// NCCL's estimate of `op` by `algorithm` under `protocol` on `n` ranks, `bytes` a rank,
/// `rate_bps` a NIC, over `channels`: microseconds (`None`: NCCL has no such algorithm for it
/// here). Its step latency is the network's with one GPU per node ([`nccl::step_us`]).
pub fn estimate_us(
    algorithm: AlgorithmKind,
    protocol: Protocol,
    op: Op,
    n: usize,
    bytes: u64,
    rate_bps: u64,
    channels: u32,
) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let (nf, b, c) = (n as f64, rate_bps as f64 / 8e9, f64::from(channels));
    let size = bytes as f64;
    let latency = |steps: f64| nccl::base_us(algorithm, protocol) + steps * nccl::step_us(algorithm, protocol, Hw::Net, 1, n as u32);
    match (algorithm, op) {
        (AlgorithmKind::Ring, Op::Allreduce | Op::ReduceScatter | Op::Allgather) => {
            let steps = if op == Op::Allreduce { 2.0 * (nf - 1.0) } else { nf - 1.0 };
            let mut latency = latency(steps);
            let plateau = op == Op::Allreduce && protocol == Protocol::Simple;
            if plateau && bytes / (u64::from(channels) * n as u64) >= 64 {
                latency *= 1.4;
            }
            let bus = match protocol {
                Protocol::Ll => (0.5 * b).min(LL_MAX),
                Protocol::Ll128 => (0.92 * b).min(RING_LL128_CHANNEL_MAX * c),
                Protocol::Simple => b,
            };
            Some(latency + size / (1000.0 * bus * nf / steps))
        }
        (AlgorithmKind::Tree, Op::Allreduce) => {
            let latency = latency(2.0 * f64::from(usize::BITS - 1 - n.leading_zeros()));
            let log = (bytes >> 6).checked_ilog2().map_or(-1, |l| l as i64);
            let correction = usize::try_from(log).ok().and_then(|l| TREE_CORRECTION[protocol as usize].get(l).copied()).unwrap_or(1.0);
            let tree = (0.92 * b).min(TREE_CHANNEL_MAX * c);
            let bus = match protocol {
                Protocol::Ll => (tree / 3.8).min(LL_MAX),
                Protocol::Ll128 => (tree * 120.0 / 128.0).min(TREE_LL128_CHANNEL_MAX * c),
                Protocol::Simple => tree,
            };
            Some(latency + size / (1000.0 * 0.5 * bus * correction))
        }
        _ => None,
    }
}

/// What NCCL's tuner runs of `algorithms` (in NCCL's order) under `protocols` (in NCCL's
/// order): the fastest by [`estimate_us`], the first of equal ones; `None` if it has an
/// estimate for none.
pub fn best(
    algorithms: &[AlgorithmKind],
    protocols: &[Protocol],
    op: Op,
    n: usize,
    bytes: u64,
    rate_bps: u64,
    channels: u32,
) -> Option<(AlgorithmKind, Protocol)> {
    let mut best: Option<((AlgorithmKind, Protocol), f64)> = None;
    for &a in algorithms {
        for &p in protocols {
            let Some(t) = estimate_us(a, p, op, n, bytes, rate_bps, channels) else { continue };
            if best.is_none_or(|(_, b)| t < b) {
                best = Some(((a, p), t));
            }
        }
    }
    best.map(|(x, _)| x)
}

/// The algorithm and protocol a job runs: the given ones, or where `auto` (an algorithm of
/// `None`: auto), what the tuner picks among NCCL's for `op` (an allreduce: tree or ring; the
/// rest as NCCL runs them over a network). A protocol left to the tuner for an algorithm it
/// has no estimate for is Simple.
pub fn resolve(
    algorithm: Option<AlgorithmKind>,
    protocol: ProtocolChoice,
    op: Op,
    n: usize,
    bytes: u64,
    rate_bps: u64,
    channels: u32,
) -> (AlgorithmKind, Protocol) {
    let fallback = algorithm.unwrap_or(AlgorithmKind::default_for(op));
    let algorithms: &[AlgorithmKind] = match algorithm {
        None if op == Op::Allreduce => &[AlgorithmKind::Tree, AlgorithmKind::Ring],
        _ => std::slice::from_ref(&fallback),
    };
    let protocols = protocol.candidates();
    best(algorithms, protocols, op, n, bytes, rate_bps, channels)
        .unwrap_or((fallback, if protocols.len() == 1 { protocols[0] } else { Protocol::Simple }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The algorithm NCCL's tuner picks for `op` under Simple.
    fn choose(op: Op, n: usize, bytes: u64, rate_bps: u64, channels: u32) -> AlgorithmKind {
        resolve(None, ProtocolChoice::Simple, op, n, bytes, rate_bps, channels).0
    }

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
        let t = estimate_us(AlgorithmKind::Ring, Protocol::Simple, Op::Allreduce, 16, 1 << 30, G400, 2).unwrap();
        assert!((t - (1.4 * 428.4 + (1u64 << 30) as f64 / (1000.0 * 50.0 * 16.0 / 30.0))).abs() < 1e-6, "{t}");
    }

    #[test]
    fn the_protocols_estimates_are_the_ones_docs_workloads_md_quotes() {
        // 16 ranks, 400 Gb/s, 2 channels (docs/workloads.md, "NCCL's protocols and latencies"):
        // at 512 KiB LL is capped at 20.4 GB/s, 6.6 + 30 x 5 + 2^19 / (20.4 x 16/30) us
        let ring = |p, bytes| estimate_us(AlgorithmKind::Ring, p, Op::Allreduce, 16, bytes, G400, 2).unwrap();
        assert_eq!(format!("{:.0}", ring(Protocol::Ll, 512 << 10)), "205");
        // at 32 MiB LL128 (14 + 30 x 8.5, at 0.92 of the NIC) beats Simple (its plateau)
        assert_eq!(format!("{:.2}", ring(Protocol::Ll128, 32 << 20) / 1e3), "1.64");
        assert_eq!(format!("{:.2}", ring(Protocol::Simple, 32 << 20) / 1e3), "1.86");
        assert_eq!(resolve(Some(AlgorithmKind::Ring), ProtocolChoice::Auto, Op::Allreduce, 16, 32 << 20, G400, 2).1, Protocol::Ll128);
    }
}
