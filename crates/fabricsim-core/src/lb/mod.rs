//! Host-side load balancers: the NIC picks each data packet's entropy value (EV); switches
//! hash it (with the flow's 5-tuple) to choose among up-ports.
//!
//! One small trait, [`LoadBalancer`], with default no-op feedback hooks; one file per
//! algorithm; static dispatch through the [`HostLb`] enum (no `Box<dyn>` in the packet path).
//! State lives per connection, as in a NIC, and each algorithm reports its size in bytes.
//! Adding an algorithm: a file, a variant in [`LbConfig`] and [`HostLb`], and a line in
//! [`ALGORITHMS`].

pub mod arcane;
pub mod bitmap;
pub mod ecmp;
pub mod flowlet;
pub mod mpev;
pub mod mprdma;
pub mod mptcp;
pub mod ops;
pub mod plb;
pub mod prime;
pub mod round_robin;

use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::packet::mp_ev::MpEvLayout;
pub use crate::packet::Ev;
use crate::registry::{self, AlgorithmInfo};
use crate::time::Time;
use crate::units::Duration;

/// The per-connection load-balancer interface (DESIGN.md).
pub trait LoadBalancer {
    /// The EV of the next data packet.
    fn next_ev(&mut self, now: Time, rng: &mut Rng) -> Ev;
    /// An ACK echoed `ev`, with the ECN mark of the packet that triggered it.
    fn on_ack(&mut self, _now: Time, _ev: Ev, _ecn: bool) {}
    /// A NACK: the packet sent on `ev` was trimmed.
    fn on_nack(&mut self, _now: Time, _ev: Ev) {}
    /// The packet sent on `ev` timed out (RTO).
    fn on_timeout(&mut self, _now: Time, _ev: Ev) {}
    /// Bytes of per-connection state a NIC would keep.
    fn state_bytes(&self) -> usize;
}

/// The `[lb]` table of a scenario: `kind` plus that algorithm's parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LbConfig {
    Ecmp(EvsConfig),
    Ops(EvsConfig),
    Arcane(ArcaneConfig),
    Reps(ArcaneConfig),
    Prime(PrimeConfig),
    CoPrime(NoParams),
    RoundRobin(NoParams),
    Bitmap(BitmapConfig),
    Flowlet(FlowletConfig),
    Plb(PlbConfig),
    Mprdma(MprdmaConfig),
    Mptcp(MptcpConfig),
}

/// A parameter that is either `"auto"` (derived from the fabric) or a value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum AutoOr<T> {
    #[default]
    Auto,
    Value(T),
}

impl<T: Copy> AutoOr<T> {
    pub fn or(self, auto: T) -> T {
        match self {
            AutoOr::Auto => auto,
            AutoOr::Value(v) => v,
        }
    }
}

impl<T: Serialize> Serialize for AutoOr<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AutoOr::Auto => s.serialize_str("auto"),
            AutoOr::Value(v) => v.serialize(s),
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for AutoOr<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        if v.as_str() == Some("auto") {
            return Ok(AutoOr::Auto);
        }
        T::deserialize(v).map(AutoOr::Value).map_err(|e| serde::de::Error::custom(format!("{e}, or \"auto\"")))
    }
}

/// Parameters of the algorithms that only need the EVS size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvsConfig {
    /// Number of distinct entropy values.
    #[serde(default = "d_evs")]
    pub evs_size: u32,
}

