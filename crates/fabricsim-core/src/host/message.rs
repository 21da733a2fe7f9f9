//! A message of the workload as the hosts track it: its spec, its connections, and what each
//! end has counted of it.

use crate::time::Time;
use crate::workload::MessageSpec;

/// A message of the workload, carried by one connection or (MPTCP) several.
#[derive(Debug, Clone, Copy)]
pub struct Message {
    pub spec: MessageSpec,
    /// Its connections: `first..first + count` in the flow table.
    pub first: u32,
    pub count: u32,
    /// Connections that have received all their bytes (counted by the receiver).
    pub done: u32,
    /// Connections whose sender has every packet acknowledged (counted by the sender).
    pub acked: u32,
    /// When it was released: its start, or (with dependencies) when the last of them
    /// completed plus its delay; `Time::MAX` while it waits (see [`Message::ready`]).
    pub released: Time,
}

impl Message {
    /// When it was released; `None` while it waits.
    pub fn ready(&self) -> Option<Time> {
        (self.released != Time::MAX).then_some(self.released)
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
