//! Egress ports: the sender side of each link direction.
//!
//! Output-queued, store-and-forward. Each port has a control queue (ACK, NACK, trimmed
//! headers) served first, then one queue per data class (`switch.classes`), served in strict
//! priority (class 0 first) or by deficit round robin with per-class weights (`scheduler =
//! "wrr"`: each round a class may send `weight` MTUs' worth of bytes), as in the PRIME paper's
//! mixed-traffic experiment (sec. IV-A2). Each class queue is byte-limited (`buffer`), or the
//! switch's queues share one pool with dynamic thresholds (Choudhury and Hahne, "Dynamic Queue
//! Length Thresholds for Shared-Memory Packet Switches", IEEE/ACM ToN 1998: a queue may grow
//! to alpha times the pool's free space); a data packet that would overflow it is trimmed to
//! its header and moved to the control queue (`overflow = "trim"`, the default) or dropped
//! (`"drop"`). ECN marks data packets by RED on
//! the instantaneous occupancy of their class queue, linearly from 0 at Kmin to 1 at Kmax: at
//! dequeue (the bytes left behind the departing packet, the default) or at enqueue (the bytes
//! ahead of the arriving packet). Following htsim's pipe, a link's in-flight packets sit in a FIFO and
//! only its head has an event pending. A packet that finds its port free and nothing queued
//! is committed to the wire at once (it leaves after its serialization time); the port needs
//! a wake-up event only when packets wait behind the one on the wire, so an uncongested hop
//! costs a single event.

pub mod forward;
pub mod links;
pub mod pfc;
pub mod port;
pub mod routing;
pub mod wire;

use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::packet::mp_ev::MpEvLayout;
use crate::units::{Duration, SizeOrBdp};
use routing::{HashFunction, LoadSense, RoutingConfig, Rule};

pub use port::{EgressPort, PortStats, Scheduler};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnMark {
    Dequeue,
    Enqueue,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    /// RED/ECN marking of data packets.
    #[serde(default = "d_ecn_on")]
    pub enabled: bool,
    /// No marks at or below this data-queue occupancy. Left out, it follows the buffer: `buffer = "0.3bdp"` gives
    /// `"0.06bdp"`, `buffer = "100KB"` gives `"20KB"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "20 % of `buffer` (`\"0.2bdp\"`)"))]
    pub kmin: Option<SizeOrBdp>,
    /// Every packet marked at or above; linear probability in between. Kmin ≤ Kmax ≤ buffer: a kmax you give above the
    /// buffer is an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "80 % of `buffer` (`\"0.8bdp\"`)"))]
    pub kmax: Option<SizeOrBdp>,
    /// Dequeue: the bytes left behind the departing packet; enqueue: the bytes ahead of the arriving one.
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    Trim,
    Drop,
    Pfc,
}

/// A switch's data buffer: per queue, or shared by all the queues of the switch.
#[derive(Debug, Clone, PartialEq)]
pub enum BufferConfig {
    /// Each class queue of each port holds at most this much.
    PerPort(SizeOrBdp),
    /// One pool per switch; a queue may grow to `alpha` times the pool's free space (dynamic
    /// thresholds).
    Shared(SharedBuffer),
}

/// `switch.buffer = { shared = "...", alpha = ... }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SharedBuffer {
    pub shared: SizeOrBdp,
    #[serde(default = "d_alpha")]
    pub alpha: f64,
}
fn d_alpha() -> f64 {
    1.0
}

