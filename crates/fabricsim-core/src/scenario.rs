//! The scenario: the one input of a run.
//!
//! [`Scenario`] is the serde model of the TOML a person writes (quantities as unit strings,
//! every field defaulted, unknown keys rejected). [`Scenario::from_json`] /
//! [`Scenario::from_toml_value`]-style entry points report the dotted path of a bad field.
//! [`Scenario::resolve`] checks everything that depends on more than one field (hosts that
//! do not fit the tree, Kmin above Kmax, a flow to a host that does not exist) and turns the
//! scenario into a [`Model`]: plain integers in picoseconds, bytes and bits per second, with
//! the BDP-relative quantities worked out. The filled-in scenario (every default written out)
//! is recorded with the results.

use serde::{Deserialize, Serialize};

use crate::engine::rng::{Rng, Stream};
use crate::error::{ensure, ScenarioError};
use crate::faults::FaultConfig;
use crate::host::AckPolicy;
use crate::lb::{LbConfig, LbContext};
use crate::switch::routing::{MpEvLayout, RoutingConfig, Rule};
use crate::switch::Scheduler;
use crate::time::{serialization, Time};
use crate::topology::FatTreeSpec;
use crate::units::{Duration, Rate, Size, SizeOrBdp};
use crate::workload::{FlowSpec, WorkloadConfig};

/// A whole scenario. Field docs are the reference (docs/scenario.md mirrors them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Seed of every random stream in the run.
    #[serde(default = "d_seed")]
    pub seed: u64,
    #[serde(default)]
    pub topology: TopologyConfig,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub transport: TransportConfig,
    #[serde(default)]
    pub lb: LbConfig,
    #[serde(default)]
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub stop: StopConfig,
    /// Link faults over time (`[[faults]]`).
    #[serde(default)]
    pub faults: Vec<FaultConfig>,
    /// A share of ECMP flows in their own class (`[mixed]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<MixedConfig>,
    /// Time series of port queues and utilization (`[samples]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<SamplesConfig>,
}

/// `[samples]`: every `every`, record each selected port's data queue and utilization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplesConfig {
    pub every: Duration,
    /// Port names, or prefixes ending in `*` (`"leaf0:up*"`); default: every port.
    #[serde(default)]
    pub ports: Vec<String>,
}

fn d_seed() -> u64 {
    1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    FatTree,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    #[serde(default = "d_kind")]
    pub kind: TopologyKind,
    /// 2 (leaf-spine) or 3 (leaf-aggregation-core).
    #[serde(default = "d_tiers")]
    pub tiers: u32,
    #[serde(default = "d_hosts")]
    pub hosts: u32,
    /// Ports per switch.
    #[serde(default = "d_radix")]
    pub radix: u32,
    /// Tier-0 down:up port ratio (1 = non-blocking).
    #[serde(default = "d_oversub")]
    pub oversubscription: u32,
    #[serde(default = "d_rate")]
    pub link_rate: Rate,
    #[serde(default = "d_latency")]
    pub link_latency: Duration,
    /// Per link tier (0 = host-leaf, 1 = leaf-up, 2 = agg-core); defaults to `link_rate`.
    #[serde(default)]
    pub tier_link_rates: Vec<Rate>,
    /// Per link tier; defaults to `link_latency`.
    #[serde(default)]
    pub tier_link_latencies: Vec<Duration>,
    #[serde(default = "d_latency")]
    pub switch_latency: Duration,
}

fn d_kind() -> TopologyKind {
    TopologyKind::FatTree
}
fn d_tiers() -> u32 {
    2
}
fn d_hosts() -> u32 {
    128
}
fn d_radix() -> u32 {
    16
}
fn d_oversub() -> u32 {
    1
}
fn d_rate() -> Rate {
    Rate(400_000_000_000)
}
fn d_latency() -> Duration {
    Duration(500_000)
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            kind: d_kind(),
            tiers: d_tiers(),
            hosts: d_hosts(),
            radix: d_radix(),
            oversubscription: d_oversub(),
            link_rate: d_rate(),
            link_latency: d_latency(),
            tier_link_rates: Vec::new(),
            tier_link_latencies: Vec::new(),
            switch_latency: d_latency(),
        }
    }
}

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
    #[serde(default = "d_kmin")]
    pub kmin: SizeOrBdp,
    #[serde(default = "d_kmax")]
    pub kmax: SizeOrBdp,
    #[serde(default = "d_mark")]
    pub mark: EcnMark,
}
fn d_ecn_on() -> bool {
    true
}
fn d_kmin() -> SizeOrBdp {
    SizeOrBdp::parse("0.2bdp").expect("valid literal")
}
fn d_kmax() -> SizeOrBdp {
    SizeOrBdp::parse("0.8bdp").expect("valid literal")
}
fn d_mark() -> EcnMark {
    EcnMark::Dequeue
}
impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig { enabled: true, kmin: d_kmin(), kmax: d_kmax(), mark: d_mark() }
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

