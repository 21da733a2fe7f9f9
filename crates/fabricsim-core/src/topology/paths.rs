//! The paths between two hosts as the forwarding tables route them, read from the tables alone
//! (any graph): what the ideal FCT, a notification's latency, the receiver's count of paths,
//! the base RTT and the flows table's `path_links` need.
//!
//! A packet from host `a` to host `b` leaves on `a`'s link, then at each switch takes one of
//! the next hops its table lists for `b`. Every such path has the same number of links (the
//! tables hold shortest paths), so the paths line up position by position. [`Route`] keeps, at
//! each position, the fastest of the links the paths may cross there, the least delay among
//! them and how many distinct links there are (`Hop::links`: the parallel servers of the ideal
//! FCT). On a fat tree every link of a position is alike, and these are exactly the tree's
//! tiers (the tests compare them with the tree's arithmetic). On a graph whose links differ
//! they combine the best of each position: the ideal over a route is then a bound that no
//! path beats, not the time of one particular path.
//!
//! Walking the tables costs the switches the paths cross; [`Routes`] keeps the middle of each
//! route (edge switch to edge switch) once per pair of destination classes it is asked for.

use std::sync::{Arc, Mutex, PoisonError};

use rustc_hash::FxHashMap;

use super::{Next, Topology};
use crate::time::Time;

/// One hop of a path: a link of this rate, then this much delay until the next node handles
/// the packet (propagation plus, at a switch, its traversal latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hop {
    pub rate: u64,
    pub latency: Time,
    /// Distinct links at this position over all the paths between the two hosts (1 for the
    /// host links).
    pub links: u64,
}

/// [`Routes::ideal_key`]: what an ideal route between two hosts is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RouteKey {
    classes: (u32, u32),
    ends: [(u64, Time); 2],
}

/// The paths between two hosts, position by position.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Route {
    /// At each position the fastest link, the least delay and the distinct links.
    pub hops: Vec<Hop>,
    /// Distinct paths (saturating).
    pub paths: u64,
}

impl Route {
    /// The one-way latency of an empty packet: every link's and switch's delay, no
    /// serialization, no queueing.
    pub fn latency(&self) -> Time {
        self.hops.iter().map(|h| h.latency).sum()
    }
}

/// The middle of a route: from the source's edge switch to the destination's.
#[derive(Debug, Clone, Default)]
struct Middle {
    hops: Vec<Hop>,
    paths: u64,
}

/// What a walk over the tables marks: per node, the layer it was last reached in and the
/// paths that reach it there.
#[derive(Debug, Clone, Default)]
struct Walker {
    layer_of: Vec<u32>,
    paths: Vec<u64>,
    layer: u32,
    nodes: Vec<u32>,
    next: Vec<u32>,
}

impl Topology {
    /// The paths from host node `src` to host node `dst` (leaf slots).
    pub fn route(&self, src: u32, dst: u32) -> Route {
        self.join(src, dst, &self.middle(src, dst, &mut Walker::default()))
    }

    fn join(&self, src: u32, dst: u32, middle: &Middle) -> Route {
        let t = &self.tables;
        let host_hop = |p: u32| {
            let p = &self.ports[p as usize];
            Hop { rate: p.rate, latency: p.delay, links: 1 }
        };
        let mut hops = Vec::with_capacity(middle.hops.len() + 2);
        hops.push(host_hop(t.out_of_host(src)));
        hops.extend_from_slice(&middle.hops);
        hops.push(host_hop(t.into_host(dst)));
        Route { hops, paths: middle.paths }
    }

    /// Walks the tables from `src`'s edge switch to `dst`'s, a layer of switches at a time:
    /// the next layer is the far ends of the ports the layer's entries for `dst` name (each
    /// node once: two nodes of a layer may lead to the same one).
    fn middle(&self, src: u32, dst: u32, w: &mut Walker) -> Middle {
        let t = &self.tables;
        if w.layer_of.len() != self.nodes.len() {
            *w = Walker { layer_of: vec![0; self.nodes.len()], paths: vec![0; self.nodes.len()], ..Walker::default() };
        }
        let edge = self.ports[t.out_of_host(src) as usize].to;
        w.layer = w.layer.wrapping_add(1).max(1);
        w.nodes.clear();
        w.nodes.push(edge);
        w.paths[edge as usize] = 1;
        let mut hops = Vec::new();
        loop {
            let mut hop = Hop { rate: 0, latency: Time::MAX, links: 0 };
            w.layer = w.layer.wrapping_add(1).max(1);
            w.next.clear();
            for i in 0..w.nodes.len() {
                let node = w.nodes[i];
                let n = w.paths[node as usize];
                let one;
                let group: &[u32] = match t.next(t.key(node, dst), dst) {
                    // at the destination's edge switch (all of a layer are at one distance)
                    Next::Deliver(_) => return Middle { hops, paths: n },
                    Next::Port(p) => {
                        one = [p];
                        &one
                    }
                    Next::Group(g) => t.group(g),
                };
                for &p in group {
                    let port = &self.ports[p as usize];
                    hop.rate = hop.rate.max(port.rate);
                    hop.latency = hop.latency.min(port.delay);
                    hop.links += 1;
                    let to = port.to as usize;
                    if w.layer_of[to] != w.layer {
                        w.layer_of[to] = w.layer;
                        w.paths[to] = 0;
                        w.next.push(port.to);
                    }
                    w.paths[to] = w.paths[to].saturating_add(n);
                }
            }
            hops.push(hop);
            std::mem::swap(&mut w.nodes, &mut w.next);
        }
    }

