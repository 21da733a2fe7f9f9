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
    /// A priority flow control frame (`switch.overflow = "pfc"`): from a switch to the far end
    /// of one of its links, consumed there; `class` the priority, `conn` the global id of the
    /// port it pauses (`psn` 1) or resumes (`psn` 0).
    Pfc,
}

/// A packet: a fixed header every kind has, and a small extension whose meaning its kind
/// declares ([`Extension`]: [`DataExt`] for data, [`AckExt`] for ACKs; NACKs and CNPs carry
/// none). A kind that needs one more field adds it to its own extension, within three words,
/// and no other kind grows (a test holds the packet at 48 bytes).
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
    /// Non-minimal routing (a dragonfly's Valiant or UGAL, `topology::detour`): the
    /// destination class (edge switch) the packet is routed to first, [`UNDECIDED`] until its
    /// first switch decides, [`DIRECT`] once it heads for its destination.
    pub via: u32,
    /// What its kind carries beyond the header ([`Packet::ext`], [`Packet::with`]).
    pub ext: Ext,
}

/// The extension's words: what one kind of packet carries beyond the header, read and
/// written only through that kind's [`Extension`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ext([u32; 3]);

impl Ext {
    /// Its three words, as a packet that crosses to another process carries them
    /// (`sim::ranks`).
    pub fn words(self) -> [u32; 3] {
        self.0
    }

    /// The extension of these words (what [`Ext::words`] gave).
    pub fn from_words(words: [u32; 3]) -> Ext {
        Ext(words)
    }
}

/// A kind's extension: its fields, and how they sit in the extension's three words.
pub trait Extension: Sized {
    /// The kind whose packets carry it.
    const KIND: Kind;
    fn read(words: [u32; 3]) -> Self;
    fn write(&self) -> [u32; 3];
}

/// What a data packet carries beyond the header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataExt {
    /// Its sender asks for an ACK at once (`transport.ack_request`, Ultra Ethernet's AR flag).
    pub ack_request: bool,
}

impl Extension for DataExt {
    const KIND: Kind = Kind::Data;
    #[inline]
    fn read(w: [u32; 3]) -> Self {
        DataExt { ack_request: w[0] & 1 != 0 }
    }
    #[inline]
    fn write(&self) -> [u32; 3] {
        [u32::from(self.ack_request), 0, 0]
    }
}

/// What an ACK carries beyond the header (docs/model.md, "What an ACK carries").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckExt {
    /// The cumulative PSN: every PSN below it was received.
    pub cum: u32,
    /// The selective bitmap: which PSNs it covers.
    pub sack: u64,
}

impl Extension for AckExt {
    const KIND: Kind = Kind::Ack;
    #[inline]
    fn read(w: [u32; 3]) -> Self {
        AckExt { cum: w[0], sack: u64::from(w[1]) | u64::from(w[2]) << 32 }
    }
    #[inline]
    fn write(&self) -> [u32; 3] {
        [self.cum, self.sack as u32, (self.sack >> 32) as u32]
    }
}

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
            via: UNDECIDED,
            ext: Ext::default(),
        }
    }

    /// Data packet `psn` of connection `conn` (queue pair `flow`, class `class`) from host `src`
    /// to host `dst` on entropy `ev`, `size` bytes on the wire.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn data(conn: u32, flow: u32, class: u8, psn: u32, ev: Ev, (src, dst): (u32, u32), size: u16, ext: DataExt) -> Packet {
        Packet { class, flow, psn, ev, ..Packet::control(Kind::Data, conn, src, dst, size) }.with(ext)
    }

    /// A control packet answering this one from host `from` back to its source: the same
    /// connection, echoing its PSN and EV, unmarked; the caller sets what it reports.
    #[inline]
    pub fn reply(&self, kind: Kind, from: u32, size: u16) -> Packet {
        Packet { psn: self.psn, ev: self.ev, flow: self.flow, ..Packet::control(kind, self.conn, from, self.src, size) }
    }

    /// The ACK of this data packet from its receiver `from` (`size` bytes): its PSN, EV and
    /// ECN mark echoed, with what the receiver reports of the connection (its cumulative PSN
    /// and selective field). The one place an ACK is made: a field a congestion control needs
    /// echoed goes here, and into [`AckExt`].
    #[inline]
    pub fn ack(&self, from: u32, size: u16, (cum, sack): (u32, u64)) -> Packet {
        Packet { ecn: self.ecn, ..self.reply(Kind::Ack, from, size) }.with(AckExt { cum, sack })
    }

    /// The extension of this packet's kind (`E::KIND`; another kind's reads as its default).
    #[inline]
    pub fn ext<E: Extension + Default>(&self) -> E {
        if self.kind == E::KIND {
            E::read(self.ext.0)
        } else {
            E::default()
        }
    }

    /// This packet with `ext` as its extension (of its kind, `E::KIND`).
    #[inline]
    pub fn with<E: Extension>(mut self, ext: E) -> Packet {
        debug_assert_eq!(self.kind, E::KIND, "an extension of another kind");
        self.ext = Ext(ext.write());
        self
    }

    /// A data packet whose sender asks for an ACK at once.
    #[inline]
    pub fn asks_ack(&self) -> bool {
        self.ext::<DataExt>().ack_request
    }

    /// ACK, NACK, CNP and trimmed headers use the strict-priority control class.
    #[inline]
    pub fn is_control(&self) -> bool {
        self.kind != Kind::Data || self.trimmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size the module's documentation states (and the memory estimate's per-packet cost).
    #[test]
    fn a_packet_is_48_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 48);
    }

    #[test]
    fn each_kind_reads_back_its_own_extension_and_no_other() {
        let ack = AckExt { cum: 7, sack: 0xdead_beef_0000_0001 };
        let p = Packet::control(Kind::Ack, 1, 2, 3, 64).with(ack);
        assert_eq!(p.ext::<AckExt>(), ack);
        assert_eq!(p.ext::<DataExt>(), DataExt::default(), "an ACK carries no data extension");
        let d = Packet::data(1, 1, 0, 5, 9, (3, 2), 4160, DataExt { ack_request: true });
        assert!(d.asks_ack() && d.ext::<AckExt>() == AckExt::default());
        assert!(!Packet::data(1, 1, 0, 5, 9, (3, 2), 4160, DataExt::default()).asks_ack());
    }
}
