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

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::engine::rng::{Rng, Stream};
use crate::engine::{Event, EventQueue};
use crate::faults::link::{Change, LinkFault};
use crate::packet::{Kind, Packet};
use crate::switch::routing::{choose_up, PortLoads, Route, Rule};
use crate::switch::wire::Wire;
use crate::switch::{red_mark, EcnMark, EgressPort, Overflow, SwitchModel};
use crate::time::{serialization, Time};
use crate::topology::{Next, Restriction, Topology};

pub use crate::switch::port::ConnLosses;

/// What the fabric lost, by kind: sums over its ports ([`Fabric::losses`]).
#[derive(Debug, Clone, Default)]
pub struct Losses {
    pub data_trimmed: u64,
    pub data_dropped: u64,
    /// Trimmed headers dropped (a full control queue, a dead or lossy link).
    pub headers_dropped: u64,
}

/// The switches and links of a run.
pub struct Fabric {
    topo: Arc<Topology>,
    ports: Vec<EgressPort>,
    /// What each port put on its wire, held by the far end.
    wires: Vec<Wire>,
    /// Per switch (node - hosts): its rule, tier and hash salt.
    routes: Vec<Route>,
    /// One stream per switch (ECN draws, spraying, adaptive tie-breaks).
    rng: Vec<Rng>,
    hosts: u32,
    cfg: SwitchModel,
    seed: u64,
    /// Ports routing has excluded, and what each table entry's group may still use
    /// (`Tables::restrict`); empty while nothing is excluded.
    excluded: Vec<bool>,
    restricted: Restriction,
    /// With a shared buffer: the data bytes queued at each switch (empty otherwise).
    pooled: Vec<u64>,
    /// Adaptive routing's last sample of each port's load (empty while loads are exact).
    samples: Vec<(Time, u64)>,
    /// Packets put on a wire whose far end belongs to another piece: (port, arrival, packet),
    /// in the order sent.
    pub outbox: Vec<(u32, Time, Packet)>,
}

impl Fabric {
    /// The fabric of `topo`, switches configured by `cfg`.
    pub fn new(topo: Arc<Topology>, cfg: SwitchModel, seed: u64) -> Fabric {
        let hosts = topo.hosts();
        let ports: Vec<EgressPort> = topo
            .ports
            .iter()
            .map(|p| EgressPort::new(p.from, p.to, p.from.saturating_sub(hosts), p.rate, p.delay, cfg.classes as usize))
            .collect();
        let wires = topo.ports.iter().map(|p| Wire::new(p.from, p.to)).collect();
        let salt = |i: u64| Rng::stream(seed, Stream::Salt, i).next_u64();
        let routes = topo.nodes[hosts as usize..]
            .iter()
            .zip(hosts as u64..)
            .map(|(n, i)| Route {
                tier: n.tier.unwrap_or(0) as u8,
                rule: n.tier.and_then(|t| cfg.rules.get(t as usize)).copied().unwrap_or(Rule::Ecmp),
                salt: salt(i),
            })
            .collect();
        let rng = (0..topo.switches()).map(|i| Rng::stream(seed, Stream::Switch, i as u64)).collect();
        let pooled = if cfg.shared.is_some() { vec![0; topo.switches()] } else { Vec::new() };
        let samples = if cfg.sense.is_exact() { Vec::new() } else { vec![(0, 0); ports.len()] };
        Fabric {
            topo,
            ports,
            wires,
            routes,
            rng,
            hosts,
            cfg,
            seed,
            excluded: Vec::new(),
            restricted: Restriction::default(),
            pooled,
            samples,
            outbox: Vec::new(),
        }
    }

    /// Makes this fabric piece `me` of a run whose nodes belong to the pieces `home` gives:
    /// a port whose far end is elsewhere hands its packets over through the outbox.
    pub fn cut(&mut self, home: &[u16], me: u16) {
        for p in &mut self.ports {
            p.far = home[p.from as usize] == me && home[p.to as usize] != me;
        }
    }