impl Serialize for BufferConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BufferConfig::PerPort(x) => x.serialize(s),
            BufferConfig::Shared(x) => x.serialize(s),
        }
    }
}
impl schemars::JsonSchema for BufferConfig {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BufferConfig".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "anyOf": [g.subschema_for::<SizeOrBdp>(), g.subschema_for::<SharedBuffer>()] })
    }
}
impl<'de> Deserialize<'de> for BufferConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            v @ serde_json::Value::Object(_) => SharedBuffer::deserialize(v).map(BufferConfig::Shared).map_err(D::Error::custom),
            v => SizeOrBdp::deserialize(v)
                .map(BufferConfig::PerPort)
                .map_err(|e| D::Error::custom(format!("{e}, or a shared buffer like {{ shared = \"32MiB\", alpha = 1.0 }}"))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Data buffer of each class queue of each egress port; or one pool per switch shared by all its data queues with
    /// dynamic thresholds (Choudhury and Hahne): `buffer = { shared = "16MiB", alpha = 1.0 }` admits a packet while the
    /// switch's queued data bytes stay within `shared` and its queue within `alpha` times the pool's free space, so one
    /// congested queue alone reaches `alpha / (1 + alpha)` of the pool and n congested queues `alpha / (1 + n alpha)` each.
    /// `shared` is a size or BDP; `alpha` 1/64 to 64, default `1.0`. With a shared buffer the default `ecn.kmin` /
    /// `ecn.kmax` are 20 % / 80 % of one BDP, and "the buffer" of the rows below is what one queue reaches alone. Control
    /// queues keep their own `control_buffer`.
    #[serde(default = "d_buffer_config")]
    #[schemars(extend("x-type" = "size or BDP, or `{ shared, alpha }`"))]
    pub buffer: BufferConfig,
    /// Buffer of each port's strict-priority control queue (ACK, NACK, trimmed headers).
    #[serde(default = "d_buffer")]
    pub control_buffer: SizeOrBdp,
    /// RED/ECN marking (docs/scenario.md: one row a field).
    #[serde(default)]
    #[schemars(extend("x-rows" = true))]
    pub ecn: EcnConfig,
    /// A data packet that would overflow `buffer` is trimmed to `transport.header` bytes and sent on in the control class
    /// (the receiver NACKs it), or tail-dropped; or, `"pfc"`, none overflows: priority flow control (IEEE 802.1Qbb)
    /// pauses a port's sender before its packets would (`[switch.pfc]`; docs/model.md, "Lossless Ethernet").
    #[serde(default = "d_overflow")]
    pub overflow: Overflow,
    /// With `overflow = "pfc"`: its thresholds (docs/scenario.md: one row a field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-rows" = true))]
    pub pfc: Option<pfc::PfcConfig>,
    /// Next hop going up (going down there is one port): `"ecmp"` (hash of source, destination, EV and queue pair,
    /// `hash_fields`, with the switch's salt, `hash_seed`), `"mp_ev"` (the tier's part of a multi-part EV is the port index), `"adaptive"`
    /// (least-loaded queue, random tie-break), `"spray"` (uniformly random), `"pin"` (the destination's downlink index at
    /// its edge switch, modulo the ports: Meta's path pinning), or `"auto"` (`mp_ev` for `prime`, `co_prime`,
    /// `round_robin`; `ecmp` otherwise). A list gives one rule per switch tier with up-ports: `["adaptive"]` (2 tiers:
    /// leaves), `["ecmp", "spray"]` (3 tiers: leaves, aggregation). See docs/algorithms.md. `lb.kind = "ecmp"` with
    /// `routing = "adaptive"` is **switch adaptive routing** ("switch AR": ECMP hosts, switches that pick the least-loaded
    /// up-port per packet); `fabricsim compare --lb ecmp,switch-ar,ops` puts it in the same table as the host schemes.
    #[serde(default)]
    #[schemars(extend("x-type" = "rule, or list of rules"))]
    pub routing: RoutingConfig,
    /// Data classes per port; each flow has one (`class` in the workload, `[mixed]`). Each class queue has its own
    /// `buffer`, Kmin and Kmax.
    #[serde(default = "d_classes")]
    #[schemars(extend("x-type" = "integer 1-8"))]
    pub classes: u32,
    /// How data classes share a port, below the control class: strict priority (class 0 first) or weighted round robin
    /// (deficit round robin: per round a class may send `weight` MTUs' worth of bytes).
    #[serde(default = "d_scheduler")]
    pub scheduler: SchedulerKind,
    /// WRR weights, one per class.
    #[serde(default)]
    #[schemars(extend("x-default" = "all `1`"))]
    pub weights: Vec<u32>,
    /// Whose seed salts a switch's ECMP hash (and `mp_ev`'s rehash around excluded ports): `"switch"` (each switch its
    /// own, as operators configure against polarization), `"tier"` (one per tier: the switches of a tier hash alike),
    /// `"fabric"` (one for every switch, the same hash at every tier: a flow's choices at successive tiers are correlated,
    /// which polarizes traffic onto a fraction of the upper links: "hash polarization", Alibaba HPN, SIGCOMM 2024, abstract).
    #[serde(default)]
    pub hash_seed: HashSeed,
    /// What ECMP hashes of a packet besides its source and destination: `"five_tuple_qp"` (the 5-tuple, whose UDP source
    /// port is the packet's EV, and the destination queue pair: every queue pair hashes apart, as under Meta's enhanced
    /// ECMP, Gangidi et al., SIGCOMM 2024, or Juniper's queue-pair hashing) or `"five_tuple"` (the 5-tuple alone: two
    /// queue pairs between the same hosts whose packets carry the same EV take the same path). ECMP hosts draw one EV a
    /// queue pair from `lb.evs_size` values (Linux derives a RoCE queue pair's UDP source port from its and its peer's
    /// queue pair numbers, 14 bits: `evs_size = 16384`); `evs_size = 1` is a NIC that sends every queue pair from one
    /// source port. docs/workloads.md, "Queue pairs and hashing".
    #[serde(default)]
    pub hash_fields: HashFields,
    /// The hash ECMP computes over those fields: `"mix"` (an ideal salted mix), or as switch ASICs offer it, `"crc32"`,
    /// `"crc16"` (the seed the CRC's initial value) or `"xor"` (a fold of the fields' 16-bit words: flows with the same
    /// source XOR destination and ports collide). docs/workloads.md, "Queue pairs and hashing".
    #[serde(default)]
    pub hash_function: HashFunction,
    /// What `routing = "adaptive"` reads of a port's load (docs/scenario.md: one row a field).
    #[serde(default)]
    #[schemars(extend("x-rows" = true))]
    pub adaptive: AdaptiveConfig,
}

