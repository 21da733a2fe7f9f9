//! The fabric's half of the packet path: switch forwarding.
//!
//! [`Fabric`] owns each of a piece's switches' routing fields, random stream and shared-buffer
//! count, and what routing has excluded after a failure; the egress ports and the wires are the
//! piece's ([`Links`]), which a switch writes to through its [`Sink`]. At a switch it picks the
//! egress port ([`Fabric::forward`]: the switch's
//! forwarding table names one port or a group, of which the tier's rule picks one among the
//! ports routing still allows) and queues the
//! packet ([`Fabric::enqueue`]: trim, drop or ECN-mark). A port that frees while packets wait
//! is woken once (`PortFree`). Each port counts what it loses, per connection too (summed when
//! read); the fabric never looks inside a host: a packet that reaches a host is handed to its NIC.

use std::sync::Arc;

use crate::engine::rng::{Rng, Stream};
use crate::packet::Packet;
use crate::switch::links::{Links, Sink};
use crate::switch::routing::{choose_up, PortLoads, Route, Rule};
use crate::switch::{red_mark, EcnMark, EgressPort, Overflow, SwitchModel};
use crate::time::Time;
use crate::topology::{Cut, Detours, Next, Restriction, Slots, Topology};

pub use crate::switch::links::Losses;
pub use crate::switch::port::ConnLosses;

/// The switches of a run, or of one piece of it.
pub struct Fabric {
    topo: Arc<Topology>,
    /// Where each node, port and wire is kept.
    cut: Arc<Cut>,
    /// The cut's maps read on every packet: where this piece keeps a port, a switch; and the
    /// counter of this piece's first switch in its queue (after the duties and its hosts).
    port_slot: Slots,
    node_slot: Slots,
    first_switch: u32,
    /// Per switch of this piece: its rule, tier and hash salt.
    routes: Vec<Route>,
    /// One stream per switch (ECN draws, spraying, adaptive tie-breaks).
    rng: Vec<Rng>,
    hosts: u32,
    cfg: SwitchModel,
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
}

impl Fabric {
    /// Piece `me`'s switches of the fabric of `topo` cut by `cut`, configured by `cfg`, routing
    /// over the ports `links` holds.
    pub fn piece(topo: Arc<Topology>, cfg: SwitchModel, seed: u64, cut: Arc<Cut>, me: u16, links: &Links) -> Fabric {
        let hosts = topo.hosts();
        let switches: Vec<u32> = (hosts..topo.nodes.len() as u32).filter(|&n| cut.home(n) == me).collect();
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
        let samples = if cfg.sense.is_exact() { Vec::new() } else { vec![(0, 0); links.ports().len()] };
        Fabric {
            detours: topo.detours.clone(),
            scratch: Vec::new(),
            topo,
            port_slot: cut.ports().clone(),
            node_slot: cut.nodes().clone(),
            first_switch: 2 + cut.share(me).hosts,
            cut,
            routes,
            rng,
            hosts,
            cfg,
            restricted: Arc::default(),
            pooled,
            samples,
        }
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// A free switch port starts its next packet, control class first; ECN at dequeue.
    pub fn switch_next(&mut self, out: &mut Sink, now: Time, at: u32) {
        let p = &mut out.links.ports[at as usize];
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
        out.transmit(now, at, pkt);
        if out.links.ports[at as usize].has_queued() {
            out.wake_when_free(at);
        }
    }

    /// Whether `node` is a host.
    #[inline]
    pub fn is_host(&self, node: u32) -> bool {
        node < self.hosts
    }

    /// A packet reached switch `node`, whose unit's counter is at `unit_at` (the wire's
    /// `to_at`): route it to its egress port and queue it there.
    #[inline]
    pub fn forward(&mut self, out: &mut Sink, now: Time, node: u32, unit_at: u32, mut pkt: Packet) {
        let sw = (unit_at - self.first_switch) as usize;
        debug_assert_eq!(sw, self.node_slot.of(node));
        let port = self.next_hop(&out.links.ports, now, node, sw, &mut pkt);
        self.enqueue(out, now, self.port_slot.of(port) as u32, pkt);
    }

    /// The port the switch's table names, or the member of the group it names that the switch
    /// tier's rule picks (`switch::routing`) among those routing still allows; the switch
    /// stamps a group's choice into the packet's path id (mixed radix).
    #[inline]
    fn next_hop(&mut self, ports: &[EgressPort], now: Time, node: u32, sw: usize, pkt: &mut Packet) -> u32 {
        if self.detours.is_some() {
            return self.detour_hop(ports, now, node, sw, pkt);
        }
        let key = self.topo.tables.key(node, pkt.dst);
        self.hop(ports, now, sw, key, pkt)
    }

    /// [`Fabric::next_hop`] by the table entry at `key`.
    #[inline(always)]
    fn hop(&mut self, ports: &[EgressPort], now: Time, sw: usize, key: usize, pkt: &mut Packet) -> u32 {
        match self.topo.tables.next(key, pkt.dst) {
            Next::Deliver(port) | Next::Port(port) => port,
            Next::Group(g) => {
                let group = self.topo.tables.group(g);
                let set = self.restricted.usable(key);
                let cut = Some(&*self.cut);
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
    pub fn enqueue(&mut self, out: &mut Sink, now: Time, at: u32, mut pkt: Packet) {
        let m = &self.cfg;
        let p = &mut out.links.ports[at as usize];
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
            out.transmit(now, at, pkt);
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
            self.switch_next(out, now, at);
        } else {
            out.wake_when_free(at);
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
