//! Packets are small `Copy` values (48 bytes, checked by a test) carried by value through the ring buffers of
//! the egress queues and link pipes: no per-packet allocation once the rings have grown, and
//! no pointer chasing. (A pool with indices, as DESIGN.md first proposed, spent over half of
//! the run waiting on cache misses: ~200 000 packets in flight do not fit in cache, while a
//! port's ring is read sequentially. See docs/performance.md.)

pub mod mp_ev;

/// An entropy value: the part of the packet header a switch hashes besides the 5-tuple (the
/// host load balancer picks it per packet).
pub type Ev = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A data packet (possibly trimmed to its header).
    Data,
    Ack,
    Nack,
    /// A congestion notification packet (DCQCN), receiver to sender.
    Cnp,
}

#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub kind: Kind,
    /// Trimmed to a header by a switch; travels in the control class.
    pub trimmed: bool,
    /// ECN Congestion Experienced (on data); echoed ECN (on ACK).
    pub ecn: bool,
    /// Data class (switch queue) of the packet's flow.
    pub class: u8,
    /// Path id stamped by the switches going up (the up-port index at each tier, mixed
    /// radix), for path-ID-assisted loss detection at the receiver.
    pub path: u16,
    /// Wire size in bytes (at most 65000: `transport.mtu`).
    pub size: u16,
    /// The connection the packet belongs to.
    pub conn: u32,
    /// The queue pair it travels on, which the switches hash as the UDP source port: its
    /// connection's id, or (`transport.connections = "per_pair"`) the id of the first
    /// connection of its pair of hosts, so that a pair's messages hash alike.
    pub flow: u32,
    pub psn: u32,
    pub ev: Ev,
    /// This packet's own source and destination hosts (an ACK goes receiver -> sender).
    pub src: u32,
    pub dst: u32,
    /// ACK: the cumulative PSN (every PSN below it was received). Data, which carries none:
    /// [`ACK_REQUEST`] where the sender asks for an ACK at once, else 0.
    pub cum: u32,
    /// ACK: the selective bitmap (which PSNs it covers: docs/model.md, "What an ACK carries").
    pub sack: u64,
    /// Non-minimal routing (a dragonfly's Valiant or UGAL, `topology::detour`): the
    /// destination class (edge switch) the packet is routed to first, [`UNDECIDED`] until its
    /// first switch decides, [`DIRECT`] once it heads for its destination.
    pub via: u32,
}

/// [`Packet::cum`] of a data packet whose sender asks for an ACK at once
/// (`transport.ack_request`, Ultra Ethernet's AR flag): the field is free on data, and a flag of
/// its own would grow the packet past 48 bytes.
pub const ACK_REQUEST: u32 = 1;

/// [`Packet::via`] before the packet's first switch has decided.
pub const UNDECIDED: u32 = u32::MAX;
/// [`Packet::via`] of a packet routed to its destination.
pub const DIRECT: u32 = u32::MAX - 1;

impl Packet {
    /// A control packet (ACK, NACK, CNP) of connection `conn` from host `src` to host `dst`,
    /// `size` bytes (the transport's header); the caller sets what it reports.
    #[inline]
    pub fn control(kind: Kind, conn: u32, src: u32, dst: u32, size: u16) -> Packet {
        Packet {
            kind,
            trimmed: false,
            ecn: false,
            class: 0,
            path: 0,
            size,
            conn,
            flow: conn,
            psn: 0,
            ev: 0,
            src,
            dst,
            cum: 0,
            sack: 0,
            via: UNDECIDED,
        }
    }

    /// A control packet answering this one from host `from` back to its source: the same
    /// connection, echoing its PSN and EV, unmarked; the caller sets what it reports.
    #[inline]
    pub fn reply(&self, kind: Kind, from: u32, size: u16) -> Packet {
        Packet { psn: self.psn, ev: self.ev, flow: self.flow, ..Packet::control(kind, self.conn, from, self.src, size) }
    }

    /// A data packet whose sender asks for an ACK at once ([`ACK_REQUEST`]).
    #[inline]
    pub fn asks_ack(&self) -> bool {
        self.kind == Kind::Data && self.cum == ACK_REQUEST
    }

    /// ACK, NACK, CNP and trimmed headers use the strict-priority control class.
    #[inline]
    pub fn is_control(&self) -> bool {
        self.kind != Kind::Data || self.trimmed
    }
}

#[cfg(test)]
mod tests {
    /// The size the module's documentation states (and the memory estimate's per-packet cost).
    #[test]
    fn a_packet_is_48_bytes() {
        assert_eq!(std::mem::size_of::<super::Packet>(), 48);
    }
}
