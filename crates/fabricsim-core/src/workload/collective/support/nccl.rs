//! What NCCL's own stack adds to a collective's messages: its protocol's bytes on the wire and
//! its latency per collective and per step (`[[jobs]] protocol`, `[[jobs]] costs = "nccl"`).
//!
//! **Protocols** (NCCL's `src/include/device.h`). *Simple* sends the data as it is. *LL* (low
//! latency) writes 16-byte lines of 8 data bytes and two 4-byte flags (`union
//! ncclLLFifoLine`): twice the bytes, no separate synchronization. *LL128* writes 128-byte lines
//! of 120 data bytes and an 8-byte flag (`NCCL_LL128_LINEELEMS` 16, `NCCL_LL128_DATAELEMS` 15
//! words of 8 bytes). A message of `b` data bytes thus carries `b`, `16 ceil(b/8)` or
//! `128 ceil(b/120)` bytes.
//!
//! **Latencies** (NCCL's tuner constants, `ncclTunerConstantsDefaults` in `src/graph/tuning.cc`,
//! and how `ncclTopoTuneModel` composes them): a collective costs `baseLatencies[algorithm]
//! [protocol]` once, and each step `hwLatencies[link][algorithm][protocol]`: the network's
//! (`NET`) for a step between servers (with one rank a server, `ppn = 1`, the tree's network
//! latency for every algorithm, as NCCL's "latencies are fully exposed" case), NVLink's for a
//! step inside a server, which a ring spanning servers raises to at least NCCL's network post
//! overhead (`getNetOverhead`: 1 us on an Intel host, 3 us under Simple). NCCL's step latency
//! is the whole step's, the fabric's flight included; fabricsim simulates the fabric, so a step
//! adds NCCL's latency less the pair's idle one-way latency (an empty packet's over the shortest
//! path, [`crate::topology::Routes::notice_latency`]), never less than nothing: a small
//! message's step on an idle fabric then takes NCCL's latency, and congestion adds to it.
//!
//! A step's latency is added to the message that step sends, on top of what it waits for (its
//! release); a collective's base latency to each rank's first messages of each call. A
//! point-to-point send (a training job's pipeline) is one step, LL up to 16 KiB and Simple
//! above when left to NCCL (`NCCL_P2P_LL_THRESHOLD`, `src/enqueue.cc`), with no base latency.
//! Algorithms NCCL does not have (direct, halving-doubling, hierarchical) take the ring's
//! constants. Simplified: the tuner's graph latency (`latencyInter`, NCCL's topology search;
//! zero on the InfiniBand and RoCE NICs NCCL's search reports) and the `numPipeOps` batching of
//! several collectives are not modelled; Hopper GPUs and Intel hosts, as the tuner's defaults
//! here ([`super::tuner`]).

use serde::{Deserialize, Serialize};

use super::super::AlgorithmKind;
use crate::time::Time;

/// `[[jobs]] protocol`: NCCL's protocol, or what its tuner picks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProtocolChoice {
    /// What NCCL's tuner picks with the algorithm, by its cost model.
    Auto,
    /// The data as it is.
    #[default]
    Simple,
    /// 16-byte lines of 8 data bytes and two flags.
    Ll,
    /// 128-byte lines of 120 data bytes and a flag.
    Ll128,
}

/// One of NCCL's protocols, in NCCL's order (`NCCL_PROTO_LL`, `NCCL_PROTO_LL128`,
/// `NCCL_PROTO_SIMPLE`): its tuner keeps the first of equal estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    Ll = 0,
    Ll128 = 1,
    Simple = 2,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];

    /// Bytes a message of `bytes` data bytes carries under this protocol.
    pub fn wire(self, bytes: u64) -> u64 {
        match self {
            Protocol::Simple => bytes,
            Protocol::Ll => bytes.div_ceil(8) * 16,
            Protocol::Ll128 => bytes.div_ceil(120) * 128,
        }
    }
}

