//! Host-side load balancers: the NIC picks each data packet's entropy value (EV); switches
//! hash it (with the flow's 5-tuple) to choose among up-ports.
//!
//! One small trait, [`LoadBalancer`], with default no-op feedback hooks; one file per
//! algorithm; static dispatch through the [`HostLb`] enum (no `Box<dyn>` in the packet path).
//! State lives per connection, as in a NIC, and each algorithm reports its size in bytes.
//!
//! Adding an algorithm is one file and one line. The file (`lb/name.rs`) holds its doc comment
//! (paper, section, parameters, defaults, state: docs/algorithms.md is generated from it),
//! `INFO` (name, summary, reference), `Config` (its `[lb]` parameters, with [`Algorithm`]:
//! validation, the state of a new connection, and whether it writes an MP-EV or splits
//! messages; each field's meaning in its doc comment, from which docs/scenario.md's table and
//! the scenario schema are generated: [`crate::registry::options`]), the state implementing
//! [`LoadBalancer`], and its unit tests. The line goes in the `load_balancers!` list below;
//! the scenario parser, `fabricsim list`, the docs pages and the tests that cover every
//! algorithm pick it up from there. What several algorithms share lives in `support/`.

mod support;
pub use support::{mpev, walk};

use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::packet::mp_ev::MpEvLayout;
pub use crate::packet::Ev;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
pub use crate::units::AutoOr;

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
    /// The EV every packet gets, for algorithms that use only one (the path is then fixed).
    fn fixed_ev(&self) -> Option<Ev> {
        None
    }
}

/// What an algorithm's `Config` provides besides its parameters.
pub trait Algorithm {
    /// The per-connection state.
    type State: LoadBalancer;
    /// Checks the parameters; errors name `lb.<field>`.
    fn validate(&self) -> Result<(), ScenarioError> {
        Ok(())
    }
    /// The state of a new connection (draws from the source host's stream).
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Self::State;
    /// Writes a multi-part EV: `routing = "auto"` makes the switches read it (`mp_ev`).
    fn writes_mp_ev(&self) -> bool {
        false
    }
    /// Connections a message is split into (MPTCP subflows).
    fn subflows(&self) -> u32 {
        1
    }
}

/// Declares the algorithms, one line each (`Variant => module`): the modules, the `[lb]`
/// table ([`LbConfig`]), the per-connection state enum ([`HostLb`]) and [`ALGORITHMS`].
macro_rules! load_balancers {
    ($($Variant:ident => $module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        crate::registry::tagged_config! {
            /// The `[lb]` table of a scenario: `kind` plus that algorithm's parameters.
            LbConfig, default "ops", $($Variant => $module),+
        }

        /// The per-connection load balancer, dispatched statically.
        #[derive(Debug, Clone)]
        pub enum HostLb {
            $($Variant(<$module::Config as Algorithm>::State)),+
        }

        impl LbConfig {
            pub fn validate(&self) -> Result<(), ScenarioError> {
                match self {
                    $(LbConfig::$Variant(c) => c.validate()),+
                }
            }
            /// The state of a new connection.
            pub fn build(&self, ctx: &LbContext, rng: &mut Rng) -> HostLb {
                match self {
                    $(LbConfig::$Variant(c) => HostLb::$Variant(c.build(ctx, rng))),+
                }
            }
            /// Whether it writes a multi-part EV (switches then read it: `routing = "auto"` is `mp_ev`).
            pub fn writes_mp_ev(&self) -> bool {
                match self {
                    $(LbConfig::$Variant(c) => c.writes_mp_ev()),+
                }
            }
            /// Connections a message is split into (MPTCP subflows); 1 for every other algorithm.
            pub fn subflows(&self) -> u32 {
                match self {
                    $(LbConfig::$Variant(c) => c.subflows()),+
                }
            }
        }

        impl LoadBalancer for HostLb {
            #[inline]
            fn next_ev(&mut self, now: Time, rng: &mut Rng) -> Ev {
                match self {
                    $(HostLb::$Variant(lb) => lb.next_ev(now, rng)),+
                }
            }
            #[inline]
            fn on_ack(&mut self, now: Time, ev: Ev, ecn: bool) {
                match self {
                    $(HostLb::$Variant(lb) => lb.on_ack(now, ev, ecn)),+
                }
            }
            #[inline]
            fn on_nack(&mut self, now: Time, ev: Ev) {
                match self {
                    $(HostLb::$Variant(lb) => lb.on_nack(now, ev)),+
                }
            }
            #[inline]
            fn on_timeout(&mut self, now: Time, ev: Ev) {
                match self {
                    $(HostLb::$Variant(lb) => lb.on_timeout(now, ev)),+
                }
            }
            fn state_bytes(&self) -> usize {
                match self {
                    $(HostLb::$Variant(lb) => lb.state_bytes()),+
                }
            }
            fn fixed_ev(&self) -> Option<Ev> {
                match self {
                    $(HostLb::$Variant(lb) => lb.fixed_ev()),+
                }
            }
        }

        /// The host load balancers `[lb] kind` accepts.
        pub const ALGORITHMS: &[AlgorithmInfo] = LbConfig::KINDS;
    };
}

load_balancers! {
    Ecmp => ecmp,
    Ops => ops,
    Arcane => arcane,
    Reps => reps,
    Prime => prime,
    CoPrime => co_prime,
    RoundRobin => round_robin,
    Bitmap => bitmap,
    Flowlet => flowlet,
    Plb => plb,
    Mprdma => mprdma,
    Mptcp => mptcp,
}

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig::Ops(ops::Config::default())
    }
}

/// The parameters of the algorithms that need only the EVS size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvsConfig {
    /// Distinct entropy values, 1 to 2^24.
    #[serde(default = "d_evs")]
    pub evs_size: u32,
}

impl Default for EvsConfig {
    fn default() -> Self {
        EvsConfig { evs_size: d_evs() }
    }
}

/// The default EVS size of the hashed algorithms.
pub(crate) fn d_evs() -> u32 {
    65_536
}

/// Checks an `evs_size`.
pub(crate) fn check_evs(evs_size: u32) -> Result<(), ScenarioError> {
    ensure((1..=MAX_EVS).contains(&evs_size), "lb.evs_size", evs_size, format!("allowed: 1 to {MAX_EVS}"))
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
    /// A full packet's serialization at the host's line rate.
    pub packet_time: Time,
}

/// Largest EVS: EVs are carried in 24 bits (a UDP source port has 16).
pub const MAX_EVS: u32 = 1 << 24;

/// Bytes needed to store one EV drawn from an EVS of this size.
pub fn ev_bytes(evs_size: u32) -> usize {
    let bits = 32 - (evs_size.max(2) - 1).leading_zeros();
    bits.div_ceil(8) as usize
}
