//! The hosts' NICs: the host half of the packet path.
//!
//! [`Nics`] owns every host's connections, the workload's messages and each host's random
//! stream. A NIC has no queue of its own: when its port is free it sends its next packet,
//! control first, then data pulled round-robin from the connections whose window allows
//! (line-rate pacing), and wakes when that packet is out. The receiving side runs the
//! transport ([`super::connection`]): ACKs, NACKs, Go-back-N NAKs, path-ID loss detection;
//! the sending side retransmits on NACK and on its retransmission timer (`Rto` events).
//! What a NIC sends, and the timers it sets, it writes to its [`Sink`]: onto its port's wire.

mod deps;
mod late;
mod open;
mod read;
mod scale_up;
mod state;
#[cfg(test)]
mod tests;
mod timers;

use std::sync::Arc;

use crate::engine::rng::Rng;
use crate::engine::Event;
use crate::host::cc::{AckSignal, CongestionControl};
use crate::host::connection::SendRecord;
use crate::host::message::{Message, MsgState};
use crate::host::table::{ConnTable, End};
use crate::host::{LossDetection, TransportKind, TransportModel};
use crate::lb::LoadBalancer;
use crate::packet::{AckExt, DataExt, Kind, Packet};
use crate::switch::links::Sink;
use crate::time::Time;
use crate::topology::{Cut, Slots};
use crate::workload::Deps;
pub use scale_up::UpPorts;
use state::HostState;

/// Data packets by fate at the hosts (the fabric counts the rest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NicCounts {
    pub data_sent: u64,
    pub data_delivered: u64,
    /// Trimmed headers that reached their receiver.
    pub headers_delivered: u64,
}

/// Every host's NIC (in a run cut into pieces: the NICs of a piece's hosts, at the indices
/// the cut gives them).
pub struct Nics {
    hosts: Vec<HostState>,
    conns: ConnTable,
    /// The messages (shared by the pieces) and what this piece's hosts counted of them.
    messages: Arc<Vec<Message>>,
    states: Vec<MsgState>,
    /// Completions reported to the driver (its stop test reads one number per event; the
    /// hosts' own counts are `HostState::done`), and (a session's, `sim::session`) each
    /// message completed and when, until the driver reads them.
    reported: u32,
    log: Option<Vec<(u32, Time)>>,
    /// Dependencies: for each message, the messages waiting for it (shared), and (kept by
    /// its source host) how many of its own it still waits for.
    dependents: Arc<Deps>,
    waiting: Vec<u32>,
    cfg: TransportModel,
    /// The piece each node belongs to, where it keeps its hosts, and which piece this is:
    /// only its hosts' events run here; a notice to another piece's host waits in the sink's
    /// links.
    cut: Arc<Cut>,
    me: u16,
    /// Where this piece keeps each of its hosts (the cut's map, read on every packet).
    slot: Slots,
    /// The hosts' ports on their servers' scale-up networks.
    pub up: UpPorts,
    scratch: Vec<SendRecord>,
    /// Scratch: the paths (EVs) of the packets an RTO expiry declared lost.
    evs: Vec<crate::packet::Ev>,
    scratch_psn: Vec<u32>,
    scratch_acked: Vec<(u32, bool)>,
}

impl Nics {
    /// The NICs of piece `me`'s hosts (every host's, `rngs` their random streams, which their
    /// load balancers draw from while they send), with
    /// the messages and their connections (`conns`), the bytes sent to each host (`incoming`),
    /// and the number of messages one of whose ends they hold (`held`).
    pub fn new(
        cfg: TransportModel,
        conns: ConnTable,
        messages: Arc<Vec<Message>>,
        (rngs, incoming): (&[Rng], &[u64]),
        held: usize,
        (cut, me): (Arc<Cut>, u16),
    ) -> Nics {
        let mine = (0u32..).zip(rngs.iter().zip(incoming)).filter(|&(h, _)| cut.home(h) == me);
        Nics {
            hosts: mine.map(|(_, (rng, &incoming))| HostState::new(rng.clone(), incoming)).collect(),
            conns,
            states: vec![MsgState::default(); held],
            messages,
            reported: 0,
            log: None,
            dependents: Arc::default(),
            waiting: Vec::new(),
            cfg,
            slot: cut.nodes().clone(),
            cut,
            me,
            up: UpPorts::default(),
            scratch: Vec::new(),
            evs: Vec::new(),
            scratch_psn: Vec::new(),
            scratch_acked: Vec::new(),
        }
    }

