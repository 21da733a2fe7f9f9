//! `ooo`: the out-of-order tolerant transport (ARCANE sec. 2.1). The receiver accepts any
//! arrival order. Every `ack_every`-th data packet (and the one that completes the message,
//! and any duplicate) triggers an ACK that echoes that packet's EV and ECN bit and carries the
//! cumulative PSN and a 64-PSN selective bitmap (docs/model.md, "What an ACK carries"). A
//! trimmed packet triggers a NACK at once. The sender retransmits on NACK and on RTO (a
//! packet unacknowledged for `rto` since it was last sent). With path-ID-assisted loss detection
//! (`loss_detection = "path_id"`, China Mobile slides), the receiver also keeps the highest
//! PSN received on each path (switches stamp a path id) and NACKs at once every hole below the
//! highest PSN of every path: each path is FIFO, so such a packet is lost.
//!
//! A NIC holds a finite number of packets out of order (the Juniper post's reorder-distance
//! limit): with `transport.reorder_limit = n` a packet whose PSN is more than n beyond the
//! first PSN still missing finds no room; the receiver discards it and NACKs it at once (the
//! sender resends it, and the window counts a loss). Absent: any order is accepted.

use super::Transport;
use crate::host::connection::{Arrival, Receiver, SendHalf, SendRecord};
use crate::registry::AlgorithmInfo;
use crate::time::Time;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "transport",
    name: "ooo",
    summary: "out-of-order tolerant transport with selective ACKs, NACK on trim, RTO",
    reference: "ARCANE sec. 2.1",
};

/// The out-of-order transport.
pub struct Ooo;

impl Transport for Ooo {
    /// Any new PSN within the reorder limit is accepted.
    #[inline]
    fn on_data(rx: &mut Receiver, now: Time, psn: u32, payload: u64, ecn: bool, ar: bool) -> Arrival {
        let duplicate = rx.has(psn);
        if let Some(limit) = rx.policy.reorder_limit.filter(|_| !duplicate) {
            if psn - rx.first_missing() > limit {
                return Arrival { send_ack: false, completed: false, nak: Some(psn), discarded: true };
            }
        }
        let mut completed = false;
        if !duplicate {
            rx.note_order(psn);
            completed = rx.place(now, psn, payload, ecn);
        }
        let send_ack = rx.ack_due(duplicate || completed || ar, ecn);
        Arrival { send_ack, completed, nak: None, discarded: false }
    }

    /// The trimmed packet itself is NACKed.
    fn on_trimmed(_rx: &mut Receiver, psn: u32) -> Option<u32> {
        Some(psn)
    }

    fn on_nack(conn: &mut SendHalf, psn: u32) -> bool {
        conn.declare_lost(psn)
    }

    fn on_timeout(conn: &mut SendHalf, r: &SendRecord) -> bool {
        conn.declare_lost(r.psn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::connection::AckPolicy;

    #[test]
    fn receiver_acks_every_n_and_tracks_reorder() {
        let mut r = Receiver::new(6, AckPolicy { every: 2, ..Default::default() });
        let acks: Vec<bool> = [0, 3, 1, 2, 5, 4].iter().map(|&p| Ooo::on_data(&mut r, 0, p, 10, false, false).send_ack).collect();
        assert_eq!(acks, vec![false, true, false, true, false, true]);
        assert_eq!(r.max_reorder, 2, "psn 1 arrived after psn 3");
        // distances from the highest PSN so far: 1 and 2 trail 3 (2, 1), 4 trails 5 (1)
        assert_eq!(r.reorder_hist[..3], [3, 2, 1]);
        assert_eq!(r.count, 6);
        assert!(Ooo::on_data(&mut r, 5, 0, 10, false, false).send_ack, "duplicates are acked at once");
        let mut e = Receiver::new(6, AckPolicy { every: 4, on_ecn: true, all_evs: true, ..Default::default() });
        assert!(!Ooo::on_data(&mut e, 0, 0, 10, false, false).send_ack);
        assert!(Ooo::on_data(&mut e, 0, 1, 10, true, false).send_ack, "an ECN mark is ACKed at once");
        assert_eq!(e.ack_fields(1, false), (2, 0b11 | 0b10 << 32), "psn 0..=1 received, 1 marked");
        assert_eq!(r.delivered_bytes, 60);
    }

    #[test]
    fn a_reorder_limit_discards_and_nacks_what_lies_beyond_it() {
        let mut r = Receiver::new(8, AckPolicy { every: 1, reorder_limit: Some(2), ..Default::default() });
        assert!(Ooo::on_data(&mut r, 0, 2, 10, false, false).send_ack, "0 missing: 2 is within 2 of it");
        let far = Ooo::on_data(&mut r, 0, 3, 10, false, false);
        assert_eq!((far.discarded, far.nak, far.send_ack), (true, Some(3), false), "3 is 3 beyond the hole at 0");
        assert!(!r.has(3));
        Ooo::on_data(&mut r, 0, 0, 10, false, false);
        assert!(!Ooo::on_data(&mut r, 0, 3, 10, false, false).discarded, "the hole moved to 1: 3 fits now");
        assert_eq!(r.count, 3);
    }
}
