//! The fabric's half of the packet path: wires, egress queues and switch forwarding.
//!
//! [`Fabric`] owns every egress port (the switches' and the hosts' NIC ports), every wire (held
//! by its receiving end, [`Wire`]), each switch's routing fields and random stream, and what
//! routing has excluded after a failure. It puts a packet on a wire ([`Fabric::transmit`]):
//! its last bit leaves after the serialization time and reaches the far end `delay` later;
//! the sending port hands it to the wire, and only the wire's head has an event pending
//! (`PipeArrive`). At a switch it picks the egress port ([`Fabric::forward`]: the switch's
//! forwarding table names one port or a group, of which the tier's rule picks one among the
//! ports routing still allows) and queues the
//! packet ([`Fabric::enqueue`]: trim, drop or ECN-mark). A port that frees while packets wait
//! is woken once (`PortFree`). Each port counts what it loses, per connection too (summed when
//! read); the fabric never looks inside a host: a packet that reaches a host is handed back to the caller.

use std::sync::Arc;

use crate::engine::rng::{Rng, Stream};
use crate::engine::{node_unit, Event, EventQueue};
use crate::faults::link::Verdict;
use crate::packet::Packet;
use crate::switch::routing::{choose_up, PortLoads, Route, Rule};
use crate::switch::wire::Wire;
use crate::switch::{red_mark, EcnMark, EgressPort, Overflow, SwitchModel};
use crate::time::{serialization, Time};
use crate::topology::{Cut, Detours, Next, Restriction, Slots, Topology};

pub use crate::switch::port::ConnLosses;
pub use outside::Losses;

/// The switches and links of a run, or of one piece of it.
pub struct Fabric {
    topo: Arc<Topology>,
    /// Where each node, port and wire is kept, and which piece this is.
    cut: Arc<Cut>,
    me: u16,
    /// The cut's maps read on every packet: where this piece keeps a port, a switch; and the
    /// counter of this piece's first switch in its queue (after the duties and its hosts).
    port_slot: Slots,
    node_slot: Slots,
    first_switch: u32,
    /// The ports this piece's nodes send on.
    ports: Vec<EgressPort>,
    /// What each port into this piece's nodes put on its wire, held by the far end.
    wires: Vec<Wire>,
    /// Per switch of this piece: its rule, tier and hash salt.
    routes: Vec<Route>,
    /// One stream per switch (ECN draws, spraying, adaptive tie-breaks).
    rng: Vec<Rng>,
    hosts: u32,
    cfg: SwitchModel,
    seed: u64,
    /// What each table entry's group may still use after routing excluded links
    /// (`Tables::restrict`, computed once for the run: [`Fabric::restrict`]).
    restricted: Arc<Restriction>,
    /// With a shared buffer: the data bytes queued at each switch (empty otherwise).
    pooled: Vec<u64>,
    /// Adaptive routing's last sample of each port's load (empty while loads are exact).
    samples: Vec<(Time, u64)>,
    /// Non-minimal routing between groups (`topology::detour`), if the fabric routes so;
    /// and the deciding switch's candidates' first hops.
    detours: Option<Arc<Detours>>,
    scratch: Vec<u32>,
    /// Packets put on a wire whose far end belongs to another piece: (port, arrival, packet),
    /// in the order sent.
    pub outbox: Vec<(u32, Time, Packet)>,
}

impl Fabric {
    /// The fabric of `topo`, switches configured by `cfg`, in one piece.
    pub fn new(topo: Arc<Topology>, cfg: SwitchModel, seed: u64) -> Fabric {
        let cut = Arc::new(Cut::whole(&topo));
        Fabric::piece(topo, cfg, seed, cut, 0)
    }

