//! A run cut into pieces: the piece each node belongs to, and where that piece keeps each of
//! its nodes, the ports its nodes send on and the wires they receive on.
//!
//! A piece holds only its own units, indexed locally: its hosts and switches in id order
//! (hosts first, as the topology numbers them), the egress ports of its nodes, and the wires
//! into its nodes (a wire is held by its receiving end). The maps from a global id to a local
//! index are the run's, shared by the pieces ([`Cut`] behind an `Arc`): 10 bytes per node and 8
//! per port for the whole run, where each piece used to hold a copy of every port, wire and
//! host. The units that order events keep their global numbers (the event key); only the
//! counter each unit numbers its events with lives at a local index ([`Cut::units`]).

use std::sync::Arc;

use crate::topology::Topology;

/// How many of each kind a piece holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Share {
    pub hosts: u32,
    pub switches: u32,
    pub ports: u32,
    pub wires: u32,
}

/// The pieces of a run and where each keeps its units.
#[derive(Debug, Clone)]
pub struct Cut {
    /// Per node: its piece, and its index among that piece's nodes of its kind (hosts,
    /// switches).
    home: Arc<[u16]>,
    node: Slots,
    /// Per unit (the two duties of the whole run, then each node): the index of its event
    /// counter in its piece's queue (the duties take 0 and 1 in every piece; a piece's nodes
    /// follow in id order).
    units: Arc<[u32]>,
    /// Per port: its index among the ports its sending node's piece holds, and among the
    /// wires its receiving node's piece holds.
    port: Slots,
    wire: Slots,
    shares: Vec<Share>,
}

/// One of a [`Cut`]'s maps from a global id (a node's, a port's) to where its piece keeps it,
/// shared: a component keeps the one it reads on its hot path as a field of its own.
#[derive(Debug, Clone)]
pub struct Slots(Arc<[u32]>);

impl Slots {
    /// Where the piece of `id` keeps it.
    #[inline]
    pub fn of(&self, id: u32) -> usize {
        self.0[id as usize] as usize
    }
}

/// The units ordered before any node (the fault timeline, the recorders).
const DUTIES: u32 = 2;

impl Cut {
    /// The cut of `topo` that puts node `n` in piece `home[n]` (pieces numbered from 0, none
    /// empty of nodes in between: the partition's).
    pub fn new(topo: &Topology, home: Arc<[u16]>) -> Cut {
        assert_eq!(home.len(), topo.nodes.len(), "a piece for each node");
        let mut shares = vec![Share::default(); Cut::count(&home)];
        let hosts = topo.hosts() as usize;
        let take = |count: &mut u32| {
            *count += 1;
            *count - 1
        };
        let node: Arc<[u32]> = home
            .iter()
            .enumerate()
            .map(|(n, &p)| {
                let s = &mut shares[usize::from(p)];
                take(if n < hosts { &mut s.hosts } else { &mut s.switches })
            })
            .collect();
        // hosts come first in the numbering: a piece's units are its hosts, then its switches
        let units = [0, 1]
            .into_iter()
            .chain(node.iter().enumerate().map(|(n, &i)| {
                let after = if n < hosts { 0 } else { shares[usize::from(home[n])].hosts };
                DUTIES + after + i
            }))
            .collect();
        let port = topo.ports.iter().map(|p| take(&mut shares[usize::from(home[p.from as usize])].ports)).collect();
        let wire = topo.ports.iter().map(|p| take(&mut shares[usize::from(home[p.to as usize])].wires)).collect();
        let (node, port, wire) = (Slots(node), Slots(port), Slots(wire));
        Cut { home, node, units, port, wire, shares }
    }

    /// The pieces a cut makes: one more than the highest piece a node is given.
    pub fn count(home: &[u16]) -> usize {
        home.iter().max().map_or(1, |&p| usize::from(p) + 1)
    }

    /// One piece holding everything.
    pub fn whole(topo: &Topology) -> Cut {
        Cut::new(topo, vec![0; topo.nodes.len()].into())
    }

