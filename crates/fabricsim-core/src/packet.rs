//! Packets live in a pool and are referred to by `u32` indices: no per-packet allocation in
//! the hot loop once the pool has grown to the fabric's in-flight high-water mark.

use crate::lb::Ev;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A data packet (possibly trimmed to its header).
    Data,
    Ack,
    Nack,
    /// A pool slot not in use.
    Free,
}

#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub kind: Kind,
    /// Trimmed to a header by a switch; travels in the control class.
    pub trimmed: bool,
    /// ECN Congestion Experienced (on data); echoed ECN (on ACK).
    pub ecn: bool,
    pub flow: u32,
    pub psn: u32,
    pub ev: Ev,
    /// This packet's own source and destination hosts (an ACK goes receiver -> sender).
    pub src: u32,
    pub dst: u32,
    /// Wire size in bytes.
    pub size: u32,
    /// ACK: how many entries of the receiver's SACK log it covers.
    pub sack_end: u32,
}

impl Packet {
    /// ACK, NACK and trimmed headers use the strict-priority control class.
    #[inline]
    pub fn is_control(&self) -> bool {
        self.kind != Kind::Data || self.trimmed
    }
}

#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketPool {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub fn free(&mut self, i: u32) {
        self.slots[i as usize].kind = Kind::Free;
        self.free.push(i);
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.slots[i as usize]
    }

    /// Packets currently allocated (in queues, on wires).
    pub fn live(&self) -> impl Iterator<Item = &Packet> {
        self.slots.iter().filter(|p| p.kind != Kind::Free)
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}
