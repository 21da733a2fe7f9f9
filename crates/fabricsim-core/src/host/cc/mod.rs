//! Congestion control: the sender's window. One file per algorithm (`dctcp`, `none`), one
//! line per algorithm in the list below; `[transport] cc` names one.

use crate::registry::named_kinds;

/// A connection's congestion window.
pub trait CongestionControl {
    /// Bytes the connection may have in flight.
    fn cwnd(&self) -> u64;
    /// An ACK for `acked` newly acknowledged bytes, with the echoed ECN mark.
    fn on_ack(&mut self, _acked: u64, _ecn: bool) {}
    /// A packet was lost (NACK or timeout).
    fn on_loss(&mut self) {}
}

/// Declares the algorithms, one line each (`Variant => module`): each module has `INFO` and a
/// state type with `new(init, max, mtu)`.
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
            /// A window of algorithm `kind` starting at `init` bytes, at most `max`.
            pub fn new(kind: CcKind, init: u64, max: u64, mtu: u64) -> Cwnd {
                match kind {
                    $(CcKind::$Variant => Cwnd::$Variant($module::$State::new(init, max, mtu))),+
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
            fn on_ack(&mut self, acked: u64, ecn: bool) {
                match self {
                    $(Cwnd::$Variant(w) => w.on_ack(acked, ecn)),+
                }
            }
            #[inline]
            fn on_loss(&mut self) {
                match self {
                    $(Cwnd::$Variant(w) => w.on_loss()),+
                }
            }
        }
    };
}

congestion_controls! {
    Dctcp => dctcp::Dctcp,
    None => fixed::Fixed,
}
