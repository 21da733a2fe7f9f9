//! A piece's links, and the sink its units write their outputs to.
//!
//! [`Links`] holds, in the order the cut assigns them (`topology::Cut`), every egress port a
//! piece's nodes send on (its queues, its fault) and every wire into them (held by its
//! receiving end, [`Wire`]), with the piece's outboxes: packets put on a wire whose far end is
//! another piece's, and notices to another piece's hosts. A host or a switch owns the rest of
//! its state; what it does to anything else it writes to a [`Sink`]: a packet onto the wire
//! of one of its ports ([`Sink::transmit`]: its last bit leaves after the serialization time
//! and reaches the far end `delay` later; only the wire's head has an event pending,
//! `PipeArrive`), an event of its own, numbered by its own counter ([`Sink::schedule`]), or a
//! notice. The driver (`sim::piece`) routes what lands in the outboxes to the other pieces, as
//! smoltcp's `Interface::poll` hands a device's tokens their frames and htsim's
//! `PacketSink::receivePacket` passes a packet to the next element of its route.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::engine::{node_unit, Event, EventQueue, Notice, Origin};
use crate::faults::link::{Change, LinkFault, Verdict};
use crate::packet::{Kind, Packet};
use crate::switch::pfc::{Pfc, PfcModel};
use crate::switch::port::ConnLosses;
use crate::switch::wire::Wire;
use crate::switch::EgressPort;
use crate::time::{serialization, Time};
use crate::topology::{Cut, Slots, Topology};

/// A packet put on a wire whose far end is another piece's: that piece, where it keeps the
/// wire, and when the packet arrives (one cache line with the packet).
#[derive(Debug, Clone, Copy)]
pub struct Handed {
    pub piece: u16,
    pub wire: u32,
    pub at: Time,
    pub pkt: Packet,
}

/// What a piece's ports lost, by kind: sums over its ports ([`Links::losses`]).
#[derive(Debug, Clone, Default)]
pub struct Losses {
    pub data_trimmed: u64,
    pub data_dropped: u64,
    /// Trimmed headers dropped (a full control queue, a dead or lossy link).
    pub headers_dropped: u64,
}

/// The egress ports a piece's nodes send on, the wires into them, and its outboxes.
pub struct Links {
    topo: Arc<Topology>,
    cut: Arc<Cut>,
    me: u16,
    /// Where this piece keeps a port (the cut's map, read on every packet a NIC sends).
    port_slot: Slots,
    hosts: u32,
    seed: u64,
    pub(crate) ports: Vec<EgressPort>,
    /// Data packets in flight (whole, trimmed headers) that the process that ran this piece
    /// counted in its links (a run across ranks, `sim::ranks`: they are not here).
    pub(crate) told_in_flight: (u64, u64),
    /// What each port into this piece's nodes put on its wire, held by the far end.
    wires: Vec<Wire>,
    /// Packets put on a wire whose far end belongs to another piece, in the order sent.
    pub outbox: Vec<Handed>,
    /// What this piece's hosts tell hosts of another piece, in the order told.
    pub notices: Vec<Notice>,
    /// Priority flow control's state (`switch.overflow = "pfc"`).
    pub(crate) pfc: Option<Box<Pfc>>,
}

