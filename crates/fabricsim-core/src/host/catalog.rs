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
    /// connection's index is its id).
    pub(crate) sides: Arc<[Side]>,
}

/// A run's connections as [`ConnCatalog::build`] lays them out.
pub struct Layout {
    pub catalog: ConnCatalog,
    /// Each message's connection ids (consecutive).
    pub ids: Vec<std::ops::Range<u32>>,
    /// For each piece, what each connection it holds carries, in its order.
    pub bytes: Vec<Vec<u64>>,
    /// For each host, the bytes on the wire of every data packet sent to it, each once.
    pub incoming: Vec<u64>,
}

impl ConnCatalog {
    /// The connections of `specs`' messages: every connection in one piece unless `cut`
    /// gives each node's piece and the pieces' count (then a piece holds the connections one
    /// of whose ends is its). The messages' load balancers draw from their source host's
    /// stream in `rngs` (one per host), advanced past them.
    pub fn build(factory: &ConnFactory, specs: &[MessageSpec], rngs: &mut [Rng], cut: Option<(&[u16], usize)>) -> Layout {
        let (mut conn_msg, mut seeds, mut sides) = (Vec::new(), Vec::with_capacity(specs.len()), Vec::new());
        let mut ids = Vec::with_capacity(specs.len());
        let mut bytes: Vec<Vec<u64>> = vec![Vec::new(); cut.map_or(1, |(_, n)| n)];
        let mut incoming = vec![0; rngs.len()];
        for (m, spec) in specs.iter().enumerate() {
            let rng = &mut rngs[spec.src as usize];
            seeds.push(rng.clone());
            factory.draw(spec, rng);
            let first = conn_msg.len() as u32;
            for share in factory.shares(spec.bytes) {
                conn_msg.push(m as u32);
                incoming[spec.dst as usize] += factory.wire_bytes(share);
                let Some((home, _)) = cut else {
                    bytes[0].push(share);
                    continue;
                };
                let piece = [home[spec.src as usize], home[spec.dst as usize]];
                let mut at = [0; 2];
                for (end, &p) in piece.iter().enumerate() {
                    if end == 1 && p == piece[0] {
                        at[1] = at[0];
                        continue;
                    }
                    at[end] = bytes[usize::from(p)].len() as u32;
                    bytes[usize::from(p)].push(share);
                }
                sides.push(Side { at, piece });
            }
            ids.push(first..conn_msg.len() as u32);
        }
        let catalog = ConnCatalog { conn_msg: conn_msg.into(), seeds: seeds.into(), sides: sides.into() };
        Layout { catalog, ids, bytes, incoming }
    }
}