    /// Whether `node` (a host, or a switch) belongs to this piece.
    #[inline]
    pub fn is_home(&self, node: u32) -> bool {
        self.cut.home(node) == self.me
    }

    /// The message connection `c` carries (part of).
    #[inline]
    fn message_of(&self, c: u32) -> &Message {
        &self.messages[self.conns.message_of(c) as usize]
    }

    /// `ConnStart`: the connection may send.
    pub fn start(&mut self, out: &mut Sink, now: Time, conn: u32) {
        // the fields apart, not `message_of`: `conns` is borrowed mutably next to the message
        let msg = self.messages[self.conns.message_of(conn) as usize];
        let started = self.conns.start(msg.first..msg.first + msg.count, &msg.spec);
        let src = msg.spec.src;
        let hs = &mut self.hosts[self.slot.of(src)];
        hs.pending -= 1;
        if !started {
            return; // it waits for its pair's message before it (`per_pair`)
        }
        hs.active.push(conn);
        self.kick(out, now, src);
    }

    /// `per_pair`: connection `c` sent its last new packet; the pair's next message, which
    /// waited, starts now.
    #[cold]
    fn pair_posted(&mut self, out: &mut Sink, now: Time, host: u32, c: u32) {
        let spec = self.message_of(c).spec;
        if let Some(next) = self.conns.posted(&spec, c) {
            out.schedule(now, Event::ConnStart(next));
            self.hosts[self.slot.of(host)].pending += 1;
        }
    }

    /// If the host's NIC is free, start its next packet: control first, then data pulled
    /// round-robin from the connections whose window allows. A NIC that sends wakes up when
    /// the packet is out to pull the next one (line-rate pacing, no NIC queue).
    #[inline]
    pub fn kick(&mut self, out: &mut Sink, now: Time, host: u32) {
        let port = out.links.nic_port(host);
        self.kick_on(out, now, host, port);
    }

    /// [`Nics::kick`] where the caller knows where the links keep the host's NIC port
    /// (`port`: its `PortFree`).
    pub fn kick_on(&mut self, out: &mut Sink, now: Time, host: u32, port: u32) {
        if !out.is_free(port, now) {
            return;
        }
        if out.port(port).has_control() {
            let pkt = out.port(port).take_control();
            out.send(now, port, pkt);
            return;
        }
        let hs = &mut self.hosts[self.slot.of(host)];
        let n = hs.active.len();
        let cap = self.cfg.rate_cap;
        let mut held = Time::MAX;
        for k in 0..n {
            let i = (hs.rr + k) % n;
            let c = hs.active[i];
            let conn = self.conns.sender_live(c);
            if conn.tx.next_send > now {
                held = held.min(conn.tx.next_send);
                continue;
            }
            let Some(psn) = conn.next_psn() else { continue };
            let ev = conn.tx.lb.next_ev(now, &mut hs.rng);
            conn.on_sent(psn, ev, now);
            let ar = self.cfg.ack_request && conn.asks_ack(psn);
            // `per_pair`: its last new packet lets the pair's next message start
            let posted = self.cfg.per_pair && conn.tx.next_new >= conn.n_pkts;
            conn.tx.paced(now, conn.wire_size(psn), cap);
            if !conn.tx.rto_armed {
                conn.tx.rto_armed = true;
                out.schedule(now + conn.tx.rto.rto, Event::Rto(c));
            }
            hs.rr = (i + 1) % n;
            hs.counts.data_sent += 1;
            let ends = (conn.spec.src, conn.spec.dst);
            let size = conn.wire_size(psn) as u16;
            let pkt = Packet::data(c, conn.tx.flow, conn.spec.class, psn, ev, ends, size, DataExt { ack_request: ar });
            out.send(now, port, pkt);
            if posted {
                self.pair_posted(out, now, host, c);
            }
            return;
        }
        // nothing sent: wake up when the pacing rate releases a connection (a later kick that
        // finds it window-limited sends nothing and schedules nothing)
        if held < hs.wake {
            hs.wake = held;
            out.schedule(held, Event::NicWake(host));
        }
    }