/// No parameters (unknown keys are still errors).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcaneConfig {
    #[serde(default = "d_evs")]
    pub evs_size: u32,
    #[serde(default = "d_arcane_buffer")]
    pub buffer_size: u32,
    #[serde(default = "d_freezing")]
    pub freezing_timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrimeConfig {
    /// Penalty of an ECN-marked ACK's path; auto = Kmin in packets.
    #[serde(default)]
    pub p_ecn: AutoOr<u32>,
    /// Penalty of a NACKed (or timed-out) packet's path; auto = the buffer in packets.
    #[serde(default)]
    pub p_nack: AutoOr<u32>,
    /// Penalty units removed from every path per packet sent.
    #[serde(default = "d_one")]
    pub decay: u32,
    #[serde(default = "d_penalty_bits")]
    pub penalty_bits: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BitmapConfig {
    #[serde(default = "d_bitmap_evs")]
    pub evs_size: u32,
    #[serde(default = "d_one")]
    pub p_ecn: u32,
    #[serde(default = "d_four")]
    pub p_nack: u32,
    #[serde(default = "d_max_penalty")]
    pub max_penalty: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowletConfig {
    #[serde(default = "d_evs")]
    pub evs_size: u32,
    /// Gap that starts a new flowlet; auto = half the base RTT.
    #[serde(default)]
    pub timeout: AutoOr<Duration>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlbConfig {
    #[serde(default = "d_evs")]
    pub evs_size: u32,
    /// Fraction of ECN-marked ACKs that makes a round congested.
    #[serde(default = "d_plb_threshold")]
    pub threshold: f64,
    /// Consecutive congested rounds before repathing.
    #[serde(default = "d_one")]
    pub rounds: u32,
    /// Round length; auto = the base RTT.
    #[serde(default)]
    pub round: AutoOr<Duration>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MprdmaConfig {
    #[serde(default = "d_evs")]
    pub evs_size: u32,
    /// One packet in this many probes a random path (0 = never).
    #[serde(default = "d_probe")]
    pub probe_every: u32,
    /// Most path credits kept; auto = 2 BDP of packets.
    #[serde(default)]
    pub max_credits: AutoOr<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MptcpConfig {
    #[serde(default = "d_subflows")]
    pub subflows: u32,
    #[serde(default = "d_evs")]
    pub evs_size: u32,
}

fn d_subflows() -> u32 {
    8
}
fn d_evs() -> u32 {
    65_536
}
fn d_arcane_buffer() -> u32 {
    8
}
fn d_freezing() -> Duration {
    Duration(100_000_000)
}
fn d_one() -> u32 {
    1
}
fn d_four() -> u32 {
    4
}
fn d_penalty_bits() -> u32 {
    8
}
fn d_bitmap_evs() -> u32 {
    256
}
fn d_max_penalty() -> u32 {
    15
}
fn d_plb_threshold() -> f64 {
    0.05
}
fn d_probe() -> u32 {
    32
}

impl Default for EvsConfig {
    fn default() -> Self {
        EvsConfig { evs_size: d_evs() }
    }
}

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig::Ops(EvsConfig::default())
    }
}

impl<'de> Deserialize<'de> for LbConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (kind, rest) = registry::split_kind(d, "ops")?;
        Ok(match kind.as_str() {
            "ecmp" => LbConfig::Ecmp(registry::fields(rest)?),
            "ops" => LbConfig::Ops(registry::fields(rest)?),
            "arcane" => LbConfig::Arcane(registry::fields(rest)?),
            "reps" => LbConfig::Reps(registry::fields(rest)?),
            "prime" => LbConfig::Prime(registry::fields(rest)?),
            "co_prime" => LbConfig::CoPrime(registry::fields(rest)?),
            "round_robin" => LbConfig::RoundRobin(registry::fields(rest)?),
            "bitmap" => LbConfig::Bitmap(registry::fields(rest)?),
            "flowlet" => LbConfig::Flowlet(registry::fields(rest)?),
            "plb" => LbConfig::Plb(registry::fields(rest)?),
            "mprdma" => LbConfig::Mprdma(registry::fields(rest)?),
            "mptcp" => LbConfig::Mptcp(registry::fields(rest)?),
            other => return Err(registry::unknown_kind(other, &ALGORITHMS.iter().map(|a| a.name).collect::<Vec<_>>())),
        })
    }
}

/// What a host load balancer may know of the fabric (a NIC is configured with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbContext {
    /// Packets in one BDP of the fabric's base RTT.
    pub bdp_packets: u64,
    pub base_rtt: Time,
    pub mtu: u64,
    /// Where each switch tier's part of a multi-part EV sits (PRIME sec. III-D).
    pub mp_ev: MpEvLayout,
    /// ECN Kmin (or, without ECN, the buffer) and the buffer, in packets.
    pub kmin_packets: u64,
    pub buffer_packets: u64,
}

/// Largest EVS: EVs are carried in 24 bits (a UDP source port has 16).
pub const MAX_EVS: u32 = 1 << 24;