/// `[switch.adaptive]`: quantized, periodically refreshed port loads for adaptive routing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveConfig {
    /// What `routing = "adaptive"` reads of a port's load: `[]` = the exact bytes queued (data and control); otherwise band
    /// edges as fractions of the buffer, ascending, at most 15 (the reference simulator: `[0.05, 0.1, 0.2]`): ports in the
    /// same band tie and the tie is broken at random.
    #[serde(default)]
    #[schemars(extend("x-type" = "list of fractions"))]
    pub levels: Vec<f64>,
    /// How long a port's sampled load stays: a read more than `refresh` after the port's last sample takes a new one, any
    /// other sees the last (the reference simulator: `"100ns"`). `"0ns"` = always fresh. At most 1 s. `switch-ar-sensing`
    /// in the reproduction suite compares the four combinations.
    #[serde(default)]
    #[schemars(extend("x-default" = "`\"0ns\"`"))]
    pub refresh: Duration,
}

/// `switch.hash_seed`: whose seed salts a switch's hash.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HashSeed {
    #[default]
    Switch,
    Tier,
    Fabric,
}

/// `switch.hash_fields`: whether ECMP hashes the destination queue pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HashFields {
    #[default]
    FiveTupleQp,
    FiveTuple,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
fn d_buffer_config() -> BufferConfig {
    BufferConfig::PerPort(d_buffer())
}
fn d_overflow() -> Overflow {
    Overflow::Trim
}
impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: d_buffer_config(),
            control_buffer: d_buffer(),
            ecn: EcnConfig::default(),
            overflow: d_overflow(),
            pfc: None,
            routing: RoutingConfig::default(),
            classes: d_classes(),
            scheduler: d_scheduler(),
            weights: Vec::new(),
            hash_seed: HashSeed::default(),
            hash_fields: HashFields::default(),
            hash_function: HashFunction::default(),
            adaptive: AdaptiveConfig::default(),
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
    /// Each host node's downlink index at its edge switch (`Topology::slices`).
    pub slices: &'a [u16],
    /// With `overflow = "pfc"`: the largest automatic headroom of any link (0 otherwise).
    pub pfc_headroom: u64,
}

