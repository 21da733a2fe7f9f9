//! Fat trees of 2 and 3 tiers, built from (hosts, switch radix, tiers, tier-0 oversubscription).
//!
//! Shape (k = radix, o = oversubscription, u = k/(1+o) leaf uplinks, d = k - u hosts per leaf):
//! - 2 tiers (leaf-spine): `hosts/d` leaves, `u` spines, every leaf has one link to every
//!   spine. A spine uses one port per leaf, so at most k leaves. PRIME Table I: 128 / 2048 /
//!   8192 hosts with 16 / 64 / 128 ports; the 1024-host 32x32 leaf-spine is 1024 hosts, radix 64.
//! - 3 tiers (leaf-aggregation-core, k-ary fat tree): pods of k/2 leaves and u aggregation
//!   switches (each leaf links to every aggregation switch of its pod); aggregation switch g
//!   of every pod links to the k/2 cores of core group g; a core has one port per pod, so at
//!   most k pods. 1024 hosts with k = 16 is the full k^3/4 tree.
//!
//! The tree is one generator of the model's graph (nodes and ports, [`Topology`]); switches
//! route by the forwarding tables built from that graph ([`tables`]), not by the tree's shape.
//! Numbering: hosts `0..H`, then switches tier by tier; each node's ports are contiguous, down
//! ports first (towards hosts), then up ports. Host nodes are leaf slots: with
//! `nics_per_server` and `rails`, the scenario's host ids are mapped to slots once, when the
//! model is built, and back in the results ([`FatTreeSpec::slot`]). Link tiers: 0 = host-leaf, 1 = leaf-up,
//! 2 = aggregation-core.

mod build;
pub mod cut;
pub mod detour;
pub mod file;
pub mod generators;
pub mod graph;
mod model;
pub mod paths;
pub mod tables;

use crate::error::{ensure, ScenarioError};
use crate::time::Time;
use crate::units::Duration;
pub use cut::{Cut, Share, Slots};
pub use detour::{Detours, GroupRouting};
pub use generators::{fat_tree, Generator, Shared, TopologyConfig};
pub use model::{HostMap, Node, PortInfo, Topology};
pub use paths::{Hop, Route, RouteKey, Routes};
pub use tables::{Next, Restriction, Tables};

/// The topology kinds, for the registry (`fabricsim list`).
pub const KINDS: &[crate::registry::AlgorithmInfo] = TopologyConfig::KINDS;

/// The checked shape of a fat tree.
#[derive(Debug, Clone)]
pub struct FatTreeSpec {
    pub tiers: u32,
    pub hosts: u32,
    pub radix: u32,
    /// Hosts per leaf.
    pub down0: u32,
    /// Uplinks per leaf.
    pub up0: u32,
    pub leaves: u32,
    /// Leaves per pod (3 tiers) or all leaves (2 tiers).
    pub leaves_per_pod: u32,
    pub pods: u32,
    /// Rate (bit/s) of each link tier.
    pub tier_rates: Vec<u64>,
    /// Propagation latency (ps) of each link tier.
    pub tier_latencies: Vec<Time>,
    pub switch_latency: Time,
    /// NICs per server (its GPUs x their NICs each).
    pub nics: u32,
    /// NICs per GPU (`nics_per_gpu`): `hosts` counts NICs, the scenario's hosts are GPUs
    /// (`hosts / per_gpu`), GPU `g`'s NIC `i` is NIC `g * per_gpu + i` of the fabric.
    pub per_gpu: u32,
    /// Rail-optimized: hosts and leaf slots are numbered apart (see [`FatTreeSpec::slot`]).
    pub rails: bool,
    /// The servers' scale-up network, if they have one.
    pub scale_up: Option<ScaleUp>,
}

/// How big a fabric's graph is: what its memory estimate counts. A generator states it before
/// the graph is built, so that a fabric too large for the machine is refused first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphSize {
    pub hosts: u64,
    pub switches: u64,
    /// Ports (both directions of every link).
    pub ports: u64,
    /// Destination classes: the edge switches.
    pub classes: u64,
}

/// A server's scale-up network: a non-blocking switch joining its GPUs (one per NIC), each
/// with a port of `rate` bit/s, `latency` from one GPU to another (docs/model.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleUp {
    pub rate: u64,
    pub latency: Time,
    /// Its switch reduces and multicasts (NVLink SHARP).
    pub nvls: bool,
}

