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

/// What one piece tells of the ports' pauses: the ports it sends on that a far end paused
/// (global id, a bit a class), and for each wire into one of its switches and each class, the
/// ports of that switch where data packets that came in on it are queued (global ids; only
/// where there are some). A run's fragments, from one process or gathered from the ranks of a
/// run across them, are all [`find_in`] reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fragment {
    pub paused: Vec<(u32, u8)>,
    /// (class, the wire's id: the port that sends on it, the ports it waits on)
    pub waits: Vec<(u8, u32, Vec<u32>)>,
}

/// Piece `l`'s [`Fragment`] (empty without PFC).
pub fn fragment(l: &Links) -> Fragment {
    let Some(f) = pfc(l) else { return Fragment::default() };
    let ports = l.ports();
    let paused = ports.iter().enumerate().filter(|&(at, _)| f.mask(at as u32) != 0).map(|(at, p)| (p.id, f.mask(at as u32))).collect();
    // each switch's ports (their slots here)
    let mut of_node: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for (at, p) in ports.iter().enumerate().filter(|(_, p)| p.from >= l.hosts()) {
        of_node.entry(p.from).or_default().push(at);
    }
    let mut waits = Vec::new();
    for (w, wire) in l.wires().iter().enumerate() {
        let Some(mine) = of_node.get(&wire.to) else { continue };
        for class in 0..f.classes() {
            let on: Vec<u32> = mine.iter().filter(|&&q| f.queued_from(q, class).contains(&(w as u32))).map(|&q| ports[q].id).collect();
            if !on.is_empty() {
                waits.push((class as u8, wire.id(), on));
            }
        }
    }
    Fragment { paused, waits }
}

/// A cycle of ports (global ids) each paused for `class` and waiting on the next, if the
/// pieces' ports hold one.
pub fn find(pieces: &[&Links]) -> Option<(u8, Vec<u32>)> {
    let classes = pieces.iter().find_map(|l| pfc(l))?.classes();
    find_in(classes, &pieces.iter().map(|l| fragment(l)).collect::<Vec<_>>())
}

/// [`find`] over the pieces' [`Fragment`]s, with `classes` classes.
pub fn find_in(classes: usize, fragments: &[Fragment]) -> Option<(u8, Vec<u32>)> {
    let masks: FxHashMap<u32, u8> = fragments.iter().flat_map(|f| f.paused.iter().copied()).collect();
    for class in 0..classes {
        let bit = 1u8 << class;
        let paused = |id: u32| masks.get(&id).is_some_and(|m| m & bit != 0);
        // what each paused port waits on: the ports its far end queued its packets at
        let waits: FxHashMap<u32, &[u32]> = fragments
            .iter()
            .flat_map(|f| f.waits.iter())
            .filter(|(c, id, _)| usize::from(*c) == class && paused(*id))
            .map(|(_, id, on)| (*id, &on[..]))
            .collect();
        // the stuck ports, then those that wait only on stuck ones, to a fixed point
        let mut stuck: FxHashSet<u32> = waits.iter().filter(|(_, on)| on.iter().all(|&q| paused(q))).map(|(&p, _)| p).collect();
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
