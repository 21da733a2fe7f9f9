//! Connections added to a running run (messages sent into it, `sim::session`): their rows
//! and the catalog's new entries, appended between windows.

use super::{ConnCatalog, ConnTable, Stored, NONE};
use crate::host::cc::dcqcn::Notifier;

impl ConnTable {
    /// This piece's share of the catalog, taken out (an empty one left): the driver takes
    /// every piece's, so that one holder can append in place ([`ConnCatalog::append`]), and
    /// gives it back ([`ConnTable::give_catalog`]).
    pub fn take_catalog(&mut self) -> ConnCatalog {
        std::mem::take(&mut self.catalog)
    }

    /// Gives the catalog back (see [`ConnTable::take_catalog`]).
    pub fn give_catalog(&mut self, catalog: ConnCatalog) {
        self.catalog = catalog;
    }

    /// Adds the rows of connections this piece now holds an end of, carrying `bytes` each,
    /// pending (in the order [`crate::host::table::Layout::push`] placed them).
    pub fn add_rows(&mut self, bytes: &[u64]) {
        let n = self.rows.len() + bytes.len();
        self.tx_slot.resize(n, NONE);
        self.rx_slot.resize(n, NONE);
        self.rows.extend(bytes.iter().map(|&b| Stored::pending(b)));
        if !self.cnp.is_empty() {
            self.cnp.resize(n, Notifier::default());
        }
    }

    /// Makes room for `more` connections without growing again for them.
    pub fn reserve(&mut self, more: usize) {
        self.tx_slot.reserve_exact(more);
        self.rx_slot.reserve_exact(more);
        self.rows.reserve_exact(more);
    }

    /// Connections this piece holds an end of.
    pub fn rows_held(&self) -> u32 {
        self.rows.len() as u32
    }
}

impl ConnTable {
    /// What builds the connections of a message.
    pub fn factory(&self) -> &crate::host::factory::ConnFactory {
        &self.factory
    }
}
