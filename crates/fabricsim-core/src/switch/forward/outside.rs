//! What the rest of a run does with a piece's switches outside the packet path: what routing
//! allows after a fault, and a probe's path.

use std::sync::Arc;

use super::{Fabric, Switch};
use crate::packet::Packet;
use crate::switch::routing::{choose_up, PortLoads};
use crate::switch::EgressPort;
use crate::topology::{Next, Restriction};

impl Fabric {
    /// Adopts what routing still allows after a change of the links it excludes (the run
    /// computes it once, from every piece's links: `Tables::restrict`).
    pub fn restrict(&mut self, restricted: Arc<Restriction>) {
        self.restricted = restricted;
    }

    /// The egress port switch `sw` (of this piece, whose ports are `ports`) picks for `probe`;
    /// `None` if it decides at random or by load (a step of the run's `path_of`).
    pub fn hop_of(&self, sw: &Switch, ports: &[EgressPort], probe: &mut Packet) -> Option<u32> {
        let key = if self.detours.is_some() {
            self.inspect_via(sw, ports, probe)?;
            self.detour_key(sw.node, probe)
        } else {
            self.topo.tables.key(sw.node, probe.dst)
        };
        Some(match self.topo.tables.next(key, probe.dst) {
            Next::Deliver(port) | Next::Port(port) => port,
            Next::Group(g) => {
                let group = self.topo.tables.group(g);
                // a rule that reads loads decides at random among equals: never inspected
                let cut = Some(&*self.cut);
                let mut loads = PortLoads { ports, cut, sense: &self.cfg.sense, now: 0, samples: &mut [] };
                group[choose_up(&sw.route, group, probe, self.restricted.usable(key), None, &mut loads, &self.cfg)? as usize]
            }
        })
    }
}
