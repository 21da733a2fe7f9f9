//! Transports: what the receiver does with an arriving packet and how the sender recovers a
//! loss. One file per transport, one line per transport in the list below; `[transport] kind`
//! names one.

pub mod gbn;
pub mod ooo;

use crate::host::connection::{Arrival, Receiver, SendHalf, SendRecord};
use crate::registry::named_kinds;
use crate::time::Time;

/// A transport's rules, as associated functions (the NIC dispatches on [`TransportKind`]).
pub trait Transport {
    /// A data packet `psn` with `payload` bytes arrives at the receiver, ECN-marked or not,
    /// asking for an ACK at once (`ar`) or not.
    fn on_data(rx: &mut Receiver, now: Time, psn: u32, payload: u64, ecn: bool, ar: bool) -> Arrival;
    /// A trimmed header of `psn` arrives: the PSN to NACK, if any.
    fn on_trimmed(rx: &mut Receiver, psn: u32) -> Option<u32>;
    /// The sender gets a NACK for `psn`: whether something now waits to be resent.
    fn on_nack(conn: &mut SendHalf, psn: u32) -> bool;
    /// A transmission timed out: whether something now waits to be resent.
    fn on_timeout(conn: &mut SendHalf, r: &SendRecord) -> bool;
}

/// Declares the transports, one line each (`Variant => module::Type`).
macro_rules! transports {
    ($($Variant:ident => $module:ident :: $Type:ident),+ $(,)?) => {
        named_kinds! {
            /// `[transport] kind`.
            TransportKind, $($Variant => $module),+
        }

        impl TransportKind {
            #[inline]
            pub fn on_data(self, rx: &mut Receiver, now: Time, psn: u32, payload: u64, ecn: bool, ar: bool) -> Arrival {
                match self {
                    $(TransportKind::$Variant => $module::$Type::on_data(rx, now, psn, payload, ecn, ar)),+
                }
            }
            pub fn on_trimmed(self, rx: &mut Receiver, psn: u32) -> Option<u32> {
                match self {
                    $(TransportKind::$Variant => $module::$Type::on_trimmed(rx, psn)),+
                }
            }
            pub fn on_nack(self, conn: &mut SendHalf, psn: u32) -> bool {
                match self {
                    $(TransportKind::$Variant => $module::$Type::on_nack(conn, psn)),+
                }
            }
            pub fn on_timeout(self, conn: &mut SendHalf, r: &SendRecord) -> bool {
                match self {
                    $(TransportKind::$Variant => $module::$Type::on_timeout(conn, r)),+
                }
            }
        }
    };
}

transports! {
    Ooo => ooo::Ooo,
    Gbn => gbn::Gbn,
}