    /// `NicWake`: a connection's pacing gap has passed.
    pub fn wake(&mut self, out: &mut Sink, now: Time, host: u32) {
        let hs = &mut self.hosts[self.slot.of(host)];
        if now >= hs.wake {
            hs.wake = Time::MAX;
        }
        self.kick(out, now, host);
    }

    /// Queues an ACK or NACK at `host`'s NIC (control class, never limited at the host).
    #[inline]
    fn send_control(&mut self, out: &mut Sink, now: Time, host: u32, packet: Packet) {
        let at = out.links.nic_port(host);
        out.port(at).push_control(packet);
        self.kick(out, now, host);
    }

    /// A packet reached `host`: data for the receiving half it keeps, an ACK, NACK or CNP for
    /// the sending half.
    pub fn receive(&mut self, out: &mut Sink, now: Time, host: u32, packet: Packet) {
        match packet.kind {
            Kind::Data => self.receive_data(out, now, host, packet),
            _ => self.receive_control(out, now, host, packet),
        }
    }

    /// A data packet (or its trimmed header) reached its receiver `host`.
    fn receive_data(&mut self, out: &mut Sink, now: Time, host: u32, packet: Packet) {
        let c = packet.conn;
        let mi = self.conns.message_of(c) as usize;
        // the fields apart: `conns` is borrowed mutably next to the message
        let Some(half) = self.conns.receiver(c, &self.messages[mi].spec) else {
            self.receive_late_data(out, now, host, packet);
            return;
        };
        let header = self.cfg.header as u16;
        let transport = self.cfg.kind;
        let reply = |kind: Kind| packet.reply(kind, host, header);
        if packet.trimmed {
            self.hosts[self.slot.of(host)].counts.headers_delivered += 1;
            if let Some(psn) = transport.on_trimmed(&mut half.rx, packet.psn) {
                let nack = Packet { psn, ..reply(Kind::Nack) };
                self.send_control(out, now, host, nack);
            }
            return;
        }
        self.hosts[self.slot.of(host)].counts.data_delivered += 1;
        if packet.ecn && self.cfg.cc.sends_cnps() {
            if let Some(window_end) = half.rx.cnp.on_marked(now) {
                half.stats.cnps += 1;
                out.schedule(window_end, Event::CnpTimer(c));
                self.send_control(out, now, host, reply(Kind::Cnp));
            }
        }
        let half = self.conns.receiver_live(c);
        let payload = half.payload_of(packet.psn);
        let before = half.rx.delivered_bytes;
        let arrival = transport.on_data(&mut half.rx, now, packet.psn, payload, packet.ecn, packet.asks_ack());
        let new = u64::from(half.rx.delivered_bytes != before);
        let hs = &mut self.hosts[self.slot.of(host)];
        (hs.progress, hs.progress_bytes) = (hs.progress + new, hs.progress_bytes + new * u64::from(packet.size));
        if arrival.discarded {
            half.stats.discarded += 1;
        }
        if let Some(e) = arrival.nak {
            let nak = Packet { psn: e, ..reply(Kind::Nack) };
            self.send_control(out, now, host, nak);
        }
        if self.cfg.loss_detection == LossDetection::PathId {
            let half = self.conns.receiver_live(c);
            self.scratch_psn.clear();
            half.rx.lost_by_path(packet.psn, packet.path, half.n_paths, &mut self.scratch_psn);
            half.stats.fast_nacks += self.scratch_psn.len() as u64;
            for i in 0..self.scratch_psn.len() {
                let nack = Packet { psn: self.scratch_psn[i], ..reply(Kind::Nack) };
                self.send_control(out, now, host, nack);
            }
        }
        if arrival.completed {
            let m = &mut self.states[self.conns.msg_at(mi, End::Rx)];
            m.done += 1;
            if m.done == self.messages[mi].count {
                self.hosts[self.slot.of(host)].done += 1;
                self.report(mi, now);
                if !self.dependents.is_empty() {
                    self.completed(out, now, host, mi);
                }
            }
        }
        if arrival.send_ack {
            let gbn = transport == TransportKind::Gbn;
            let (cum, sack) = self.conns.receiver_live(c).rx.ack_fields(packet.psn, gbn);
            let ack = packet.ack(host, header, (cum, sack));
            self.send_control(out, now, host, ack);
        }
        if arrival.completed {
            self.conns.finish_receiver(c);
        }
    }

