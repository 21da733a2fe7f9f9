//! The hosts' NICs: the host half of the packet path.
//!
//! A [`Host`] owns its node's NIC port (where the piece's links keep it), its random stream,
//! its scheduler and its counters; what a piece's hosts share ([`Nics`]) is the connections'
//! table (each connection's halves, touched only by its ends' events), the messages and the
//! dependencies. A host's one entry point is [`Nics::handle`]. A NIC has no queue of its own: when its port is free it sends its next packet,
//! control first, then data pulled round-robin from the connections whose window allows
//! (line-rate pacing), and wakes when that packet is out. The receiving side runs the
//! transport ([`super::connection`]): ACKs, NACKs, Go-back-N NAKs, path-ID loss detection;
//! the sending side retransmits on NACK and on its retransmission timer (`Rto` events).
//! What a NIC sends, and the timers it sets, it writes to its [`Sink`]: onto its port's wire.

mod deps;
pub use deps::{Asking, More};
mod host;
mod late;
mod open;
mod read;
mod scale_up;
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
use crate::switch::links::{Links, Sink};
use crate::time::Time;
use crate::topology::Slots;
use crate::workload::Deps;
pub use host::Host;
pub use scale_up::UpPorts;

/// Data packets by fate at the hosts (the fabric counts the rest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NicCounts {
    pub data_sent: u64,
    pub data_delivered: u64,
    /// Trimmed headers that reached their receiver.
    pub headers_delivered: u64,
}

/// What a host handles.
#[derive(Debug, Clone, Copy)]
pub enum Input {
    /// A packet reached it.
    Packet(Packet),
    /// Its NIC port at this index of the piece's links is free again.
    PortFree(u32),
    /// One of its own events (a connection's start or timer, a wake-up, a step of a message
    /// on the scale-up network, a compute task's end), or one another host told it (a
    /// release notice, a message reaching it on the scale-up network, its delivery there).
    Event(Event),
}

/// What a piece's hosts share: the connections' table (each connection's halves live there,
/// keyed by connection, touched only by its own ends' events), the messages and what the
/// hosts counted of them, the dependencies, the transport model. Each [`Host`] is
/// a unit of its own; [`Nics::handle`] is its entry point.
pub struct Nics {
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
    /// ... and those sent into a running run that wait for it ([`deps::More`]); where the
    /// run's jobs are made as it goes, what it asks of them ([`deps::Asking`]).
    more: deps::More,
    pub asking: Option<Box<deps::Asking>>,
    waiting: Vec<u32>,
    cfg: TransportModel,
    /// Where this piece keeps each of its hosts (the cut's map; which piece a host belongs to
    /// is the links' to tell).
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
    /// What the hosts of the piece whose links are `links` share, and the hosts (of every
    /// host's random stream, `rngs`, which their load balancers draw from while they send, and
    /// the bytes sent to each, `incoming`; their NIC ports in `links`), with the messages and their connections
    /// (`conns`) and the number of messages one of whose ends they hold (`held`).
    pub fn new(
        cfg: TransportModel,
        conns: ConnTable,
        messages: Arc<Vec<Message>>,
        (rngs, incoming): (&[Rng], &[u64]),
        held: usize,
        links: &Links,
    ) -> (Nics, Vec<Host>) {
        let mine = (0u32..).zip(rngs.iter().zip(incoming)).filter(|&(h, _)| links.is_home(h));
        let hosts = mine.map(|(h, (rng, &incoming))| Host::new(h, links.nic_port(h), rng.clone(), incoming)).collect();
        let nics = Nics {
            conns,
            states: vec![MsgState::default(); held],
            messages,
            reported: 0,
            log: None,
            dependents: Arc::default(),
            more: Arc::default(),
            asking: None,
            waiting: Vec::new(),
            cfg,
            slot: links.cut().nodes().clone(),
            up: UpPorts::default(),
            scratch: Vec::new(),
            evs: Vec::new(),
            scratch_psn: Vec::new(),
            scratch_acked: Vec::new(),
        };
        (nics, hosts)
    }

