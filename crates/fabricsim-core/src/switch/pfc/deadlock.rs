//! A PFC deadlock: ports paused in a cycle, each waiting on the next.
//!
//! A port paused for a class (its far end, a switch, holds past `xon` of that class from it)
//! waits on the ports of that switch where those packets are queued. It is stuck when every one
//! of them is paused for the class too: none can drain, so the count never falls and the pause
//! never lifts. The ports that are stuck and wait only on stuck ports can never move again
//! whatever else happens (a cyclic buffer dependency, Hu et al., "Deadlocks in Datacenter
//! Networks: Why Do They Form, and How to Avoid Them", HotNets 2016); the run stops and
//! names a cycle of them instead of running on.

use rustc_hash::{FxHashMap, FxHashSet};

use super::Pfc;
use crate::switch::links::Links;

fn pfc(l: &Links) -> Option<&Pfc> {
    l.pfc.as_deref()
}

/// A cycle of ports (global ids) each paused for `class` and waiting on the next, if the
/// pieces' ports hold one.
pub fn find(pieces: &[&Links]) -> Option<(u8, Vec<u32>)> {
    let classes = pieces.iter().find_map(|l| pfc(l))?.classes();
    // each port's piece and slot, each wire's
    let mut port_at = FxHashMap::default();
    let mut wire_at = FxHashMap::default();
    // each switch's ports (their slots in its piece)
    let mut of_node: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for (k, l) in pieces.iter().enumerate() {
        port_at.extend(l.ports().iter().enumerate().map(|(at, p)| (p.id, (k, at))));
        wire_at.extend(l.wires().iter().enumerate().map(|(w, wire)| (wire.id(), (k, w as u32))));
        for (at, p) in l.ports().iter().enumerate().filter(|(_, p)| p.from >= l.hosts()) {
            of_node.entry(p.from).or_default().push(at);
        }
    }
    for class in 0..classes {
        let bit = 1u8 << class;
        let paused = |id: u32| port_at.get(&id).is_some_and(|&(k, at)| pfc(pieces[k]).is_some_and(|f| f.mask(at as u32) & bit != 0));
        // what each paused port waits on: the ports its far end queued its packets at
        let mut waits: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for (&id, &(k, at)) in &port_at {
            if !paused(id) || pieces[k].ports()[at].to < pieces[k].hosts() {
                continue;
            }
            let Some(&(j, w)) = wire_at.get(&id) else { continue };
            let (far, f) = (pieces[j], pfc(pieces[j]).expect("every piece runs PFC"));
            let mine = &of_node[&far.wires()[w as usize].to];
            let on: Vec<u32> = mine.iter().filter(|&&q| f.queued_from(q, class).contains(&w)).map(|&q| far.ports()[q].id).collect();
            waits.insert(id, on);
        }
        // the stuck ports, then those that wait only on stuck ones, to a fixed point
        let mut stuck: FxHashSet<u32> =
            waits.iter().filter(|(_, on)| !on.is_empty() && on.iter().all(|&q| paused(q))).map(|(&p, _)| p).collect();
        loop {
            let free: Vec<u32> = stuck.iter().copied().filter(|p| waits[p].iter().any(|q| !stuck.contains(q))).collect();
            if free.is_empty() {
                break;
            }
            for p in free {
                stuck.remove(&p);
            }
        }
        let Some(&start) = stuck.iter().min() else { continue };
        // walk from the lowest id along the lowest successor until a port repeats
        let mut path = vec![start];
        loop {
            let next = *waits[path.last().expect("a port")].iter().filter(|q| stuck.contains(q)).min().expect("a stuck port waits on one");
            if let Some(i) = path.iter().position(|&p| p == next) {
                return Some((class as u8, path.split_off(i)));
            }
            path.push(next);
        }
    }
    None
}
