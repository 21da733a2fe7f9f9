//! The hosts: their NICs ([`nic`]), the connections a NIC keeps ([`connection`]), the
//! congestion window ([`cc`]) and the `[transport]` configuration they share.

pub mod catalog;
pub mod cc;
pub mod connection;
pub mod factory;
pub mod message;
pub mod nic;
pub mod parts;
pub mod receiver;
pub mod rto;
pub mod table;
pub mod transport;

use serde::{Deserialize, Serialize};

use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use crate::units::{Duration, Rate, Size, SizeOrBdp};
pub use cc::CcKind;
pub use connection::AckPolicy;
pub use transport::TransportKind;

/// What a coalesced ACK reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AckEvs {
    Trigger,
    All,
}

/// How the out-of-order receiver learns of silent losses besides the sender's RTO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// Only the retransmission timeout.
    Rto,
    /// Path-ID-assisted: a hole below the highest PSN received on every path is lost; the
    /// receiver NACKs it at once (China Mobile slides).
    PathId,
}

/// A congestion window: `"auto"` (the line-rate window) or a size / BDP fraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSize {
    Auto,
    Size(SizeOrBdp),
}
impl Serialize for WindowSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WindowSize::Auto => s.serialize_str("auto"),
            WindowSize::Size(x) => x.serialize(s),
        }
    }
}
impl schemars::JsonSchema for WindowSize {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WindowSize".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::units::keyword_or_schema::<SizeOrBdp>(g, "auto")
    }
}
impl<'de> Deserialize<'de> for WindowSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let size = crate::units::keyword_or(d, "auto", SizeOrBdp::parse, "a size like \"420160B\" or a BDP fraction like \"1bdp\"")?;
        Ok(size.map_or(WindowSize::Auto, WindowSize::Size))
    }
}