    /// A host's one entry point: a packet reached it (data for the receiving half it keeps,
    /// an ACK, NACK or CNP for the sending half), its NIC port is free (it sends its next
    /// packet), or one of its events came up.
    #[inline(always)]
    pub fn handle(&mut self, h: &mut Host, out: &mut Sink, now: Time, input: Input) {
        match input {
            Input::Packet(ref packet) => self.receive(h, out, now, packet),
            Input::PortFree(port) => self.kick_on(h, out, now, port),
            Input::Event(event) => self.on_event(h, out, now, event),
        }
    }

    /// [`Nics::handle`] for one of the host's events.
    fn on_event(&mut self, h: &mut Host, out: &mut Sink, now: Time, event: Event) {
        match event {
            Event::ConnStart(c) => self.start(h, out, now, c),
            Event::Posted(c) => self.posted(h, out, now, c),
            Event::Release(m) => self.on_release(h, out, now, m),
            Event::NicWake(_) => self.wake(h, out, now),
            Event::CcTimer(c) => self.on_cc_timer(h, out, now, c),
            Event::CnpTimer(c) => self.on_cnp_timer(h, out, now, c),
            Event::Rto(c) => self.on_rto(h, out, now, c),
            Event::UpSend(m) => self.up_send(h, out, now, m),
            Event::UpArrive(m) => self.up_arrive(h, out, now, m),
            Event::UpDone(m) => self.up_done(h, out, now, m),
            Event::UpAck(m) => self.up_ack(h, out, now, m),
            Event::UpFree(host) => self.up_free(out, now, host),
            Event::UpBegin(m) => self.up_begin(h, out, now, m),
            Event::Computed(m) => self.computed(h, out, now, m),
            Event::PipeArrive(_) | Event::PortFree(_) => unreachable!("a packet or a port, handed over as such"),
            Event::Faults | Event::Sample | Event::Window | Event::Watch | Event::Generate => unreachable!("the driver's duties"),
        }
    }

    /// The message connection `c` carries (part of).
    #[inline]
    fn message_of(&self, c: u32) -> &Message {
        &self.messages[self.conns.message_of(c) as usize]
    }

    /// `ConnStart`: the connection may send.
    fn start(&mut self, hs: &mut Host, out: &mut Sink, now: Time, conn: u32) {
        // the fields apart, not `message_of`: `conns` is borrowed mutably next to the message
        let msg = self.messages[self.conns.message_of(conn) as usize];
        let started = self.conns.start(msg.first..msg.first + msg.count, &msg.spec);
        debug_assert_eq!(hs.node, msg.spec.src);
        if !started {
            hs.pending -= 1;
            return; // it waits for its pair's message before it (`per_pair`)
        }
        // posted first where posting costs (`transport.message_overhead`, `message_gap`)
        if let Some(costs) = self.cfg.posting {
            let at = hs.post(now, costs);
            if at > now {
                out.schedule(at, Event::Posted(conn));
                return;
            }
        }
        self.posted(hs, out, now, conn);
    }

    /// `Posted` (or a start that costs no posting): the connection joins its NIC's turns.
    fn posted(&mut self, hs: &mut Host, out: &mut Sink, now: Time, conn: u32) {
        hs.pending -= 1;
        hs.active.push(conn);
        self.kick(hs, out, now);
    }

    /// `per_pair`: connection `c` sent its last new packet; the pair's next message, which
    /// waited, starts now.
    #[cold]
    fn pair_posted(&mut self, h: &mut Host, out: &mut Sink, now: Time, c: u32) {
        let spec = self.message_of(c).spec;
        if let Some(next) = self.conns.posted(&spec, c) {
            out.schedule(now, Event::ConnStart(next));
            h.pending += 1;
        }
    }

    /// If the host's NIC is free, start its next packet: control first, then data pulled
    /// round-robin from the connections whose window allows. A NIC that sends wakes up when
    /// the packet is out to pull the next one (line-rate pacing, no NIC queue).
    #[inline]
    fn kick(&mut self, h: &mut Host, out: &mut Sink, now: Time) {
        let port = h.port;
        self.kick_on(h, out, now, port);
    }

