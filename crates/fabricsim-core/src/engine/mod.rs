//! The discrete-event engine: the event queue and the per-component RNG streams.
//!
//! Events are ordered by (time, origin unit, sequence within that unit): the basis of
//! determinism. A *unit* is a host or a switch (node `n` is unit `n + 2`), or one of two global
//! duties: the fault timeline (unit 0, so its changes take effect before anything else at
//! that instant) and the recorders (unit 1: samples, trace windows). The event being
//! processed belongs to one unit, and what it schedules is numbered by that unit's own
//! counter (each call names the unit: [`Origin`]; the queue keeps no current unit); a packet's arrival over a link is numbered by the
//! sending node and the port, so it does not depend on who scheduled the wire's head event.
//! No key depends on a global insertion counter: a run cut into pieces that each process
//! their units' events in key order makes the same decisions (docs/model.md, "Order of
//! events"). Scheduling in the past is a bug. The queue is a calendar queue (see
//! [`EventQueue`]).

mod event;
pub mod rng;
mod sort;
pub mod watchdog;

pub use event::{Event, Status};

use sort::{sort_bucket, Scratch};

use std::cmp::Ordering;
use std::collections::BinaryHeap; // the far-future part of the calendar
use std::sync::Arc;

use crate::time::Time;

/// The unit of the fault timeline: first at any instant.
pub const FAULT_UNIT: u32 = 0;
/// The unit of the recorders (samples, a trace's windows).
pub const RECORD_UNIT: u32 = 1;

/// The unit of node `node` (a host or a switch).
#[inline]
pub fn node_unit(node: u32) -> u32 {
    node + 2
}

/// Bits of an event's order key below the unit: one for the wire flag, the rest a count.
const UNIT_SHIFT: u32 = 41;
const WIRE: u64 = 1 << (UNIT_SHIFT - 1);
/// Below the wire flag, two bands: a message's first release (its starts when it waits for
/// nothing, [`start_order`]) below `COUNTED`, numbered by the message; each unit's counter from
/// `COUNTED` up. A message's first starts at an instant come before anything its host
/// scheduled for that instant, in message order, however late the message was made: a
/// message sent into a running run (`sim::session`) starts as it would have had it been
/// given up front.
const COUNTED: u64 = 1 << (UNIT_SHIFT - 2);
/// Messages a run can number ([`start_order`]): 2^31.
pub const MAX_MESSAGES: usize = (COUNTED / START_PARTS) as usize;
/// Parts a message's first release can number (its connections: `lb.subflows` is at most 256).
const START_PARTS: u64 = 256;

/// The order key of part `part` of message `message`'s first release (its `ConnStart`s, or
/// the one event of a message with no connection), numbered by its source host's `unit`.
#[inline]
pub fn start_order(unit: u32, message: u32, part: u32) -> u64 {
    debug_assert!(u64::from(part) < START_PARTS);
    debug_assert!(u64::from(message) * START_PARTS < COUNTED, "2^31 messages are numbered");
    (u64::from(unit) << UNIT_SHIFT) | (u64::from(message) * START_PARTS + u64::from(part))
}
/// Units an order key can tell apart (2^23: 8 M, two duties and the nodes).
pub const MAX_UNITS: usize = 1 << (64 - UNIT_SHIFT);

/// A unit as a queue numbers what it schedules: the unit and where the queue keeps its
/// counter (a piece's queue holds only its own units' counters: `topology::Cut`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub unit: u32,
    pub at: u32,
}

/// What a unit tells a unit another queue holds (a release notice, a message's progress on a
/// scale-up network): when it arrives, the order key its sender gave it
/// ([`EventQueue::next_order`]), and the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notice {
    pub at: Time,
    pub order: u64,
    pub event: Event,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Time,
    /// (origin unit, wire flag, sequence within the unit), packed.
    order: u64,
    event: Event,
}