    /// A packet another piece put on wire `port` arrives at `at`.
    #[inline]
    pub fn accept(&mut self, q: &mut EventQueue, port: u32, at: Time, pkt: Packet) {
        self.wires[port as usize].carry(q, port, at, pkt);
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn ports(&self) -> &[EgressPort] {
        &self.ports
    }

    /// Each port's wire, held by its far end.
    pub fn wires(&self) -> &[Wire] {
        &self.wires
    }

    /// The NIC port of `host` (its link to the leaf).
    #[inline]
    pub fn nic_port(&self, host: u32) -> u32 {
        self.topo.tables.out_of_host(host)
    }

    /// The host whose NIC `port` is, if it is one.
    #[inline]
    pub fn nic_of(&self, port: u32) -> Option<u32> {
        let from = self.ports[port as usize].from;
        (from < self.hosts).then_some(from)
    }

    #[inline]
    pub fn is_free(&self, port: u32, now: Time) -> bool {
        self.ports[port as usize].is_free(now)
    }

    /// Starts loading the head of `port`'s wire, so that the next event's cache miss overlaps
    /// this one's work (the head was written one link latency ago, long since evicted).
    #[inline]
    pub fn prefetch(&self, port: u32) {
        std::hint::black_box(self.wires[port as usize].head_time());
    }

    /// Puts `pkt` on `port`'s wire now: its last bit leaves after the serialization time and
    /// reaches the far end `delay` later.
    #[inline(always)]
    pub fn transmit(&mut self, q: &mut EventQueue, now: Time, port: u32, pkt: Packet) {
        let p = &mut self.ports[port as usize];
        if p.fault.is_some() || p.far {
            self.transmit_other(q, now, port, pkt);
            return;
        }
        // a healthy link within the piece (almost every packet): no out-of-line case here, so
        // that this stays a short function with few registers to save
        let done = p.serialize(now, &pkt);
        let arrive = p.arrival(done);
        self.wires[port as usize].carry(q, port, arrive, pkt);
    }

    /// [`Fabric::transmit`] on a link with a fault, or to another piece.
    #[cold]
    #[inline(never)]
    fn transmit_other(&mut self, q: &mut EventQueue, now: Time, port: u32, pkt: Packet) {
        let p = &mut self.ports[port as usize];
        if p.fault.as_ref().is_some_and(|f| f.down) {
            // a dead link: the port serializes into the void and the packet is lost
            p.busy_until = now + serialization(pkt.size as u64, p.rate);
            p.lose(&pkt);
            return;
        }
        if p.fault.as_mut().is_some_and(|f| f.loses()) {
            p.serialize(now, &pkt);
            p.lose(&pkt);
            return;
        }
        let done = p.serialize(now, &pkt);
        let arrive = p.arrival(done);
        if p.far {
            self.outbox.push((port, arrive, pkt));
        } else {
            self.wires[port as usize].carry(q, port, arrive, pkt);
        }
    }

    /// [`Fabric::transmit`] from a port that then wakes when its wire frees (a NIC pulls its
    /// next packet then).
    #[inline]
    pub fn send(&mut self, q: &mut EventQueue, now: Time, port: u32, pkt: Packet) {
        self.transmit(q, now, port, pkt);
        self.wake_when_free(q, port);
    }

    /// Schedules `port`'s wake-up for when its wire frees, unless one is pending.
    #[inline]
    pub fn wake_when_free(&mut self, q: &mut EventQueue, port: u32) {
        let p = &mut self.ports[port as usize];
        if !p.wake_pending {
            p.wake_pending = true;
            q.schedule(p.busy_until, Event::PortFree(port));
        }
    }

    /// `PortFree`: the port's wire is free again.
    #[inline]
    pub fn on_port_free(&mut self, port: u32) {
        self.ports[port as usize].wake_pending = false;
    }

    /// Queues a control packet (ACK, NACK) at a NIC port; a NIC never limits its control queue.
    #[inline]
    pub fn push_control(&mut self, port: u32, pkt: Packet) {
        self.ports[port as usize].push_control(pkt);
    }

    /// Whether a control packet waits at `port`.
    #[inline]
    pub fn has_control(&self, port: u32) -> bool {
        self.ports[port as usize].has_control()
    }

    /// Takes the control packet waiting first at `port`; one waits.
    #[inline]
    pub fn take_control(&mut self, port: u32) -> Packet {
        self.ports[port as usize].take_control()
    }

    /// A free switch port starts its next packet, control class first; ECN at dequeue.
    pub fn switch_next(&mut self, q: &mut EventQueue, now: Time, port: u32) {
        let p = &mut self.ports[port as usize];
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
        self.transmit(q, now, port, pkt);
        if self.ports[port as usize].has_queued() {
            self.wake_when_free(q, port);
        }
    }

    /// `PipeArrive`: the head packet of `port`'s wire reaches the far end (the wire's `to`).
    #[inline]
    pub fn arrive(&mut self, q: &mut EventQueue, port: u32) -> Packet {
        self.wires[port as usize].take(q, port)
    }

    /// Whether `node` is a host.
    #[inline]
    pub fn is_host(&self, node: u32) -> bool {
        node < self.hosts
    }

    /// A packet reached switch `node`: route it to its egress port and queue it there.
    #[inline]
    pub fn forward(&mut self, q: &mut EventQueue, now: Time, node: u32, mut pkt: Packet) {
        let out = self.next_hop(now, node, &mut pkt);
        self.enqueue(q, now, out, pkt);
    }

    /// The port the switch's table names, or the member of the group it names that the switch
    /// tier's rule picks (`switch::routing`) among those routing still allows; the switch
    /// stamps a group's choice into the packet's path id (mixed radix).
    #[inline]
    fn next_hop(&mut self, now: Time, node: u32, pkt: &mut Packet) -> u32 {
        let key = self.topo.tables.key(node, pkt.dst);
        match self.topo.tables.next(key, pkt.dst) {
            Next::Deliver(port) | Next::Port(port) => port,
            Next::Group(g) => {
                let sw = (node - self.hosts) as usize;
                let group = self.topo.tables.group(g);
                let set = self.restricted.usable(key);
                let mut loads = PortLoads { ports: &self.ports, sense: &self.cfg.sense, now, samples: &mut self.samples };
                let i = choose_up(&self.routes[sw], group, pkt, set, Some(&mut self.rng[sw]), &mut loads, &self.cfg.mp_ev).unwrap_or(0);
                pkt.path = pkt.path.wrapping_mul(group.len() as u16).wrapping_add(i as u16);
                group[i as usize]
            }
        }
    }

    /// Queues `pkt` at `port` (or puts it straight on a free wire): a data packet that would
    /// overflow its class queue is trimmed to a header or dropped; ECN at enqueue if asked.
    #[inline(always)]
    pub fn enqueue(&mut self, q: &mut EventQueue, now: Time, port: u32, mut pkt: Packet) {
        let m = &self.cfg;
        let p = &mut self.ports[port as usize];
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
            self.transmit(q, now, port, pkt);
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
            self.switch_next(q, now, port);
        } else {
            self.wake_when_free(q, port);
        }
    }

