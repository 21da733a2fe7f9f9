//! What the results read of a connection table: each connection's row (its stored part and
//! its live halves' counts), its reorder histogram, and the rows given back as they are read.

use super::{ConnRow, ConnTable, Stored, Told, NEVER, RX_DONE, WIDE};
use crate::host::connection::{ConnStats, REORDER_BUCKETS};

impl ConnTable {
    /// Connection `c`'s results so far, as far as this piece holds them (its ends' parts;
    /// nothing of a connection neither of whose ends it holds: zeros).
    pub fn row(&self, c: u32) -> ConnRow {
        let Some(at) = self.held(c) else {
            return ConnRow { n_pkts: 0, max_reorder: 0, first_send: NEVER, end: NEVER, delivered_bytes: 0, stats: ConnStats::default() };
        };
        self.row_at(at)
    }

    /// The row this table keeps at `at` (what [`ConnTable::row`] reads of a connection it
    /// holds).
    pub fn row_at(&self, at: usize) -> ConnRow {
        if let Some(told) = &self.told {
            return told.rows[at].clone();
        }
        let r = &self.rows[at];
        let mut row = ConnRow {
            n_pkts: self.factory.packets(r.bytes),
            max_reorder: r.max_reorder,
            first_send: r.first_send,
            end: r.end,
            delivered_bytes: if r.flags & RX_DONE != 0 { r.bytes } else { 0 },
            stats: if r.flags & WIDE != 0 { self.wide[&(at as u32)].clone() } else { Stored::widen(&r.counts) },
        };
        if let Some(tx) = self.senders.get(self.tx_slot[at] as usize) {
            row.first_send = tx.tx.first_send.unwrap_or(NEVER);
            row.stats.add(&tx.stats);
        }
        if let Some(rx) = self.receivers.get(self.rx_slot[at] as usize) {
            (row.max_reorder, row.end, row.delivered_bytes) = (rx.rx.max_reorder, rx.rx.end.unwrap_or(NEVER), rx.rx.delivered_bytes);
            row.stats.add(&rx.stats);
        }
        row
    }

    /// Adds connection `c`'s reorder histogram to `hist` (if this piece holds its receiver).
    pub fn add_reorder(&self, c: u32, hist: &mut [u64; REORDER_BUCKETS]) {
        let Some(at) = self.held(c) else { return };
        self.add_reorder_at(at, hist);
    }

    /// [`ConnTable::add_reorder`] of the row at `at`.
    pub fn add_reorder_at(&self, at: usize, hist: &mut [u64; REORDER_BUCKETS]) {
        if let Some(told) = &self.told {
            for &e in &told.reorder[at] {
                hist[(e >> 56) as usize] += e & ((1 << 56) - 1);
            }
            return;
        }
        match self.receivers.get(self.rx_slot[at] as usize) {
            Some(half) => {
                for (h, n) in hist.iter_mut().zip(&half.rx.reorder_hist) {
                    *h += n;
                }
            }
            None => {
                let r = &self.rows[at];
                let from = r.reorder_at as usize;
                for &e in &self.reorder[from..from + r.reorder_len as usize] {
                    hist[(e >> 56) as usize] += e & ((1 << 56) - 1);
                }
            }
        }
    }

    /// The rows a reorder table of these connections takes at most: a bucket that is not
    /// empty of each connection (messages of several subflows merge theirs: fewer).
    pub fn reorder_entries(&self) -> usize {
        if let Some(told) = &self.told {
            return told.reorder.iter().map(Vec::len).sum();
        }
        let live = self.receivers.iter().map(|(_, h)| h.rx.reorder_hist.iter().filter(|&&n| n > 0).count());
        self.reorder.len() + live.sum::<usize>()
    }

    /// The rows this table keeps (its connections' ends in this piece).
    pub fn held_rows(&self) -> usize {
        self.told.as_ref().map_or(self.rows.len(), |t| t.rows.len())
    }

    /// What the process that ran this piece told of its connections, read from now on instead
    /// of this table's rows (a run across ranks: `sim::ranks`).
    pub fn tell(&mut self, told: Told) {
        debug_assert!(self.rows.is_empty() || told.rows.len() == self.rows.len(), "the rows of this piece, or of a hollow one");
        self.told = Some(Box::new(told));
    }

    /// Frees the complete receivers' reorder histograms, once the results have read them
    /// (their rows read none afterwards).
    pub fn free_reorder(&mut self) {
        self.reorder = Vec::new();
    }

    /// Gives back the rows of connections `len..` (a run of one piece, read from its last
    /// connection to its first by the results): their memory returns to the system a chunk at
    /// a time while the results' columns grow.
    pub fn give_back_rows(&mut self, len: usize) {
        const CHUNK: usize = 1 << 16;
        debug_assert!(self.catalog.sides.is_empty(), "a run of one piece: a connection's index is its id");
        if len >= self.rows.len() {
            return;
        }
        self.rows.truncate(len);
        self.tx_slot.truncate(len);
        self.rx_slot.truncate(len);
        self.cnp.truncate(len);
        if self.rows.capacity() - len >= CHUNK {
            self.rows.shrink_to_fit();
            self.tx_slot.shrink_to_fit();
            self.rx_slot.shrink_to_fit();
            self.cnp.shrink_to_fit();
        }
    }
}
