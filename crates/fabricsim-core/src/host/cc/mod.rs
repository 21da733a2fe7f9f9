//! Congestion control: the sender's window and, for rate-based algorithms, its pacing rate.
//! One file per algorithm, one line per algorithm in the list below; `[transport] cc` names
//! one.

use crate::packet::{AckExt, Packet};
use crate::registry::named_kinds;
use crate::time::Time;

/// What an ACK tells the window, made in one place ([`AckSignal::of`]): a congestion control
/// that needs something more of the ACK reads it from `ack`, the ACK's own extension, once the
/// receiver writes it there ([`Packet::ack`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckSignal {
    pub now: Time,
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// The echoed ECN mark.
    pub ecn: bool,
    /// The round-trip time of the packet that triggered the ACK, if it was sent once (Karn)
    /// and the algorithm asked for samples ([`CcKind::needs_rtt`]).
    pub rtt: Option<Time>,
    /// Bytes in flight after this ACK.
    pub in_flight: u64,
    /// What the ACK carries beyond its header.
    pub ack: AckExt,
}

impl AckSignal {
    /// What ACK `ack` tells the window now of `acked` bytes it newly acknowledges, marked
    /// `ecn`, with an RTT sample or none, `in_flight` bytes left in flight.
    #[inline]
    pub fn of(ack: &Packet, now: Time, acked: u64, ecn: bool, rtt: Option<Time>, in_flight: u64) -> AckSignal {
        AckSignal { now, acked, ecn, rtt, in_flight, ack: ack.ext() }
    }
}

/// What a window knows of the fabric when a connection starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcContext {
    pub init: u64,
    pub max: u64,
    /// Wire size of a full packet, and its payload.
    pub mtu: u64,
    pub mss: u64,
    /// Base RTT of the diameter path and the host line rate (bits/s).
    pub base_rtt: Time,
    pub rate: u64,
    /// Switches trim rather than drop.
    pub trimming: bool,
}

/// A connection's congestion window.
pub trait CongestionControl {
    /// Bytes the connection may have in flight.
    fn cwnd(&self) -> u64;
    /// An ACK arrived.
    fn on_ack(&mut self, _ack: &AckSignal) {}
    /// A packet was lost (NACK or timeout) at `now`, with `in_flight` bytes still in flight.
    fn on_loss(&mut self, _now: Time, _in_flight: u64) {}
    /// The rate (bits/s) the connection's packets are paced at; 0 = not paced (the window
    /// alone limits, the NIC sends at line rate).
    fn rate(&self) -> u64 {
        0
    }
    /// A packet of `bytes` left at `now`; returns the pacing rate for the next one, as
    /// [`CongestionControl::rate`].
    fn on_send(&mut self, _now: Time, _bytes: u64) -> u64 {
        0
    }
    /// A congestion notification packet (CNP) arrived; returns when the algorithm's timer
    /// must fire next ([`CongestionControl::on_timer`]), if it runs.
    fn on_cnp(&mut self, _now: Time) -> Option<Time> {
        None
    }
    /// The algorithm's timer fired at `now`; returns when it fires next. A timer restarted
    /// since it was set ignores the call (returns `None`).
    fn on_timer(&mut self, _now: Time) -> Option<Time> {
        None
    }
}

/// Declares the algorithms, one line each (`Variant => module`): each module has `INFO`,
/// `NEEDS_RTT` (whether its ACKs must carry RTT samples), `SENDS_CNPS` (whether receivers
/// send congestion notification packets for ECN marks) and a state type with
/// `new(&CcContext)`.
macro_rules! congestion_controls {
    ($($Variant:ident => $module:ident :: $State:ident),+ $(,)?) => {
        $(pub mod $module;)+

        named_kinds! {
            /// `[transport] cc`.
            CcKind, $($Variant => $module),+
        }

        /// The window of one connection, dispatched statically.
        #[derive(Debug, Clone)]
        pub enum Cwnd {
            $($Variant($module::$State)),+
        }

        impl Cwnd {
            /// A window of algorithm `kind`.
            pub fn new(kind: CcKind, ctx: &CcContext) -> Cwnd {
                match kind {
                    $(CcKind::$Variant => Cwnd::$Variant($module::$State::new(ctx))),+
                }
            }
        }

        impl CcKind {
            /// The algorithm reads RTT samples: the sender keeps each packet's send time.
            pub fn needs_rtt(self) -> bool {
                match self {
                    $(CcKind::$Variant => $module::NEEDS_RTT),+
                }
            }

            /// The receivers send CNPs for ECN-marked data ([`dcqcn::Notifier`]); the window
            /// reacts in [`CongestionControl::on_cnp`].
            pub fn sends_cnps(self) -> bool {
                match self {
                    $(CcKind::$Variant => $module::SENDS_CNPS),+
                }
            }
        }

        impl CongestionControl for Cwnd {
            #[inline]
            fn cwnd(&self) -> u64 {
                match self {
                    $(Cwnd::$Variant(w) => w.cwnd()),+
                }
            }
            #[inline]
            fn on_ack(&mut self, ack: &AckSignal) {
                match self {
                    $(Cwnd::$Variant(w) => w.on_ack(ack)),+
                }
            }
            #[inline]
            fn on_loss(&mut self, now: Time, in_flight: u64) {
                match self {
                    $(Cwnd::$Variant(w) => w.on_loss(now, in_flight)),+
                }
            }
            #[inline]
            fn rate(&self) -> u64 {
                match self {
                    $(Cwnd::$Variant(w) => w.rate()),+
                }
            }
            #[inline]
            fn on_send(&mut self, now: Time, bytes: u64) -> u64 {
                match self {
                    $(Cwnd::$Variant(w) => w.on_send(now, bytes)),+
                }
            }
            fn on_cnp(&mut self, now: Time) -> Option<Time> {
                match self {
                    $(Cwnd::$Variant(w) => w.on_cnp(now)),+
                }
            }
            fn on_timer(&mut self, now: Time) -> Option<Time> {
                match self {
                    $(Cwnd::$Variant(w) => w.on_timer(now)),+
                }
            }
        }
    };
}

congestion_controls! {
    Dctcp => dctcp::Dctcp,
    Dcqcn => dcqcn::Dcqcn,
    Nscc => nscc::Nscc,
    None => fixed::Fixed,
}
