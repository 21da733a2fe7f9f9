//! What the driver and the results read of a piece's NICs (and free once read).

use std::sync::Arc;

use super::state::HostState;
use super::{NicCounts, Nics};
use crate::engine::watchdog::Activity;
use crate::host::message::{Message, MsgState};
use crate::host::table::ConnTable;
use crate::packet::Ev;
use crate::workload::MessageSpec;

impl Nics {
    /// How many hosts this piece holds.
    pub fn held(&self) -> usize {
        self.hosts.len()
    }

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

    /// Frees what only a running simulation needs and no result reads: the hosts' schedulers
    /// and the dependency lists.
    pub fn free_schedule(&mut self) {
        self.dependents = Arc::default();
        self.waiting = Vec::new();
        for h in &mut self.hosts {
            h.active = Vec::new();
        }
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

    /// Messages completed: the hosts' counts, summed.
    pub fn messages_done(&self) -> u32 {
        self.hosts.iter().map(|h| h.done).sum()
    }

    /// Completions the hosts reported so far (equal to [`Nics::messages_done`]; one read per
    /// event for the driver's stop test).
    #[inline]
    pub fn reported(&self) -> u32 {
        self.reported
    }

    /// Bytes on the wire of the data packets `host` has not received yet (each once): it cannot
    /// complete its last message before they crossed its link.
    pub fn missing(&self, host: u32) -> u64 {
        let h = &self.hosts[self.slot.of(host)];
        h.incoming - h.progress_bytes
    }

    /// What the no-progress guard reads, summed over the hosts.
    pub fn activity(&self) -> Activity {
        let of = |h: &HostState| Activity {
            progress: h.progress,
            starts: h.pending.into(),
            notices_sent: h.notices_sent,
            notices_taken: h.notices_taken,
            up_sent: h.up_sent,
            up_done: h.up_done,
        };
        self.hosts.iter().map(of).fold(Activity::default(), |a, b| a + b)
    }

    /// Data packets by fate at the hosts, summed over them.
    pub fn counts(&self) -> NicCounts {
        self.hosts.iter().fold(NicCounts::default(), |a, h| NicCounts {
            data_sent: a.data_sent + h.counts.data_sent,
            data_delivered: a.data_delivered + h.counts.data_delivered,
            headers_delivered: a.headers_delivered + h.counts.headers_delivered,
        })
    }
}