    /// An ACK, NACK or CNP reached its sender `host`.
    fn receive_control(&mut self, out: &mut Sink, now: Time, host: u32, packet: Packet) {
        let c = packet.conn;
        let Some(conn) = self.conns.sender(c) else {
            self.receive_late_control(out, now, host, packet);
            return;
        };
        match packet.kind {
            Kind::Ack => {
                let rtt = conn.tx.rtt_sample(packet.psn, now);
                if let Some(r) = rtt {
                    conn.tx.rto.on_sample(r);
                }
                let all_evs = self.cfg.ack_policy.all_evs;
                let acked = &mut self.scratch_acked;
                acked.clear();
                let AckExt { cum, sack, .. } = packet.ext();
                let newly = conn.on_ack(packet.psn, cum, sack, all_evs, acked);
                let in_flight = conn.tx.in_flight;
                if all_evs {
                    // the ACK reports every packet it newly acknowledges: feed each EV (the one
                    // the sender used) and mark to the load balancer and the window, as
                    // per-packet ACKs would (the RTT sample goes with the trigger, last)
                    for (k, &(psn, ecn)) in acked.iter().enumerate() {
                        let ev = conn.tx.sent_ev[psn as usize];
                        conn.stats.ecn_acks += ecn as u64;
                        let bytes = conn.wire_size(psn);
                        let rtt = if k + 1 == acked.len() && psn == packet.psn { rtt } else { None };
                        conn.tx.window.on_ack(&AckSignal::of(&packet, now, bytes, ecn, rtt, in_flight));
                        conn.tx.lb.on_ack(now, ev, ecn);
                    }
                } else {
                    if packet.ecn {
                        conn.stats.ecn_acks += 1;
                    }
                    conn.tx.window.on_ack(&AckSignal::of(&packet, now, newly, packet.ecn, rtt, in_flight));
                    conn.tx.lb.on_ack(now, packet.ev, packet.ecn);
                }
                let shared = conn.tx.shared;
                if conn.sender_done() {
                    self.hosts[self.slot.of(host)].active.retain(|&x| x != c);
                    if let Some(next) = self.conns.finish_sender(c) {
                        // the pair's next message, which waited for this one (`per_pair`)
                        out.schedule(now, Event::ConnStart(next));
                        self.hosts[self.slot.of(host)].pending += 1;
                    }
                    let mi = self.conns.message_of(c) as usize;
                    let m = &mut self.states[self.conns.msg_at(mi, End::Tx)];
                    m.acked += 1;
                    if m.acked == self.messages[mi].count && !self.dependents.is_empty() {
                        self.acknowledged(out, now, host, mi);
                    }
                } else if shared {
                    let spec = self.conns.sender_live(c).spec;
                    self.conns.share_window(&spec);
                }
                self.kick(out, now, host);
            }
            Kind::Cnp => {
                if let Some(at) = conn.tx.window.on_cnp(now) {
                    out.schedule(at, Event::CcTimer(c));
                }
                conn.tx.repace(self.cfg.rate_cap);
                self.kick(out, now, host);
            }
            Kind::Nack => {
                let lost = self.cfg.kind.on_nack(conn, packet.psn);
                if lost {
                    conn.tx.window.on_loss(now, conn.tx.in_flight);
                }
                conn.tx.lb.on_nack(now, packet.ev);
                if conn.tx.shared {
                    let spec = conn.spec;
                    self.conns.share_window(&spec);
                }
                self.kick(out, now, host);
            }
            Kind::Data => unreachable!("data goes to the receiving half"),
        }
    }
}
