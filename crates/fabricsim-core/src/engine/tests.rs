//! The event queue's order, against a reference.

use super::*;

#[test]
fn same_time_events_pop_in_insertion_order() {
    let mut q = EventQueue::new();
    q.schedule(q.origin(FAULT_UNIT), 10, Event::Rto(1));
    q.schedule(q.origin(FAULT_UNIT), 5, Event::Rto(2));
    q.schedule(q.origin(FAULT_UNIT), 10, Event::Rto(3));
    q.schedule(q.origin(FAULT_UNIT), 5, Event::Rto(4));
    let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
    assert_eq!(order, vec![(5, Event::Rto(2)), (5, Event::Rto(4)), (10, Event::Rto(1)), (10, Event::Rto(3))]);
    assert_eq!(q.now(), 10);
}

#[test]
fn same_time_events_pop_by_unit_then_by_that_units_count() {
    // the order does not depend on which unit scheduled first: a run cut into pieces
    // interleaves units differently and must decide the same
    let mut q = EventQueue::new().with_nodes(4);
    q.schedule(q.origin(node_unit(3)), 7, Event::NicWake(3));
    q.schedule(q.origin(node_unit(1)), 7, Event::NicWake(1));
    q.schedule_wire(7, Event::PipeArrive(9), node_unit(0), 9);
    q.schedule(q.origin(node_unit(3)), 7, Event::Rto(3)); // unit 3's count went on from where it was
    q.schedule(q.origin(FAULT_UNIT), 7, Event::Faults);
    let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
    assert_eq!(order, vec![Event::Faults, Event::PipeArrive(9), Event::NicWake(1), Event::NicWake(3), Event::Rto(3)]);
}

#[test]
fn a_bucket_held_open_by_a_far_event_does_not_keep_consumed_events() {
    // one far timer, then a chain of events 1 ps apart scheduled one at a time, each
    // after the previous one was popped and a peek moved on to the timer's bucket
    let mut q = EventQueue::with_horizon(10_000);
    q.schedule(q.origin(FAULT_UNIT), 1_000_000, Event::Rto(0));
    q.schedule(q.origin(FAULT_UNIT), 0, Event::Faults);
    for t in 0..100_000 {
        assert_eq!(q.pop(), Some((t, Event::Faults)));
        q.peek();
        q.schedule(q.origin(FAULT_UNIT), t + 1, Event::Faults);
    }
    assert!(q.current.len() < 1_000, "consumed entries are dropped: {}", q.current.len());
    assert_eq!(q.len(), 2);
}

#[test]
fn matches_a_reference_order_with_near_far_and_same_bucket_events() {
    use super::rng::{Rng, Stream};
    let mut rng = Rng::stream(5, Stream::Workload, 0);
    let mut q = EventQueue::with_horizon(10_000);
    let mut pending: Vec<(Time, u32)> = Vec::new(); // (time, insertion index)
    for i in 0..50_000u32 {
        if rng.below(3) > 0 || q.is_empty() {
            // mostly near, some in the current bucket, some far beyond the ring
            let dt = match rng.below(10) {
                0 => 0,
                1 => rng.below(5),
                2 => 100_000 + rng.below(10_000_000),
                _ => rng.below(20_000),
            };
            let at = q.now() + dt;
            q.schedule(q.origin(FAULT_UNIT), at, Event::Rto(i));
            pending.push((at, i));
        } else {
            let (t, e) = q.pop().unwrap();
            let k = pending.iter().enumerate().min_by_key(|(_, m)| **m).map(|(k, _)| k).unwrap();
            assert_eq!((t, e), (pending[k].0, Event::Rto(pending[k].1)));
            pending.swap_remove(k);
            if rng.below(2) == 0 {
                q.peek(); // as the simulator does: it may move on to the next bucket
            }
        }
        assert_eq!(q.len(), pending.len());
    }
    while let Some((t, e)) = q.pop() {
        let k = pending.iter().enumerate().min_by_key(|(_, m)| **m).map(|(k, _)| k).unwrap();
        assert_eq!((t, e), (pending[k].0, Event::Rto(pending[k].1)));
        pending.swap_remove(k);
    }
    assert!(pending.is_empty());
}

/// The last message a run numbers starts before anything its host counted at that instant,
/// and a unit's every key (its starts, its count, its wires) before the next unit's first.
#[test]
fn the_order_keys_bands_hold_the_last_message_and_unit() {
    let last = MAX_MESSAGES as u32 - 1;
    assert_eq!(MAX_MESSAGES, 1 << 31);
    let unit = (MAX_UNITS - 2) as u32;
    let mut q = EventQueue::new().with_units(vec![0u32; MAX_UNITS].into(), 1);
    let counted = q.next_order(q.origin(unit));
    let start = start_order(unit, last, START_PARTS as u32 - 1);
    assert!(start_order(unit, 0, 0) < start && start < counted, "{start:x} {counted:x}");
    assert!(counted < (u64::from(unit) << UNIT_SHIFT | WIRE));
    assert!(start_order(unit - 1, last, 255) | WIRE | (WIRE - 1) < start_order(unit, 0, 0));
    assert_eq!(start_order(unit + 1, 0, 0) >> UNIT_SHIFT, u64::from(unit + 1), "the last unit an order key tells apart");
}

#[test]
fn bucket_buffers_follow_the_buckets_occupied_not_the_ring() {
    // a chain of events one bucket apart, each scheduled after the one before was popped,
    // sweeps the whole ring twice: a buffer kept in every slot it passed through would leave
    // one in each of the 8 192 slots; spares follow what is occupied at once (here one or two)
    let mut q = EventQueue::with_horizon(8192 * 64);
    let width = 1 << q.shift;
    q.schedule(q.origin(FAULT_UNIT), 0, Event::Faults);
    for i in 0..2 * BUCKETS as u64 {
        assert_eq!(q.pop(), Some((i * width, Event::Faults)));
        q.schedule(q.origin(FAULT_UNIT), (i + 1) * width, Event::Faults);
    }
    let held = q.ring.iter().filter(|b| b.capacity() > 0).count() + q.spare.len();
    assert!(held <= 2, "{held} buffers held for one event in flight");
    // and a burst's large buffer is given back, not kept as a spare
    let at = q.now() + 2 * width;
    for _ in 0..4 * BURST_KEEP {
        q.schedule(q.origin(FAULT_UNIT), at, Event::Faults);
    }
    while q.pop().is_some() {}
    assert!(q.spare.iter().all(|b| b.capacity() <= BURST_KEEP));
}
