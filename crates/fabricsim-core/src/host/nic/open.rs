//! What a session (`sim::session`) adds to the NICs: messages sent into a running run, and
//! the log of completions it polls.

use std::sync::Arc;

use super::Nics;
use crate::host::message::{Message, MsgState};
use crate::time::Time;

impl Nics {
    /// Counts message `m`'s completion at `now` (and logs it, in a session).
    #[inline]
    pub(super) fn report(&mut self, m: usize, now: Time) {
        self.reported += 1;
        if let Some(log) = &mut self.log {
            log.push((m as u32, now));
        }
    }

    /// Logs each completion from now on, for [`Nics::take_log`].
    pub fn keep_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The completions logged since the last call: (message, when its receiver had it all),
    /// in the order this piece ran them.
    pub fn take_log(&mut self) -> Vec<(u32, Time)> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The messages, taken out (an empty list left): the driver takes every piece's, so
    /// that one holder can append in place, and gives them back ([`Nics::give_messages`]).
    pub fn take_messages(&mut self) -> Arc<Vec<Message>> {
        std::mem::take(&mut self.messages)
    }

    pub fn give_messages(&mut self, messages: Arc<Vec<Message>>) {
        self.messages = messages;
    }

    /// Makes room for a message added to the run (`held`: how many messages this piece now
    /// holds an end of; the new one waits for nothing).
    pub fn add_message(&mut self, held: usize) {
        self.states.resize(held, MsgState::default());
        self.waiting.resize(held, 0);
    }

    /// Makes room for `more` messages this piece will hold an end of, without growing again for
    /// them.
    pub fn reserve(&mut self, more: usize) {
        self.states.reserve_exact(more);
        self.waiting.reserve_exact(more);
    }

    /// When message `m` was released (its source host's count; this piece must hold it).
    pub fn released(&self, m: usize) -> Option<Time> {
        self.states.get(self.conns.msg_at(m, crate::host::table::End::Tx))?.ready()
    }

    /// The connections' table, to add to (see [`crate::host::table::ConnTable::add_rows`]).
    pub fn connections_mut(&mut self) -> &mut crate::host::table::ConnTable {
        &mut self.conns
    }
}
