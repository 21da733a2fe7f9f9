//! The fabric's half of the packet path: the switches.
//!
//! A [`Switch`] owns its routing rule, tier and hash salt, its random stream and its
//! shared-buffer count; what a piece's switches share (the forwarding tables, the switch
//! model, what routing has excluded after a failure) is its [`Fabric`]; the egress ports and
//! the wires are the piece's ([`Links`]), which a switch writes to through its [`Sink`]. Its one
//! entry point, [`Switch::handle`], takes a packet that reached it or a port of its that is
//! free. A packet goes to the egress port the switch's forwarding table names, or to the one
//! of the group it names that the tier's rule picks among the ports routing still allows, and
//! is queued there ([`Switch::enqueue`]: trim, drop or ECN-mark). A port that frees while
//! packets wait is woken once (`PortFree`). Each port counts what it loses, per connection too
//! (summed when read); a switch never looks inside a host: a packet that reaches a host is
//! handed to its NIC.

use std::sync::Arc;

use crate::engine::rng::{Rng, Stream};
use crate::packet::{Kind, Packet};
use crate::switch::links::{Links, Sink};
use crate::switch::routing::{choose_up, PortLoads, Route, Rule};
use crate::switch::{red_mark, EcnMark, EgressPort, HashSeed, Overflow, SwitchModel};
use crate::time::Time;
use crate::topology::{Cut, Detours, Next, Restriction, Slots, Topology};

pub use crate::switch::links::Losses;
pub use crate::switch::port::ConnLosses;

/// One switch: its routing rule, tier and hash salt, its random stream (ECN draws, spraying,
/// adaptive tie-breaks) and, with a shared buffer, the data bytes queued at its ports. Its
/// ports are the piece's ([`Links`]); what it does it writes to a [`Sink`].
#[derive(Debug, Clone)]
pub struct Switch {
    pub node: u32,
    route: Route,
    rng: Rng,
    pooled: u64,
}

/// What a switch handles.
#[derive(Debug, Clone, Copy)]
pub enum Input {
    /// A packet reached it on the wire its piece keeps at this index.
    Packet(Packet, u32),
    /// Its port at this index of the piece's links is free again.
    PortFree(u32),
}

/// What a piece's switches share: the forwarding tables and where the cut keeps ports and
/// switches, the switch model, what routing still allows after a failure, adaptive routing's
/// samples of the ports' loads.
pub struct Fabric {
    topo: Arc<Topology>,
    /// Where each node, port and wire is kept.
    cut: Arc<Cut>,
    /// The cut's maps read on every packet: where this piece keeps a port, a switch; and the
    /// counter of this piece's first switch in its queue (after the duties and its hosts).
    port_slot: Slots,
    node_slot: Slots,
    first_switch: u32,
    hosts: u32,
    cfg: SwitchModel,
    /// What each table entry's group may still use after routing excluded links
    /// (`Tables::restrict`, computed once for the run: [`Fabric::restrict`]).
    restricted: Arc<Restriction>,
    /// Adaptive routing's last sample of each port's load (empty while loads are exact).
    samples: Vec<(Time, u64)>,
    /// Non-minimal routing between groups (`topology::detour`), if the fabric routes so;
    /// and the deciding switch's candidates' first hops.
    detours: Option<Arc<Detours>>,
    scratch: Vec<u32>,
}

