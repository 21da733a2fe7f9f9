//! `gbn`: RoCE Go-back-N (China Mobile slides; Juniper post). The receiver accepts only the
//! next expected PSN. A later one is discarded and triggers one NAK carrying the expected PSN
//! (one per gap; a trimmed packet leaves a gap too); the sender goes back to that PSN and
//! resends everything from there. A timeout goes back to the first unacknowledged PSN. ACKs
//! are cumulative.
//!
//! With a reorder window (`transport.reorder_buffer`, as NICs that place out-of-order packets
//! straight into memory have: the Juniper post's reorder-distance limits) a later PSN within
//! `reorder_window` packets of the expected one is held, not discarded, and no NAK is sent;
//! once the gap is filled the cumulative ACK covers everything held. A PSN beyond the window
//! is discarded and NAKs the gap as before, and so does a trimmed packet.

use super::Transport;
use crate::host::connection::{Arrival, PsnState, Receiver, SendHalf, SendRecord};
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
    fn on_data(rx: &mut Receiver, now: Time, psn: u32, payload: u64, ecn: bool, ar: bool) -> Arrival {
        if psn < rx.expected || rx.has(psn) {
            // a duplicate: acknowledge at once so the sender learns
            return Arrival { send_ack: rx.ack_due(true, ecn), completed: false, nak: None, discarded: false };
        }
        rx.note_order(psn);
        if psn > rx.expected {
            if psn - rx.expected <= rx.policy.reorder_window {
                // within the NIC's reorder window: held until the gap before it is filled
                rx.place(now, psn, payload, ecn);
                return Arrival { send_ack: ar && rx.ack_due(true, ecn), completed: false, nak: None, discarded: false };
            }
            return Arrival { send_ack: false, completed: false, nak: gap(rx), discarded: true };
        }
        rx.nak_for = None;
        let completed = rx.place(now, psn, payload, ecn);
        rx.expected += 1;
        // what was held behind the gap is now in order: the cumulative ACK covers it
        while rx.expected < rx.n_pkts() && rx.has(rx.expected) {
            rx.expected += 1;
        }
        Arrival { send_ack: rx.ack_due(completed || ar, ecn), completed, nak: None, discarded: false }
    }

    /// The trimmed packet leaves a gap: NAK the expected PSN (once).
    fn on_trimmed(rx: &mut Receiver, _psn: u32) -> Option<u32> {
        gap(rx)
    }

    fn on_nack(conn: &mut SendHalf, psn: u32) -> bool {
        go_back(conn, psn)
    }

    /// Go-back-N resends from the first unacknowledged PSN (ACKs are cumulative).
    fn on_timeout(conn: &mut SendHalf, _r: &SendRecord) -> bool {
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
fn go_back(conn: &mut SendHalf, psn: u32) -> bool {
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
        assert!(Gbn::on_data(&mut r, 0, 0, 10, false, false).send_ack);
        let skip = Gbn::on_data(&mut r, 0, 2, 10, false, false);
        assert!(skip.discarded && skip.nak == Some(1), "{skip:?}");
        assert_eq!(Gbn::on_data(&mut r, 0, 3, 10, false, false).nak, None, "one NAK per gap");
        assert_eq!(Gbn::on_trimmed(&mut r, 3), None, "the same gap");
        assert!(!Gbn::on_data(&mut r, 0, 1, 10, false, false).discarded);
        assert_eq!(r.count, 2, "psn 2 and 3 were discarded, not kept");
        assert_eq!(Gbn::on_trimmed(&mut r, 2), Some(2), "a new gap at 2");
    }

    #[test]
    fn a_reorder_window_holds_what_fits_and_naks_what_does_not() {
        let mut r = Receiver::new(8, AckPolicy { every: 1, reorder_window: 2, ..Default::default() });
        assert!(Gbn::on_data(&mut r, 0, 0, 10, false, false).send_ack);
        // 2 and 3 are within two packets of the expected 1: held, no NAK, no ACK yet
        for psn in [2, 3] {
            let a = Gbn::on_data(&mut r, 0, psn, 10, false, false);
            assert!(!a.discarded && a.nak.is_none() && !a.send_ack, "{psn}: {a:?}");
        }
        assert_eq!(r.ack_fields(3, true), (1, 0), "held packets are not acknowledged yet: a cumulative ACK, no bitmap");
        // 4 is three ahead: discarded, the gap at 1 NAKed
        let over = Gbn::on_data(&mut r, 0, 4, 10, false, false);
        assert!(over.discarded && over.nak == Some(1), "{over:?}");
        assert!(Gbn::on_data(&mut r, 0, 3, 10, false, false).send_ack, "a held PSN again is a duplicate");
        // the gap fills: 1, 2 and 3 are acknowledged together, 4 is expected next
        let fill = Gbn::on_data(&mut r, 0, 1, 10, false, false);
        assert!(fill.send_ack && !fill.completed);
        assert_eq!((r.expected, r.ack_fields(1, true)), (4, (4, 0)));
        assert_eq!((r.count, r.delivered_bytes), (4, 40));
        for psn in 4..8 {
            let a = Gbn::on_data(&mut r, 0, psn, 10, false, false);
            assert_eq!(a.completed, psn == 7);
        }
    }

    #[test]
    fn the_message_completes_when_the_last_gap_fills_behind_held_packets() {
        let mut r = Receiver::new(3, AckPolicy { every: 4, reorder_window: 8, ..Default::default() });
        assert!(!Gbn::on_data(&mut r, 0, 1, 10, false, false).completed);
        assert!(!Gbn::on_data(&mut r, 0, 2, 10, false, false).completed);
        let last = Gbn::on_data(&mut r, 5, 0, 10, false, false);
        assert!(last.completed && last.send_ack, "{last:?}");
        assert_eq!((r.end, r.expected, r.max_reorder), (Some(5), 3, 2));
    }
}