    /// The route between the two farthest destination classes (the most links): the path
    /// the base RTT is measured on. Where the fabric routes through intermediate groups
    /// (Valiant, UGAL), the longest such path instead.
    pub fn diameter_route(&self) -> Route {
        if let Some(longest) = self.detours.as_deref().and_then(|d| self.longest_detour(d)) {
            return longest;
        }
        let (a, b) = self.tables.farthest();
        self.route(a, b)
    }

    /// Links on every path from host node `src` to `dst`: one path followed to the end (all
    /// are as long).
    pub fn links(&self, src: u32, dst: u32) -> usize {
        let t = &self.tables;
        let mut node = self.ports[t.out_of_host(src) as usize].to;
        let mut links = 2;
        loop {
            match t.next(t.key(node, dst), dst) {
                Next::Deliver(_) => return links,
                Next::Port(p) => node = self.ports[p as usize].to,
                Next::Group(g) => node = self.ports[t.group(g)[0] as usize].to,
            }
            links += 1;
        }
    }
}

/// Routes between hosts, the middle of each kept per pair of destination classes (each piece
/// of a run has its own: the lock is never contended).
#[derive(Debug)]
pub struct Routes {
    topo: Arc<Topology>,
    memo: Mutex<Memo>,
}

/// The middles found so far, and the walker that finds them; where the fabric routes through
/// intermediate groups, the pooled middles of the paths it allows ([`Routes::allowed`]) and
/// a host of each destination class.
#[derive(Debug, Clone, Default)]
struct Memo {
    middles: FxHashMap<(u32, u32), Arc<Middle>>,
    walker: Walker,
    allowed: FxHashMap<(u32, u32), Arc<Middle>>,
    host_of_class: Arc<[u32]>,
}

impl Clone for Routes {
    fn clone(&self) -> Routes {
        let memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner).clone();
        Routes { topo: self.topo.clone(), memo: Mutex::new(memo) }
    }
}

