//! What the rest of a run does with a piece's fabric outside the packet path: read its ports
//! and wires by id, apply faults and what routing then allows, follow a probe's path, and sum
//! what its ports lost.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Fabric;
use crate::faults::link::{Change, LinkFault};
use crate::packet::{Kind, Packet};
use crate::switch::port::ConnLosses;
use crate::switch::routing::{choose_up, PortLoads};
use crate::switch::wire::Wire;
use crate::switch::EgressPort;
use crate::topology::{Next, Restriction};

/// What the fabric lost, by kind: sums over its ports ([`Fabric::losses`]).
#[derive(Debug, Clone, Default)]
pub struct Losses {
    pub data_trimmed: u64,
    pub data_dropped: u64,
    /// Trimmed headers dropped (a full control queue, a dead or lossy link).
    pub headers_dropped: u64,
}

impl Fabric {
    /// How many ports, wires and switches this piece holds.
    pub fn held(&self) -> (usize, usize, usize) {
        (self.ports.len(), self.wires.len(), self.routes.len())
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

    /// Adopts what routing still allows after a change of the links it excludes (the run
    /// computes it once, from every piece's links: `Tables::restrict`).
    pub fn restrict(&mut self, restricted: Arc<Restriction>) {
        self.restricted = restricted;
    }

    /// A fault changes both directions of a link: the wrapper on each wire takes the change
    /// (each direction in the piece of its sending node: the others skip it). What routing
    /// then allows, on `Converge`, the run computes from every piece ([`Fabric::restrict`]).
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

    /// The egress port switch `node` (of this piece) picks for `probe`; `None` if it decides
    /// at random or by load (a step of the run's `path_of`).
    pub fn hop_of(&self, node: u32, probe: &mut Packet) -> Option<u32> {
        let key = if self.detours.is_some() {
            self.inspect_via(node, probe)?;
            self.detour_key(node, probe)
        } else {
            self.topo.tables.key(node, probe.dst)
        };
        Some(match self.topo.tables.next(key, probe.dst) {
            Next::Deliver(port) | Next::Port(port) => port,
            Next::Group(g) => {
                let group = self.topo.tables.group(g);
                // a rule that reads loads decides at random among equals: never inspected
                let (ports, cut) = (&self.ports, Some(&*self.cut));
                let mut loads = PortLoads { ports, cut, sense: &self.cfg.sense, now: 0, samples: &mut [] };
                let r = &self.routes[self.cut.switch(node)];
                group[choose_up(r, group, probe, self.restricted.usable(key), None, &mut loads, &self.cfg.mp_ev)? as usize]
            }
        })
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
