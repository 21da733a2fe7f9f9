//! The discrete-event engine: the event queue and the per-component RNG streams.
//!
//! Events are ordered by (time, insertion order), so events at the same picosecond run in
//! the order they were scheduled: the basis of determinism. Scheduling in the past is a bug.

pub mod rng;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Time;

/// What can happen. Each carries a small index; components own their state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// An egress port finished serializing its packet and has more waiting (or is a NIC).
    PortFree(u32),
    /// The head packet of a link's pipe reaches the far end.
    PipeArrive(u32),
    /// A flow becomes ready to send.
    FlowStart(u32),
    /// A flow's retransmission timer.
    Rto(u32),
    /// The i-th fault action takes effect.
    Fault(u32),
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed: the heap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// A priority queue of events with a clock.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: Time,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// The time of the event being processed (or last processed).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    pub fn schedule(&mut self, at: Time, event: Event) {
        debug_assert!(at >= self.now, "event {event:?} scheduled at {at} before now {}", self.now);
        self.seq += 1;
        self.heap.push(Entry { time: at, seq: self.seq, event });
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    /// The next event, without removing it.
    #[inline]
    pub fn peek(&self) -> Option<Event> {
        self.heap.peek().map(|e| e.event)
    }

    /// Removes the next event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.now = e.time;
        Some((e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(10, Event::Rto(1));
        q.schedule(5, Event::Rto(2));
        q.schedule(10, Event::Rto(3));
        q.schedule(5, Event::Rto(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(5, Event::Rto(2)), (5, Event::Rto(4)), (10, Event::Rto(1)), (10, Event::Rto(3))]
        );
        assert_eq!(q.now(), 10);
    }
}
