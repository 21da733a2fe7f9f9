//! Packets for a connection that is done (its sender has everything acknowledged and its state
//! is gone, [`crate::host::table`]): duplicates of data the receiver has, trimmed headers,
//! ACKs and NACKs that were still in flight. Each is answered exactly as the full state would
//! have answered it, so dropping the state changes no result:
//! - a duplicate is ACKed at once (both transports ACK a duplicate), its cumulative PSN the
//!   end of the message (nothing missing, an empty bitmap); a marked one may still trigger
//!   a DCQCN CNP;
//! - a trimmed header is NACKed (out of order: its PSN; Go-back-N: the next expected PSN,
//!   which is the end of the message, once);
//! - an ACK counts its ECN echo (unless ACKs report every EV: a late ACK acknowledges nothing
//!   new, so it reports none) and the NIC looks for work; a NACK finds nothing in flight; a CNP is ignored.

use super::Nics;
use crate::engine::{Event, EventQueue};
use crate::host::TransportKind;
use crate::packet::{Kind, Packet};
use crate::switch::forward::Fabric;
use crate::time::Time;

impl Nics {
    /// A packet reached `host` for a connection that is done.
    #[cold]
    pub(super) fn receive_late(&mut self, q: &mut EventQueue, fabric: &mut Fabric, now: Time, host: u32, packet: Packet) {
        let c = packet.conn;
        let header = self.cfg.header as u16;
        let reply =
            |kind: Kind, psn: u32, ecn: bool| Packet { psn, ev: packet.ev, ecn, ..Packet::control(kind, c, host, packet.src, header) };
        let (cnps, all_evs) = (self.cfg.cc.sends_cnps(), self.cfg.ack_policy.all_evs);
        match packet.kind {
            Kind::Data if packet.trimmed => {
                let psn = match self.cfg.kind {
                    TransportKind::Ooo => Some(packet.psn),
                    TransportKind::Gbn => self.conns.nak_end_once(c).then(|| self.conns.stored_packets(c)),
                };
                self.hosts[host as usize].counts.headers_delivered += 1;
                if let Some(psn) = psn {
                    self.send_control(q, fabric, now, host, reply(Kind::Nack, psn, false));
                }
            }
            Kind::Data => {
                let window_end = self.conns.notifier_mut(c).filter(|_| packet.ecn && cnps).and_then(|n| n.on_marked(now));
                if window_end.is_some() {
                    self.conns.count_late(c, |s| s.cnps += 1);
                }
                let n = self.conns.stored_packets(c);
                self.hosts[host as usize].counts.data_delivered += 1;
                if let Some(at) = window_end {
                    q.schedule(at, Event::CnpTimer(c));
                    self.send_control(q, fabric, now, host, reply(Kind::Cnp, packet.psn, false));
                }
                // every PSN received: the cumulative PSN is the end, the bitmap empty
                self.send_control(q, fabric, now, host, Packet { cum: n, ..reply(Kind::Ack, packet.psn, packet.ecn) });
            }
            Kind::Ack => {
                if packet.ecn && !all_evs {
                    self.conns.count_late(c, |s| s.ecn_acks += 1);
                }
                self.kick(q, fabric, now, host);
            }
            Kind::Nack => self.kick(q, fabric, now, host),
            Kind::Cnp => {}
        }
    }
}