impl Entry {
    /// (time, order) as one number: one wide comparison instead of two.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.order)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed: the far heap is a max-heap and we want the earliest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// Buckets in the ring (a power of two).
const BUCKETS: usize = 8192;
/// Bucket capacity kept after draining; larger (burst) buffers are freed.
const BURST_KEEP: usize = 64;
/// Capacity a bucket's buffer starts with.
const BUCKET_START: usize = 16;

/// A priority queue of events with a clock: a calendar queue.
///
/// Most events of a packet simulation fall within one link latency of now, densely. The near
/// future is a ring of `BUCKETS` time buckets of `2^shift` ps; an event goes into its bucket
/// unsorted, and a bucket is sorted only when the clock reaches it. A bitmap skips empty
/// buckets; events beyond the ring's horizon (timers) wait in a binary heap. Order is exactly
/// (time, origin unit, sequence within it). On a 1024-host run it takes 38% fewer instructions and 33% fewer L1
/// read misses than `std`'s `BinaryHeap` did (docs/performance.md).
#[derive(Debug)]
pub struct EventQueue {
    ring: Box<[Vec<Entry>; BUCKETS]>,
    occupied: Box<[u64; BUCKETS / 64]>,
    shift: u32,
    /// Absolute index of the bucket being drained, and its entries sorted earliest first from
    /// `head` (the next event): an event scheduled into it at the current time is the latest
    /// of its time and is appended in O(1) (sorted latest first, building many same-time
    /// flows was quadratic).
    cur: u64,
    current: Vec<Entry>,
    head: usize,
    /// What sorting a bucket reuses.
    scratch: Scratch,
    ring_len: usize,
    /// Drained buffers no bucket holds: a bucket takes one when its first event comes and
    /// gives it back when drained, so the buffers kept follow the buckets occupied at once,
    /// not the ring's size (a buffer parked in every slot it had passed through held 8 192 x
    /// 16-64 entries a queue, 3-12 MiB, whatever the queue's events: a run cut into many
    /// pieces paid that a piece; docs/performance.md, "Pieces for the cache").
    spare: Vec<Vec<Entry>>,
    far: BinaryHeap<Entry>,
    /// Each unit's count of events it scheduled.
    seqs: Vec<u64>,
    /// Per unit, the index of its counter in `seqs` (a queue holds the counters of its own
    /// units only: `topology::Cut`).
    units: Arc<[u32]>,
    now: Time,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_horizon(4_000_000)
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// A queue whose ring covers at least `horizon` ps (events further ahead are slower).
    pub fn with_horizon(horizon: Time) -> Self {
        let per_bucket = horizon.div_ceil(BUCKETS as u64).max(1);
        let shift = (64 - (per_bucket - 1).leading_zeros()).max(6);
        EventQueue {
            ring: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: Box::new([0; BUCKETS / 64]),
            shift,
            cur: 0,
            current: Vec::new(),
            head: 0,
            scratch: Scratch::default(),
            ring_len: 0,
            spare: Vec::new(),
            far: BinaryHeap::new(),
            seqs: vec![COUNTED; 2],
            units: Arc::new([0, 1]),
            now: 0,
        }
    }

    /// Makes room for the units of `nodes` nodes (hosts and switches), each counter at its
    /// unit's number.
    pub fn with_nodes(self, nodes: usize) -> Self {
        let units: Arc<[u32]> = (0..nodes as u32 + 2).collect();
        self.with_units(units, nodes + 2)
    }

    /// Makes room for `count` units' counters, unit `u`'s at `units[u]` (the units of one
    /// piece of a run; the others' entries are not read).
    pub fn with_units(mut self, units: Arc<[u32]>, count: usize) -> Self {
        assert!(units.len() <= MAX_UNITS, "{} units: at most {MAX_UNITS} can be ordered", units.len());
        self.seqs.resize(count, COUNTED);
        self.units = units;
        self
    }

    /// Unit `unit` as this queue numbers what it schedules (one of its units, or a duty).
    #[inline]
    pub fn origin(&self, unit: u32) -> Origin {
        Origin { unit, at: self.units[unit as usize] }
    }

    /// The time of the event being processed (or last processed).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at `at`, numbered by unit `by` (the unit whose event is being
    /// processed, or set up).
    #[inline]
    pub fn schedule(&mut self, by: Origin, at: Time, event: Event) {
        let order = self.next_order(by);
        self.insert(at, order, event);
    }