impl Routes {
    pub fn new(topo: Arc<Topology>) -> Routes {
        Routes { topo, memo: Mutex::new(Memo::default()) }
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The fabric, shared.
    pub fn shared(&self) -> Arc<Topology> {
        self.topo.clone()
    }

    fn middle(&self, src: u32, dst: u32) -> Arc<Middle> {
        self.with_middle(src, dst, Arc::clone)
    }

    /// What `f` reads of the middle from `src` to `dst`, found once per pair of classes (no
    /// count of its holders moved where `f` copies out what it needs).
    fn with_middle<R>(&self, src: u32, dst: u32, f: impl FnOnce(&Arc<Middle>) -> R) -> R {
        let t = &self.topo.tables;
        let key = (t.class(src), t.class(dst));
        let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        let Memo { middles, walker, .. } = &mut *memo;
        f(middles.entry(key).or_insert_with(|| Arc::new(self.topo.middle(src, dst, walker))))
    }

    /// [`Topology::route`].
    pub fn route(&self, src: u32, dst: u32) -> Route {
        self.topo.join(src, dst, &self.middle(src, dst))
    }

    /// The route a message's ideal is computed over: [`Routes::route`], or where the fabric
    /// routes between groups through a third (Valiant, UGAL: `topology::detour`), every path
    /// its routing allows pooled position by position (the minimal paths too under UGAL), so
    /// that no packet, on whichever of them it goes, beats the ideal.
    pub fn ideal_route(&self, src: u32, dst: u32) -> Route {
        self.topo.join(src, dst, &self.allowed(src, dst))
    }

    /// What decides [`Routes::ideal_route`] from `src` to `dst`: the pair of their destination
    /// classes (its middle is kept by that pair) and their own links'
    /// rate and delay (its first and last hops). Equal keys, equal routes: a memo of what a
    /// route gives keyed by this neither builds the route nor hashes its hops.
    pub fn ideal_key(&self, src: u32, dst: u32) -> RouteKey {
        let (t, ports) = (&self.topo.tables, &self.topo.ports);
        let end = |p: u32| (ports[p as usize].rate, ports[p as usize].delay);
        RouteKey { classes: (t.class(src), t.class(dst)), ends: [end(t.out_of_host(src)), end(t.into_host(dst))] }
    }

    /// The middle of [`Routes::ideal_route`]. The paths through intermediate groups differ in
    /// length (a router reaches the router with the global link it needs directly or over a
    /// local link), so they do not line up position by position: each family of paths (one
    /// per intermediate group, to its entry router's class and on to the destination's; and
    /// the minimal one under UGAL) is cut to the shortest family's length before they are
    /// pooled as [`Route`] pools a position. That is a relaxation: a packet on a longer path
    /// crosses more links than the pool counts, each no faster than the pool's fastest and
    /// with no less delay than its least, so the pooled tandem is a bound no path beats (a lone
    /// flow on one Valiant path takes longer than it; where the paths are the minimal ones
    /// alone, it is [`Routes::route`] exactly).
    fn allowed(&self, src: u32, dst: u32) -> Arc<Middle> {
        let topo = &self.topo;
        let t = &topo.tables;
        let Some(d) = topo.detours.as_deref() else { return self.middle(src, dst) };
        let (a, b) = (d.group(t.edge(t.class(src))), d.group(t.edge(t.class(dst))));
        if a == b || d.candidates() == 0 {
            return self.middle(src, dst);
        }
        let key = (t.class(src), t.class(dst));
        let host_of_class = {
            let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(m) = memo.allowed.get(&key) {
                return m.clone();
            }
            if memo.host_of_class.is_empty() {
                let mut first = vec![u32::MAX; t.classes()];
                for h in (0..topo.hosts()).rev() {
                    first[t.class(h) as usize] = h;
                }
                memo.host_of_class = first.into();
            }
            // shared, not copied: a copy of every class's host for each pair of classes would
            // cost classes^3 over an all-to-all
            memo.host_of_class.clone()
        };
        let mut families: Vec<Middle> = Vec::new();
        if d.mode == super::GroupRouting::Ugal {
            families.push((*self.middle(src, dst)).clone());
        }
        for k in 0..d.candidates() {
            let via = host_of_class[d.via(a, b, k) as usize];
            if via == u32::MAX {
                continue;
            }
            let (first, second) = (self.middle(src, via), self.middle(via, dst));
            families.push(Middle { hops: [&first.hops[..], &second.hops[..]].concat(), paths: first.paths.saturating_mul(second.paths) });
        }
        let pooled = Arc::new(pool(&families));
        self.memo.lock().unwrap_or_else(PoisonError::into_inner).allowed.insert(key, pooled.clone());
        pooled
    }

    /// Distinct paths from `src` to `dst`.
    pub fn paths(&self, src: u32, dst: u32) -> u64 {
        self.with_middle(src, dst, |m| m.paths)
    }

    /// [`Route::latency`].
    pub fn latency(&self, src: u32, dst: u32) -> Time {
        self.ends(src, dst) + self.with_middle(src, dst, |m| m.hops.iter().map(|h| h.latency).sum::<Time>())
    }

    /// The delays of host node `src`'s link out and `dst`'s link in: the part of
    /// [`Routes::latency`] every route between them takes.
    fn ends(&self, src: u32, dst: u32) -> Time {
        let t = &self.topo.tables;
        let ports = &self.topo.ports;
        ports[t.out_of_host(src) as usize].delay + ports[t.into_host(dst) as usize].delay
    }

    /// How long a notification from host node `from` takes to reach `to`: an empty packet's
    /// one-way latency over the fabric ([`Routes::latency`]), or over their server's scale-up
    /// network where that is shorter; between islands, over the scale-up network to the GPU
    /// that relays to `to`, then the fabric. A multi-plane host's ports are one host: between
    /// two of them, no time.
    pub fn notice_latency(&self, from: u32, to: u32) -> Time {
        let topo = &self.topo;
        // a multi-plane host's ports are one GPU: it tells itself at once, and another host
        // from its first plane's port
        let (from, to) = (topo.first_port(from), topo.first_port(to));
        if from == to {
            return 0;
        }
        let up = topo.scale_up_between(from, to);
        // no route over the fabric is shorter than its two host links
        if let Some(up) = up.filter(|up| up.latency <= self.ends(from, to)) {
            return up.latency;
        }
        if !topo.tables.reachable(from, to) {
            // islands: over the scale-up network, to `to` or to the GPU that relays to it
            // (every pair is one or the other: `workload::relay` checks)
            let relayed = || Some(topo.scale_up()?.latency + self.latency(topo.relay(from, to)?, to));
            return up.map(|u| u.latency).or_else(relayed).unwrap_or(Time::MAX / 4);
        }
        let fabric = self.latency(from, to);
        up.map_or(fabric, |up| up.latency.min(fabric))
    }
}

/// Families of paths pooled position by position over the shortest family's length: at each
/// position the fastest link, the least delay and every family's links (see
/// [`Routes::allowed`]).
fn pool(families: &[Middle]) -> Middle {
    let len = families.iter().map(|f| f.hops.len()).min().unwrap_or(0);
    let hops = (0..len)
        .map(|i| {
            families.iter().map(|f| f.hops[i]).fold(Hop { rate: 0, latency: Time::MAX, links: 0 }, |p, h| Hop {
                rate: p.rate.max(h.rate),
                latency: p.latency.min(h.latency),
                links: p.links.saturating_add(h.links),
            })
        })
        .collect();
    Middle { hops, paths: families.iter().fold(0u64, |n, f| n.saturating_add(f.paths)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fat_tree::Config as TopologyConfig;
    use crate::topology::FatTreeSpec;

    /// The paths of a fat tree from its arithmetic: the link tiers crossed (under one leaf, in
    /// one pod, across pods), and at link tier t the product of the up-port choices below it.
    fn tree_route(s: &FatTreeSpec, src: u32, dst: u32) -> Route {
        let per_pod = s.down0 * s.leaves_per_pod;
        let tiers: &[usize] = if src / s.down0 == dst / s.down0 {
            &[0, 0]
        } else if s.tiers == 2 || src / per_pod == dst / per_pod {
            &[0, 1, 1, 0]
        } else {
            &[0, 1, 2, 2, 1, 0]
        };
        let ups: Vec<u64> = if s.tiers == 2 { vec![s.up0.into()] } else { vec![s.up0.into(), (s.radix - s.leaves_per_pod).into()] };
        let links = |t: usize| ups.iter().take(t).product::<u64>();
        let last = tiers.len() - 1;
        let hops = tiers
            .iter()
            .enumerate()
            .map(|(i, &t)| Hop {
                rate: s.tier_rates[t],
                latency: s.tier_latencies[t] + if i < last { s.switch_latency } else { 0 },
                links: links(t),
            })
            .collect();
        Route { hops, paths: ups.iter().take(tiers.len() / 2 - 1).product() }
    }

    #[test]
    fn on_fat_trees_the_routes_are_the_trees_tiers() {
        let gbps = |g: u64| crate::units::Rate(g * 1_000_000_000);
        let ns = |n: u64| crate::units::Duration(n * 1000);
        for cfg in [
            TopologyConfig { tiers: 2, hosts: 128, radix: 16, ..Default::default() },
            TopologyConfig { tiers: 2, hosts: 96, radix: 16, oversubscription: 3, ..Default::default() },
            TopologyConfig {
                tiers: 3,
                hosts: 128,
                radix: 8,
                tier_link_rates: vec![gbps(400), gbps(200), gbps(800)],
                tier_link_latencies: vec![ns(100), ns(700), ns(1500)],
                ..Default::default()
            },
            TopologyConfig { tiers: 2, hosts: 128, radix: 16, nics_per_server: 4, rails: true, ..Default::default() },
        ] {
            let spec = FatTreeSpec::new(&cfg).unwrap();
            let topo = Arc::new(Topology::build(&spec).unwrap());
            let routes = Routes::new(topo.clone());
            for src in (0..spec.hosts).step_by(3) {
                for dst in (0..spec.hosts).filter(|&d| d != src) {
                    let want = tree_route(&spec, src, dst);
                    assert_eq!(topo.route(src, dst), want, "{cfg:?}: {src} -> {dst}");
                    assert_eq!(routes.route(src, dst), want);
                    assert_eq!(topo.links(src, dst), want.hops.len());
                    assert_eq!(routes.paths(src, dst), want.paths);
                    assert_eq!(routes.latency(src, dst), want.latency());
                }
            }
            let far = topo.diameter_route();
            assert_eq!(far.hops.len() as u32, 2 * spec.tiers);
            assert_eq!(far, tree_route(&spec, topo.tables.farthest().0, topo.tables.farthest().1));
        }
    }
}