impl Fabric {
    /// Piece `me`'s switches of the fabric of `topo` cut by `cut`, configured by `cfg`, routing
    /// over the ports `links` holds: what they share, and each switch.
    pub fn piece(topo: Arc<Topology>, cfg: SwitchModel, seed: u64, cut: Arc<Cut>, me: u16, links: &Links) -> (Fabric, Vec<Switch>) {
        let hosts = topo.hosts();
        // a switch's salt is its own, its tier's or the fabric's (`switch.hash_seed`); the keys
        // of the last two lie beyond every node's
        let salt = |node: u32, tier: Option<u32>| {
            let key = match cfg.hash_seed {
                HashSeed::Switch => node.into(),
                HashSeed::Tier => (1 << 40) + u64::from(tier.unwrap_or(u32::MAX)),
                HashSeed::Fabric => 1 << 41,
            };
            Rng::stream(seed, Stream::Salt, key).next_u64()
        };
        let switches = (hosts..topo.nodes.len() as u32)
            .filter(|&n| cut.home(n) == me)
            .map(|node| {
                let tier = topo.nodes[node as usize].tier;
                let route = Route {
                    tier: tier.unwrap_or(0) as u8,
                    rule: tier.and_then(|t| cfg.rules.get(t as usize)).copied().unwrap_or(Rule::Ecmp),
                    salt: salt(node, tier),
                };
                Switch { node, route, rng: Rng::stream(seed, Stream::Switch, (node - hosts).into()), pooled: 0 }
            })
            .collect();
        let samples = if cfg.sense.is_exact() { Vec::new() } else { vec![(0, 0); links.ports().len()] };
        let fabric = Fabric {
            detours: topo.detours.clone(),
            scratch: Vec::new(),
            topo,
            port_slot: cut.ports().clone(),
            node_slot: cut.nodes().clone(),
            first_switch: 2 + cut.share(me).hosts,
            cut,
            hosts,
            cfg,
            restricted: Arc::default(),
            samples,
        };
        (fabric, switches)
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Whether `node` is a host.
    #[inline]
    pub fn is_host(&self, node: u32) -> bool {
        node < self.hosts
    }

    /// Where this piece keeps the switch whose unit's counter is at `unit_at` (a wire's
    /// `to_at`, a port's `from_at`).
    #[inline]
    pub fn switch_at(&self, unit_at: u32) -> usize {
        (unit_at - self.first_switch) as usize
    }

    /// Where this piece keeps switch `node`, one of its own.
    #[inline]
    pub fn switch_of(&self, node: u32) -> usize {
        self.node_slot.of(node)
    }
}

impl Switch {
    /// The switch's one entry point: a packet reached it (routed to its egress port and queued
    /// there), or one of its ports is free (it starts its next packet).
    #[inline(always)]
    pub fn handle(&mut self, fabric: &mut Fabric, out: &mut Sink, now: Time, mut input: Input) {
        // the packet routed where it lies: moved out of the input, it was copied twice more
        // (6 M instructions of the mid run)
        match input {
            Input::Packet(ref mut pkt, w) => {
                if pkt.kind == Kind::Pfc {
                    self.on_frame(&fabric.cfg, out, now, pkt);
                } else {
                    self.forward(fabric, out, now, pkt, w);
                }
            }
            Input::PortFree(at) if fabric.cfg.pfc.is_some() => self.next::<true>(&fabric.cfg, out, now, at),
            Input::PortFree(at) => self.next::<false>(&fabric.cfg, out, now, at),
        }
    }