    /// Piece `me` of the fabric of `topo` cut by `cut`: its switches, the ports its nodes
    /// send on and the wires into them. A port whose far end is elsewhere hands its packets
    /// over through the outbox.
    pub fn piece(topo: Arc<Topology>, cfg: SwitchModel, seed: u64, cut: Arc<Cut>, me: u16) -> Fabric {
        let hosts = topo.hosts();
        let mine = |n: u32| cut.home(n) == me;
        let ports: Vec<EgressPort> = topo
            .ports
            .iter()
            .zip(0u32..)
            .filter(|(p, _)| mine(p.from))
            .map(|(p, id)| {
                let switch = if p.from < hosts { 0 } else { cut.switch(p.from) as u32 };
                let mut port = EgressPort::new(p.from, p.to, switch, p.rate, p.delay, cfg.classes as usize);
                (port.id, port.from_at) = (id, cut.units()[node_unit(p.from) as usize]);
                if mine(p.to) {
                    port.wire = cut.wire(id) as u32;
                }
                port
            })
            .collect();
        let units = cut.units().clone();
        let wires = topo
            .ports
            .iter()
            .zip(0..)
            .filter(|(p, _)| mine(p.to))
            .map(|(p, id)| Wire::new(id, p.from, p.to, units[node_unit(p.to) as usize]))
            .collect();
        let switches: Vec<u32> = (hosts..topo.nodes.len() as u32).filter(|&n| mine(n)).collect();
        let salt = |i: u64| Rng::stream(seed, Stream::Salt, i).next_u64();
        let routes = switches
            .iter()
            .map(|&n| {
                let tier = topo.nodes[n as usize].tier;
                Route {
                    tier: tier.unwrap_or(0) as u8,
                    rule: tier.and_then(|t| cfg.rules.get(t as usize)).copied().unwrap_or(Rule::Ecmp),
                    salt: salt(n.into()),
                }
            })
            .collect();
        let rng = switches.iter().map(|&n| Rng::stream(seed, Stream::Switch, (n - hosts).into())).collect();
        let pooled = if cfg.shared.is_some() { vec![0; switches.len()] } else { Vec::new() };
        let samples = if cfg.sense.is_exact() { Vec::new() } else { vec![(0, 0); ports.len()] };
        Fabric {
            detours: topo.detours.clone(),
            scratch: Vec::new(),
            topo,
            port_slot: cut.ports().clone(),
            node_slot: cut.nodes().clone(),
            first_switch: 2 + cut.share(me).hosts,
            cut,
            me,
            ports,
            wires,
            routes,
            rng,
            hosts,
            cfg,
            seed,
            restricted: Arc::default(),
            pooled,
            samples,
            outbox: Vec::new(),
        }
    }