impl FatTreeSpec {
    pub fn new(t: &fat_tree::Config) -> Result<FatTreeSpec, ScenarioError> {
        ensure(t.tiers == 2 || t.tiers == 3, "topology.tiers", t.tiers, "allowed: 2 or 3")?;
        // up to a whole cluster on one switch: the non-blocking reference (`--reference`) is one
        ensure(t.radix >= 2 && t.radix <= 1 << 20, "topology.radix", t.radix, "allowed: 2 to 1048576 ports")?;
        ensure(t.oversubscription >= 1, "topology.oversubscription", t.oversubscription, "allowed: 1 or more (down:up ratio)")?;
        let k = t.radix;
        ensure(
            k.is_multiple_of(1 + t.oversubscription),
            "topology.oversubscription",
            t.oversubscription,
            format!("allowed: a ratio o where radix ({k}) is divisible by 1 + o"),
        )?;
        let up0 = k / (1 + t.oversubscription);
        let down0 = k - up0;
        ensure(t.hosts >= 2, "topology.hosts", t.hosts, "allowed: at least 2")?;
        let g = t.nics_per_gpu;
        ensure((1..=16).contains(&g), "topology.nics_per_gpu", g, "allowed: 1 to 16")?;
        // the fabric's hosts are NICs: the scenario's hosts (GPUs) times their NICs each
        let nodes = t.hosts.checked_mul(g).filter(|&n| n <= 1 << 30);
        let nodes = nodes.ok_or_else(|| {
            ScenarioError::new("topology.hosts", t.hosts, format!("allowed: at most {} with {g} NICs a GPU", (1u32 << 30) / g))
        })?;
        // where GPUs have several NICs, the tree's counts are of NICs: the errors say so
        let allowed = |what: String| match g {
            1 => format!("allowed: {what}"),
            _ => format!("allowed, counted in NICs ({g} a GPU, {nodes} in all): {what}"),
        };
        let tiers = t.tiers as usize;
        for (name, len) in
            [("topology.tier_link_rates", t.tier_link_rates.len()), ("topology.tier_link_latencies", t.tier_link_latencies.len())]
        {
            ensure(len == 0 || len == tiers, name, format!("{len} entries"), format!("allowed: none or one per link tier ({tiers})"))?;
        }
        let tier_rates: Vec<u64> =
            if t.tier_link_rates.is_empty() { vec![t.link_rate.0; tiers] } else { t.tier_link_rates.iter().map(|r| r.0).collect() };
        let tier_latencies: Vec<Time> = if t.tier_link_latencies.is_empty() {
            vec![t.link_latency.0; tiers]
        } else {
            t.tier_link_latencies.iter().map(|l| l.0).collect()
        };
        // the field the user wrote: link_rate, unless the per-tier list overrides it
        ensure(t.link_rate.0 > 0, "topology.link_rate", t.link_rate, "allowed: a positive rate")?;
        for (i, r) in t.tier_link_rates.iter().enumerate() {
            ensure(r.0 > 0, &format!("topology.tier_link_rates[{i}]"), r, "allowed: a positive rate")?;
        }

        let (leaves_per_pod, pods) = if t.tiers == 2 {
            ensure(
                nodes.is_multiple_of(down0),
                "topology.hosts",
                t.hosts,
                allowed(format!("a multiple of {down0} (hosts per leaf with radix {k} and oversubscription {})", t.oversubscription)),
            )?;
            let leaves = nodes / down0;
            ensure(
                leaves <= k,
                "topology.hosts",
                t.hosts,
                allowed(format!("at most {} for a 2-tier tree of radix {k} (a spine has one port per leaf)", k * down0)),
            )?;
            (leaves, 1)
        } else {
            let lpp = k / 2;
            let per_pod = down0 * lpp;
            ensure(
                nodes.is_multiple_of(per_pod),
                "topology.hosts",
                t.hosts,
                allowed(format!("a multiple of {per_pod} (hosts per pod: {lpp} leaves x {down0} hosts)")),
            )?;
            let pods = nodes / per_pod;
            ensure(
                pods <= k,
                "topology.hosts",
                t.hosts,
                allowed(format!("at most {} for a 3-tier tree of radix {k} (a core has one port per pod)", k * per_pod)),
            )?;
            (lpp, pods)
        };
        let m = t.nics_per_server;
        ensure(m >= 1 && m <= t.hosts, "topology.nics_per_server", m, format!("allowed: 1 to the hosts ({})", t.hosts))?;
        ensure(
            t.hosts.is_multiple_of(m),
            "topology.hosts",
            t.hosts,
            format!("allowed: a multiple of topology.nics_per_server ({m}): every server has all its GPUs"),
        )?;
        // NICs per server: each GPU's
        let mn = m * g;
        if t.rails {
            ensure(
                mn >= 2,
                "topology.rails",
                true,
                "allowed: only with 2 or more NICs a server (topology.nics_per_server x nics_per_gpu; one rail per NIC)",
            )?;
            ensure(
                nodes.is_multiple_of(down0 * mn),
                "topology.hosts",
                t.hosts,
                allowed(format!(
                    "with rails, a multiple of {} (rail groups of {down0} servers, hosts per leaf, x {mn} NICs, one leaf per rail)",
                    down0 * mn
                )),
            )?;
        }
        let scale_up = scale_up(&t.shared())?;
        if let Some(r) = t.scale_up_rate {
            ensure(
                m >= 2,
                "topology.scale_up_rate",
                r,
                "allowed: only with topology.nics_per_server of 2 or more (the GPUs of a server, one NIC each)",
            )?;
        }
        Ok(FatTreeSpec {
            tiers: t.tiers,
            hosts: nodes,
            radix: k,
            down0,
            up0,
            leaves: nodes / down0,
            leaves_per_pod,
            pods,
            tier_rates,
            tier_latencies,
            switch_latency: t.switch_latency.0,
            nics: mn,
            per_gpu: g,
            rails: t.rails,
            scale_up,
        })
    }