impl ProtocolChoice {
    /// The protocols a choice leaves to the tuner (one where it is fixed).
    pub fn candidates(self) -> &'static [Protocol] {
        match self {
            ProtocolChoice::Auto => &Protocol::ALL,
            ProtocolChoice::Simple => &[Protocol::Simple],
            ProtocolChoice::Ll => &[Protocol::Ll],
            ProtocolChoice::Ll128 => &[Protocol::Ll128],
        }
    }

    /// The protocol of a point-to-point send of `bytes` (a pipeline send, an alltoall's share
    /// to one peer): the one given, or NCCL's p2p choice, LL up to 16 KiB (`NCCL_P2P_LL_THRESHOLD`) and
    /// Simple above, not the tuner's.
    pub fn p2p(self, bytes: u64) -> Protocol {
        match self {
            ProtocolChoice::Auto if bytes <= P2P_LL_THRESHOLD => Protocol::Ll,
            ProtocolChoice::Auto => Protocol::Simple,
            fixed => fixed.candidates()[0],
        }
    }
}

/// `[[jobs]] costs`: what the real stack costs beyond the fabric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CostsModel {
    /// None: a message costs its bytes and hops.
    #[default]
    None,
    /// NCCL's latency per collective and per step (its tuner's constants).
    Nccl,
}

/// Where a step crosses: NCCL's `NCCL_HW_NVLINK`, `NCCL_HW_PCI`, `NCCL_HW_NET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hw {
    Nvlink = 0,
    Net = 2,
}

/// NCCL's row of an algorithm: its tree's, or its ring's (every other algorithm here).
fn row(algorithm: AlgorithmKind) -> usize {
    match algorithm {
        AlgorithmKind::Tree => 0,
        _ => 1,
    }
}

/// `baseLatencies`, us: [tree, ring][LL, LL128, Simple].
const BASE_US: [[f64; 3]; 2] = [[6.8, 14.0, 8.4], [6.6, 14.0, 8.4]];
/// `hwLatencies`, us: [NVLINK, PCI, NET][tree, ring][LL, LL128, Simple].
const HW_US: [[[f64; 3]; 2]; 3] =
    [[[0.6, 1.25, 4.0], [0.6, 1.9, 3.4]], [[1.0, 1.9, 4.0], [1.0, 2.5, 5.7]], [[5.0, 8.5, 14.0], [2.7, 4.0, 14.0]]];
/// `hwLatencies[NCCL_HW_NVLINK][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE]`, us: a one-server NVLS
/// collective's whole latency.
pub const NVLS_NVLINK_US: f64 = 25.0;
/// Bytes at most a channel's point-to-point send takes LL for (`NCCL_P2P_LL_THRESHOLD`'s
/// default, NCCL's `src/enqueue.cc`: LL where a send's bytes are at most its channels times
/// this, a send this small taking one channel); Simple above.
const P2P_LL_THRESHOLD: u64 = 16384;
/// `getNetOverhead` on an Intel host, us (Simple pays it three times).
const NET_OVERHEAD_US: f64 = 1.0;

/// Microseconds as picoseconds (the constants have at most two decimals: exact).
fn ps(us: f64) -> Time {
    (us * 1e6).round() as Time
}

/// NCCL's base latency of `algorithm` under `protocol`, us.
pub fn base_us(algorithm: AlgorithmKind, protocol: Protocol) -> f64 {
    BASE_US[row(algorithm)][protocol as usize]
}

/// NCCL's latency of a step of `algorithm` under `protocol` across `hw`, us, for a collective
/// of `ppn` ranks a server over `servers` servers (as `ncclTopoTuneModel` composes it).
pub fn step_us(algorithm: AlgorithmKind, protocol: Protocol, hw: Hw, ppn: u32, servers: u32) -> f64 {
    let p = protocol as usize;
    match hw {
        // with one rank a server, the tree's network latency for every algorithm
        Hw::Net if ppn == 1 => HW_US[Hw::Net as usize][0][p],
        Hw::Net => HW_US[Hw::Net as usize][row(algorithm)][p],
        Hw::Nvlink => {
            let lat = HW_US[Hw::Nvlink as usize][row(algorithm)][p];
            // an inter-server ring's intra-server steps still launch a network post each
            if algorithm != AlgorithmKind::Tree && servers > 1 {
                lat.max(NET_OVERHEAD_US * if protocol == Protocol::Simple { 3.0 } else { 1.0 })
            } else {
                lat
            }
        }
    }
}

