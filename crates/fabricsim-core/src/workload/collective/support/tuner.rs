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
//! A collective whose ranks are all GPUs of one server with a scale-up network is estimated as
//! NCCL estimates one node over NVLink instead (`on_nvlink`): NVLink's step latencies, the
//! GPU's port rate as the bus bandwidth, and NVLS (`algorithm = "nvls"`) among the candidates of
//! an allreduce, reduce_scatter or allgather where the switch reduces
//! (`topology.scale_up_nvls`).
//!
//! Other collectives run as NCCL runs them over a network without PAT or NVLS: reduce_scatter,
//! allgather and broadcast on the ring, alltoall as direct sends; a protocol left to the tuner
//! where it has no estimate (broadcast, the algorithms NCCL lacks) is Simple. An alltoall is
//! NCCL's grouped point-to-point sends (nccl-tests' `alltoall_perf`), whose protocol is not the
//! tuner's: LL where a peer's share is at most `NCCL_P2P_LL_THRESHOLD` (16 KiB, one channel),
//! Simple above (`src/enqueue.cc`).
//! Simplified: CollNet and PAT, and the topology search that sets `B` per channel, are not
//! modelled, nor several servers of several GPUs each (a group across servers is estimated as
//! one GPU a node); NCCL's own tuner may differ where those would win.

use super::super::{AlgorithmKind, Op, Ranks};
use super::nccl::{self, Hw, Protocol, ProtocolChoice};
use crate::registry::AlgorithmInfo;
use crate::topology::Topology;

/// `algorithm = "auto"`, as `fabricsim list` and the registry show it.
pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "auto",
    summary: "what NCCL's tuner runs: an allreduce on the ring or the tree by its cost model (one GPU per node, or one server's NVLink with NVLS; with protocol = \"auto\" its protocol too); alltoall direct; the rest on the ring (or NVLS on one server)",
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
/// On one node (NVLink): LL's ceiling on Hopper (`llMaxBws`, its N1 column) ...
const LL_MAX_NVLINK: f64 = 141.0;
/// ... NVLS's efficiency on Hopper (`nvlsEfficiency`) and its channels there
/// (`NVLS_NCHANNELS_SM90`, `src/transport/nvls.cc`).
const NVLS_EFFICIENCY: f64 = 0.85;
const NVLS_CHANNELS: f64 = 16.0;
/// The tree's correction by log2(bytes / 64), 64 B to 256 MiB, a row per protocol (LL, LL128,
/// Simple: `treeCorrectionFactor`).
const TREE_CORRECTION: [[f64; 24]; 3] = [
    [1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0],
    [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9, 0.9],
];

/// What a collective's ranks are joined by, as the tuner sees it: a network, each rank its own
/// node with a NIC of `rate_bps`, or (`nvlink`) the scale-up network of the one server that
/// holds them all, each GPU's port `rate_bps` each way, whose switch reduces (NVLS) if `nvls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub rate_bps: u64,
    pub nvlink: bool,
    pub nvls: bool,
}

impl Link {
    /// Ranks each on its own node, with NICs of `rate_bps`.
    pub fn net(rate_bps: u64) -> Link {
        Link { rate_bps, nvlink: false, nvls: false }
    }

    /// What joins the ranks on `hosts` (the scenario's host ids) of `topo`: the scale-up
    /// network of their one server if they share one that has it, else the network.
    pub fn of(topo: &Topology, hosts: &[u32]) -> Link {
        let one_server = Ranks { hosts, per_server: topo.nics() }.off_server().is_none();
        match topo.scale_up() {
            Some(up) if one_server => Link { rate_bps: up.rate, nvlink: true, nvls: up.nvls },
            _ => Link::net(topo.host_rate()),
        }
    }
}