    /// The leaf slot of a host: where it sits in the fabric's numbering, in which every
    /// leaf's hosts are contiguous (routing is arithmetic on slots). Without rails a host is
    /// its own slot. With rails, host `h` is NIC `i = h % n` of server `s = h / n`; server `s`
    /// is member `s % down0` of rail group `s / down0`, and NIC i of a group's servers hangs
    /// on the group's leaf i: slot `((s / down0) * n + i) * down0 + s % down0`.
    #[inline]
    pub fn slot(&self, host: u32) -> u32 {
        if !self.rails {
            return host;
        }
        let (n, d) = (self.nics, self.down0);
        let (s, i) = (host / n, host % n);
        ((s / d) * n + i) * d + s % d
    }

    /// The host at a leaf slot (the inverse of [`FatTreeSpec::slot`]).
    #[inline]
    pub fn host(&self, slot: u32) -> u32 {
        if !self.rails {
            return slot;
        }
        let (n, d) = (self.nics, self.down0);
        let (leaf, p) = (slot / d, slot % d);
        ((leaf / n) * d + p) * n + leaf % n
    }

    /// The size of the tree's graph, without building it.
    pub fn size(&self) -> GraphSize {
        let (hosts, leaves, up0) = (u64::from(self.hosts), u64::from(self.leaves), u64::from(self.up0));
        let (switches, links) = if self.tiers == 2 {
            (leaves + up0, hosts + leaves * up0)
        } else {
            let (aggs, agg_up) = (u64::from(self.pods) * up0, u64::from(self.radix - self.leaves_per_pod));
            (leaves + aggs + up0 * agg_up, hosts + leaves * up0 + aggs * agg_up)
        };
        GraphSize { hosts, switches, ports: 2 * links, classes: leaves }
    }
}

/// The servers' scale-up network of `[topology]`, checked.
pub(crate) fn scale_up(t: &Shared) -> Result<Option<ScaleUp>, ScenarioError> {
    let scale_up = match t.scale_up_rate {
        None => None,
        Some(r) => {
            ensure(r.0 > 0, "topology.scale_up_rate", r, "allowed: a positive rate like \"7200Gbps\" (leave it out for none)")?;
            let latency = t.scale_up_latency.unwrap_or(Duration(300_000));
            ensure(latency.0 > 0, "topology.scale_up_latency", latency, "allowed: a positive duration like \"300ns\"")?;
            Some(ScaleUp { rate: r.0, latency: latency.0, nvls: t.scale_up_nvls.unwrap_or(true) })
        }
    };
    if let (None, Some(n)) = (t.scale_up_rate, t.scale_up_nvls) {
        return Err(ScenarioError::new(
            "topology.scale_up_nvls",
            n,
            "allowed: only with topology.scale_up_rate (a server's scale-up network)",
        ));
    }
    if let (None, Some(l)) = (t.scale_up_rate, t.scale_up_latency) {
        return Err(ScenarioError::new(
            "topology.scale_up_latency",
            l,
            "allowed: only with topology.scale_up_rate (a server's scale-up network)",
        ));
    }
    Ok(scale_up)
}

/// A built fat tree for the tests: `rails` with 4 NICs per server.
#[cfg(test)]
pub(crate) fn tree(tiers: u32, hosts: u32, radix: u32, oversub: u32, rails: bool) -> Topology {
    let nics = if rails { 4 } else { 1 };
    let cfg = fat_tree::Config { tiers, hosts, radix, oversubscription: oversub, nics_per_server: nics, rails, ..Default::default() };
    Topology::build(&FatTreeSpec::new(&cfg).expect("a valid tree")).expect("a connected tree")
}