impl Links {
    /// Piece `me`'s links of the fabric of `topo` cut by `cut`, with `classes` data classes a
    /// port (`seed`: what a fault's random stream derives from). A port whose far end is
    /// elsewhere hands its packets over through the outbox.
    pub fn piece(topo: Arc<Topology>, classes: usize, pfc: Option<PfcModel>, seed: u64, cut: Arc<Cut>, me: u16) -> Links {
        let hosts = topo.hosts();
        let mine = |n: u32| cut.home(n) == me;
        let units = cut.units().clone();
        let ports: Vec<EgressPort> = topo
            .ports
            .iter()
            .zip(0u32..)
            .filter(|(p, _)| mine(p.from))
            .map(|(p, id)| {
                let mut port = EgressPort::new(p.from, p.to, p.rate, p.delay, classes);
                (port.id, port.from_at) = (id, units[node_unit(p.from) as usize]);
                port.wire = cut.wire(id) as u32;
                if !mine(p.to) {
                    port.far = cut.home(p.to);
                }
                port
            })
            .collect();
        let wires: Vec<Wire> = topo
            .ports
            .iter()
            .zip(0..)
            .filter(|(p, _)| mine(p.to))
            .map(|(p, id)| Wire::new(id, p.from, p.to, units[node_unit(p.to) as usize]))
            .collect();
        let pfc = pfc.map(|model| {
            // the PAUSE for a wire into a switch goes back on the other direction of its link,
            // a port of that switch, so of this piece: the k-th wire from a node into it is
            // paired with its k-th port back (parallel links in order, as `Topology::reverse_ports`)
            let mut back: FxHashMap<(u32, u32), VecDeque<u32>> = FxHashMap::default();
            for (at, p) in (0u32..).zip(&ports) {
                back.entry((p.from, p.to)).or_default().push_back(at);
            }
            let links = wires.iter().map(|w| {
                let p = &topo.ports[w.id() as usize];
                let at = if w.to < hosts { None } else { back.get_mut(&(w.to, p.from)).and_then(VecDeque::pop_front) };
                (at.unwrap_or(u32::MAX), (p.rate, p.delay))
            });
            Box::new(Pfc::new(model, classes, &ports, links.collect()))
        });
        Links {
            port_slot: cut.ports().clone(),
            topo,
            cut,
            me,
            hosts,
            seed,
            ports,
            told_in_flight: (0, 0),
            wires,
            outbox: Vec::new(),
            notices: Vec::new(),
            pfc,
        }
    }

    /// Host nodes (the nodes numbered below this are hosts).
    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    /// The classes the far end of the port at `at` has paused (none without PFC).
    #[inline]
    pub fn paused(&self, at: u32) -> u8 {
        self.pfc.as_ref().map_or(0, |f| f.mask(at))
    }

    /// The cut this piece is one piece of.
    pub fn cut(&self) -> &Cut {
        &self.cut
    }

    /// Whether `node` (a host, or a switch) belongs to this piece.
    #[inline]
    pub fn is_home(&self, node: u32) -> bool {
        self.cut.home(node) == self.me
    }

    /// The ports this piece's nodes send on, in id order (every port, in one piece), and the
    /// wires into them.
    pub fn ports(&self) -> &[EgressPort] {
        &self.ports
    }

    pub fn wires(&self) -> &[Wire] {
        &self.wires
    }

    /// Egress port `port` (a global id); this piece's node sends on it.
    #[inline]
    pub fn port(&self, port: u32) -> &EgressPort {
        &self.ports[self.cut.port(port)]
    }

    /// The wire of port `port` (a global id), held by its far end; this piece's node receives
    /// on it.
    #[inline]
    pub fn wire(&self, port: u32) -> &Wire {
        &self.wires[self.cut.wire(port)]
    }

    /// The wire this piece keeps at `w` (what `PipeArrive` names).
    #[inline]
    pub fn wire_at(&self, w: u32) -> &Wire {
        &self.wires[w as usize]
    }

    /// The port this piece keeps at `at` (what `PortFree` names).
    #[inline]
    pub fn port_at(&self, at: u32) -> &EgressPort {
        &self.ports[at as usize]
    }

    /// Where this piece keeps the NIC port of `host`, one of its hosts (its link to the
    /// leaf). A sink names a port by this local index, as `PortFree` does.
    #[inline]
    pub fn nic_port(&self, host: u32) -> u32 {
        self.port_slot.of(self.topo.tables.out_of_host(host)) as u32
    }

    /// Whether the port at `at` is a host's NIC port.
    #[inline]
    pub fn is_nic(&self, at: u32) -> bool {
        self.ports[at as usize].from < self.hosts
    }

    /// Starts loading the head of the wire at `w`, so that the next event's cache miss
    /// overlaps this one's work (the head was written one link latency ago, long since
    /// evicted).
    #[inline]
    pub fn prefetch(&self, w: u32) {
        std::hint::black_box(self.wires[w as usize].head_time());
    }

    /// [`Links::prefetch`] for the port at `at`: the head of its wire, where this piece holds
    /// it.
    #[inline]
    pub fn prefetch_out(&self, at: u32) {
        let p = &self.ports[at as usize];
        if let Some(w) = self.wires.get(p.wire as usize).filter(|_| p.far == EgressPort::HERE) {
            std::hint::black_box(w.head_time());
        }
    }

