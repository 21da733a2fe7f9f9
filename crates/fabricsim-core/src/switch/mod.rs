//! Egress ports: the sender side of each link direction.
//!
//! Output-queued, store-and-forward. Each port has a control queue (ACK, NACK, trimmed
//! headers) served first, then one queue per data class (`switch.classes`), served in strict
//! priority (class 0 first) or by deficit round robin with per-class weights (`scheduler =
//! "wrr"`: each round a class may send `weight` MTUs' worth of bytes), as in the PRIME paper's
//! mixed-traffic experiment (sec. IV-A2). Each class queue is byte-limited (`buffer`); a data
//! packet that would overflow it is trimmed to its header and moved to the control queue
//! (`overflow = "trim"`, the default) or dropped (`"drop"`). ECN marks data packets by RED on
//! the instantaneous occupancy of their class queue, linearly from 0 at Kmin to 1 at Kmax: at
//! dequeue (the bytes left behind the departing packet, the default) or at enqueue (the bytes
//! ahead of the arriving packet). Following htsim's pipe, a link's in-flight packets sit in a FIFO and
//! only its head has an event pending. A packet that finds its port free and nothing queued
//! is committed to the wire at once (it leaves after its serialization time); the port needs
//! a wake-up event only when packets wait behind the one on the wire, so an uncongested hop
//! costs a single event.

pub mod forward;
pub mod port;
pub mod routing;

use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::packet::mp_ev::MpEvLayout;
use crate::units::SizeOrBdp;
use routing::{RoutingConfig, Rule};

pub use port::{EgressPort, PortStats, Scheduler};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnMark {
    Dequeue,
    Enqueue,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    #[serde(default = "d_ecn_on")]
    pub enabled: bool,
    /// RED thresholds; default 20 % and 80 % of `switch.buffer` ([`SwitchConfig::fill`]
    /// writes them out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kmin: Option<SizeOrBdp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kmax: Option<SizeOrBdp>,
    #[serde(default = "d_mark")]
    pub mark: EcnMark,
}
fn d_ecn_on() -> bool {
    true
}
fn d_mark() -> EcnMark {
    EcnMark::Dequeue
}
impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig { enabled: true, kmin: None, kmax: None, mark: d_mark() }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    Trim,
    Drop,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Data buffer per egress port.
    #[serde(default = "d_buffer")]
    pub buffer: SizeOrBdp,
    /// Buffer of the strict-priority control queue (ACK, NACK, trimmed headers) per port.
    #[serde(default = "d_buffer")]
    pub control_buffer: SizeOrBdp,
    #[serde(default)]
    pub ecn: EcnConfig,
    #[serde(default = "d_overflow")]
    pub overflow: Overflow,
    /// Next-hop rule going up: one for all tiers or one per tier with up-ports.
    #[serde(default)]
    pub routing: RoutingConfig,
    /// Data classes per port (each flow has one; class 0 is the default).
    #[serde(default = "d_classes")]
    pub classes: u32,
    /// How data classes share a port: `"strict"` priority (class 0 first) or `"wrr"`.
    #[serde(default = "d_scheduler")]
    pub scheduler: SchedulerKind,
    /// WRR weights, one per class (default: all 1).
    #[serde(default)]
    pub weights: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    Strict,
    Wrr,
}

fn d_classes() -> u32 {
    1
}
fn d_scheduler() -> SchedulerKind {
    SchedulerKind::Strict
}

fn d_buffer() -> SizeOrBdp {
    SizeOrBdp::parse("1bdp").expect("valid literal")
}
fn d_overflow() -> Overflow {
    Overflow::Trim
}
impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: d_buffer(),
            control_buffer: d_buffer(),
            ecn: EcnConfig::default(),
            overflow: d_overflow(),
            routing: RoutingConfig::default(),
            classes: d_classes(),
            scheduler: d_scheduler(),
            weights: Vec::new(),
        }
    }
}

/// What the switch configuration resolves against: the fabric's BDP and packet sizes, the
/// up-ports of each switch tier, and whether the load balancer writes a multi-part EV.
#[derive(Debug, Clone)]
pub struct SwitchContext<'a> {
    pub bdp_packets: u64,
    pub mtu: u64,
    pub header: u64,
    pub up_ports: &'a [u32],
    pub writes_mp_ev: bool,
}

/// The switch configuration in core units, checked.
#[derive(Debug, Clone)]
pub struct SwitchModel {
    pub buffer: u64,
    pub control_buffer: u64,
    /// (Kmin, Kmax, where), or `None` without ECN.
    pub ecn: Option<(u64, u64, EcnMark)>,
    pub overflow: Overflow,
    /// Size of a trimmed packet: the transport's header.
    pub header: u64,
    pub classes: u32,
    pub scheduler: Scheduler,
    /// Next-hop rule of each switch tier with up-ports.
    pub rules: Vec<Rule>,
    pub mp_ev: MpEvLayout,
}