    /// A fault changes both directions of a link: the wrapper on each wire takes the change;
    /// `Converge` makes routing adopt the link's state of this moment.
    pub fn apply(&mut self, ports: [u32; 2], change: Change) {
        for port in ports {
            let p = &mut self.ports[port as usize];
            let fault = p.fault.get_or_insert_with(|| Box::new(LinkFault::new(self.seed, port, p.rate, p.delay)));
            fault.apply(change, &mut p.rate, &mut p.delay);
            if change == Change::Converge {
                let down = fault.down;
                if self.excluded.is_empty() {
                    self.excluded = vec![false; self.ports.len()];
                }
                self.excluded[port as usize] = down;
            }
        }
        if change == Change::Converge {
            self.restricted = if self.excluded.iter().any(|&x| x) {
                self.topo.tables.restrict(&self.topo.ports, &self.excluded)
            } else {
                Restriction::default()
            };
        }
    }

    /// The egress ports a packet crosses from its source to its destination; `None` if a
    /// switch on the way decides at random or by load.
    pub fn path_of(&self, probe: &Packet) -> Option<Vec<u32>> {
        let mut port = self.nic_port(probe.src);
        let mut path = vec![port];
        let mut node = self.topo.ports[port as usize].to;
        while node != probe.dst {
            let key = self.topo.tables.key(node, probe.dst);
            port = match self.topo.tables.next(key, probe.dst) {
                Next::Deliver(port) | Next::Port(port) => port,
                Next::Group(g) => {
                    let group = self.topo.tables.group(g);
                    // a rule that reads loads decides at random among equals: never inspected
                    let mut loads = PortLoads { ports: &self.ports, sense: &self.cfg.sense, now: 0, samples: &mut [] };
                    let r = &self.routes[(node - self.hosts) as usize];
                    group[choose_up(r, group, probe, self.restricted.usable(key), None, &mut loads, &self.cfg.mp_ev)? as usize]
                }
            };
            path.push(port);
            node = self.topo.ports[port as usize].to;
        }
        Some(path)
    }

    /// What the fabric lost, summed over its ports.
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

    /// Data packets the fabric holds (queued or on a wire): (whole, trimmed headers).
    pub fn data_in_flight(&self) -> (u64, u64) {
        let on_wires = || self.wires.iter().flat_map(|w| w.packets().map(|(_, p)| p));
        let held = || self.ports.iter().flat_map(|p| p.packets()).chain(on_wires()).filter(|p| p.kind == Kind::Data);
        (held().filter(|p| !p.trimmed).count() as u64, held().filter(|p| p.trimmed).count() as u64)
    }
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

#[cfg(test)]
mod tests;