    /// `PipeArrive`: the head packet of the wire at `w` reaches the far end (the wire's `to`).
    #[inline]
    pub fn arrive(&mut self, q: &mut EventQueue, w: u32) -> Packet {
        self.wires[w as usize].take(q, w)
    }

    /// A packet another piece put on the wire this piece keeps at `w` arrives at `at`.
    #[inline]
    pub fn accept(&mut self, q: &mut EventQueue, w: u32, at: Time, pkt: Packet) {
        self.wires[w as usize].carry(q, w, at, pkt);
    }

    /// `PortFree`: the port's wire is free again.
    #[inline]
    pub fn on_port_free(&mut self, at: u32) {
        self.ports[at as usize].wake_pending = false;
    }

    /// A fault changes both directions of a link: the wrapper on each wire takes the change
    /// (each direction in the piece of its sending node: the others skip it). What routing
    /// then allows, on `Converge`, the run computes from every piece.
    pub fn apply(&mut self, ports: [u32; 2], change: Change) {
        for port in ports {
            if self.cut.home(self.topo.ports[port as usize].from) != self.me {
                continue;
            }
            let p = &mut self.ports[self.cut.port(port)];
            let fault = p.fault.get_or_insert_with(|| Box::new(LinkFault::new(self.seed, port, p.rate, p.delay)));
            fault.apply(change, &mut p.rate, &mut p.delay);
        }
    }

    /// What this piece's ports lost, summed.
    pub fn losses(&self) -> Losses {
        let mut l = Losses::default();
        for p in &self.ports {
            l.data_trimmed += p.stats.trims;
            if let Some(lost) = &p.lost {
                l.data_dropped += lost.data_dropped;
                l.headers_dropped += lost.headers_dropped;
            }
        }
        l
    }

    /// What each connection lost, summed over the ports (a connection that lost nothing is
    /// absent).
    pub fn conn_losses(&self) -> BTreeMap<u32, ConnLosses> {
        let mut all = BTreeMap::new();
        for lost in self.ports.iter().filter_map(|p| p.lost.as_deref()) {
            for (&c, l) in &lost.conn {
                let e: &mut ConnLosses = all.entry(c).or_default();
                e.trims += l.trims;
                e.drops += l.drops;
            }
        }
        all
    }

    /// Data packets this piece's links hold (queued or on a wire): (whole, trimmed headers).
    pub fn data_in_flight(&self) -> (u64, u64) {
        let on_wires = || self.wires.iter().flat_map(|w| w.packets().map(|(_, p)| p));
        let held = || self.ports.iter().flat_map(|p| p.packets()).chain(on_wires()).filter(|p| p.kind == Kind::Data);
        let (told, headers) = self.told_in_flight;
        (told + held().filter(|p| !p.trimmed).count() as u64, headers + held().filter(|p| p.trimmed).count() as u64)
    }

    /// Whether this piece put something in its outboxes.
    #[inline]
    pub fn has_outgoing(&self) -> bool {
        !self.outbox.is_empty() || !self.notices.is_empty()
    }
}

/// Where the unit whose event is being processed writes what it does: packets onto the wires
/// of its ports, its own events (numbered by its counter), notices to other pieces' hosts.
pub struct Sink<'a> {
    queue: &'a mut EventQueue,
    pub links: &'a mut Links,
    me: Origin,
}