/// A job's NCCL costs, resolved: its protocol and, with `costs = "nccl"`, its latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepCosts {
    pub protocol: Protocol,
    /// Each rank's first messages of an iteration wait this long more (the base latency).
    pub base: Time,
    /// A step between servers (over the fabric) ...
    pub net: Time,
    /// ... and inside one (over its scale-up network): NCCL's whole-step latency.
    pub nvlink: Time,
}

impl StepCosts {
    /// Costs of `algorithm` under `protocol` for `ppn` ranks a server over `servers`, NCCL's
    /// latencies counted if `latencies`.
    pub fn new(algorithm: AlgorithmKind, protocol: Protocol, latencies: bool, ppn: u32, servers: u32) -> StepCosts {
        if !latencies {
            return StepCosts { protocol, base: 0, net: 0, nvlink: 0 };
        }
        if algorithm == AlgorithmKind::Nvls {
            // on one server NCCL's whole NVLS latency is its NVLink row's, once a call
            // (`latencies = intraLat`: its base latency is 0, its steps are not counted)
            return StepCosts { protocol, base: ps(NVLS_NVLINK_US), net: 0, nvlink: 0 };
        }
        StepCosts {
            protocol,
            base: ps(base_us(algorithm, protocol)),
            net: ps(step_us(algorithm, protocol, Hw::Net, ppn, servers)),
            nvlink: ps(step_us(algorithm, protocol, Hw::Nvlink, ppn, servers)),
        }
    }

    /// What a step adds to its message's release: NCCL's latency of the step less the pair's
    /// idle one-way latency `idle`, never below zero.
    pub fn step(&self, scale_up: bool, idle: Time) -> Time {
        (if scale_up { self.nvlink } else { self.net }).saturating_sub(idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_carry_their_flags() {
        assert_eq!(Protocol::Simple.wire(1000), 1000);
        // LL: 8 data bytes a 16-byte line; LL128: 120 a 128-byte line
        assert_eq!((Protocol::Ll.wire(8), Protocol::Ll.wire(9), Protocol::Ll.wire(1 << 20)), (16, 32, 2 << 20));
        assert_eq!((Protocol::Ll128.wire(120), Protocol::Ll128.wire(121), Protocol::Ll128.wire(1)), (128, 256, 128));
    }

    #[test]
    fn latencies_are_nccls_constants() {
        let ring = AlgorithmKind::Ring;
        // one rank a server: the tree's network latency for the ring too
        assert_eq!(step_us(ring, Protocol::Ll, Hw::Net, 1, 16), 5.0);
        assert_eq!(step_us(ring, Protocol::Ll, Hw::Net, 8, 16), 2.7);
        assert_eq!(step_us(ring, Protocol::Simple, Hw::Net, 8, 16), 14.0);
        // NVLink inside a server, raised to the network post overhead when the ring leaves it
        assert_eq!(step_us(ring, Protocol::Simple, Hw::Nvlink, 8, 1), 3.4);
        assert_eq!(step_us(ring, Protocol::Simple, Hw::Nvlink, 8, 2), 3.4);
        assert_eq!(step_us(ring, Protocol::Ll, Hw::Nvlink, 8, 2), 1.0);
        assert_eq!(step_us(AlgorithmKind::Tree, Protocol::Ll, Hw::Nvlink, 8, 2), 0.6);
        let c = StepCosts::new(ring, Protocol::Simple, true, 1, 4);
        assert_eq!((c.base, c.net), (8_400_000, 14_000_000));
        assert_eq!(c.step(false, 2_000_000), 12_000_000);
        assert_eq!(c.step(false, 20_000_000), 0, "never below zero");
        assert_eq!(StepCosts::new(ring, Protocol::Ll, false, 1, 4), StepCosts { protocol: Protocol::Ll, base: 0, net: 0, nvlink: 0 });
    }
}
