//! A link direction's wire, held by its receiving end: the packets in flight on it, each with
//! the time its last bit arrives (FIFO: a wire never reorders).
//!
//! The sending port computes the arrival time and hands the packet over; from then on only
//! the far end reads it: the link is the one channel between two nodes, and what a packet
//! carries is all the far end learns. Following htsim's pipe, only the head packet has an
//! event pending (`PipeArrive`), numbered by the sending node and the port
//! ([`crate::engine::EventQueue::schedule_wire`]), so it does not matter which end schedules
//! it.

use std::collections::VecDeque;

use crate::engine::{node_unit, Event, EventQueue};
use crate::packet::Packet;
use crate::time::Time;

/// The packets in flight on one link direction, at its far end.
#[derive(Debug, Clone)]
pub struct Wire {
    /// The sending node's unit and the port's id (they number the head's event), and the
    /// receiving node.
    from_unit: u32,
    id: u32,
    pub to: u32,
    /// The counter of the receiving node's unit in its piece's queue (`topology::Cut::units`).
    pub to_at: u32,
    packets: VecDeque<(Time, Packet)>,
}

impl Wire {
    /// The wire of port `id`, from node `from` to node `to`.
    pub fn new(id: u32, from: u32, to: u32, to_at: u32) -> Wire {
        Wire { from_unit: node_unit(from), id, to, to_at, packets: VecDeque::new() }
    }

    /// `pkt`, put on this wire (kept at `w` by its piece) by the sending end, arrives at `at`
    /// (no earlier than the packets ahead of it); the head's arrival is scheduled when the
    /// wire was empty.
    #[inline]
    pub fn carry(&mut self, q: &mut EventQueue, w: u32, at: Time, pkt: Packet) {
        debug_assert!(self.packets.back().is_none_or(|&(t, _)| t <= at), "a wire never reorders");
        self.packets.push_back((at, pkt));
        if self.packets.len() == 1 {
            q.schedule_wire(at, Event::PipeArrive(w), self.from_unit, self.id);
        }
    }

    /// `PipeArrive`: takes the head packet (it reached the far end) and schedules the next one.
    /// A wire's arrival is pending only while it holds a packet. The packet is copied from the
    /// head, not popped as an `Option`: that one was tested through a flag inside the packet
    /// and copied in parts, and the next reads of it stalled (docs/performance.md, "Stalls on
    /// copies").
    #[inline]
    pub fn take(&mut self, q: &mut EventQueue, w: u32) -> Packet {
        let &(_, pkt) = self.packets.front().expect("a wire's arrival has a packet at its head");
        self.packets.pop_front();
        if let Some(&(next, _)) = self.packets.front() {
            q.schedule_wire(next, Event::PipeArrive(w), self.from_unit, self.id);
        }
        pkt
    }

    /// The id of the port whose wire this is.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// When the head packet arrives, if any.
    #[inline]
    pub fn head_time(&self) -> Option<Time> {
        self.packets.front().map(|&(t, _)| t)
    }

    /// The packets in flight, earliest first, with their arrival times.
    pub fn packets(&self) -> impl Iterator<Item = &(Time, Packet)> {
        self.packets.iter()
    }
}
