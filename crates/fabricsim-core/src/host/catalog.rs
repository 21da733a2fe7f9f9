//! What the pieces of a run read of its connections and none changes: which message each
//! carries and where each end's state lies.

use std::sync::Arc;

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
/// shared (each part freed when the last piece lets go of it); a message sent into a running
/// run appends to each part between windows ([`ConnCatalog::append`]).
#[derive(Debug, Clone, Default)]
pub struct ConnCatalog {
    /// The message of each connection ...
    pub(crate) conn_msg: Arc<Vec<u32>>,
    /// ... and, in a run of several pieces, where its state lies (empty in one piece: a
    /// connection's index is its id) ...
    pub(crate) sides: Arc<Vec<Side>>,
    /// ... and where each message's counts lie (`MsgState`, the same way).
    pub(crate) msg_sides: Arc<Vec<Side>>,
}

/// A run's connections as [`ConnCatalog::build`] lays them out (or those of messages added to
/// a running run, [`Layout::after`]).
pub struct Layout {
    pub catalog: ConnCatalog,
    /// Each message's connection ids (consecutive).
    pub ids: Vec<std::ops::Range<u32>>,
    /// For each piece, what each connection it holds carries, in its order (the new ones) ...
    pub bytes: Vec<Vec<u64>>,
    /// ... and how many messages it holds an end of (all of them).
    pub messages: Vec<usize>,
    /// For each host, the bytes on the wire of every data packet sent to it, each once
    /// ([`ConnCatalog::build`]'s; [`Layout::push`] returns a message's).
    pub incoming: Vec<u64>,
    /// The connections each piece held before, and the ids the new messages and connections
    /// start from.
    rows_before: Vec<u32>,
    first: (u32, u32),
}

impl Layout {
    /// The layout of messages added to a run whose pieces (`rows.len()` of them) hold `rows`
    /// connections and `held` messages each, its messages numbered from `first.0` and its
    /// connections from `first.1`.
    pub fn after(rows: Vec<u32>, held: Vec<usize>, first: (u32, u32)) -> Layout {
        Layout {
            catalog: ConnCatalog::default(),
            ids: Vec::new(),
            bytes: vec![Vec::new(); rows.len()],
            messages: held,
            incoming: Vec::new(),
            rows_before: rows,
            first,
        }
    }

    /// Lays out the connections of `spec`'s message, the next one; `cut`: each node's piece
    /// in a run of several. Returns the bytes on the wire of its data packets, each once: what
    /// it sends its destination.
    pub fn push(&mut self, factory: &ConnFactory, spec: &MessageSpec, cut: Option<&[u16]>) -> u64 {
        let cat = &mut self.catalog;
        let (conn_msg, sides, msg_sides) =
            (Arc::make_mut(&mut cat.conn_msg), Arc::make_mut(&mut cat.sides), Arc::make_mut(&mut cat.msg_sides));
        let m = self.first.0 + self.ids.len() as u32;
        // the index of an item with ends in pieces `piece` among those each of them holds
        let place = |count: &mut dyn FnMut(u16) -> u32, piece: [u16; 2]| {
            let first = count(piece[0]);
            Side { at: [first, if piece[1] == piece[0] { first } else { count(piece[1]) }], piece }
        };
        let messages = &mut self.messages;
        match cut {
            Some(home) => {
                let piece = [home[spec.src as usize], home[spec.dst as usize]];
                msg_sides.push(place(&mut |p| (messages[usize::from(p)], messages[usize::from(p)] += 1).0 as u32, piece));
            }
            None => messages[0] += 1,
        }
        let first = self.first.1 + conn_msg.len() as u32;
        if factory.on_scale_up(spec) || spec.is_compute() {
            // no connection, no load balancer: its server's scale-up network carries it, or
            // it is a compute task
            self.ids.push(first..first);
            return 0;
        }
        let mut incoming = 0;
        for share in factory.shares(spec.bytes) {
            conn_msg.push(m);
            incoming += factory.wire_bytes(share);
            let Some(home) = cut else {
                self.bytes[0].push(share);
                continue;
            };
            let piece = [home[spec.src as usize], home[spec.dst as usize]];
            let (bytes, before) = (&mut self.bytes, &self.rows_before);
            sides.push(place(
                &mut |p| {
                    let p = usize::from(p);
                    bytes[p].push(share);
                    before[p] + bytes[p].len() as u32 - 1
                },
                piece,
            ));
        }
        self.ids.push(first..self.first.1 + conn_msg.len() as u32);
        incoming
    }
}

impl ConnCatalog {
    /// The connections of `specs`' messages: every connection in one piece unless `cut`
    /// gives each node's piece and the pieces' count (then a piece holds the connections one
    /// of whose ends is its), over `hosts` hosts.
    pub fn build(factory: &ConnFactory, specs: &[MessageSpec], hosts: usize, cut: Option<(&[u16], usize)>) -> Layout {
        let pieces = cut.map_or(1, |(_, n)| n);
        let mut layout = Layout::after(vec![0; pieces], vec![0; pieces], (0, 0));
        layout.ids.reserve_exact(specs.len());
        let mut incoming = vec![0; hosts];
        for spec in specs {
            incoming[spec.dst as usize] += layout.push(factory, spec, cut.map(|(home, _)| home));
        }
        layout.incoming = incoming;
        layout
    }

    /// Makes room for `messages` messages of `conns` connections (a run of several pieces:
    /// where their ends lie too), without growing again for them.
    pub fn reserve(&mut self, messages: usize, conns: usize, pieces: bool) {
        Arc::make_mut(&mut self.conn_msg).reserve_exact(conns);
        if pieces {
            Arc::make_mut(&mut self.sides).reserve_exact(conns);
            Arc::make_mut(&mut self.msg_sides).reserve_exact(messages);
        }
    }

    /// Appends `more`'s parts (the catalog of messages added to the run, [`Layout::after`]) to
    /// this one's, in place where this is the only holder of each part (the caller takes them
    /// from every other first, `ConnTable::take_catalog`).
    pub fn append(&mut self, more: &ConnCatalog) {
        Arc::make_mut(&mut self.conn_msg).extend_from_slice(&more.conn_msg);
        Arc::make_mut(&mut self.sides).extend_from_slice(&more.sides);
        Arc::make_mut(&mut self.msg_sides).extend_from_slice(&more.msg_sides);
    }
}