impl LbConfig {
    pub fn name(&self) -> &'static str {
        match self {
            LbConfig::Ecmp(_) => "ecmp",
            LbConfig::Ops(_) => "ops",
            LbConfig::Arcane(_) => "arcane",
            LbConfig::Reps(_) => "reps",
            LbConfig::Prime(_) => "prime",
            LbConfig::CoPrime(_) => "co_prime",
            LbConfig::RoundRobin(_) => "round_robin",
            LbConfig::Bitmap(_) => "bitmap",
            LbConfig::Flowlet(_) => "flowlet",
            LbConfig::Plb(_) => "plb",
            LbConfig::Mprdma(_) => "mprdma",
            LbConfig::Mptcp(_) => "mptcp",
        }
    }

    /// Connections a message is split into (MPTCP subflows); 1 for every other algorithm.
    pub fn subflows(&self) -> u32 {
        match self {
            LbConfig::Mptcp(c) => c.subflows,
            _ => 1,
        }
    }

    /// Whether it writes a multi-part EV (switches then read it: `routing = "auto"` is `mp_ev`).
    pub fn writes_mp_ev(&self) -> bool {
        matches!(self, LbConfig::Prime(_) | LbConfig::CoPrime(_) | LbConfig::RoundRobin(_))
    }

    pub fn validate(&self) -> Result<(), ScenarioError> {
        let evs = |evs_size: u32| ensure((1..=MAX_EVS).contains(&evs_size), "lb.evs_size", evs_size, format!("allowed: 1 to {MAX_EVS}"));
        match self {
            LbConfig::Ecmp(c) | LbConfig::Ops(c) => evs(c.evs_size),
            LbConfig::Arcane(c) | LbConfig::Reps(c) => {
                evs(c.evs_size)?;
                ensure((1..=256).contains(&c.buffer_size), "lb.buffer_size", c.buffer_size, "allowed: 1 to 256 entries")
            }
            LbConfig::Prime(c) => {
                ensure((1..=16).contains(&c.penalty_bits), "lb.penalty_bits", c.penalty_bits, "allowed: 1 to 16")?;
                if let (AutoOr::Value(e), AutoOr::Value(n)) = (c.p_ecn, c.p_nack) {
                    ensure(
                        n > e,
                        "lb.p_nack",
                        n,
                        format!("allowed: more than p_ecn ({e}): a NACK is the more severe signal (PRIME sec. III-D)"),
                    )?;
                }
                Ok(())
            }
            LbConfig::CoPrime(_) | LbConfig::RoundRobin(_) => Ok(()),
            LbConfig::Bitmap(c) => {
                ensure(
                    c.evs_size.is_power_of_two() && c.evs_size <= 1 << 16,
                    "lb.evs_size",
                    c.evs_size,
                    "allowed: a power of two up to 65536 (the walk XORs indices)",
                )?;
                ensure((1..=255).contains(&c.max_penalty), "lb.max_penalty", c.max_penalty, "allowed: 1 to 255")
            }
            LbConfig::Flowlet(c) => evs(c.evs_size),
            LbConfig::Plb(c) => {
                evs(c.evs_size)?;
                ensure(c.threshold > 0.0 && c.threshold <= 1.0, "lb.threshold", c.threshold, "allowed: a fraction in (0, 1]")?;
                ensure(c.rounds >= 1, "lb.rounds", c.rounds, "allowed: 1 or more")
            }
            LbConfig::Mprdma(c) => evs(c.evs_size),
            LbConfig::Mptcp(c) => {
                evs(c.evs_size)?;
                ensure((1..=256).contains(&c.subflows), "lb.subflows", c.subflows, "allowed: 1 to 256")
            }
        }
    }
}

/// Bytes needed to store one EV drawn from an EVS of this size.
pub fn ev_bytes(evs_size: u32) -> usize {
    let bits = 32 - (evs_size.max(2) - 1).leading_zeros();
    bits.div_ceil(8) as usize
}

/// The per-connection load balancer, dispatched statically.
#[derive(Debug, Clone)]
pub enum HostLb {
    Ecmp(ecmp::Ecmp),
    Ops(ops::Ops),
    Arcane(arcane::Arcane),
    Prime(prime::Prime),
    RoundRobin(round_robin::RoundRobin),
    Bitmap(bitmap::Bitmap),
    Flowlet(flowlet::Flowlet),
    Plb(plb::Plb),
    Mprdma(mprdma::Mprdma),
}

impl HostLb {
    /// The EV every packet gets, for algorithms that use only one.
    pub fn fixed_ev(&self) -> Option<Ev> {
        match self {
            HostLb::Ecmp(e) => Some(e.ev()),
            _ => None,
        }
    }