    /// The order key unit `by` gives its next event, taken now, for an event that another
    /// queue holds (a notice to a host of another piece, [`EventQueue::schedule_ordered`]).
    #[inline]
    pub fn next_order(&mut self, by: Origin) -> u64 {
        debug_assert_eq!(self.units[by.unit as usize], by.at, "unit {} is counted where its queue keeps it", by.unit);
        let seq = &mut self.seqs[by.at as usize];
        *seq += 1;
        debug_assert!(*seq < WIRE, "a unit scheduled 2^39 events");
        (u64::from(by.unit) << UNIT_SHIFT) | *seq
    }

    /// Schedules `event` at `at` under an order key another queue's unit took
    /// ([`EventQueue::next_order`]).
    #[inline]
    pub fn schedule_ordered(&mut self, at: Time, order: u64, event: Event) {
        self.insert(at, order, event);
    }

    /// Schedules the arrival of the packet at the head of a wire: numbered by the sending
    /// node's unit and the port (`tag`), whoever schedules it (the sender when the wire was
    /// empty, the receiver when it takes the previous packet). At most one such event per
    /// port is pending.
    #[inline]
    pub fn schedule_wire(&mut self, at: Time, event: Event, from_unit: u32, tag: u32) {
        let order = (u64::from(from_unit) << UNIT_SHIFT) | WIRE | u64::from(tag);
        self.insert(at, order, event);
    }

    /// Puts an entry in its bucket: a ring bucket with room (almost every event) here, the
    /// rest out of line, so that the common path is a few instructions with no registers to
    /// save (30 M fewer instructions on the mid run than one function for all cases). It takes
    /// the entry's parts, not an `Entry`: one built by the caller went through the stack in
    /// parts and was read back whole, a load the processor cannot forward from its pending
    /// stores (a stall on every event; docs/performance.md, "Stalls on copies").
    #[inline(never)]
    fn insert(&mut self, time: Time, order: u64, event: Event) {
        let b = time >> self.shift;
        if b > self.cur && b < self.cur + BUCKETS as u64 {
            let slot = (b as usize) & (BUCKETS - 1);
            let bucket = &mut self.ring[slot];
            if bucket.len() < bucket.capacity() {
                bucket.push(Entry { time, order, event });
                self.occupied[slot / 64] |= 1 << (slot % 64);
                self.ring_len += 1;
                return;
            }
        }
        self.insert_other(time, order, event);
    }

    /// [`EventQueue::insert`] into the bucket being drained, a full ring bucket or the far
    /// heap.
    #[cold]
    #[inline(never)]
    fn insert_other(&mut self, time: Time, order: u64, event: Event) {
        let e = Entry { time, order, event };
        // an event in the past would break the order every result depends on: a bug, caught
        // in every build (a ring event lies after the bucket being drained, so after now)
        assert!(e.time >= self.now, "event {:?} scheduled at {} before now {}", e.event, e.time, self.now);
        let b = e.time >> self.shift;
        if b <= self.cur {
            // into the bucket being drained, in order. `b < cur` happens when a peek has
            // already moved on to the next occupied bucket: the event precedes all of it, and
            // nothing lies in between.
            if self.head > 64 && 2 * self.head > self.current.len() {
                // the consumed prefix is more than half of it: drop it (amortized O(1) per
                // event), or a bucket that keeps receiving events while an event further on
                // holds it open (`cur` moved ahead to a far timer) would grow without bound
                self.current.drain(..self.head);
                self.head = 0;
            }
            let pos = self.head + self.current[self.head..].partition_point(|x| x.key() < e.key());
            self.current.insert(pos, e);
        } else if b < self.cur + BUCKETS as u64 {
            let slot = (b as usize) & (BUCKETS - 1);
            let bucket = &mut self.ring[slot];
            if bucket.capacity() == 0 {
                // an empty bucket takes a spare buffer
                *bucket = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(BUCKET_START));
            } else {
                // a full bucket: grow it to the size buckets tend to reach in one step, not
                // through 4 and 8 (each a reallocation)
                bucket.reserve(bucket.len().max(BUCKET_START));
            }
            bucket.push(e);
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.ring_len += 1;
        } else {
            self.far.push(e);
        }
    }