impl SwitchConfig {
    /// The ECN thresholds: as given, else 20 % and 80 % of the buffer (DESIGN.md's Kmin and
    /// Kmax), so that a smaller buffer brings its thresholds down with it.
    pub fn ecn_thresholds(&self) -> (SizeOrBdp, SizeOrBdp) {
        (self.ecn.kmin.unwrap_or(self.buffer.tenths(2)), self.ecn.kmax.unwrap_or(self.buffer.tenths(8)))
    }

    /// Writes the default ECN thresholds out, as the recorded scenario shows them.
    pub fn fill(&mut self) {
        let (kmin, kmax) = self.ecn_thresholds();
        (self.ecn.kmin, self.ecn.kmax) = (Some(kmin), Some(kmax));
    }

    /// Checks `[switch]` and resolves BDP fractions and `routing = "auto"`.
    pub fn resolve(&self, ctx: &SwitchContext<'_>) -> Result<SwitchModel, ScenarioError> {
        let mtu = ctx.mtu;
        let bytes_of = |x: SizeOrBdp| x.resolve(ctx.bdp_packets, mtu);
        let buffer = bytes_of(self.buffer);
        ensure(buffer >= mtu, "switch.buffer", self.buffer, format!("allowed: at least one full packet ({mtu} B)"))?;
        let control_buffer = bytes_of(self.control_buffer);
        ensure(control_buffer >= mtu, "switch.control_buffer", self.control_buffer, format!("allowed: at least {mtu} B"))?;
        let ecn = if self.ecn.enabled {
            let (kmin_q, kmax_q) = self.ecn_thresholds();
            let (kmin, kmax) = (bytes_of(kmin_q), bytes_of(kmax_q));
            ensure(
                kmin <= kmax,
                "switch.ecn.kmin",
                format!("{kmin_q} ({kmin} B)"),
                format!("allowed: at most kmax = {kmax_q} ({kmax} B)"),
            )?;
            ensure(
                kmax <= buffer,
                "switch.ecn.kmax",
                format!("{kmax_q} ({kmax} B)"),
                format!("allowed: at most the buffer ({buffer} B; leave kmin and kmax out to take 20 % and 80 % of it)"),
            )?;
            Some((kmin, kmax, self.ecn.mark))
        } else {
            None
        };
        let auto = if ctx.writes_mp_ev { Rule::MpEv } else { Rule::Ecmp };
        let rules =
            self.routing.resolve(ctx.up_ports.len(), auto).map_err(|m| ScenarioError { field: "switch.routing".into(), message: m })?;
        ensure((1..=8).contains(&self.classes), "switch.classes", self.classes, "allowed: 1 to 8")?;
        ensure(
            self.weights.is_empty() || self.weights.len() == self.classes as usize,
            "switch.weights",
            format!("{} weights", self.weights.len()),
            format!("allowed: none (all 1) or one per class ({})", self.classes),
        )?;
        for (i, w) in self.weights.iter().enumerate() {
            ensure(*w >= 1, &format!("switch.weights[{i}]"), w, "allowed: 1 or more")?;
        }
        let scheduler = match self.scheduler {
            SchedulerKind::Strict => Scheduler::Strict,
            SchedulerKind::Wrr => Scheduler::Drr {
                quanta: (0..self.classes as usize).map(|c| self.weights.get(c).copied().unwrap_or(1) as u64 * mtu).collect(),
            },
        };
        Ok(SwitchModel {
            buffer,
            control_buffer,
            ecn,
            overflow: self.overflow,
            header: ctx.header,
            classes: self.classes,
            scheduler,
            rules,
            mp_ev: MpEvLayout::new(ctx.up_ports),
        })
    }
}

/// RED between `kmin` and `kmax` on occupancy `q` (bytes): never below Kmin, always at or
/// above Kmax, with probability (q - Kmin) / (Kmax - Kmin) in between. Exact integer draw.
#[inline]
pub fn red_mark(q: u64, kmin: u64, kmax: u64, rng: &mut Rng) -> bool {
    if q <= kmin {
        false
    } else if q >= kmax {
        true
    } else {
        rng.below(kmax - kmin) < q - kmin
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn red_probability_is_linear_between_thresholds() {
        let mut rng = Rng::stream(1, Stream::Switch, 0);
        assert!(!red_mark(100, 100, 200, &mut rng));
        assert!(red_mark(200, 100, 200, &mut rng));
        let marks = (0..40_000).filter(|_| red_mark(125, 100, 200, &mut rng)).count();
        assert!((9_300..10_700).contains(&marks), "{marks}");
    }
}