impl<'a> Sink<'a> {
    /// What unit `me` writes, into `queue` and `links`.
    #[inline]
    pub fn new(queue: &'a mut EventQueue, links: &'a mut Links, me: Origin) -> Sink<'a> {
        Sink { queue, links, me }
    }

    /// The unit writing.
    #[inline]
    pub fn me(&self) -> Origin {
        self.me
    }

    /// Schedules one of its own events at `at`, numbered by its counter.
    #[inline]
    pub fn schedule(&mut self, at: Time, event: Event) {
        self.queue.schedule(self.me, at, event);
    }

    /// Schedules `event` at `at` under an order key taken before ([`Sink::next_order`], or a
    /// message's first release, `engine::start_order`).
    #[inline]
    pub fn schedule_ordered(&mut self, at: Time, order: u64, event: Event) {
        self.queue.schedule_ordered(at, order, event);
    }

    /// The order key of its next event, taken now.
    #[inline]
    pub fn next_order(&mut self) -> u64 {
        self.queue.next_order(self.me)
    }

    /// Tells host `host` `event` at `at`, numbered by the unit writing: into this piece's
    /// queue, or into the outbox under its next order key when `host` belongs to another piece.
    #[inline]
    pub fn tell(&mut self, host: u32, at: Time, event: Event) {
        if self.links.is_home(host) {
            self.schedule(at, event);
        } else {
            let order = self.next_order();
            self.links.notices.push(Notice { at, order, event });
        }
    }

    /// The port this piece keeps at `at` (one of the unit's).
    #[inline]
    pub fn port(&mut self, at: u32) -> &mut EgressPort {
        &mut self.links.ports[at as usize]
    }

    /// Whether the port at `at` is free now.
    #[inline]
    pub fn is_free(&self, at: u32, now: Time) -> bool {
        self.links.ports[at as usize].is_free(now)
    }

    /// Puts `pkt` on the wire of the port at `at` now: its last bit leaves after the
    /// serialization time and reaches the far end `delay` later.
    #[inline(always)]
    pub fn transmit(&mut self, now: Time, at: u32, pkt: Packet) {
        let p = &mut self.links.ports[at as usize];
        if p.fault.is_some() || p.far != EgressPort::HERE {
            self.transmit_other(now, at, pkt);
            return;
        }
        // a healthy link within the piece (almost every packet): no out-of-line case here, so
        // that this stays a short function with few registers to save
        let done = p.serialize(now, &pkt);
        let arrive = p.arrival(done);
        let w = p.wire;
        self.links.wires[w as usize].carry(self.queue, w, arrive, pkt);
    }

    /// [`Sink::transmit`] on a link with a fault, or to another piece.
    #[cold]
    #[inline(never)]
    fn transmit_other(&mut self, now: Time, at: u32, mut pkt: Packet) {
        let p = &mut self.links.ports[at as usize];
        // a PFC frame is never lost (docs/model.md, "Lossless Ethernet")
        let fault = p.fault.as_mut().filter(|_| pkt.kind != Kind::Pfc);
        match fault.map_or(Verdict::Carry, |f| f.on_transmit(&mut pkt)) {
            Verdict::Carry => {}
            Verdict::Dead => {
                p.busy_until = now + serialization(pkt.size as u64, p.rate);
                p.lose(&pkt);
                return;
            }
            Verdict::Lost => {
                p.serialize(now, &pkt);
                p.lose(&pkt);
                return;
            }
        }
        let done = p.serialize(now, &pkt);
        let arrive = p.arrival(done);
        if p.far != EgressPort::HERE {
            self.links.outbox.push(Handed { piece: p.far, wire: p.wire, at: arrive, pkt });
        } else {
            let w = p.wire;
            self.links.wires[w as usize].carry(self.queue, w, arrive, pkt);
        }
    }

    /// [`Sink::transmit`] from a port that then wakes when its wire frees (a NIC pulls its
    /// next packet then).
    #[inline]
    pub fn send(&mut self, now: Time, at: u32, pkt: Packet) {
        self.transmit(now, at, pkt);
        self.wake_when_free(at);
    }

    /// Sends PFC frame `frame` on the port at `at`: at once if the port is free, else right
    /// after the packet it is serializing, ahead of anything queued.
    #[cold]
    pub fn send_frame(&mut self, now: Time, at: u32, frame: Packet) {
        let p = &mut self.links.ports[at as usize];
        if p.is_free(now) {
            self.transmit(now, at, frame);
            if self.links.ports[at as usize].has_queued() {
                self.wake_when_free(at);
            }
        } else {
            p.control_bytes += u64::from(frame.size);
            p.control.push_front(frame);
            self.wake_when_free(at);
        }
    }

    /// Schedules the wake-up of the port at `at` for when its wire frees, unless one is
    /// pending.
    #[inline]
    pub fn wake_when_free(&mut self, at: u32) {
        let p = &mut self.links.ports[at as usize];
        if !p.wake_pending {
            p.wake_pending = true;
            self.queue.schedule(self.me, p.busy_until, Event::PortFree(at));
        }
    }
}