/// `[mixed]`: a share of the flows pinned to one path (ECMP) in a class of their own, beside
/// the scenario's load balancer (PRIME sec. IV-A2; ARCANE sec. 4.3.2, Fig. 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixedConfig {
    /// Fraction of the flows, chosen by seed.
    pub share: f64,
    /// Their class.
    #[serde(default = "d_mixed_class")]
    pub class: u32,
}
fn d_mixed_class() -> u32 {
    1
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// Out-of-order tolerant, selective ACKs.
    Ooo,
    /// RoCE-style in-order Go-back-N: only the next PSN is accepted.
    Gbn,
}

/// What a coalesced ACK reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckEvs {
    Trigger,
    All,
}

/// How the out-of-order receiver learns of silent losses besides the sender's RTO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// Only the retransmission timeout.
    Rto,
    /// Path-ID-assisted: a hole below the highest PSN received on every path is lost; the
    /// receiver NACKs it at once (China Mobile slides).
    PathId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    Dctcp,
    None,
}

/// A congestion window: `"auto"` (the line-rate window) or a size / BDP fraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Auto,
    Size(SizeOrBdp),
}
impl Serialize for Window {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Window::Auto => s.serialize_str("auto"),
            Window::Size(x) => x.serialize(s),
        }
    }
}
impl<'de> Deserialize<'de> for Window {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Other(serde_json::Value),
        }
        match Raw::deserialize(d)? {
            Raw::Text(t) if t == "auto" => Ok(Window::Auto),
            Raw::Text(t) => SizeOrBdp::parse(&t).map(Window::Size).map_err(|e| serde::de::Error::custom(format!("{e}, or \"auto\""))),
            Raw::Other(v) => Err(serde::de::Error::custom(format!(
                "expected \"auto\", a size like \"420160B\" or a BDP fraction like \"1bdp\", got {v}"
            ))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportConfig {
    #[serde(default = "d_transport")]
    pub kind: TransportKind,
    /// Wire size of a full data packet, header included.
    #[serde(default = "d_mtu")]
    pub mtu: Size,
    /// Header size; also the size of ACKs, NACKs and trimmed packets.
    #[serde(default = "d_header")]
    pub header: Size,
    /// The receiver ACKs every n-th data packet (1 = every packet).
    #[serde(default = "d_ack_every")]
    pub ack_every: u32,
    /// What a coalesced ACK reports: the EV and ECN mark of the packet that triggered it
    /// (`"trigger"`, ARCANE's worst case) or of every packet since the previous ACK (`"all"`).
    #[serde(default = "d_ack_evs")]
    pub ack_evs: AckEvs,
    /// ACK at once when a data packet arrives ECN-marked.
    #[serde(default)]
    pub ack_on_ecn: bool,
    #[serde(default = "d_rto")]
    pub rto: Duration,
    /// `"rto"` or `"path_id"` (out-of-order transport only).
    #[serde(default = "d_loss_detection")]
    pub loss_detection: LossDetection,
    #[serde(default = "d_cc")]
    pub cc: CcKind,
    /// Initial window; "auto" = 1 BDP + (ack_every - 1) packets, the least that lets a lone
    /// flow run at line rate.
    #[serde(default = "d_window")]
    pub init_cwnd: Window,
    /// Upper bound of the window; "auto" = the initial window.
    #[serde(default = "d_window")]
    pub max_cwnd: Window,
}
fn d_transport() -> TransportKind {
    TransportKind::Ooo
}
fn d_mtu() -> Size {
    Size(4160)
}
fn d_header() -> Size {
    Size(64)
}
fn d_ack_evs() -> AckEvs {
    AckEvs::Trigger
}
fn d_ack_every() -> u32 {
    1
}
fn d_rto() -> Duration {
    Duration(70_000_000)
}
fn d_loss_detection() -> LossDetection {
    LossDetection::Rto
}
fn d_cc() -> CcKind {
    CcKind::Dctcp
}
fn d_window() -> Window {
    Window::Auto
}
impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            kind: d_transport(),
            mtu: d_mtu(),
            header: d_header(),
            ack_every: d_ack_every(),
            ack_evs: d_ack_evs(),
            ack_on_ecn: false,
            rto: d_rto(),
            loss_detection: d_loss_detection(),
            cc: d_cc(),
            init_cwnd: d_window(),
            max_cwnd: d_window(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopConfig {
    /// Simulated-time guard; the run also stops as soon as every flow has completed.
    #[serde(default = "d_max_time")]
    pub max_time: Duration,
    /// Event budget guard.
    #[serde(default = "d_max_events")]
    pub max_events: u64,
}
fn d_max_time() -> Duration {
    Duration(100_000_000_000)
}
fn d_max_events() -> u64 {
    20_000_000_000
}
impl Default for StopConfig {
    fn default() -> Self {
        StopConfig { max_time: d_max_time(), max_events: d_max_events() }
    }
}

/// Everything a run needs, in core units, checked.
#[derive(Debug, Clone)]
pub struct Model {
    pub seed: u64,
    pub tree: FatTreeSpec,
    pub mtu: u64,
    pub header: u64,
    pub ack_policy: AckPolicy,
    pub rto: Time,
    pub transport: TransportKind,
    pub loss_detection: LossDetection,
    pub cc: CcKind,
    pub init_cwnd: u64,
    pub max_cwnd: u64,
    pub buffer: u64,
    pub control_buffer: u64,
    pub ecn: Option<(u64, u64, EcnMark)>,
    pub overflow: Overflow,
    pub classes: u32,
    pub scheduler: Scheduler,
    /// Next-hop rule of each switch tier with up-ports.
    pub rules: Vec<Rule>,
    pub lb: LbConfig,
    /// What the host load balancers know of the fabric.
    pub lb_ctx: LbContext,
    pub flows: Vec<FlowSpec>,
    pub max_time: Time,
    pub max_events: u64,
    /// Legal but probably unintended settings, for the front end to show.
    pub warnings: Vec<String>,
    /// Base RTT of the diameter path (DESIGN.md, BDP).
    pub base_rtt: Time,
    pub bdp_packets: u64,
    pub bdp_bytes: u64,
}

impl Scenario {
    /// Parses a scenario from JSON text; errors name the dotted field path.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(path_error)
    }

    /// Parses a scenario from any serde data (a TOML table, a JSON value).
    pub fn from_deserializer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Scenario, ScenarioError>
    where
        D::Error: std::fmt::Display,
    {
        serde_path_to_error::deserialize(d).map_err(|e| located(e.path().to_string(), e.inner().to_string()))
    }

    /// The scenario with every default written out, as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a scenario always serializes")
    }

    /// Checks the cross-field rules and resolves units, BDP fractions and workloads.
    pub fn resolve(&self) -> Result<Model, ScenarioError> {
        let t = &self.topology;
        let tr = &self.transport;
        let tree = FatTreeSpec::new(t)?;
        let mtu = tr.mtu.0;
        let header = tr.header.0;
        ensure((128..=65_000).contains(&mtu), "transport.mtu", tr.mtu, "allowed: 128B to 65000B")?;
        ensure(
            !(tr.kind == TransportKind::Gbn && tr.loss_detection == LossDetection::PathId),
            "transport.loss_detection",
            "\"path_id\"",
            "allowed: \"rto\" with kind = \"gbn\" (Go-back-N NAKs every gap already)",
        )?;
        ensure(header >= 1 && header < mtu, "transport.header", tr.header, format!("allowed: 1B up to less than mtu ({})", tr.mtu))?;
        ensure(tr.ack_every >= 1 && tr.ack_every <= 1024, "transport.ack_every", tr.ack_every, "allowed: 1 to 1024")?;
        ensure(tr.rto.0 > 0, "transport.rto", tr.rto, "allowed: a positive duration")?;
        ensure(self.stop.max_time.0 > 0, "stop.max_time", self.stop.max_time, "allowed: a positive duration")?;
        ensure(self.stop.max_events > 0, "stop.max_events", self.stop.max_events, "allowed: a positive count")?;

        // Base RTT: a full data packet over the diameter path and its ACK back.
        let path = tree.diameter_path();
        let one_way = |bytes: u64| -> Time { path.iter().map(|h| serialization(bytes, h.rate) + h.latency).sum::<Time>() };
        let base_rtt = one_way(mtu) + one_way(header);
        let host_rate = tree.tier_rates[0];
        let bdp_bits = host_rate as u128 * base_rtt as u128;
        let bdp_packets = bdp_bits.div_ceil(8 * crate::time::PS_PER_S as u128 * mtu as u128) as u64;
        let bdp_bytes = bdp_packets * mtu;
        let bytes_of = |x: SizeOrBdp| x.resolve(bdp_packets, mtu);

        let sw = &self.switch;
        let buffer = bytes_of(sw.buffer);
        ensure(buffer >= mtu, "switch.buffer", sw.buffer, format!("allowed: at least one full packet ({mtu} B)"))?;
        let control_buffer = bytes_of(sw.control_buffer);
        ensure(control_buffer >= mtu, "switch.control_buffer", sw.control_buffer, format!("allowed: at least {mtu} B"))?;
        let ecn = if sw.ecn.enabled {
            let (kmin, kmax) = (bytes_of(sw.ecn.kmin), bytes_of(sw.ecn.kmax));
            ensure(
                kmin <= kmax,
                "switch.ecn.kmin",
                format!("{} ({kmin} B)", sw.ecn.kmin),
                format!("allowed: at most kmax = {} ({kmax} B)", sw.ecn.kmax),
            )?;
            ensure(
                kmax <= buffer,
                "switch.ecn.kmax",
                format!("{} ({kmax} B)", sw.ecn.kmax),
                format!("allowed: at most the buffer ({buffer} B)"),
            )?;
            Some((kmin, kmax, sw.ecn.mark))
        } else {
            None
        };

        let line_rate_window = (bdp_packets + tr.ack_every as u64 - 1) * mtu;
        let window = |w: Window, field: &str| -> Result<u64, ScenarioError> {
            let bytes = match w {
                Window::Auto => line_rate_window,
                Window::Size(x) => bytes_of(x),
            };
            ensure(bytes >= mtu, field, w.to_json_string(), format!("allowed: at least one packet ({mtu} B)"))?;
            Ok(bytes)
        };
        let init_cwnd = window(tr.init_cwnd, "transport.init_cwnd")?;
        let max_cwnd = window(tr.max_cwnd, "transport.max_cwnd")?;
        ensure(
            init_cwnd <= max_cwnd,
            "transport.init_cwnd",
            format!("{init_cwnd} B"),
            format!("allowed: at most max_cwnd ({max_cwnd} B)"),
        )?;

        self.lb.validate()?;
        let up_ports = tree.up_ports_per_tier();
        let rules = sw
            .routing
            .resolve(up_ports.len(), self.lb.preferred_rule())
            .map_err(|m| ScenarioError { field: "switch.routing".into(), message: m })?;
        let mut warnings = Vec::new();
        if self.lb.preferred_rule() == Rule::MpEv {
            for (tier, rule) in rules.iter().enumerate() {
                if *rule != Rule::MpEv {
                    warnings.push(format!(
                        "lb.kind = {:?} writes a multi-part EV (one up-port index per tier), but switch.routing makes tier-{tier} switches use {:?}: its round robin is lost; use routing = \"auto\" or \"mp_ev\"",
                        self.lb.name(),
                        rule.name()
                    ));
                }
            }
        }
        let lb_ctx = LbContext {
            bdp_packets,
            base_rtt,
            mtu,
            mp_ev: MpEvLayout::new(&up_ports),
            kmin_packets: ecn.map_or(buffer, |(kmin, _, _)| kmin).div_ceil(mtu),
            buffer_packets: buffer.div_ceil(mtu),
        };
        let mut rng = Rng::stream(self.seed, Stream::Workload, 0);
        let mut flows = self.workload.flows(tree.hosts, &mut rng)?;

        ensure((1..=8).contains(&sw.classes), "switch.classes", sw.classes, "allowed: 1 to 8")?;
        ensure(
            sw.weights.is_empty() || sw.weights.len() == sw.classes as usize,
            "switch.weights",
            format!("{} weights", sw.weights.len()),
            format!("allowed: none (all 1) or one per class ({})", sw.classes),
        )?;
        for (i, w) in sw.weights.iter().enumerate() {
            ensure(*w >= 1, &format!("switch.weights[{i}]"), w, "allowed: 1 or more")?;
        }
        let scheduler = match sw.scheduler {
            SchedulerKind::Strict => Scheduler::Strict,
            SchedulerKind::Wrr => {
                Scheduler::Drr { quanta: (0..sw.classes as usize).map(|c| sw.weights.get(c).copied().unwrap_or(1) as u64 * mtu).collect() }
            }
        };
        if let Some(m) = &self.mixed {
            ensure(m.share > 0.0 && m.share <= 1.0, "mixed.share", m.share, "allowed: a fraction in (0, 1]")?;
            ensure(m.class < sw.classes, "mixed.class", m.class, format!("allowed: a class below switch.classes ({})", sw.classes))?;
            let mut order: Vec<usize> = (0..flows.len()).collect();
            Rng::stream(self.seed, Stream::Mixed, 0).shuffle(&mut order);
            let count = ((m.share * flows.len() as f64).round() as usize).clamp(1, flows.len());
            for &i in &order[..count] {
                flows[i].class = m.class as u8;
                flows[i].pinned = true;
            }
        }
        for (i, f) in flows.iter().enumerate() {
            ensure(
                (f.class as u32) < sw.classes,
                &format!("workload.flows[{i}].class"),
                f.class,
                format!("allowed: a class below switch.classes ({})", sw.classes),
            )?;
        }

        Ok(Model {
            seed: self.seed,
            tree,
            mtu,
            header,
            ack_policy: AckPolicy { every: tr.ack_every, on_ecn: tr.ack_on_ecn, all_evs: tr.ack_evs == AckEvs::All },
            rto: tr.rto.0,
            transport: tr.kind,
            loss_detection: tr.loss_detection,
            cc: tr.cc,
            init_cwnd,
            max_cwnd,
            buffer,
            control_buffer,
            ecn,
            overflow: sw.overflow,
            classes: sw.classes,
            scheduler,
            rules,
            lb: self.lb.clone(),
            lb_ctx,
            flows,
            warnings,
            max_time: self.stop.max_time.0,
            max_events: self.stop.max_events,
            base_rtt,
            bdp_packets,
            bdp_bytes,
        })
    }

    /// The scenario with derived defaults written in (per-tier lists filled).
    pub fn filled(&self) -> Scenario {
        let mut s = self.clone();
        let tiers = s.topology.tiers as usize;
        if s.topology.tier_link_rates.is_empty() {
            s.topology.tier_link_rates = vec![s.topology.link_rate; tiers];
        }
        if s.topology.tier_link_latencies.is_empty() {
            s.topology.tier_link_latencies = vec![s.topology.link_latency; tiers];
        }
        s
    }
}

impl Window {
    fn to_json_string(self) -> String {
        serde_json::to_string(&self).unwrap_or_default()
    }
}

fn clean(msg: String) -> String {
    // serde_json appends " at line L column C" and toml "\nin `a.b`"; the field path
    // already says where.
    let msg = msg.split("\nin `").next().unwrap_or_default();
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn path_error(e: serde_path_to_error::Error<serde_json::Error>) -> ScenarioError {
    located(e.path().to_string(), e.inner().to_string())
}

/// A parse error at `path`, whose message may carry an inner path (see [`crate::tagged`]).
fn located(path: String, message: String) -> ScenarioError {
    let (field, message) = crate::tagged::join(if path == "." { "" } else { &path }, &clean(message));
    ScenarioError { field: if field.is_empty() { "scenario".into() } else { field }, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> Result<Model, ScenarioError> {
        let value: toml::Table = toml::from_str(toml_text).expect("test TOML parses");
        Scenario::from_deserializer(value)?.resolve()
    }

    #[test]
    fn design_md_bdp_example() {
        // DESIGN.md: 400 Gb/s, 1 us links, 0 switch latency, 4160 B packets, 64 B ACKs, 2 tiers:
        // base RTT 8.338 us, 1 BDP = 101 packets = 420 160 B.
        let m =
            parse("[topology]\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n")
                .unwrap();
        assert_eq!(m.base_rtt, 8_337_920);
        assert_eq!(m.bdp_packets, 101);
        assert_eq!(m.bdp_bytes, 420_160);
        assert_eq!(m.buffer, 420_160);
        assert_eq!(m.ecn, Some((21 * 4160, 81 * 4160, EcnMark::Dequeue)));
    }

    #[test]
    fn errors_name_field_value_and_allowed() {
        let e = parse("[switch.ecn]\nkmin = \"0.9bdp\"\nkmax = \"0.5bdp\"\n").unwrap_err();
        assert_eq!(e.field, "switch.ecn.kmin");
        assert!(e.message.contains("0.9bdp") && e.message.contains("at most kmax"), "{e}");

        let e = parse("[topology]\nlink_rate = 400\n").unwrap_err();
        assert_eq!(e.field, "topology.link_rate");
        assert!(e.message.contains("unit-less"), "{e}");

        let e = parse("[topology]\nhostz = 4\n").unwrap_err();
        assert_eq!(e.field, "topology.hostz");
        assert!(e.message.contains("hostz"), "{e}");

        let e = parse("[transport]\nheader = \"5000B\"\n").unwrap_err();
        assert_eq!(e.field, "transport.header");
    }
}
