//! What the pieces of a run read of its connections and none changes: which message each
//! carries, the streams its load balancers draw from, and where each end's state lies.

use std::sync::Arc;

use crate::engine::rng::Rng;
use crate::host::factory::ConnFactory;
use crate::workload::MessageSpec;

/// Which end of a connection: the sending half's (its source host) or the receiving half's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Tx = 0,
    Rx = 1,
}

/// Where a connection's state lies in a run of several pieces: the piece of each end
/// (source, destination) and the connection's index among those that piece holds (the same
/// index when one piece holds both ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side {
    pub at: [u32; 2],
    pub piece: [u16; 2],
}

/// What the pieces of a run read of its connections and none changes, built once and
/// shared (each part freed when the last piece lets go of it).
#[derive(Debug, Clone, Default)]
pub struct ConnCatalog {
    /// The message of each connection ...
    pub(crate) conn_msg: Arc<[u32]>,
    /// ... its source host's stream as the message's load balancers draw from it (one per
    /// message) ...
    pub(crate) seeds: Arc<[Rng]>,
    /// ... and, in a run of several pieces, where its state lies (empty in one piece: a
    /// connection's index is its id) ...
    pub(crate) sides: Arc<[Side]>,
    /// ... and where each message's counts lie (`MsgState`, the same way).
    pub(crate) msg_sides: Arc<[Side]>,
}

/// A run's connections as [`ConnCatalog::build`] lays them out.
pub struct Layout {
    pub catalog: ConnCatalog,
    /// Each message's connection ids (consecutive).
    pub ids: Vec<std::ops::Range<u32>>,
    /// For each piece, what each connection it holds carries, in its order ...
    pub bytes: Vec<Vec<u64>>,
    /// ... and how many messages it holds an end of.
    pub messages: Vec<usize>,
    /// For each host, the bytes on the wire of every data packet sent to it, each once.
    pub incoming: Vec<u64>,
}

impl ConnCatalog {
    /// The connections of `specs`' messages: every connection in one piece unless `cut`
    /// gives each node's piece and the pieces' count (then a piece holds the connections one
    /// of whose ends is its). The messages' load balancers draw from their source host's
    /// stream in `rngs` (one per host), advanced past them.
    pub fn build(factory: &ConnFactory, specs: &[MessageSpec], rngs: &mut [Rng], cut: Option<(&[u16], usize)>) -> Layout {
        let (mut conn_msg, mut seeds, mut sides, mut msg_sides) = (Vec::new(), Vec::with_capacity(specs.len()), Vec::new(), Vec::new());
        let mut ids = Vec::with_capacity(specs.len());
        let mut bytes: Vec<Vec<u64>> = vec![Vec::new(); cut.map_or(1, |(_, n)| n)];
        let mut messages = vec![0; bytes.len()];
        // the index of an item with ends in pieces `piece` among those each of them holds
        let place = |count: &mut dyn FnMut(u16) -> u32, piece: [u16; 2]| {
            let first = count(piece[0]);
            Side { at: [first, if piece[1] == piece[0] { first } else { count(piece[1]) }], piece }
        };
        let mut incoming = vec![0; rngs.len()];
        for (m, spec) in specs.iter().enumerate() {
            if let Some((home, _)) = cut {
                let piece = [home[spec.src as usize], home[spec.dst as usize]];
                msg_sides.push(place(&mut |p| (messages[usize::from(p)], messages[usize::from(p)] += 1).0 as u32, piece));
            }
            let rng = &mut rngs[spec.src as usize];
            seeds.push(rng.clone());
            let first = conn_msg.len() as u32;
            if factory.on_scale_up(spec) || spec.is_compute() {
                // no connection, no load balancer: its server's scale-up network carries it, or
                // it is a compute task
                ids.push(first..first);
                continue;
            }
            factory.draw(spec, rng);
            for share in factory.shares(spec.bytes) {
                conn_msg.push(m as u32);
                incoming[spec.dst as usize] += factory.wire_bytes(share);
                let Some((home, _)) = cut else {
                    bytes[0].push(share);
                    continue;
                };
                let piece = [home[spec.src as usize], home[spec.dst as usize]];
                sides.push(place(
                    &mut |p| {
                        bytes[usize::from(p)].push(share);
                        bytes[usize::from(p)].len() as u32 - 1
                    },
                    piece,
                ));
            }
            ids.push(first..conn_msg.len() as u32);
        }
        if cut.is_none() {
            messages[0] = specs.len();
        }
        let catalog = ConnCatalog { conn_msg: conn_msg.into(), seeds: seeds.into(), sides: sides.into(), msg_sides: msg_sides.into() };
        Layout { catalog, ids, bytes, messages, incoming }
    }
}
