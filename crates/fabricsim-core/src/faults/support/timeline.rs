//! The faults of a run as a lazy timeline: each fault contributes sources (a link's changes,
//! the routing that follows it), each producing its next action only when the previous one
//! has taken effect. A flapping link costs one pending action, not its whole expansion (a
//! 1 ps flap over a long run used to allocate billions of actions up front).
//!
//! Same-time actions take effect in a fixed order: by fault (its index in `[[faults]]`), then
//! target link, then step within the target, as a fault writes them (`link_down`: down, up,
//! then the routing convergences; `flap`: per cycle down, convergence, up, convergence). The
//! engine schedules the timeline ahead of every other event of the same picosecond.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::faults::link::Change;
use crate::time::Time;

/// How a source produces its actions, in time order.
#[derive(Debug, Clone)]
pub enum Plan {
    /// Changes at given times, with their step numbers.
    Steps(Vec<(Time, Change, u64)>),
    /// A flapping link: down at `start`, up `down_for` later, down again `up_for` after that,
    /// ..., until `end`. With `routing = Some(lag)`, the routing that follows the link instead:
    /// a convergence `lag` after each of the link's changes.
    Flap { start: Time, down_for: Time, up_for: Time, end: Time, routing: Option<Time> },
}

/// One stream of actions on one link (both directions).
#[derive(Debug, Clone)]
pub struct Source {
    pub ports: [u32; 2],
    pub plan: Plan,
    /// Where the fault sits: its index in `[[faults]]` and the target's index among its links.
    pub fault: u32,
    pub target: u32,
    /// The index of the next action, and that action (time, change, step number).
    cursor: u64,
    upcoming: Option<(Time, Change, u64)>,
}

impl Source {
    pub fn new(ports: [u32; 2], plan: Plan, fault: u32, target: u32) -> Source {
        let mut s = Source { ports, plan, fault, target, cursor: 0, upcoming: None };
        s.upcoming = s.action(0);
        s
    }

    /// Takes the upcoming action and lines up the one after it.
    fn advance(&mut self) -> Option<(Time, Change, u64)> {
        let now = self.upcoming.take()?;
        self.cursor += 1;
        self.upcoming = self.action(self.cursor);
        Some(now)
    }

    /// The `k`-th action of this source (time, change, step number).
    fn action(&self, k: u64) -> Option<(Time, Change, u64)> {
        match &self.plan {
            Plan::Steps(steps) => steps.get(k as usize).copied(),
            &Plan::Flap { start, down_for, up_for, end, routing } => {
                // link change k: cycle k / 2, down when k is even; the cycle's start in closed
                // form, so a source is O(1) per action however long the flap
                let (cycle, down) = (k / 2, k.is_multiple_of(2));
                let t = cycle_start(start, down_for, up_for, end, cycle)?;
                let at = if down { t } else { t.saturating_add(down_for).min(end) };
                let step = 4 * cycle + if down { 0 } else { 2 };
                Some(match routing {
                    None => (at, if down { Change::Down } else { Change::Up }, step),
                    Some(lag) => (at.saturating_add(lag), Change::Converge, step + 1),
                })
            }
        }
    }
}

/// When the `cycle`-th down period of a flap starts, if it starts before `end`.
fn cycle_start(start: Time, down_for: Time, up_for: Time, end: Time, cycle: u64) -> Option<Time> {
    // every cycle but a truncated last one lasts down_for + up_for
    let t = start.checked_add(cycle.checked_mul(down_for.checked_add(up_for)?)?)?;
    (t < end).then_some(t)
}

/// A source's upcoming action in the order actions take effect: (time, fault, target, step),
/// then the source's index.
type Pending = (Time, u32, u32, u64, usize);

/// The faults' sources and their pending actions.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    sources: Vec<Source>,
    /// Each source's upcoming action, earliest first.
    pending: BinaryHeap<Reverse<Pending>>,
}

impl Timeline {
    pub fn new(sources: Vec<Source>) -> Timeline {
        let pending = sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.upcoming.map(|(at, _, step)| Reverse((at, s.fault, s.target, step, i))))
            .collect();
        Timeline { sources, pending }
    }

    /// When the next action takes effect.
    pub fn next_time(&self) -> Option<Time> {
        self.pending.peek().map(|Reverse(p)| p.0)
    }

    /// Hands every action due at `now` to `apply`, in order, and lines up each source's next.
    pub fn fire(&mut self, now: Time, mut apply: impl FnMut([u32; 2], Change)) {
        while let Some(&Reverse((at, _, _, _, i))) = self.pending.peek() {
            if at > now {
                break;
            }
            self.pending.pop();
            let s = &mut self.sources[i];
            let Some((_, change, _)) = s.advance() else { continue };
            apply(s.ports, change);
            if let Some((at, _, step)) = s.upcoming {
                self.pending.push(Reverse((at, s.fault, s.target, step, i)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(mut t: Timeline) -> Vec<(Time, Change)> {
        let mut out = Vec::new();
        while let Some(now) = t.next_time() {
            t.fire(now, |_, c| out.push((now, c)));
        }
        out
    }

    #[test]
    fn a_flap_and_its_routing_interleave_in_time_order() {
        let plan = |routing| Plan::Flap { start: 10, down_for: 5, up_for: 3, end: 30, routing };
        let t = Timeline::new(vec![Source::new([0, 1], plan(None), 0, 0), Source::new([0, 1], plan(Some(4)), 0, 0)]);
        use Change::*;
        // link: down 10, up 15, down 18, up 23, down 26, up 30 (truncated at end); routing 4 later
        assert_eq!(
            drain(t),
            vec![
                (10, Down),
                (14, Converge),
                (15, Up),
                (18, Down),
                (19, Converge),
                (22, Converge),
                (23, Up),
                (26, Down),
                (27, Converge),
                (30, Converge),
                (30, Up),
                (34, Converge)
            ]
        );
    }

    #[test]
    fn same_time_actions_keep_the_order_faults_write_them() {
        use Change::*;
        // fault 1's action at 5 was listed first, but fault 0 goes first; within fault 0 the
        // step order holds whatever the source order
        let t = Timeline::new(vec![
            Source::new([9, 9], Plan::Steps(vec![(5, Loss(0.5), 0)]), 1, 0),
            Source::new([1, 1], Plan::Steps(vec![(5, Converge, 2)]), 0, 0),
            Source::new([1, 1], Plan::Steps(vec![(5, Up, 1)]), 0, 0),
        ]);
        assert_eq!(drain(t), vec![(5, Up), (5, Converge), (5, Loss(0.5))]);
    }

    #[test]
    fn a_picosecond_flap_over_a_long_run_costs_one_pending_action_per_source() {
        let mut t = Timeline::new(vec![Source::new(
            [0, 1],
            Plan::Flap { start: 0, down_for: 1, up_for: 1, end: u64::MAX / 2, routing: None },
            0,
            0,
        )]);
        for _ in 0..1000 {
            let now = t.next_time().unwrap();
            t.fire(now, |_, _| {});
            assert_eq!(t.pending.len(), 1);
        }
        assert_eq!(t.next_time(), Some(1000));
    }
}