/// `transport.rto`: a fixed duration or `"adaptive"` (RFC 6298, `host/rto.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtoSetting {
    Fixed(Duration),
    Adaptive,
}
impl Serialize for RtoSetting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RtoSetting::Adaptive => s.serialize_str("adaptive"),
            RtoSetting::Fixed(d) => d.serialize(s),
        }
    }
}
impl schemars::JsonSchema for RtoSetting {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RtoSetting".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::units::keyword_or_schema::<Duration>(g, "adaptive")
    }
}
impl<'de> Deserialize<'de> for RtoSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let rto = crate::units::keyword_or(d, "adaptive", Duration::parse, "a duration like \"70us\"")?;
        Ok(rto.map_or(RtoSetting::Adaptive, RtoSetting::Fixed))
    }
}
impl std::fmt::Display for RtoSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RtoSetting::Adaptive => f.write_str("\"adaptive\""),
            RtoSetting::Fixed(d) => write!(f, "{d}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransportConfig {
    /// `ooo`: out-of-order tolerant transport with selective ACKs. `gbn`: RoCE Go-back-N: the receiver accepts only the
    /// next PSN, discards later ones and NAKs the gap once; the sender resends from there (docs/model.md).
    #[serde(default = "d_transport")]
    pub kind: TransportKind,
    /// Wire size of a full data packet, header included (4096 B payload + 64 B). 128 B to 65000 B.
    #[serde(default = "d_mtu")]
    pub mtu: Size,
    /// Header size; also the wire size of ACKs, NACKs and trimmed packets.
    #[serde(default = "d_header")]
    pub header: Size,
    /// The receiver ACKs every n-th data packet (ACK coalescing). The ACK echoes the EV and ECN bit of the packet that
    /// triggered it and selectively acknowledges all packets since the previous ACK.
    #[serde(default = "d_ack_every")]
    #[schemars(extend("x-type" = "integer 1–1024"))]
    pub ack_every: u32,
    /// What a coalesced ACK reports: the EV and ECN mark of the packet that triggered it (ARCANE's worst case), or of every
    /// packet it newly acknowledges (fed to the load balancer and the window one by one, with the EV the sender used; the
    /// ACK's 64-bit selective field then covers the 32 PSNs up to its trigger and carries their ECN marks in the other 32
    /// bits: docs/model.md, "What an ACK carries").
    #[serde(default = "d_ack_evs")]
    pub ack_evs: AckEvs,
    /// ACK at once when a data packet arrives ECN-marked, whatever `ack_every` says.
    #[serde(default)]
    pub ack_on_ecn: bool,
    /// The sender asks for an ACK at once (Ultra Ethernet's AR flag, where the reference simulator's `UecSrc` sets it) on a
    /// packet that fills its window (after which no other packet of its size fits: what is in flight, it included, plus
    /// its size reaches the window), the last packet it has to send, and every retransmission; the receiver ACKs such a
    /// packet at once, whatever `ack_every` says. With coalesced ACKs a window-limited flow gets an unmarked delay sample
    /// and an EV per burst its ACKs release, and one per packet once its window has collapsed (docs/comparison.md, the
    /// like-for-like runs; docs/faults.md, "Links that stay dead").
    #[serde(default)]
    pub ack_request: bool,
    /// A packet not acknowledged this long after it was last sent is retransmitted. `"adaptive"`: RFC 6298: SRTT and RTTVAR
    /// from the RTT of every ACKed packet sent once (Karn), RTO = SRTT + 4 RTTVAR, at least `rto_min`, doubled at each
    /// expiry that finds a loss, at most 60 s; one estimator per connection (docs/model.md). A fixed RTO below the fabric's
    /// base RTT is refused (every packet would be resent before its ACK could return, until the stop guard; often a
    /// `link_latency` in ms meant in us); below the base RTT through a `delay` fault's link it gets a warning, as does an
    /// `rto_min` below the base RTT (the estimate backs off and recovers).
    #[serde(default = "d_rto")]
    pub rto: RtoSetting,
    /// With `rto = "adaptive"`: the RTO before the first sample and its floor.
    #[serde(default = "d_rto_min")]
    pub rto_min: Duration,
    /// Go-back-N only: payload bytes beyond the next expected PSN the receiver may place out of order (a NIC's reorder
    /// window, `reorder_buffer / payload` packets) before it discards and NAKs. `"0B"` = strict Go-back-N; otherwise at
    /// least one packet's payload. A packet held in the window is acknowledged, cumulatively, once the gap before it is
    /// filled.
    #[serde(default = "d_reorder_buffer")]
    pub reorder_buffer: Size,
    /// Out-of-order transport only: packets the receiver may hold beyond the first PSN still missing (a NIC's reorder
    /// limit, the Juniper post's reorder depth); a packet further ahead is discarded and NACKed at once, and the sender
    /// resends it. 1 to 16777216.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "none (any order)"))]
    pub reorder_limit: Option<u32>,
    /// `path_id` (with `ooo`): switches stamp a path id; the receiver NACKs at once a hole below the highest PSN received
    /// on every path between the two hosts (China Mobile slides).
    #[serde(default = "d_loss_detection")]
    pub loss_detection: LossDetection,
    /// Congestion control (docs/algorithms.md): the ARCANE paper's per-ACK DCTCP, RoCE's rate-based DCQCN (the receiver
    /// sends CNPs for ECN marks, at most one per 50 us per connection; the sender paces at its rate, its window stays at
    /// `max_cwnd`; usually with `kind = "gbn"`), Ultra Ethernet's NSCC (ECN and delay; the reference simulator runs it with
    /// `init_cwnd = max_cwnd = "1.5bdp"`), or a fixed window.
    #[serde(default = "d_cc")]
    pub cc: CcKind,
    /// Initial window. `auto` = 1 BDP + (ack_every − 1) packets, the least that lets a lone flow run at line rate.
    #[serde(default = "d_window")]
    pub init_cwnd: WindowSize,
    /// Upper bound of the window; `auto` = the initial window.
    #[serde(default = "d_window")]
    pub max_cwnd: WindowSize,
    /// A per-connection rate limit at the NIC (a queue pair's rate limiter): each connection's packets start at least `size
    /// / rate_cap` apart; an MPTCP subflow is a connection. With `cc = "dcqcn"` it bounds DCQCN's rate. The ideal FCT paces
    /// the first hop the same way, so a lone capped flow still meets its ideal exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "none (line rate)"))]
    pub rate_cap: Option<Rate>,
    /// LogGOPSim's `o` at the sender: what posting a message (a work request, per connection) costs its host before the
    /// NIC may send it. A connection ready to start is posted once the host's posting and its NIC's gap (`message_gap`)
    /// are both free; its first packet may leave `message_overhead` later (Hoefler et al., "LogGOPSim", LSAP 2010;
    /// `LogGOPSim.cpp`, its send: `nexto = t + o`, `nextgs = t + g`, the message in the network at `t + o`). Messages
    /// over a server's scale-up network and compute tasks are not posted. Default none: no published figure for today's
    /// NICs was found to cite, and a job's NCCL costs already count a network step's latency (docs/model.md, "Posting a
    /// message"). The jobs' ideal bound counts it; a flow's FCT runs from its first bit.
    #[serde(default)]
    #[schemars(extend("x-default" = "`\"0ps\"` (none)"))]
    pub message_overhead: Duration,
    /// LogGOPSim's `g` at the sender: the least time between the postings of two messages of a host (its NIC's message
    /// rate is at most 1 / `message_gap`). See `message_overhead`; default none.
    #[serde(default)]
    #[schemars(extend("x-default" = "`\"0ps\"` (none)"))]
    pub message_gap: Duration,
    /// `per_message`: every message has connections of its own, built when it starts. `per_pair`: a host's messages to one
    /// host and class go one after another through one long-lived connection (a queue pair, as NCCL's network transport
    /// keeps per peer): its congestion window, its load balancer's state (ARCANE's cache, PRIME's penalties, ECMP's
    /// entropy) and its RTO estimator carry from message to message, and its packets hash alike at the switches; a message
    /// released while the pair's message before it still has packets it never sent waits until that one has sent its last
    /// new packet (the pair's messages pipeline as work requests on a queue pair do), and one window covers the pair.
    /// Packets, PSNs (from 0), receivers and results stay per message. Not with `cc = "dcqcn"` (its timers are per
    /// connection) or `lb = "mptcp"` with `subflows` above 1 (its subflows are connections; with one subflow it is a
    /// connection per message or pair as any other). docs/workloads.md, "Long-lived connections".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-type" = "`per_message`, `per_pair`", "x-default" = "`per_pair` with `[[jobs]]` or a Chakra trace (`workload.file = \"x.et\"`: NCCL's) (unless `cc = \"dcqcn\"`, or `lb = \"mptcp\"` with more than one subflow), else `per_message`"))]
    pub connections: Option<Connections>,
}