    /// A free port starts its next packet, control class first; ECN at dequeue. `LOSSLESS`:
    /// under PFC (`cfg.pfc`), a paused class waits and a packet that leaves counts down its
    /// ingress (a second copy of this function, so that a lossy run pays nothing for it).
    pub(super) fn next<const LOSSLESS: bool>(&mut self, cfg: &SwitchModel, out: &mut Sink, now: Time, at: u32) {
        let paused = if LOSSLESS { out.links.paused(at) } else { 0 };
        let p = &mut out.links.ports[at as usize];
        let pkt = if p.has_control() {
            p.take_control()
        } else if !p.has_sendable(paused) {
            return;
        } else {
            let mut head = p.take_data(now, &cfg.scheduler, paused);
            if cfg.shared.is_some() {
                self.pooled -= head.size as u64;
            }
            if let Some((kmin, kmax, EcnMark::Dequeue)) = cfg.ecn {
                let left = p.classes[head.class as usize].bytes;
                if red_mark(left, kmin, kmax, &mut self.rng) {
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
        if LOSSLESS && !pkt.is_control() {
            self.released(cfg, out, now, at, &pkt);
        }
    }

    /// A packet reached this switch: route it to its egress port and queue it there.
    #[inline]
    fn forward(&mut self, fabric: &mut Fabric, out: &mut Sink, now: Time, pkt: &mut Packet, w: u32) {
        let port = fabric.next_hop(self, &out.links.ports, now, pkt);
        self.enqueue(&fabric.cfg, out, now, fabric.port_slot.of(port) as u32, *pkt, w);
    }

    /// Queues `pkt`, which came in on the wire at `w`, at its port at `at` (or puts it straight
    /// on a free wire): a data packet that would overflow its class queue is trimmed to a
    /// header or dropped (with PFC neither: `Switch::enqueue_lossless`); ECN at enqueue if asked.
    #[inline(always)]
    pub fn enqueue(&mut self, m: &SwitchModel, out: &mut Sink, now: Time, at: u32, mut pkt: Packet, w: u32) {
        let mut control = pkt.is_control();
        if m.pfc.is_some() && !control {
            self.enqueue_lossless(m, out, now, at, pkt, w);
            return;
        }
        let p = &mut out.links.ports[at as usize];
        if !control && overflows(m, self.pooled, p.classes[pkt.class as usize].bytes, pkt.size as u64) {
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
                Overflow::Pfc => unreachable!("under PFC data is queued by enqueue_lossless"),
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
            if m.shared.is_some() {
                self.pooled += pkt.size as u64;
            }
            if let Some((kmin, kmax, EcnMark::Enqueue)) = m.ecn {
                let ahead = p.classes[pkt.class as usize].bytes;
                if red_mark(ahead, kmin, kmax, &mut self.rng) {
                    p.stats.ecn_marks += 1;
                    pkt.ecn = true;
                }
            }
            p.push_data(now, pkt);
        }
        if p.is_free(now) {
            // (under PFC only a control packet comes this way, and it goes first)
            self.next::<false>(m, out, now, at);
        } else {
            out.wake_when_free(at);
        }
    }
}

impl Fabric {
    /// The port switch `sw`'s table names, or the member of the group it names that the
    /// switch tier's rule picks (`switch::routing`) among those routing still allows; the
    /// switch stamps a group's choice into the packet's path id (mixed radix).
    #[inline]
    fn next_hop(&mut self, sw: &mut Switch, ports: &[EgressPort], now: Time, pkt: &mut Packet) -> u32 {
        if self.detours.is_some() {
            return self.detour_hop(sw, ports, now, pkt);
        }
        let key = self.topo.tables.key(sw.node, pkt.dst);
        self.hop(sw, ports, now, key, pkt)
    }

    /// [`Fabric::next_hop`] by the table entry at `key`.
    #[inline(always)]
    fn hop(&mut self, sw: &mut Switch, ports: &[EgressPort], now: Time, key: usize, pkt: &mut Packet) -> u32 {
        match self.topo.tables.next(key, pkt.dst) {
            Next::Deliver(port) | Next::Port(port) => port,
            Next::Group(g) => {
                let group = self.topo.tables.group(g);
                let set = self.restricted.usable(key);
                let cut = Some(&*self.cut);
                let mut loads = PortLoads { ports, cut, sense: &self.cfg.sense, now, samples: &mut self.samples };
                let i = choose_up(&sw.route, group, pkt, set, Some(&mut sw.rng), &mut loads, &self.cfg).unwrap_or(0);
                stamp(pkt, i, group.len());
                group[i as usize]
            }
        }
    }
}

/// Records choice `i` of `n` in the packet's path id (mixed radix).
#[inline(always)]
fn stamp(pkt: &mut Packet, i: u32, n: usize) {
    pkt.path = pkt.path.wrapping_mul(n as u16).wrapping_add(i as u16);
}

/// Whether a data packet of `size` bytes overflows a class queue holding `queued` bytes at a
/// switch: past the per-port buffer, or with a shared buffer (`used`: bytes queued at the
/// switch) past the pool or past alpha times the pool's free space (Choudhury and Hahne's
/// dynamic threshold).
#[inline]
fn overflows(m: &SwitchModel, used: u64, queued: u64, size: u64) -> bool {
    match m.shared {
        None => queued + size > m.buffer,
        Some((pool, alpha)) => used + size > pool || (queued + size) as f64 > alpha * (pool - used) as f64,
    }
}

mod detour;
mod lossless;
mod outside;
#[cfg(test)]
mod tests;