    /// The next occupied ring bucket after `cur`, as an absolute index.
    fn next_ring_bucket(&self) -> Option<u64> {
        if self.ring_len == 0 {
            return None;
        }
        let start = ((self.cur + 1) as usize) & (BUCKETS - 1);
        for step in 0..=BUCKETS / 64 {
            let w = (start / 64 + step) % (BUCKETS / 64);
            let mut bits = self.occupied[w];
            if step == 0 {
                bits &= u64::MAX << (start % 64);
            }
            if step == BUCKETS / 64 {
                bits &= !(u64::MAX << (start % 64)); // wrapped back to the start word
            }
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                let dist = (slot + BUCKETS - start) % BUCKETS;
                return Some(self.cur + 1 + dist as u64);
            }
        }
        None
    }

    /// Makes `current` hold the earliest events, if there are any.
    #[inline]
    fn settle(&mut self) -> bool {
        if self.head < self.current.len() {
            return true;
        }
        self.current.clear();
        self.head = 0;
        self.advance()
    }

    fn advance(&mut self) -> bool {
        let ring = self.next_ring_bucket();
        let far = self.far.peek().map(|e| e.time >> self.shift);
        let next = match (ring, far) {
            (None, None) => return false,
            (Some(r), None) => r,
            (None, Some(f)) => f,
            (Some(r), Some(f)) => r.min(f),
        };
        self.cur = next;
        let slot = (next as usize) & (BUCKETS - 1);
        if ring == Some(next) {
            // keep the drained (empty) buffer as a spare, unless a burst (hosts in lockstep)
            // left it large: give that back, or large buffers would pile up in the spares
            // (twice the memory measured when they migrated around the ring)
            let drained = std::mem::replace(&mut self.current, std::mem::take(&mut self.ring[slot]));
            if drained.capacity() > 0 && drained.capacity() <= BURST_KEEP {
                self.spare.push(drained);
            }
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            self.ring_len -= self.current.len();
        }
        while self.far.peek().is_some_and(|e| e.time >> self.shift == next) {
            if let Some(e) = self.far.pop() {
                self.current.push(e);
            }
        }
        sort_bucket(&mut self.current, &mut self.scratch);
        true
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        if !self.settle() {
            return None;
        }
        self.current.get(self.head).map(|e| e.time)
    }

    /// The full order key of the next event, (time, unit, sequence) as one number: how
    /// queues of different pieces are merged into one order.
    #[inline]
    pub fn peek_key(&mut self) -> Option<u128> {
        if !self.settle() {
            return None;
        }
        self.current.get(self.head).map(Entry::key)
    }

    /// The next event, without removing it.
    #[inline]
    pub fn peek(&mut self) -> Option<Event> {
        if !self.settle() {
            return None;
        }
        self.current.get(self.head).map(|e| e.event)
    }

    /// Removes the next event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_keyed().map(|(t, e, _)| (t, e))
    }

    /// Removes the next event if its key is below `bound` ([`EventQueue::pop_keyed`]): one
    /// look at the queue where a peek and a pop take two (the run loop's every event).
    #[inline]
    pub fn pop_below(&mut self, bound: u128) -> Option<(Time, Event, u32)> {
        if !self.settle() {
            return None;
        }
        let e = *self.current.get(self.head)?;
        if e.key() >= bound {
            return None;
        }
        self.head += 1;
        self.now = e.time;
        Some((e.time, e.event, (e.order >> UNIT_SHIFT) as u32))
    }

    /// The event after the one just popped, if it is already in the bucket being drained
    /// (no bucket is taken to find it): what the run loop prefetches for.
    #[inline]
    pub fn peek_drained(&self) -> Option<Event> {
        self.current.get(self.head).map(|e| e.event)
    }

    /// [`EventQueue::pop`], with the unit whose number the event bears (the unit that
    /// scheduled it; a wire's sending node for an arrival).
    #[inline]
    pub fn pop_keyed(&mut self) -> Option<(Time, Event, u32)> {
        if !self.settle() {
            return None;
        }
        let e = *self.current.get(self.head)?;
        self.head += 1;
        self.now = e.time;
        Some((e.time, e.event, (e.order >> UNIT_SHIFT) as u32))
    }

    pub fn len(&self) -> usize {
        self.current.len() - self.head + self.ring_len + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests;