/// `transport.connections`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Connections {
    #[default]
    PerMessage,
    PerPair,
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
fn d_rto() -> RtoSetting {
    RtoSetting::Fixed(d_rto_min())
}
fn d_rto_min() -> Duration {
    Duration(70_000_000)
}
fn d_reorder_buffer() -> Size {
    Size(0)
}
fn d_loss_detection() -> LossDetection {
    LossDetection::Rto
}
fn d_cc() -> CcKind {
    CcKind::Dctcp
}
fn d_window() -> WindowSize {
    WindowSize::Auto
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
            ack_request: false,
            rto: d_rto(),
            rto_min: d_rto_min(),
            reorder_buffer: Size(0),
            reorder_limit: None,
            loss_detection: d_loss_detection(),
            cc: d_cc(),
            init_cwnd: d_window(),
            max_cwnd: d_window(),
            rate_cap: None,
            message_overhead: Duration(0),
            message_gap: Duration(0),
            connections: None,
        }
    }
}

/// The transport configuration in core units, checked.
#[derive(Debug, Clone)]
pub struct TransportModel {
    pub kind: TransportKind,
    pub mtu: u64,
    pub header: u64,
    pub ack_policy: AckPolicy,
    /// The sender marks data packets with [`crate::packet::DataExt::ack_request`] where
    /// [`crate::host::connection::SendHalf::asks_ack`] says (`transport.ack_request`); the
    /// receiver ACKs a marked packet at once whatever its policy.
    pub ack_request: bool,
    /// The fixed RTO, or the adaptive one's start and floor (`rto_min`).
    pub rto: Time,
    pub rto_adaptive: bool,
    pub loss_detection: LossDetection,
    pub cc: CcKind,
    pub init_cwnd: u64,
    pub max_cwnd: u64,
    /// Bits/s a connection may send at most; 0 = no cap.
    pub rate_cap: u64,
    /// Long-lived connections, one per pair of hosts and class (`connections = "per_pair"`).
    pub per_pair: bool,
    /// What posting a message costs its host, (overhead, gap) (`message_overhead`,
    /// `message_gap`), where either is set.
    pub posting: Option<(Time, Time)>,
}

impl TransportConfig {
    /// Checks the packet sizes; returns (mtu, header) in bytes.
    pub fn packet_sizes(&self) -> Result<(u64, u64), ScenarioError> {
        let (mtu, header) = (self.mtu.0, self.header.0);
        ensure((128..=65_000).contains(&mtu), "transport.mtu", self.mtu, "allowed: 128B to 65000B")?;
        ensure(header >= 1 && header < mtu, "transport.header", self.header, format!("allowed: 1B up to less than mtu ({})", self.mtu))?;
        Ok((mtu, header))
    }