    pub fn new(cfg: &LbConfig, ctx: &LbContext, rng: &mut Rng) -> HostLb {
        let prime = |p_ecn: u32, p_nack: u32, decay: u32, penalty_bits: u32, congestion_aware: bool| prime::PrimeParams {
            p_ecn,
            p_nack,
            decay,
            penalty_bits,
            congestion_aware,
        };
        match cfg {
            LbConfig::Ecmp(c) => HostLb::Ecmp(ecmp::Ecmp::new(c.evs_size, rng)),
            LbConfig::Ops(c) => HostLb::Ops(ops::Ops::new(c.evs_size)),
            LbConfig::Arcane(c) | LbConfig::Reps(c) => {
                HostLb::Arcane(arcane::Arcane::new(c.evs_size, c.buffer_size as usize, c.freezing_timeout.0, ctx))
            }
            LbConfig::Prime(c) => {
                let p_ecn = c.p_ecn.or(ctx.kmin_packets as u32).max(1);
                let p_nack = c.p_nack.or(ctx.buffer_packets as u32).max(p_ecn + 1);
                HostLb::Prime(prime::Prime::new(prime(p_ecn, p_nack, c.decay, c.penalty_bits, true), ctx, rng))
            }
            LbConfig::CoPrime(_) => HostLb::Prime(prime::Prime::new(prime(0, 0, 0, 1, false), ctx, rng)),
            LbConfig::RoundRobin(_) => HostLb::RoundRobin(round_robin::RoundRobin::new(ctx, rng)),
            LbConfig::Bitmap(c) => {
                HostLb::Bitmap(bitmap::Bitmap::new(c.evs_size, c.p_ecn.min(255) as u8, c.p_nack.min(255) as u8, c.max_penalty as u8, rng))
            }
            LbConfig::Flowlet(c) => HostLb::Flowlet(flowlet::Flowlet::new(c.evs_size, c.timeout.or(Duration(ctx.base_rtt / 2)).0)),
            LbConfig::Plb(c) => HostLb::Plb(plb::Plb::new(c.evs_size, c.threshold, c.rounds, c.round.or(Duration(ctx.base_rtt)).0)),
            // each subflow is its own connection with its own ECMP path
            LbConfig::Mptcp(c) => HostLb::Ecmp(ecmp::Ecmp::new(c.evs_size, rng)),
            LbConfig::Mprdma(c) => {
                HostLb::Mprdma(mprdma::Mprdma::new(c.evs_size, c.probe_every, c.max_credits.or(2 * ctx.bdp_packets as u32).max(1) as usize))
            }
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $lb:ident => $e:expr) => {
        match $self {
            HostLb::Ecmp($lb) => $e,
            HostLb::Ops($lb) => $e,
            HostLb::Arcane($lb) => $e,
            HostLb::Prime($lb) => $e,
            HostLb::RoundRobin($lb) => $e,
            HostLb::Bitmap($lb) => $e,
            HostLb::Flowlet($lb) => $e,
            HostLb::Plb($lb) => $e,
            HostLb::Mprdma($lb) => $e,
        }
    };
}

impl LoadBalancer for HostLb {
    #[inline]
    fn next_ev(&mut self, now: Time, rng: &mut Rng) -> Ev {
        dispatch!(self, lb => lb.next_ev(now, rng))
    }
    #[inline]
    fn on_ack(&mut self, now: Time, ev: Ev, ecn: bool) {
        dispatch!(self, lb => lb.on_ack(now, ev, ecn))
    }
    #[inline]
    fn on_nack(&mut self, now: Time, ev: Ev) {
        dispatch!(self, lb => lb.on_nack(now, ev))
    }
    #[inline]
    fn on_timeout(&mut self, now: Time, ev: Ev) {
        dispatch!(self, lb => lb.on_timeout(now, ev))
    }
    fn state_bytes(&self) -> usize {
        dispatch!(self, lb => lb.state_bytes())
    }
}

/// The host load balancers `[lb] kind` accepts.
pub const ALGORITHMS: &[AlgorithmInfo] = &[
    ecmp::INFO,
    ops::INFO,
    arcane::INFO,
    arcane::INFO_REPS,
    prime::INFO,
    prime::INFO_CO,
    round_robin::INFO,
    bitmap::INFO,
    flowlet::INFO,
    plb::INFO,
    mprdma::INFO,
    mptcp::INFO,
];
