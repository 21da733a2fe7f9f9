//! Host-side load balancers: the NIC picks each data packet's entropy value (EV); switches
//! hash it (with the flow's 5-tuple) to choose among up-ports.
//!
//! One small trait, [`LoadBalancer`], with default no-op feedback hooks; one file per
//! algorithm; static dispatch through the [`HostLb`] enum (no `Box<dyn>` in the packet path).
//! State lives per connection, as in a NIC, and each algorithm reports its size in bytes.
//! Adding an algorithm: a file, a variant in [`LbConfig`] and [`HostLb`], and a line in
//! [`ALGORITHMS`].

pub mod ecmp;
pub mod ops;

use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::tagged;
use crate::time::Time;

/// An entropy value: the part of the packet header a switch hashes besides the 5-tuple.
pub type Ev = u32;

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
    /// One EV per flow, drawn at random from the EVS: the whole flow takes one path.
    Ecmp(EvsConfig),
    /// Oblivious packet spraying: a uniformly random EV per packet.
    Ops(EvsConfig),
}

/// Parameters of the algorithms that only need the EVS size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvsConfig {
    /// Number of distinct entropy values.
    #[serde(default = "d_evs")]
    pub evs_size: u32,
}

fn d_evs() -> u32 {
    65_536
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
        let (kind, rest) = tagged::split_kind(d, "ops")?;
        Ok(match kind.as_str() {
            "ecmp" => LbConfig::Ecmp(tagged::fields(rest)?),
            "ops" => LbConfig::Ops(tagged::fields(rest)?),
            other => return Err(tagged::unknown_kind(other, &ALGORITHMS.iter().map(|a| a.name).collect::<Vec<_>>())),
        })
    }
}

/// Largest EVS: EVs are carried in 24 bits (a UDP source port has 16).
pub const MAX_EVS: u32 = 1 << 24;

impl LbConfig {
    pub fn name(&self) -> &'static str {
        match self {
            LbConfig::Ecmp(_) => "ecmp",
            LbConfig::Ops(_) => "ops",
        }
    }

    pub fn validate(&self) -> Result<(), ScenarioError> {
        match self {
            LbConfig::Ecmp(EvsConfig { evs_size }) | LbConfig::Ops(EvsConfig { evs_size }) => ensure(
                (1..=MAX_EVS).contains(evs_size),
                "lb.evs_size",
                evs_size,
                format!("allowed: 1 to {MAX_EVS}"),
            ),
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
}

impl HostLb {
    /// The EV every packet gets, for algorithms that use only one.
    pub fn fixed_ev(&self) -> Option<Ev> {
        match self {
            HostLb::Ecmp(e) => Some(e.ev()),
            _ => None,
        }
    }

    pub fn new(cfg: &LbConfig, rng: &mut Rng) -> HostLb {
        match cfg {
            LbConfig::Ecmp(c) => HostLb::Ecmp(ecmp::Ecmp::new(c.evs_size, rng)),
            LbConfig::Ops(c) => HostLb::Ops(ops::Ops::new(c.evs_size)),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $lb:ident => $e:expr) => {
        match $self {
            HostLb::Ecmp($lb) => $e,
            HostLb::Ops($lb) => $e,
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

/// A registered name with its one-line doc and source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AlgorithmInfo {
    pub category: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
    pub reference: &'static str,
}

/// The host load balancers `[lb] kind` accepts.
pub const ALGORITHMS: &[AlgorithmInfo] = &[ecmp::INFO, ops::INFO];