    /// Checks `[transport]` and resolves the windows against a BDP of `bdp_packets`.
    /// The model of this transport, its connections being `connections` (the scenario's
    /// choice where this table leaves it out).
    pub fn resolve(&self, bdp_packets: u64, connections: Connections) -> Result<TransportModel, ScenarioError> {
        let (mtu, header) = self.packet_sizes()?;
        ensure(
            !(self.kind == TransportKind::Gbn && self.loss_detection == LossDetection::PathId),
            "transport.loss_detection",
            "\"path_id\"",
            "allowed: \"rto\" with kind = \"gbn\" (Go-back-N NAKs every gap already)",
        )?;
        ensure(self.ack_every >= 1 && self.ack_every <= 1024, "transport.ack_every", self.ack_every, "allowed: 1 to 1024")?;
        let (rto, rto_adaptive) = match self.rto {
            RtoSetting::Fixed(d) => (d.0, false),
            RtoSetting::Adaptive => (self.rto_min.0, true),
        };
        ensure(
            !matches!(self.rto, RtoSetting::Fixed(d) if d.0 == 0),
            "transport.rto",
            self.rto,
            "allowed: a positive duration or \"adaptive\"",
        )?;
        ensure(
            self.rto_min.0 > 0 && self.rto_min.0 < rto::RTO_MAX,
            "transport.rto_min",
            self.rto_min,
            "allowed: a positive duration below 60s",
        )?;
        let payload = mtu - header;
        let reorder = self.reorder_buffer.0;
        ensure(
            reorder == 0 || self.kind == TransportKind::Gbn,
            "transport.reorder_buffer",
            self.reorder_buffer,
            "allowed: 0B with kind = \"ooo\" (the out-of-order receiver accepts any order)",
        )?;
        ensure(
            reorder == 0 || (payload..=(1u64 << 40)).contains(&reorder),
            "transport.reorder_buffer",
            self.reorder_buffer,
            format!("allowed: 0B (strict Go-back-N) or from one packet's payload ({payload}B) up to 1TiB"),
        )?;
        if let Some(n) = self.reorder_limit {
            ensure(
                self.kind == TransportKind::Ooo,
                "transport.reorder_limit",
                n,
                "allowed: only with kind = \"ooo\" (Go-back-N's is reorder_buffer)",
            )?;
            ensure(
                (1..=1 << 24).contains(&n),
                "transport.reorder_limit",
                n,
                "allowed: 1 to 16777216 packets (leave it out for any order)",
            )?;
        }
        let line_rate_window = (bdp_packets + self.ack_every as u64 - 1) * mtu;
        let window = |w: WindowSize, field: &str| -> Result<u64, ScenarioError> {
            let bytes = match w {
                WindowSize::Auto => line_rate_window,
                WindowSize::Size(x) => x.resolve(bdp_packets, mtu),
            };
            let text = serde_json::to_string(&w).unwrap_or_default();
            ensure(bytes >= mtu, field, text, format!("allowed: at least one packet ({mtu} B)"))?;
            Ok(bytes)
        };
        let init_cwnd = window(self.init_cwnd, "transport.init_cwnd")?;
        let max_cwnd = window(self.max_cwnd, "transport.max_cwnd")?;
        ensure(
            init_cwnd <= max_cwnd,
            "transport.init_cwnd",
            format!("{init_cwnd} B"),
            format!("allowed: at most max_cwnd ({max_cwnd} B)"),
        )?;
        ensure(
            !(connections == Connections::PerPair && self.cc == CcKind::Dcqcn),
            "transport.connections",
            "\"per_pair\"",
            "allowed: \"per_message\" with cc = \"dcqcn\" (its rate timers belong to each connection)",
        )?;
        for (field, d) in [("transport.message_overhead", self.message_overhead), ("transport.message_gap", self.message_gap)] {
            ensure(d.0 <= 1_000_000_000_000, field, d, "allowed: 0ns (none) to 1s")?;
        }
        if let Some(r) = self.rate_cap {
            ensure(r.0 > 0, "transport.rate_cap", r, "allowed: a positive rate like \"100Gbps\" (leave it out for line rate)")?;
        }
        Ok(TransportModel {
            kind: self.kind,
            mtu,
            header,
            ack_policy: AckPolicy {
                every: self.ack_every,
                on_ecn: self.ack_on_ecn,
                all_evs: self.ack_evs == AckEvs::All,
                reorder_window: (reorder / payload).min(u32::MAX as u64) as u32,
                reorder_limit: self.reorder_limit,
            },
            ack_request: self.ack_request,
            rto,
            rto_adaptive,
            loss_detection: self.loss_detection,
            cc: self.cc,
            init_cwnd,
            max_cwnd,
            rate_cap: self.rate_cap.map_or(0, |r| r.0),
            per_pair: connections == Connections::PerPair,
            posting: (self.message_overhead.0 > 0 || self.message_gap.0 > 0).then_some((self.message_overhead.0, self.message_gap.0)),
        })
    }
}

impl TransportModel {
    /// The retransmission timer of a connection.
    pub fn rto_timer(&self) -> rto::RtoTimer {
        if self.rto_adaptive {
            rto::RtoTimer::adaptive(self.rto)
        } else {
            rto::RtoTimer::fixed(self.rto)
        }
    }
}

/// The loss detections `[transport] loss_detection` names besides the RTO.
pub const LOSS_DETECTIONS: &[AlgorithmInfo] = &[AlgorithmInfo {
    category: "loss_detection",
    name: "path_id",
    summary: "receiver NACKs a hole below the highest PSN of every path (switches stamp path ids)",
    reference: "China Mobile slides",
}];
