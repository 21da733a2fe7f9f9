//! A switch's half of non-minimal routing between groups (`topology::detour`: a dragonfly's
//! Valiant and UGAL): the packet's first switch picks the class it goes to first, and every
//! switch routes it there by its table, then on to its destination.

use super::{stamp, Fabric, Switch};
use crate::engine::rng::Rng;
use crate::packet::{Packet, DIRECT, UNDECIDED};
use crate::switch::routing::{choose_up, PortLoads, Route};
use crate::switch::{EgressPort, SwitchModel};
use crate::time::Time;
use crate::topology::{Detours, GroupRouting, Topology};

impl Fabric {
    /// [`Fabric::next_hop`] where the fabric routes between groups: decides the packet's
    /// first class at its first switch, routes it there, then to its destination.
    #[cold]
    #[inline(never)]
    pub(super) fn detour_hop(&mut self, sw: &mut Switch, ports: &[EgressPort], now: Time, pkt: &mut Packet) -> u32 {
        if pkt.via == UNDECIDED {
            let Fabric { topo, detours, cut, cfg, samples, scratch, .. } = self;
            let d = detours.as_deref().expect("detour_hop runs with detours");
            let mut loads = PortLoads { ports, cut: Some(cut), sense: &cfg.sense, now, samples };
            pkt.via = choose_via(topo, d, sw.node, &sw.route, pkt, Some(&mut sw.rng), &mut loads, cfg, scratch).unwrap_or(DIRECT);
        }
        let key = self.detour_key(sw.node, pkt);
        self.hop(sw, ports, now, key, pkt)
    }

    /// The table entry switch `node` routes `pkt` by: its first class's until it reaches
    /// that class's edge switch (where `via` becomes [`DIRECT`]), then its destination's.
    #[inline]
    pub(super) fn detour_key(&self, node: u32, pkt: &mut Packet) -> usize {
        let t = &self.topo.tables;
        debug_assert_ne!(pkt.via, UNDECIDED, "the first switch decides before routing");
        if pkt.via != DIRECT {
            let key = t.key_of_class(node, pkt.via);
            if t.first_hop(key).is_some() {
                return key;
            }
            pkt.via = DIRECT;
        }
        t.key(node, pkt.dst)
    }

    /// [`Fabric::hop_of`]'s first step where the fabric routes between groups: the class the
    /// probe goes to first; `None` where the decision reads loads or draws at random.
    pub(super) fn inspect_via(&self, sw: &Switch, ports: &[EgressPort], probe: &mut Packet) -> Option<()> {
        if let (Some(d), UNDECIDED) = (&self.detours, probe.via) {
            let cut = Some(&*self.cut);
            let mut loads = PortLoads { ports, cut, sense: &self.cfg.sense, now: 0, samples: &mut [] };
            probe.via = choose_via(&self.topo, d, sw.node, &sw.route, probe, None, &mut loads, &self.cfg, &mut Vec::new())?;
        }
        Some(())
    }
}

/// The class a packet's first switch `node` sends it to first ([`DIRECT`]: its destination's):
/// within its group, directly; between groups by Valiant, through the intermediate group its
/// tier's rule picks among the candidates (by their first hops), or by UGAL-L, that path unless
/// the minimal one's first queue times its hops is no longer. Stamps the choice into the
/// packet's path id. `None` where the decision needs randomness or loads and `rng` is `None`
/// (path inspection).
#[allow(clippy::too_many_arguments)]
fn choose_via(
    topo: &Topology,
    d: &Detours,
    node: u32,
    route: &Route,
    pkt: &mut Packet,
    rng: Option<&mut Rng>,
    loads: &mut PortLoads<'_>,
    m: &SwitchModel,
    first: &mut Vec<u32>,
) -> Option<u32> {
    let t = &topo.tables;
    let dst_class = t.class(pkt.dst);
    let (a, b) = (d.group(node), d.group(t.edge(dst_class)));
    let n = d.candidates();
    if a == b || n == 0 {
        return Some(DIRECT);
    }
    let inspecting = rng.is_none();
    first.clear();
    first.extend((0..n).map(|k| t.first_hop(t.key_of_class(node, d.via(a, b, k))).unwrap_or(0)));
    let i = choose_up(route, first, pkt, None, rng, loads, m)?;
    let via = d.via(a, b, i);
    if d.mode == GroupRouting::Ugal {
        if inspecting {
            return None;
        }
        let minimal = t.first_hop(t.key(node, pkt.dst)).unwrap_or(0);
        let h_min = topo.hops_to_class(node, dst_class);
        let h_val = topo.hops_to_class(node, via) + topo.hops_to_class(t.edge(via), dst_class);
        if loads.load(minimal as usize) * h_min <= loads.load(first[i as usize] as usize) * h_val {
            stamp(pkt, 0, n as usize + 1);
            return Some(DIRECT);
        }
        stamp(pkt, i + 1, n as usize + 1);
    } else {
        stamp(pkt, i, n as usize);
    }
    Some(via)
}
