//! `gbn`: RoCE Go-back-N (China Mobile slides; Juniper post). The receiver accepts only the
//! next expected PSN. A later one is discarded and triggers one NAK carrying the expected PSN
//! (one per gap; a trimmed packet leaves a gap too); the sender goes back to that PSN and
//! resends everything from there. A timeout goes back to the first unacknowledged PSN. ACKs
//! are cumulative.

use super::Transport;
use crate::host::connection::{Arrival, Connection, PsnState, Receiver, SendRecord};
use crate::packet::Ev;
use crate::registry::AlgorithmInfo;
use crate::time::Time;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "transport",
    name: "gbn",
    summary: "RoCE Go-back-N: only the next PSN is accepted; a gap is NAKed and the sender goes back",
    reference: "China Mobile slides; Juniper post",
};

/// The Go-back-N transport.
pub struct Gbn;

impl Transport for Gbn {
    /// Only the expected PSN is accepted; a gap is NAKed once.
    #[inline]
    fn on_data(rx: &mut Receiver, now: Time, psn: u32, payload: u64, ev: Ev, ecn: bool) -> Arrival {
        if psn < rx.expected {
            // a duplicate: acknowledge at once so the sender learns
            return Arrival { send_ack: rx.ack_due(true, ecn), completed: false, nak: None, discarded: false };
        }
        rx.note_order(psn);
        if psn > rx.expected {
            return Arrival { send_ack: false, completed: false, nak: gap(rx), discarded: true };
        }
        rx.expected += 1;
        rx.nak_for = None;
        let completed = rx.accept(now, psn, payload, ev, ecn);
        Arrival { send_ack: rx.ack_due(completed, ecn), completed, nak: None, discarded: false }
    }

    /// The trimmed packet leaves a gap: NAK the expected PSN (once).
    fn on_trimmed(rx: &mut Receiver, _psn: u32) -> Option<u32> {
        gap(rx)
    }

    fn on_nack(conn: &mut Connection, psn: u32) -> bool {
        go_back(conn, psn)
    }

    /// Go-back-N resends from the first unacknowledged PSN (ACKs are cumulative).
    fn on_timeout(conn: &mut Connection, _r: &SendRecord) -> bool {
        go_back(conn, conn.tx.acked)
    }
}

/// A gap (or a trimmed packet) was seen; the PSN to NAK, once per gap.
fn gap(rx: &mut Receiver) -> Option<u32> {
    if rx.nak_for == Some(rx.expected) {
        return None;
    }
    rx.nak_for = Some(rx.expected);
    Some(rx.expected)
}

/// Resend everything from `psn`; false if nothing was outstanding there.
fn go_back(conn: &mut Connection, psn: u32) -> bool {
    let mut any = false;
    for p in psn..conn.tx.next_new {
        if conn.tx.state[p as usize] == PsnState::InFlight {
            conn.tx.in_flight -= conn.wire_size(p);
            conn.tx.state[p as usize] = PsnState::Unsent;
            any = true;
        }
    }
    conn.tx.next_new = conn.tx.next_new.min(psn);
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::connection::AckPolicy;

    #[test]
    fn only_the_next_psn_is_accepted_and_each_gap_is_naked_once() {
        let mut r = Receiver::new(4, AckPolicy { every: 1, ..Default::default() });
        assert!(Gbn::on_data(&mut r, 0, 0, 10, 0, false).send_ack);
        let skip = Gbn::on_data(&mut r, 0, 2, 10, 0, false);
        assert!(skip.discarded && skip.nak == Some(1), "{skip:?}");
        assert_eq!(Gbn::on_data(&mut r, 0, 3, 10, 0, false).nak, None, "one NAK per gap");
        assert_eq!(Gbn::on_trimmed(&mut r, 3), None, "the same gap");
        assert!(!Gbn::on_data(&mut r, 0, 1, 10, 0, false).discarded);
        assert_eq!(r.count, 2, "psn 2 and 3 were discarded, not kept");
        assert_eq!(Gbn::on_trimmed(&mut r, 2), Some(2), "a new gap at 2");
    }
}
