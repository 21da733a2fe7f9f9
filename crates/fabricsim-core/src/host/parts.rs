//! A run's connections as the pieces of a run hold them: each half in the piece of its host,
//! each piece's stored rows with the counts of its own ends (a connection's row in a piece
//! that holds neither end is zeros). [`ConnParts`] reads them as one table: a row is the
//! merge of the pieces' rows.

use crate::host::connection::REORDER_BUCKETS;
use crate::host::table::{ConnRow, ConnTable};
use crate::workload::MessageSpec;

/// The connection tables of a run's pieces (one, when it is not cut).
pub struct ConnParts<'a> {
    parts: Vec<&'a ConnTable>,
}

impl<'a> ConnParts<'a> {
    /// At least one table, all of the same run.
    pub fn new(parts: Vec<&'a ConnTable>) -> ConnParts<'a> {
        debug_assert!(!parts.is_empty() && parts.iter().all(|t| t.len() == parts[0].len()));
        ConnParts { parts }
    }

    /// Connections in the run.
    pub fn len(&self) -> usize {
        self.parts[0].len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The message connection `c` carries (part of).
    pub fn message_of(&self, c: u32) -> u32 {
        self.parts[0].message_of(c)
    }

    /// Connection `c`'s results so far: its sender's part and its receiver's.
    pub fn row(&self, c: u32) -> ConnRow {
        let mut row = self.parts[0].row(c);
        for t in &self.parts[1..] {
            row.merge(&t.row(c));
        }
        row
    }

    /// Adds connection `c`'s reorder histogram (its receiver's) to `hist`.
    pub fn add_reorder(&self, c: u32, hist: &mut [u64; REORDER_BUCKETS]) {
        for t in &self.parts {
            t.add_reorder(c, hist);
        }
    }

    /// See [`ConnTable::reorder_entries`].
    pub fn reorder_entries(&self) -> usize {
        self.parts.iter().map(|t| t.reorder_entries()).sum()
    }

    /// See [`ConnTable::lb_state_bytes`] (every piece can rebuild a message's load balancers).
    pub fn lb_state_bytes(&self, m: u32, spec: &MessageSpec) -> u64 {
        self.parts[0].lb_state_bytes(m, spec)
    }
}