    /// A packet another piece put on wire `port` (a global id) arrives at `at`.
    #[inline]
    pub fn accept(&mut self, q: &mut EventQueue, port: u32, at: Time, pkt: Packet) {
        let w = self.cut.wire(port);
        self.wires[w].carry(q, w as u32, at, pkt);
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The ports this piece's nodes send on, in id order (every port, in one piece).
    pub fn ports(&self) -> &[EgressPort] {
        &self.ports
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
    /// leaf). The methods below name a port by this local index, as `PortFree` does.
    #[inline]
    pub fn nic_port(&self, host: u32) -> u32 {
        self.port_slot.of(self.topo.tables.out_of_host(host)) as u32
    }

    /// The host whose NIC the port at `at` is, if it is one.
    #[inline]
    pub fn nic_of(&self, at: u32) -> Option<u32> {
        let from = self.ports[at as usize].from;
        (from < self.hosts).then_some(from)
    }

    #[inline]
    pub fn is_free(&self, at: u32, now: Time) -> bool {
        self.ports[at as usize].is_free(now)
    }

    /// Starts loading the head of the wire at `w`, so that the next event's cache miss
    /// overlaps this one's work (the head was written one link latency ago, long since
    /// evicted).
    #[inline]
    pub fn prefetch(&self, w: u32) {
        std::hint::black_box(self.wires[w as usize].head_time());
    }

    /// [`Fabric::prefetch`] for the port at `at`: the head of its wire, where this piece
    /// holds it.
    #[inline]
    pub fn prefetch_out(&self, at: u32) {
        if let Some(w) = self.wires.get(self.ports[at as usize].wire as usize) {
            std::hint::black_box(w.head_time());
        }
    }

    /// Puts `pkt` on the wire of the port at `at` now: its last bit leaves after the
    /// serialization time and reaches the far end `delay` later.
    #[inline(always)]
    pub fn transmit(&mut self, q: &mut EventQueue, now: Time, at: u32, pkt: Packet) {
        let p = &mut self.ports[at as usize];
        if p.fault.is_some() || p.wire == EgressPort::FAR {
            self.transmit_other(q, now, at, pkt);
            return;
        }
        // a healthy link within the piece (almost every packet): no out-of-line case here, so
        // that this stays a short function with few registers to save
        let done = p.serialize(now, &pkt);
        let arrive = p.arrival(done);
        let w = p.wire;
        self.wires[w as usize].carry(q, w, arrive, pkt);
    }

    /// [`Fabric::transmit`] on a link with a fault, or to another piece.
    #[cold]
    #[inline(never)]
    fn transmit_other(&mut self, q: &mut EventQueue, now: Time, at: u32, mut pkt: Packet) {
        let p = &mut self.ports[at as usize];
        match p.fault.as_mut().map_or(Verdict::Carry, |f| f.on_transmit(&mut pkt)) {
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
        if p.wire == EgressPort::FAR {
            self.outbox.push((p.id, arrive, pkt));
        } else {
            let w = p.wire;
            self.wires[w as usize].carry(q, w, arrive, pkt);
        }
    }

    /// [`Fabric::transmit`] from a port that then wakes when its wire frees (a NIC pulls its
    /// next packet then).
    #[inline]
    pub fn send(&mut self, q: &mut EventQueue, now: Time, at: u32, pkt: Packet) {
        self.transmit(q, now, at, pkt);
        self.wake_when_free(q, at);
    }

    /// Schedules the wake-up of the port at `at` for when its wire frees, unless one is
    /// pending.
    #[inline]
    pub fn wake_when_free(&mut self, q: &mut EventQueue, at: u32) {
        let p = &mut self.ports[at as usize];
        if !p.wake_pending {
            p.wake_pending = true;
            q.schedule(p.busy_until, Event::PortFree(at));
        }
    }

    /// `PortFree`: the port's wire is free again.
    #[inline]
    pub fn on_port_free(&mut self, at: u32) {
        self.ports[at as usize].wake_pending = false;
    }

    /// Queues a control packet (ACK, NACK) at a NIC port; a NIC never limits its control queue.
    #[inline]
    pub fn push_control(&mut self, at: u32, pkt: Packet) {
        self.ports[at as usize].push_control(pkt);
    }

    /// Whether a control packet waits at the port at `at`.
    #[inline]
    pub fn has_control(&self, at: u32) -> bool {
        self.ports[at as usize].has_control()
    }

    /// Takes the control packet waiting first at the port at `at`; one waits.
    #[inline]
    pub fn take_control(&mut self, at: u32) -> Packet {
        self.ports[at as usize].take_control()
    }

    /// A free switch port starts its next packet, control class first; ECN at dequeue.
    pub fn switch_next(&mut self, q: &mut EventQueue, now: Time, at: u32) {
        let p = &mut self.ports[at as usize];
        let pkt = if p.has_control() {
            p.take_control()
        } else if !p.has_data() {
            return;
        } else {
            let mut head = p.take_data(now, &self.cfg.scheduler);
            if let Some(used) = self.pooled.get_mut(p.switch as usize) {
                *used -= head.size as u64;
            }
            if let Some((kmin, kmax, EcnMark::Dequeue)) = self.cfg.ecn {
                let left = p.classes[head.class as usize].bytes;
                if red_mark(left, kmin, kmax, &mut self.rng[p.switch as usize]) {
                    p.stats.ecn_marks += 1;
                    head.ecn = true;
                }
            }
            head
        };
        self.transmit(q, now, at, pkt);
        if self.ports[at as usize].has_queued() {
            self.wake_when_free(q, at);
        }
    }

    /// `PipeArrive`: the head packet of the wire at `w` reaches the far end (the wire's `to`).
    #[inline]
    pub fn arrive(&mut self, q: &mut EventQueue, w: u32) -> Packet {
        self.wires[w as usize].take(q, w)
    }

    /// Whether `node` is a host.
    #[inline]
    pub fn is_host(&self, node: u32) -> bool {
        node < self.hosts
    }

    /// A packet reached switch `node`, whose unit's counter is at `unit_at` (the wire's
    /// `to_at`): route it to its egress port and queue it there.
    #[inline]
    pub fn forward(&mut self, q: &mut EventQueue, now: Time, node: u32, unit_at: u32, mut pkt: Packet) {
        let sw = (unit_at - self.first_switch) as usize;
        debug_assert_eq!(sw, self.node_slot.of(node));
        let out = self.next_hop(now, node, sw, &mut pkt);
        self.enqueue(q, now, self.port_slot.of(out) as u32, pkt);
    }

    /// The port the switch's table names, or the member of the group it names that the switch
    /// tier's rule picks (`switch::routing`) among those routing still allows; the switch
    /// stamps a group's choice into the packet's path id (mixed radix).
    #[inline]
    fn next_hop(&mut self, now: Time, node: u32, sw: usize, pkt: &mut Packet) -> u32 {
        if self.detours.is_some() {
            return self.detour_hop(now, node, sw, pkt);
        }
        let key = self.topo.tables.key(node, pkt.dst);
        self.hop(now, sw, key, pkt)
    }

    /// [`Fabric::next_hop`] by the table entry at `key`.
    #[inline(always)]
    fn hop(&mut self, now: Time, sw: usize, key: usize, pkt: &mut Packet) -> u32 {
        match self.topo.tables.next(key, pkt.dst) {
            Next::Deliver(port) | Next::Port(port) => port,
            Next::Group(g) => {
                let group = self.topo.tables.group(g);
                let set = self.restricted.usable(key);
                let (ports, cut) = (&self.ports, Some(&*self.cut));
                let mut loads = PortLoads { ports, cut, sense: &self.cfg.sense, now, samples: &mut self.samples };
                let i = choose_up(&self.routes[sw], group, pkt, set, Some(&mut self.rng[sw]), &mut loads, &self.cfg.mp_ev).unwrap_or(0);
                stamp(pkt, i, group.len());
                group[i as usize]
            }
        }
    }

    /// Queues `pkt` at the port at `at` (or puts it straight on a free wire): a data packet that would
    /// overflow its class queue is trimmed to a header or dropped; ECN at enqueue if asked.
    #[inline(always)]
    pub fn enqueue(&mut self, q: &mut EventQueue, now: Time, at: u32, mut pkt: Packet) {
        let m = &self.cfg;
        let p = &mut self.ports[at as usize];
        let sw = p.switch;
        let mut control = pkt.is_control();
        if !control && overflows(m, &self.pooled, sw, p.classes[pkt.class as usize].bytes, pkt.size as u64) {
            p.stats.max_queue = p.stats.max_queue.max(p.data_bytes);
            match m.overflow {
                Overflow::Trim => {
                    p.count_trim(&pkt);
                    pkt.trimmed = true;
                    pkt.size = m.header as u16;
                    control = true;
                }
                Overflow::Drop => {
                    p.lose(&pkt);
                    return;
                }
            }
        }
        if control {
            if p.control_bytes + pkt.size as u64 > m.control_buffer {
                p.lose(&pkt);
                return;
            }
            p.push_control(pkt);
        } else if p.is_free(now) {
            // A free port has empty queues (a wake-up is pending whenever packets wait): the
            // packet goes straight onto the wire and was never queued; the queue it sees, at
            // enqueue or dequeue, is empty, so RED never marks it.
            debug_assert!(!p.has_queued());
            self.transmit(q, now, at, pkt);
            return;
        } else {
            if let Some(used) = self.pooled.get_mut(sw as usize) {
                *used += pkt.size as u64;
            }
            if let Some((kmin, kmax, EcnMark::Enqueue)) = m.ecn {
                let ahead = p.classes[pkt.class as usize].bytes;
                if red_mark(ahead, kmin, kmax, &mut self.rng[p.switch as usize]) {
                    p.stats.ecn_marks += 1;
                    pkt.ecn = true;
                }
            }
            p.push_data(now, pkt);
        }
        if p.is_free(now) {
            self.switch_next(q, now, at);
        } else {
            self.wake_when_free(q, at);
        }
    }
}

/// Records choice `i` of `n` in the packet's path id (mixed radix).
#[inline(always)]
fn stamp(pkt: &mut Packet, i: u32, n: usize) {
    pkt.path = pkt.path.wrapping_mul(n as u16).wrapping_add(i as u16);
}

/// Whether a data packet of `size` bytes overflows a class queue holding `queued` bytes at
/// switch `sw`: past the per-port buffer, or with a shared buffer (`pooled`: bytes queued per
/// switch) past the pool or past alpha times the pool's free space (Choudhury and Hahne's
/// dynamic threshold).
#[inline]
fn overflows(m: &SwitchModel, pooled: &[u64], sw: u32, queued: u64, size: u64) -> bool {
    match m.shared {
        None => queued + size > m.buffer,
        Some((pool, alpha)) => {
            let used = pooled[sw as usize];
            used + size > pool || (queued + size) as f64 > alpha * (pool - used) as f64
        }
    }
}

mod detour;
mod outside;
#[cfg(test)]
mod tests;