    pub fn pieces(&self) -> usize {
        self.shares.len()
    }

    /// The piece of each node.
    pub fn homes(&self) -> &Arc<[u16]> {
        &self.home
    }

    /// The piece of `node`.
    #[inline]
    pub fn home(&self, node: u32) -> u16 {
        self.home[node as usize]
    }

    /// What piece `me` holds.
    pub fn share(&self, me: u16) -> Share {
        self.shares[usize::from(me)]
    }

    /// Per unit, the index of its event counter in its piece's queue.
    pub fn units(&self) -> &Arc<[u32]> {
        &self.units
    }

    /// Where `host`'s piece keeps it (among that piece's hosts).
    #[inline]
    pub fn host(&self, host: u32) -> usize {
        self.node.of(host)
    }

    /// Where switch node `node`'s piece keeps it (among that piece's switches).
    #[inline]
    pub fn switch(&self, node: u32) -> usize {
        self.node.of(node)
    }

    /// Where the piece of `port`'s sending node keeps the port.
    #[inline]
    pub fn port(&self, port: u32) -> usize {
        self.port.of(port)
    }

    /// Where the piece of `port`'s receiving node keeps its wire.
    #[inline]
    pub fn wire(&self, port: u32) -> usize {
        self.wire.of(port)
    }

    /// Where a piece keeps the host whose unit's counter is at `unit_at` (its hosts' counters
    /// come first, after the duties', in the order it keeps them).
    #[inline]
    pub fn host_at(unit_at: u32) -> usize {
        (unit_at - DUTIES) as usize
    }

    /// Where each node's piece keeps it among its kind ([`Cut::host`], [`Cut::switch`]).
    pub fn nodes(&self) -> &Slots {
        &self.node
    }

    /// Where each port's sending piece keeps it ([`Cut::port`]).
    pub fn ports(&self) -> &Slots {
        &self.port
    }

    /// Bytes of the maps, for the memory estimate: per node and per port.
    pub const BYTES_PER_NODE: u64 = 10;
    pub const BYTES_PER_PORT: u64 = 8;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::tree;

    #[test]
    fn every_unit_port_and_wire_has_one_local_index_in_its_piece() {
        let topo = tree(2, 64, 16, 1, false);
        let home: Vec<u16> = (0..topo.nodes.len()).map(|n| (n * 7 % 3) as u16).collect();
        let cut = Cut::new(&topo, home.clone().into());
        assert_eq!(cut.pieces(), 3);
        for me in 0..3u16 {
            let share = cut.share(me);
            let mine = |n: u32| home[n as usize] == me;
            let hosts: Vec<usize> = (0..topo.hosts()).filter(|&h| mine(h)).map(|h| cut.host(h)).collect();
            let switches: Vec<usize> = (topo.hosts()..topo.nodes.len() as u32).filter(|&s| mine(s)).map(|s| cut.switch(s)).collect();
            let ports: Vec<usize> =
                (0..topo.ports.len() as u32).filter(|&p| mine(topo.ports[p as usize].from)).map(|p| cut.port(p)).collect();
            let wires: Vec<usize> =
                (0..topo.ports.len() as u32).filter(|&p| mine(topo.ports[p as usize].to)).map(|p| cut.wire(p)).collect();
            // in id order, 0, 1, 2, ... within the piece
            for (v, n) in [(hosts, share.hosts), (switches, share.switches), (ports, share.ports), (wires, share.wires)] {
                assert_eq!(v, (0..n as usize).collect::<Vec<_>>());
            }
            let units: Vec<u32> = (0..topo.nodes.len() as u32).filter(|&n| mine(n)).map(|n| cut.units()[n as usize + 2]).collect();
            assert_eq!(units, (2..2 + share.hosts + share.switches).collect::<Vec<_>>());
        }
        let whole = Cut::whole(&topo);
        assert!((0..topo.ports.len() as u32).all(|p| whole.port(p) == p as usize && whole.wire(p) == p as usize));
    }
}
