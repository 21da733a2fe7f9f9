//! Packets for a half that is gone ([`crate::host::table`]): data reaching a receiver that
//! has every packet (a duplicate of a spurious retransmission, a trimmed header), and ACKs and
//! NACKs reaching a sender that has everything acknowledged. Each is answered exactly as the
//! half would have answered it, so dropping it changes no result:
//! - a duplicate is ACKed at once (both transports ACK a duplicate), with what the complete
//!   receiver's ACK carries: the cumulative PSN at the end of the message and the bitmap of
//!   the PSNs it covers (with `ack_evs = "all"`, their marks); a marked one may still trigger
//!   a DCQCN CNP;
//! - a trimmed header is NACKed (out of order: its PSN; Go-back-N: the next expected PSN,
//!   which is the end of the message, once);
//! - an ACK counts its ECN echo (unless ACKs report every EV: a late ACK acknowledges nothing
//!   new, so it reports none) and the NIC looks for work; a NACK finds nothing in flight; a
//!   CNP is ignored.

use super::{Host, Nics};
use crate::engine::Event;
use crate::host::table::End;
use crate::host::TransportKind;
use crate::packet::{Kind, Packet};
use crate::switch::links::Sink;
use crate::time::Time;

impl Nics {
    /// A data packet reached `host`, whose receiver of its connection has every packet.
    #[cold]
    pub(super) fn receive_late_data(&mut self, h: &mut Host, out: &mut Sink, now: Time, packet: &Packet) {
        let (c, host) = (packet.conn, h.node);
        let header = self.cfg.header as u16;
        let reply = |kind: Kind| packet.reply(kind, host, header);
        let gbn = self.cfg.kind == TransportKind::Gbn;
        if packet.trimmed {
            let psn = if gbn { self.conns.nak_end_once(c).then(|| self.conns.stored_packets(c)) } else { Some(packet.psn) };
            h.counts.headers_delivered += 1;
            if let Some(psn) = psn {
                self.send_control(h, out, now, Packet { psn, ..reply(Kind::Nack) });
            }
            return;
        }
        let cnps = self.cfg.cc.sends_cnps();
        let window_end = self.conns.notifier_mut(c).filter(|_| packet.ecn && cnps).and_then(|n| n.on_marked(now));
        if window_end.is_some() {
            self.conns.count_late(c, End::Rx, |s| s.cnps += 1);
        }
        h.counts.data_delivered += 1;
        if let Some(at) = window_end {
            out.schedule(at, Event::CnpTimer(c));
            self.send_control(h, out, now, reply(Kind::Cnp));
        }
        let (cum, sack) = self.conns.complete_ack(c, packet.psn, gbn, self.cfg.ack_policy.all_evs);
        self.send_control(h, out, now, packet.ack(host, header, (cum, sack)));
    }

    /// An ACK, NACK or CNP reached `host`, whose sender of its connection is done.
    #[cold]
    pub(super) fn receive_late_control(&mut self, h: &mut Host, out: &mut Sink, now: Time, packet: &Packet) {
        match packet.kind {
            Kind::Ack => {
                if packet.ecn && !self.cfg.ack_policy.all_evs {
                    self.conns.count_late(packet.conn, End::Tx, |s| s.ecn_acks += 1);
                }
                self.kick(h, out, now);
            }
            Kind::Nack => self.kick(h, out, now),
            Kind::Cnp | Kind::Data | Kind::Pfc => {}
        }
    }
}