/// NCCL's estimate of `op` by `algorithm` under `protocol` on `n` ranks, `bytes` a rank, over
/// `link`, with `channels` across a network: microseconds (`None`: NCCL has no such algorithm
/// for it here). Across a network its step latency is the network's with one GPU per node
/// ([`nccl::step_us`]); on one server's NVLink, `on_nvlink`'s.
pub fn estimate_us(algorithm: AlgorithmKind, protocol: Protocol, op: Op, n: usize, bytes: u64, link: Link, channels: u32) -> Option<f64> {
    if n < 2 {
        return None;
    }
    if link.nvlink {
        return on_nvlink(algorithm, protocol, op, n, bytes, link.rate_bps);
    }
    let (nf, b, c) = (n as f64, link.rate_bps as f64 / 8e9, f64::from(channels));
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
            let correction = correction(protocol, bytes);
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

/// NCCL's estimate on one node over NVLink (`ncclTopoTuneModel` with `nNodes == 1`: every
/// step NVLink's, no ring plateau), the GPU's port rate `rate_bps` taken as the bus bandwidth
/// its channels share (NCCL's topology search fills NVLink with channels; their per-channel
/// ceilings are left out): ring `base + steps x hw` at `R` (LL `min(R/2, 141)`, LL128
/// `0.92 R`); tree `base + 2 (n-1) hw` at `0.5 x 0.92 R` (LL `/3.8` up to 141, LL128 `x 7/9`)
/// times its correction; NVLS (Simple only) 25 us at `2 x 0.85 x 15/16 R x n / 2(n-1)` for an
/// allreduce, `0.85 x 15/16 R (n-1)/n` for reduce_scatter and allgather.
fn on_nvlink(algorithm: AlgorithmKind, protocol: Protocol, op: Op, n: usize, bytes: u64, rate_bps: u64) -> Option<f64> {
    let (nf, r, size) = (n as f64, rate_bps as f64 / 8e9, bytes as f64);
    let hw = |a| nccl::step_us(a, protocol, Hw::Nvlink, n as u32, 1);
    match (algorithm, op) {
        (AlgorithmKind::Ring, Op::Allreduce | Op::ReduceScatter | Op::Allgather) => {
            let steps = if op == Op::Allreduce { 2.0 * (nf - 1.0) } else { nf - 1.0 };
            let bus = match protocol {
                Protocol::Ll => (0.5 * r).min(LL_MAX_NVLINK),
                Protocol::Ll128 => 0.92 * r,
                Protocol::Simple => r,
            };
            Some(nccl::base_us(algorithm, protocol) + steps * hw(algorithm) + size / (1000.0 * bus * nf / steps))
        }
        (AlgorithmKind::Tree, Op::Allreduce) => {
            let latency = nccl::base_us(algorithm, protocol) + 2.0 * (nf - 1.0) * hw(algorithm);
            let tree = 0.92 * r;
            let bus = match protocol {
                Protocol::Ll => (tree / 3.8).min(LL_MAX_NVLINK),
                Protocol::Ll128 => tree * 7.0 / 9.0,
                Protocol::Simple => tree,
            };
            Some(latency + size / (1000.0 * 0.5 * bus * correction(protocol, bytes)))
        }
        (AlgorithmKind::Nvls, Op::Allreduce | Op::ReduceScatter | Op::Allgather) if protocol == Protocol::Simple => {
            let intra = r * NVLS_EFFICIENCY * (NVLS_CHANNELS - 1.0) / NVLS_CHANNELS;
            let algbw = if op == Op::Allreduce { 2.0 * intra * nf / (2.0 * (nf - 1.0)) } else { intra * (nf - 1.0) / nf };
            Some(nccl::NVLS_NVLINK_US + size / (1000.0 * algbw))
        }
        _ => None,
    }
}

/// The tree's correction for `bytes` under `protocol` (`treeCorrectionFactor`).
fn correction(protocol: Protocol, bytes: u64) -> f64 {
    let log = (bytes >> 6).checked_ilog2().map_or(-1, |l| l as i64);
    usize::try_from(log).ok().and_then(|l| TREE_CORRECTION[protocol as usize].get(l).copied()).unwrap_or(1.0)
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
    link: Link,
    channels: u32,
) -> Option<(AlgorithmKind, Protocol)> {
    let mut best: Option<((AlgorithmKind, Protocol), f64)> = None;
    for &a in algorithms {
        for &p in protocols {
            let Some(t) = estimate_us(a, p, op, n, bytes, link, channels) else { continue };
            if best.is_none_or(|(_, b)| t < b) {
                best = Some(((a, p), t));
            }
        }
    }
    best.map(|(x, _)| x)
}

/// The algorithm and protocol a job runs: the given ones, or where `auto` (an algorithm of
/// `None`: auto), what the tuner picks among NCCL's for `op` over `link` (an allreduce: tree or
/// ring, and NVLS on a server's switch that reduces; reduce_scatter and allgather: the ring,
/// or NVLS there; the rest as NCCL runs them over a network). A protocol left to the tuner for
/// an algorithm it has no estimate for is Simple.
pub fn resolve(
    algorithm: Option<AlgorithmKind>,
    protocol: ProtocolChoice,
    op: Op,
    n: usize,
    bytes: u64,
    link: Link,
    channels: u32,
) -> (AlgorithmKind, Protocol) {
    use AlgorithmKind::{Nvls, Ring, Tree};
    let fallback = algorithm.unwrap_or(AlgorithmKind::default_for(op));
    if op == Op::Alltoall {
        // NCCL's grouped point-to-point sends, each peer's share by the p2p rule
        return (fallback, protocol.p2p(bytes.div_ceil(n.max(1) as u64)));
    }
    // in NCCL's order (tree, ring, ..., NVLS): it keeps the first of equal estimates
    let algorithms: &[AlgorithmKind] = match algorithm {
        None if op == Op::Allreduce && link.nvls => &[Tree, Ring, Nvls],
        None if op == Op::Allreduce => &[Tree, Ring],
        None if matches!(op, Op::ReduceScatter | Op::Allgather) && link.nvls => &[Ring, Nvls],
        _ => std::slice::from_ref(&fallback),
    };
    let protocols = protocol.candidates();
    best(algorithms, protocols, op, n, bytes, link, channels)
        .unwrap_or((fallback, if protocols.len() == 1 { protocols[0] } else { Protocol::Simple }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The algorithm NCCL's tuner picks for `op` under Simple.
    fn choose(op: Op, n: usize, bytes: u64, rate_bps: u64, channels: u32) -> AlgorithmKind {
        resolve(None, ProtocolChoice::Simple, op, n, bytes, Link::net(rate_bps), channels).0
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
        let t = estimate_us(AlgorithmKind::Ring, Protocol::Simple, Op::Allreduce, 16, 1 << 30, Link::net(G400), 2).unwrap();
        assert!((t - (1.4 * 428.4 + (1u64 << 30) as f64 / (1000.0 * 50.0 * 16.0 / 30.0))).abs() < 1e-6, "{t}");
    }

    #[test]
    fn the_protocols_estimates_are_the_ones_docs_workloads_md_quotes() {
        // 16 ranks, 400 Gb/s, 2 channels (docs/workloads.md, "NCCL's protocols and latencies"):
        // at 512 KiB LL is capped at 20.4 GB/s, 6.6 + 30 x 5 + 2^19 / (20.4 x 16/30) us
        let ring = |p, bytes| estimate_us(AlgorithmKind::Ring, p, Op::Allreduce, 16, bytes, Link::net(G400), 2).unwrap();
        assert_eq!(format!("{:.0}", ring(Protocol::Ll, 512 << 10)), "205");
        // at 32 MiB LL128 (14 + 30 x 8.5, at 0.92 of the NIC) beats Simple (its plateau)
        assert_eq!(format!("{:.2}", ring(Protocol::Ll128, 32 << 20) / 1e3), "1.64");
        assert_eq!(format!("{:.2}", ring(Protocol::Simple, 32 << 20) / 1e3), "1.86");
        assert_eq!(
            resolve(Some(AlgorithmKind::Ring), ProtocolChoice::Auto, Op::Allreduce, 16, 32 << 20, Link::net(G400), 2).1,
            Protocol::Ll128
        );
    }

    #[test]
    fn on_one_servers_nvlink_the_tuner_takes_ll_for_small_buffers_and_nvls_from_about_a_megabyte() {
        // 8 GPUs at 450 GB/s each way: ring LL costs 6.6 + 14 x 0.6 = 15 us at min(225, 141)
        // GB/s x 8/14; NVLS 25 us at 2 x 0.85 x 15/16 x 450 x 8/14 = 409.8 GB/s: equal near 1 MB
        let nvlink = Link { rate_bps: 3_600_000_000_000, nvlink: true, nvls: true };
        let pick = |link, bytes| resolve(None, ProtocolChoice::Auto, Op::Allreduce, 8, bytes, link, 2);
        assert_eq!(pick(nvlink, 64 << 10), (AlgorithmKind::Ring, Protocol::Ll));
        assert_eq!(pick(nvlink, 960 << 10), (AlgorithmKind::Ring, Protocol::Ll));
        assert_eq!(pick(nvlink, 1 << 20), (AlgorithmKind::Nvls, Protocol::Simple));
        assert_eq!(pick(nvlink, 1 << 30), (AlgorithmKind::Nvls, Protocol::Simple));
        let t = estimate_us(AlgorithmKind::Nvls, Protocol::Simple, Op::Allreduce, 8, 1 << 30, nvlink, 2).unwrap();
        assert!((t - (25.0 + (1u64 << 30) as f64 / (1000.0 * 2.0 * 0.85 * 15.0 / 16.0 * 450.0 * 8.0 / 14.0))).abs() < 1e-6, "{t}");
        // without NVLS the ring: Simple (450 GB/s) beats LL128 (0.92 of it) once large
        let plain = Link { nvls: false, ..nvlink };
        assert_eq!(pick(plain, 1 << 30), (AlgorithmKind::Ring, Protocol::Simple));
        // reduce_scatter: NCCL's model gives NVLS 0.85 x 15/16 x 7/8 x 450 = 314 GB/s against
        // the ring's 450 x 8/7 = 514 (its bus-to-algorithm ratio): the ring; NVLS has no LL
        let rs = |bytes| resolve(None, ProtocolChoice::Auto, Op::ReduceScatter, 8, bytes, nvlink, 2);
        assert_eq!(rs(1 << 30), (AlgorithmKind::Ring, Protocol::Simple));
        let t = estimate_us(AlgorithmKind::Nvls, Protocol::Simple, Op::ReduceScatter, 8, 1 << 30, nvlink, 2).unwrap();
        assert!((t - (25.0 + (1u64 << 30) as f64 / (1000.0 * 0.85 * 15.0 / 16.0 * 450.0 * 7.0 / 8.0))).abs() < 1e-6, "{t}");
        assert!(estimate_us(AlgorithmKind::Nvls, Protocol::Ll, Op::Allreduce, 8, 1 << 30, nvlink, 2).is_none());
        // across a network NVLS is never a candidate
        assert!(estimate_us(AlgorithmKind::Nvls, Protocol::Simple, Op::Allreduce, 8, 1 << 30, Link::net(G400), 2).is_none());
    }
}
