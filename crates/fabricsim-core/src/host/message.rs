//! A message of the workload as the hosts track it: what it is (its spec and its
//! connections, which every piece of a run shares) and what each end has counted of it.

use crate::time::Time;
use crate::workload::MessageSpec;

/// A message of the workload, carried by one connection or (MPTCP) several, or by its
/// server's scale-up network (no connection).
#[derive(Debug, Clone, Copy)]
pub struct Message {
    pub spec: MessageSpec,
    /// Its connections: `first..first + count` in the flow table.
    pub first: u32,
    pub count: u32,
}

impl Message {
    /// The run's messages, each `specs`' with its connections `ids`: made from the last to the
    /// first while `specs` gives its memory back, then put in order in place, so that the specs
    /// and the messages (40 and 48 bytes a message) never take their memory together.
    pub fn list(specs: &mut Vec<MessageSpec>, ids: &[std::ops::Range<u32>]) -> Vec<Message> {
        const CHUNK: usize = 1 << 16;
        let mut messages = Vec::with_capacity(specs.len());
        while let Some(spec) = specs.pop() {
            let c = &ids[specs.len()];
            messages.push(Message { spec, first: c.start, count: c.len() as u32 });
            if specs.len().is_multiple_of(CHUNK) {
                specs.shrink_to_fit();
            }
        }
        messages.reverse();
        messages
    }

    /// Whether it crosses its server's scale-up network: then it has no connection.
    #[inline]
    pub fn on_scale_up(&self) -> bool {
        self.count == 0 && !self.spec.is_compute()
    }

    pub fn connections(&self) -> std::ops::Range<usize> {
        self.first as usize..(self.first + self.count) as usize
    }
}

impl AsRef<MessageSpec> for Message {
    fn as_ref(&self) -> &MessageSpec {
        &self.spec
    }
}

/// What the ends of a message counted of it: its receiver (`done`), its sender (`acked`,
/// `released`). In a run of several pieces each piece counts its own hosts' part; the parts
/// add up ([`MsgState::merge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgState {
    /// Connections that have received all their bytes (counted by the receiver).
    pub done: u32,
    /// Connections whose sender has every packet acknowledged (counted by the sender).
    pub acked: u32,
    /// When it was released: its start, or (with dependencies) when the last of them
    /// completed plus its delay; `Time::MAX` while it waits (see [`MsgState::ready`]).
    pub released: Time,
}

impl Default for MsgState {
    fn default() -> Self {
        MsgState { done: 0, acked: 0, released: Time::MAX }
    }
}

impl MsgState {
    /// When it was released; `None` while it waits.
    pub fn ready(&self) -> Option<Time> {
        (self.released != Time::MAX).then_some(self.released)
    }

    /// Adds the part another piece counted.
    pub fn merge(&mut self, o: &MsgState) {
        (self.done, self.acked, self.released) = (self.done + o.done, self.acked + o.acked, self.released.min(o.released));
    }
}