    /// [`Nics::kick`] on the host's NIC port at `port` (its `PortFree`).
    fn kick_on(&mut self, hs: &mut Host, out: &mut Sink, now: Time, port: u32) {
        if !out.is_free(port, now) {
            return;
        }
        if out.port(port).has_control() {
            let pkt = out.port(port).take_control();
            out.send(now, port, pkt);
            return;
        }
        let n = hs.active.len();
        let cap = self.cfg.rate_cap;
        let mut held = Time::MAX;
        // the classes the leaf paused (PFC): their connections wait for its RESUME
        let paused = out.links.paused(port);
        for k in 0..n {
            let i = (hs.rr + k) % n;
            let c = hs.active[i];
            let conn = self.conns.sender_live(c);
            if paused != 0 && paused >> conn.spec.class & 1 != 0 {
                continue;
            }
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
                self.pair_posted(hs, out, now, c);
            }
            return;
        }
        // nothing sent: wake up when the pacing rate releases a connection (a later kick that
        // finds it window-limited sends nothing and schedules nothing)
        if held < hs.wake {
            hs.wake = held;
            out.schedule(held, Event::NicWake(hs.node));
        }
    }

    /// A PFC frame from the host's switch pauses or resumes a class of its NIC port; on a
    /// resume the NIC sends again.
    #[cold]
    fn on_pfc(&mut self, h: &mut Host, out: &mut Sink, now: Time, frame: &Packet) {
        debug_assert_eq!(out.links.cut().port(frame.conn) as u32, h.port, "a frame for the host's port");
        let pfc = out.links.pfc.as_mut().expect("PFC frames only where PFC runs");
        if pfc.on_frame(h.port, frame, now) {
            self.kick(h, out, now);
        }
    }

    /// `NicWake`: a connection's pacing gap has passed.
    fn wake(&mut self, hs: &mut Host, out: &mut Sink, now: Time) {
        if now >= hs.wake {
            hs.wake = Time::MAX;
        }
        self.kick(hs, out, now);
    }

    /// Queues an ACK or NACK at `host`'s NIC (control class, never limited at the host).
    #[inline]
    fn send_control(&mut self, h: &mut Host, out: &mut Sink, now: Time, packet: Packet) {
        out.port(h.port).push_control(packet);
        self.kick(h, out, now);
    }

    /// A packet reached `host`: data for the receiving half it keeps, an ACK, NACK or CNP for
    /// the sending half.
    fn receive(&mut self, h: &mut Host, out: &mut Sink, now: Time, packet: &Packet) {
        match packet.kind {
            Kind::Data => self.receive_data(h, out, now, packet),
            Kind::Pfc => self.on_pfc(h, out, now, packet),
            _ => self.receive_control(h, out, now, packet),
        }
    }

    /// A data packet (or its trimmed header) reached its receiver `host`.
    fn receive_data(&mut self, h: &mut Host, out: &mut Sink, now: Time, packet: &Packet) {
        let c = packet.conn;
        let mi = self.conns.message_of(c) as usize;
        // the fields apart: `conns` is borrowed mutably next to the message
        let Some(half) = self.conns.receiver(c, &self.messages[mi].spec) else {
            self.receive_late_data(h, out, now, packet);
            return;
        };
        let header = self.cfg.header as u16;
        let transport = self.cfg.kind;
        let host = h.node;
        let reply = |kind: Kind| packet.reply(kind, host, header);
        if packet.trimmed {
            h.counts.headers_delivered += 1;
            if let Some(psn) = transport.on_trimmed(&mut half.rx, packet.psn) {
                let nack = Packet { psn, ..reply(Kind::Nack) };
                self.send_control(h, out, now, nack);
            }
            return;
        }
        h.counts.data_delivered += 1;
        if packet.ecn && self.cfg.cc.sends_cnps() {
            if let Some(window_end) = half.rx.cnp.on_marked(now) {
                half.stats.cnps += 1;
                out.schedule(window_end, Event::CnpTimer(c));
                let cnp = reply(Kind::Cnp);
                self.send_control(h, out, now, cnp);
            }
        }
        let half = self.conns.receiver_live(c);
        let payload = half.payload_of(packet.psn);
        let before = half.rx.delivered_bytes;
        let arrival = transport.on_data(&mut half.rx, now, packet.psn, payload, packet.ecn, packet.asks_ack());
        let new = u64::from(half.rx.delivered_bytes != before);
        (h.progress, h.progress_bytes) = (h.progress + new, h.progress_bytes + new * u64::from(packet.size));
        if arrival.discarded {
            half.stats.discarded += 1;
        }
        if let Some(e) = arrival.nak {
            let nak = Packet { psn: e, ..reply(Kind::Nack) };
            self.send_control(h, out, now, nak);
        }
        if self.cfg.loss_detection == LossDetection::PathId {
            let half = self.conns.receiver_live(c);
            self.scratch_psn.clear();
            half.rx.lost_by_path(packet.psn, packet.path, half.n_paths, &mut self.scratch_psn);
            half.stats.fast_nacks += self.scratch_psn.len() as u64;
            for i in 0..self.scratch_psn.len() {
                let nack = Packet { psn: self.scratch_psn[i], ..reply(Kind::Nack) };
                self.send_control(h, out, now, nack);
            }
        }
        if arrival.completed {
            let m = &mut self.states[self.conns.msg_at(mi, End::Rx)];
            m.done += 1;
            if m.done == self.messages[mi].count {
                h.done += 1;
                self.report(mi, now);
                if self.has_waiters() {
                    self.completed(h, out, now, mi);
                }
            }
        }
        if arrival.send_ack {
            let gbn = transport == TransportKind::Gbn;
            let (cum, sack) = self.conns.receiver_live(c).rx.ack_fields(packet.psn, gbn);
            let ack = packet.ack(h.node, header, (cum, sack));
            self.send_control(h, out, now, ack);
        }
        if arrival.completed {
            self.conns.finish_receiver(c);
        }
    }

    /// An ACK, NACK or CNP reached its sender `host`.
    fn receive_control(&mut self, h: &mut Host, out: &mut Sink, now: Time, packet: &Packet) {
        let c = packet.conn;
        let Some(conn) = self.conns.sender(c) else {
            self.receive_late_control(h, out, now, packet);
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
                        conn.tx.window.on_ack(&AckSignal::of(packet, now, bytes, ecn, rtt, in_flight));
                        conn.tx.lb.on_ack(now, ev, ecn);
                    }
                } else {
                    if packet.ecn {
                        conn.stats.ecn_acks += 1;
                    }
                    conn.tx.window.on_ack(&AckSignal::of(packet, now, newly, packet.ecn, rtt, in_flight));
                    conn.tx.lb.on_ack(now, packet.ev, packet.ecn);
                }
                let shared = conn.tx.shared;
                if conn.sender_done() {
                    h.active.retain(|&x| x != c);
                    if let Some(next) = self.conns.finish_sender(c) {
                        // the pair's next message, which waited for this one (`per_pair`)
                        out.schedule(now, Event::ConnStart(next));
                        h.pending += 1;
                    }
                    let mi = self.conns.message_of(c) as usize;
                    let m = &mut self.states[self.conns.msg_at(mi, End::Tx)];
                    m.acked += 1;
                    if m.acked == self.messages[mi].count && self.has_waiters() {
                        self.acknowledged(h, out, now, mi);
                    }
                } else if shared {
                    let spec = self.conns.sender_live(c).spec;
                    self.conns.share_window(&spec);
                }
                self.kick(h, out, now);
            }
            Kind::Cnp => {
                if let Some(at) = conn.tx.window.on_cnp(now) {
                    out.schedule(at, Event::CcTimer(c));
                }
                conn.tx.repace(self.cfg.rate_cap);
                self.kick(h, out, now);
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
                self.kick(h, out, now);
            }
            Kind::Data => unreachable!("data goes to the receiving half"),
            Kind::Pfc => unreachable!("a PFC frame goes to the NIC's port"),
        }
    }
}
