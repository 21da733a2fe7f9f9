//! The tables against a fat tree's arithmetic, reconvergence, and a graph's shortest paths.

use super::*;
use crate::topology::{tree, Topology};

/// The tree's shape as the generator laid it out: each node's down and up ports, and the
/// hosts below each node (nodes are numbered bottom up: a down port leads to a lower id).
struct Shape {
    down: Vec<Vec<u32>>,
    up: Vec<Vec<u32>>,
    under: Vec<Vec<bool>>,
}

fn shape(t: &Topology) -> Shape {
    let (n, hosts) = (t.nodes.len(), t.hosts() as usize);
    let (mut down, mut up) = (vec![Vec::new(); n], vec![Vec::new(); n]);
    for (i, p) in t.ports.iter().enumerate() {
        let side = if p.up { &mut up } else { &mut down };
        side[p.from as usize].push(i as u32);
    }
    let mut under = vec![vec![false; hosts]; n];
    for node in 0..n {
        if node < hosts {
            under[node][node] = true;
        }
        for &p in &down[node] {
            let below = under[t.ports[p as usize].to as usize].clone();
            under[node].iter_mut().zip(below).for_each(|(a, b)| *a |= b);
        }
    }
    Shape { down, up, under }
}

/// The up-down rule, from the tree's shape: down the one port towards `dst` where it lies
/// below, else every up-port that is not excluded and leads to a switch that still
/// delivers, or all of them if none does.
fn up_down(t: &Topology, f: &Shape, excluded: &[bool], switch: u32, dst: u32) -> Vec<u32> {
    let to = |p: u32| t.ports[p as usize].to as usize;
    if let Some(&down) = f.down[switch as usize].iter().find(|&&p| f.under[to(p)][dst as usize]) {
        return vec![down];
    }
    let all = f.up[switch as usize].clone();
    let live: Vec<u32> = all.iter().copied().filter(|&p| !excluded[p as usize] && delivers(t, f, excluded, to(p) as u32, dst)).collect();
    if live.is_empty() {
        all
    } else {
        live
    }
}

fn delivers(t: &Topology, f: &Shape, excluded: &[bool], node: u32, dst: u32) -> bool {
    let to = |p: u32| t.ports[p as usize].to;
    if f.under[node as usize][dst as usize] {
        // below: the one way down, which must be live to the host's edge switch
        let mut n = node;
        while n != t.ports[t.tables.into_host(dst) as usize].from {
            let Some(&p) = f.down[n as usize].iter().find(|&&p| f.under[to(p) as usize][dst as usize]) else { return false };
            if excluded[p as usize] {
                return false;
            }
            n = to(p);
        }
        return true;
    }
    f.up[node as usize].iter().any(|&p| !excluded[p as usize] && delivers(t, f, excluded, to(p), dst))
}

fn restricted(t: &Topology, sets: &Restriction, switch: u32, dst: u32) -> Vec<u32> {
    let all = t.tables.next_hops(switch, dst);
    match sets.usable(t.tables.key(switch, dst)) {
        Some(offsets) => offsets.iter().map(|&i| all[i as usize]).collect(),
        None => all,
    }
}

#[test]
fn on_fat_trees_the_shortest_paths_are_the_up_down_paths() {
    for (tiers, hosts, radix, oversub, rails) in
        [(2, 128, 16, 1, false), (2, 96, 16, 3, false), (3, 128, 8, 1, false), (3, 1024, 16, 1, false), (2, 128, 16, 1, true)]
    {
        let t = tree(tiers, hosts, radix, oversub, rails);
        let (none, f) = (vec![false; t.ports.len()], shape(&t));
        for s in hosts..t.nodes.len() as u32 {
            for dst in 0..hosts {
                assert_eq!(t.tables.next_hops(s, dst), up_down(&t, &f, &none, s, dst), "{tiers}-tier {hosts}: switch {s} to host {dst}");
            }
        }
        assert_eq!(t.tables.diameter(), 2 * tiers, "{tiers}-tier {hosts}");
        // a leaf's one group serves every other leaf
        assert_eq!(t.tables.size().1, t.ports.iter().filter(|p| p.up && p.from >= hosts).count());
    }
}

#[test]
fn reconvergence_keeps_the_group_members_that_still_reach_the_destination() {
    for (tiers, hosts, radix, dead) in [(2, 128, 16, ["leaf0:up3", "spine3:down0"]), (3, 128, 8, ["agg0:up1", "core1:down0"])] {
        let t = tree(tiers, hosts, radix, 1, false);
        let mut excluded = vec![false; t.ports.len()];
        for name in dead {
            excluded[t.port_by_name(name).unwrap() as usize] = true;
        }
        let sets = t.tables.restrict(&t.ports, &excluded);
        let f = shape(&t);
        let mut narrowed = 0;
        for s in hosts..t.nodes.len() as u32 {
            for dst in 0..hosts {
                let got = restricted(&t, &sets, s, dst);
                assert_eq!(got, up_down(&t, &f, &excluded, s, dst), "{tiers}-tier: switch {s} to host {dst}");
                narrowed += usize::from(got.len() < t.tables.next_hops(s, dst).len());
            }
        }
        assert!(narrowed > 0, "{tiers}-tier: some switch routes round the dead link");
    }
    // leaf 5 must not go via spine 3 to reach leaf 0, but may for leaf 1; leaf 0 avoids
    // its dead uplink for every destination
    let t = tree(2, 128, 16, 1, false);
    let mut excluded = vec![false; t.ports.len()];
    excluded[t.port_by_name("leaf0:up3").unwrap() as usize] = true;
    excluded[t.port_by_name("spine3:down0").unwrap() as usize] = true;
    let sets = t.tables.restrict(&t.ports, &excluded);
    let (leaf0, leaf5) = (128, 128 + 5);
    assert_eq!(sets.usable(t.tables.key(leaf5, 0)), Some(&[0, 1, 2, 4, 5, 6, 7][..]));
    assert_eq!(sets.usable(t.tables.key(leaf5, 8)), None);
    assert_eq!(sets.usable(t.tables.key(leaf0, 16)), Some(&[0, 1, 2, 4, 5, 6, 7][..]));
}

#[test]
fn a_host_without_a_link_is_refused_and_a_cut_fabric_said_so() {
    let t = tree(2, 32, 8, 1, false);
    let lone: Vec<PortInfo> = t.ports.iter().filter(|p| p.from != 3 && p.to != 3).cloned().collect();
    assert_eq!(Tables::shortest_paths(32, &t.nodes, &lone).unwrap_err(), "host3 has no link");
    // leaf 0 without its uplinks: the spines cannot reach it, and its hosts are an island (the
    // topology refuses it unless a scale-up network joins the islands)
    let cut: Vec<PortInfo> = t.ports.iter().filter(|p| !(p.from == 32 && p.up || p.to == 32 && !p.up)).cloned().collect();
    let islands = Tables::shortest_paths(32, &t.nodes, &cut).expect("tables of islands");
    let e = islands.split().expect("said where");
    assert!(e.contains("cannot reach leaf0"), "{e}");
    assert!(islands.reachable(0, 3) && islands.reachable(4, 31));
    assert!(!islands.reachable(0, 4) && !islands.reachable(31, 2));
    let (a, b) = islands.farthest();
    assert!(islands.reachable(a, b) && a != b, "two hosts a path joins: {a}, {b}");
}