/// The switch configuration in core units, checked.
#[derive(Debug, Clone)]
pub struct SwitchModel {
    /// The most one data queue holds: the per-port buffer, or with a shared buffer what a
    /// queue reaches alone (alpha / (1 + alpha) of the pool).
    pub buffer: u64,
    /// A shared buffer: (pool bytes, alpha).
    pub shared: Option<(u64, f64)>,
    pub control_buffer: u64,
    /// (Kmin, Kmax, where), or `None` without ECN.
    pub ecn: Option<(u64, u64, EcnMark)>,
    pub overflow: Overflow,
    /// Priority flow control's thresholds, with `overflow = "pfc"`.
    pub pfc: Option<pfc::PfcModel>,
    /// Size of a trimmed packet: the transport's header.
    pub header: u64,
    pub classes: u32,
    pub scheduler: Scheduler,
    /// Next-hop rule of each switch tier with up-ports.
    pub rules: Vec<Rule>,
    /// What adaptive routing reads of a port's load.
    pub sense: LoadSense,
    pub mp_ev: MpEvLayout,
    pub hash_seed: HashSeed,
    pub hash_fields: HashFields,
    pub hash_function: HashFunction,
    /// Each host node's downlink index at its edge switch (what `pin` routes by).
    pub slices: std::sync::Arc<[u16]>,
}

impl SwitchConfig {
    /// The ECN thresholds: as given, else 20 % and 80 % of the per-port buffer (DESIGN.md's
    /// Kmin and Kmax), so that a smaller buffer brings its thresholds down with it; with a
    /// shared buffer, of one BDP (the default per-port buffer, so that sharing the buffer
    /// changes only admission).
    pub fn ecn_thresholds(&self) -> (SizeOrBdp, SizeOrBdp) {
        let base = match &self.buffer {
            BufferConfig::PerPort(b) => *b,
            BufferConfig::Shared(_) => d_buffer(),
        };
        (self.ecn.kmin.unwrap_or(base.tenths(2)), self.ecn.kmax.unwrap_or(base.tenths(8)))
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
        let (buffer, shared) = match &self.buffer {
            BufferConfig::PerPort(b) => {
                let buffer = bytes_of(*b);
                ensure(buffer >= mtu, "switch.buffer", b, format!("allowed: at least one full packet ({mtu} B)"))?;
                (buffer, None)
            }
            BufferConfig::Shared(SharedBuffer { shared, alpha }) => {
                let pool = bytes_of(*shared);
                ensure(
                    alpha.is_finite() && (1.0 / 64.0..=64.0).contains(alpha),
                    "switch.buffer.alpha",
                    alpha,
                    "allowed: 1/64 to 64 (a queue may grow to alpha times the free pool)",
                )?;
                let alone = (pool as f64 * alpha / (1.0 + alpha)) as u64;
                ensure(
                    alone >= mtu,
                    "switch.buffer.shared",
                    shared,
                    format!("allowed: a pool in which one queue holds a full packet ({mtu} B): alpha / (1 + alpha) of it is {alone} B"),
                )?;
                (alone, Some((pool, *alpha)))
            }
        };
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
                format!("allowed: at most the buffer ({buffer} B a queue may hold; leave kmin and kmax out to take 20 % and 80 % of it)"),
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
        let levels = &self.adaptive.levels;
        ensure(levels.len() <= 15, "switch.adaptive.levels", format!("{} levels", levels.len()), "allowed: at most 15 band edges")?;
        for (i, &l) in levels.iter().enumerate() {
            let above = if i == 0 { 0.0 } else { levels[i - 1] };
            ensure(
                l.is_finite() && l > above && l <= 1.0,
                &format!("switch.adaptive.levels[{i}]"),
                l,
                format!("allowed: a fraction of the buffer above {above} (ascending) and at most 1"),
            )?;
        }
        ensure(
            self.adaptive.refresh.0 <= crate::time::PS_PER_S,
            "switch.adaptive.refresh",
            self.adaptive.refresh,
            "allowed: 0ns (always fresh) up to 1s",
        )?;
        let sense =
            LoadSense { thresholds: levels.iter().map(|&l| (l * buffer as f64).ceil() as u64).collect(), refresh: self.adaptive.refresh.0 };
        Ok(SwitchModel {
            sense,
            buffer,
            shared,
            control_buffer,
            ecn,
            overflow: self.overflow,
            pfc: pfc::config::resolve(self, ctx, buffer, shared.is_some())?,
            header: ctx.header,
            classes: self.classes,
            scheduler,
            rules,
            mp_ev: MpEvLayout::new(ctx.up_ports),
            hash_seed: self.hash_seed,
            hash_fields: self.hash_fields,
            hash_function: self.hash_function,
            slices: ctx.slices.into(),
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
