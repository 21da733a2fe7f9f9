//! What the driver and the results read of a piece's NICs (and free once read).

use std::sync::Arc;

use super::Nics;
use crate::host::message::{Message, MsgState};
use crate::host::table::ConnTable;
use crate::packet::Ev;
use crate::workload::MessageSpec;

impl Nics {
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// What this piece's hosts counted of the messages they send or receive (indexed by
    /// [`ConnTable::msg_at`]).
    pub fn states(&self) -> &[MsgState] {
        &self.states
    }

    pub fn connections(&self) -> &ConnTable {
        &self.conns
    }

    /// Sets what this piece's hosts counted of the messages, as the process that ran them told
    /// (a run across ranks: `sim::ranks`).
    pub fn set_states(&mut self, states: Vec<MsgState>) {
        debug_assert!(self.states.is_empty() || states.len() == self.states.len(), "this piece's states, or a hollow one's");
        self.states = states;
    }

    /// Frees what only a running simulation needs and no result reads: the dependency lists.
    pub fn free_schedule(&mut self) {
        self.dependents = Arc::default();
        self.more = Arc::default();
        self.waiting = Vec::new();
    }

    /// Takes what this piece's hosts counted of the messages ([`Nics::states`]), leaving none:
    /// a run of one piece hands its counts to the results instead of copying them.
    pub fn take_states(&mut self) -> Vec<MsgState> {
        std::mem::take(&mut self.states)
    }

    /// Lets go of the messages, once the results have read them.
    pub fn free_messages(&mut self) {
        (self.messages, self.states) = (Arc::default(), Vec::new());
    }

    /// Takes the connections' table, leaving an empty one (the results read it while it
    /// gives its rows back: [`ConnTable::give_back_rows`]).
    pub fn take_connections(&mut self) -> ConnTable {
        let empty = self.conns.emptied();
        std::mem::replace(&mut self.conns, empty)
    }

    /// Frees every connection's state and row, once the results have read them.
    pub fn free_connections(&mut self) {
        self.conns.free_all();
    }

    /// The source and destination hosts of connection `c`.
    #[inline]
    pub fn ends(&self, c: u32) -> (u32, u32) {
        let spec = &self.message_of(c).spec;
        (spec.src, spec.dst)
    }

    /// The message spec of the message connection `c` carries (part of), if it exists.
    pub fn conn_spec(&self, c: u32) -> Option<MessageSpec> {
        ((c as usize) < self.conns.len()).then(|| self.message_of(c).spec)
    }

    /// The EV every packet of connection `c` gets, for load balancers that use one (`None`
    /// also for an id beyond the run's connections).
    pub fn fixed_ev(&self, c: u32) -> Option<Ev> {
        if c as usize >= self.conns.len() {
            return None;
        }
        let msg = self.message_of(c);
        self.conns.fixed_ev(c, msg.first, &msg.spec)
    }

    /// The queue pair connection `c` travels on (`Packet::flow`): itself, or under `per_pair`
    /// its pair's first connection (as far as this piece, its source's, knows).
    pub fn flow_of(&self, c: u32) -> u32 {
        let msg = self.message_of(c);
        self.conns.flow_of(c, &msg.spec)
    }

    /// Completions the hosts reported so far (equal to the sum of the hosts' [`super::Host::done`];
    /// one read per event for the driver's stop test).
    #[inline]
    pub fn reported(&self) -> u32 {
        self.reported
    }
}
