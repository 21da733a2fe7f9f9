//! A pass over a workload's messages in the order they are made (the survey's memory and
//! event counts, the jobs' least times) that holds a value for a message only while a later
//! message may still read it: the last [`SPAN`] messages' values, and those of the few
//! messages read from further on ([`Far`], found by a first pass over what each message waits
//! for). A job's messages wait mostly for recent ones (Llama 3 70B on 1 024 GPUs: 99 % within
//! 33 messages), and a few for messages made long before (the data-parallel gradients of a
//! step wait for the last backward pass of each stage, millions of messages earlier): 20 980
//! of its 11.1 M messages are read from further than [`SPAN`] back. So the pass holds about a
//! megabyte where a value for every message took 16 bytes each (1.1 GB for the 70 M messages
//! of Llama 3 405B on 8 192 GPUs).

use std::collections::HashSet;
use std::sync::Arc;

use super::deps::Deps;
use crate::workload::collective::{each_round, MakeRound, Sink, Tag};
use crate::workload::MessageSpec;

/// How many of the latest messages' values a [`Window`] holds.
pub const SPAN: u32 = 1 << 16;

/// The messages that a message made more than [`SPAN`] after them waits for, counted as the
/// messages are made ([`Far::see`], or as a [`Sink`] that holds nothing else).
#[derive(Debug, Clone, Default)]
pub struct Far {
    made: u32,
    ids: HashSet<u32>,
}

impl Far {
    /// The far messages of the lists `deps` (messages numbered from 0).
    pub fn of(deps: &Deps) -> Far {
        let mut far = Far::default();
        for i in 0..deps.lists() {
            far.see(deps.of(i));
        }
        far
    }

    /// Counts the next message, which waits for `after`.
    pub fn see(&mut self, after: &[u32]) {
        let i = self.made;
        self.ids.extend(after.iter().filter(|&&d| d < i && i - d > SPAN));
        self.made += 1;
    }

    /// Messages seen so far.
    pub fn len_made(&self) -> u32 {
        self.made
    }

    /// How many messages are read from further back than [`SPAN`].
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The far messages in order, to share between the windows of a pass.
    pub fn shared(self) -> FarIds {
        let mut ids: Vec<u32> = self.ids.into_iter().collect();
        ids.sort_unstable();
        ids.into()
    }
}

impl Sink for Far {
    fn push(&mut self, _: MessageSpec, after: &[u32], _: Tag) -> u32 {
        self.see(after);
        self.made - 1
    }

    fn len(&self) -> usize {
        self.made as usize
    }

    /// A message of a round reads one of the round before, at most `2 width - 1` messages
    /// back: none is far where that is within [`SPAN`], and the rounds are only counted.
    fn rounds(&mut self, last: &[u32], rounds: usize, reads: &[usize], make: &mut MakeRound<'_>) -> Vec<u32> {
        let width = last.len() as u32;
        if rounds == 0 || 2 * u64::from(width) > u64::from(SPAN) {
            return each_round(self, last, rounds, reads, make);
        }
        self.made += rounds as u32 * width;
        (self.made - width..self.made).collect()
    }
}

/// The far messages of a workload, in order ([`Far::shared`]).
pub type FarIds = Arc<[u32]>;

/// A value for each message made so far, held while a later message may read it: the last
/// [`SPAN`] messages', and the far ones' ([`FarIds`] of the same messages) for the rest of
/// the pass.
#[derive(Debug, Clone)]
pub struct Window<T> {
    recent: Vec<T>,
    made: u32,
    far_ids: FarIds,
    /// The values of the far messages made so far: `far_ids[..far.len()]`'s.
    far: Vec<T>,
    /// Messages skipped ([`Window::skip`]) that are still recent: no value was pushed for them.
    holes: Vec<(u32, u32)>,
}

impl<T: Copy + Default> Window<T> {
    /// A window over messages whose far ones are `far_ids`.
    pub fn new(far_ids: FarIds) -> Window<T> {
        Window { recent: Vec::new(), made: 0, far_ids, far: Vec::new(), holes: Vec::new() }
    }

    /// Messages made so far.
    pub fn made(&self) -> u32 {
        self.made
    }

    /// The next message's value.
    pub fn push(&mut self, value: T) {
        let (i, slot) = (self.made, (self.made % SPAN) as usize);
        if slot < self.recent.len() {
            self.recent[slot] = value;
        } else {
            self.recent.push(value);
        }
        if self.far_ids.get(self.far.len()) == Some(&i) {
            self.far.push(value);
        }
        self.made += 1;
    }

    /// Whether the next `count` messages may be skipped: none of them is far.
    pub fn may_skip(&self, count: u32) -> bool {
        let k = self.far.len();
        self.far_ids.get(k).is_none_or(|&f| f >= self.made.saturating_add(count))
    }

    /// Counts the next `count` messages without their values: the caller knows that no later
    /// message reads them ([`Window::may_skip`] says none is far; a read of one panics).
    pub fn skip(&mut self, count: u32) {
        debug_assert!(self.may_skip(count));
        if count == 0 {
            return;
        }
        let made = self.made;
        self.holes.retain(|&(_, end)| made - end.min(made) < SPAN);
        self.holes.push((made, made + count));
        self.made += count;
        // the slots of a hole hold older values, or none: only the holes say so
        let need = self.made.min(SPAN) as usize;
        if self.recent.len() < need {
            self.recent.resize(need, T::default());
        }
    }

    /// Message `id`'s value: `None` for a message not made yet. A message that is neither
    /// recent nor far, or was skipped, was said to be read by none from here (a bug: panics).
    pub fn get(&self, id: u32) -> Option<T> {
        if id >= self.made {
            return None;
        }
        if self.made - id <= SPAN {
            if self.holes.iter().any(|&(a, b)| (a..b).contains(&id)) {
                panic!("message {id} was counted without its value, but is read");
            }
            return Some(self.recent[(id % SPAN) as usize]);
        }
        match self.far_ids[..self.far.len()].binary_search(&id) {
            Ok(k) => Some(self.far[k]),
            Err(_) => panic!("message {id} is read {} messages later, but was not counted far", self.made - id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message's list is seen, however few entries the lists hold all told: a message
    /// past the last entry's count that reads from far back is far (it was missed when the
    /// pass counted entries, and a window read of it panicked).
    #[test]
    fn far_sees_every_list_not_only_as_many_as_the_entries() {
        let mut lists = vec![Vec::new(); SPAN as usize + 10];
        lists.push(vec![0]);
        let far = Far::of(&Deps::from_lists(&lists));
        assert_eq!(far.len(), 1);
        assert_eq!(&far.shared()[..], &[0]);
    }

    /// Every value a message reads is the one pushed for it, recent or far, and the window
    /// holds only the recent ones and the far ones.
    #[test]
    fn a_window_gives_back_what_each_message_reads() {
        let n = 3 * SPAN + 17;
        // each message waits for the one before it, and every 1000th also for one far back
        let lists: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                let mut l = if i > 0 { vec![i - 1] } else { vec![] };
                if i % 1000 == 0 && i > 2 * SPAN {
                    l.push(i - 2 * SPAN + 5);
                }
                l
            })
            .collect();
        let deps = Deps::from_lists(&lists);
        let far = Far::of(&deps);
        assert_eq!(far.len(), (0..n).filter(|&i| i % 1000 == 0 && i > 2 * SPAN).count());
        let mut w: Window<u64> = Window::new(far.shared());
        for (i, after) in lists.iter().enumerate() {
            for &d in after {
                assert_eq!(w.get(d), Some(u64::from(d) * 7), "message {i} reads {d}");
            }
            assert_eq!(w.get(i as u32), None, "not made yet");
            w.push(i as u64 * 7);
        }
        assert_eq!(w.recent.len(), SPAN as usize);
        assert_eq!(w.far.len(), far_count(&lists));
    }

    fn far_count(lists: &[Vec<u32>]) -> usize {
        lists.iter().enumerate().flat_map(|(i, l)| l.iter().filter(move |&&d| i as u32 - d > SPAN)).collect::<HashSet<_>>().len()
    }

    /// Rounds counted without their messages find the far ones that pushing each finds: none
    /// where a round is at most half the window, and those of rounds wider than that (where a
    /// message reads one more than the window back: the last of a round reading the first of
    /// the round before is `2 width - 1` back).
    #[test]
    fn rounds_find_the_far_messages_each_push_finds() {
        for (width, shift, any) in [(100usize, 1usize, false), (20_000, 7, false), (40_000, 1, true), (40_000, 39_999, false)] {
            let reads: Vec<usize> = (0..width).map(|i| (i + shift) % width).collect();
            let mut make = |_: usize, _: usize| (MessageSpec::new(0, 1, 1, 0, 0), Tag::NONE);
            let mut fars = Vec::new();
            for counted in [true, false] {
                let mut far = Far::default();
                let first: Vec<u32> = (0..width).map(|_| far.push(MessageSpec::new(0, 1, 1, 0, 0), &[], Tag::NONE)).collect();
                let last =
                    if counted { far.rounds(&first, 3, &reads, &mut make) } else { each_round(&mut far, &first, 3, &reads, &mut make) };
                assert_eq!(last, (3 * width as u32..4 * width as u32).collect::<Vec<_>>());
                fars.push((far.made, far.shared()));
            }
            assert_eq!(fars[0], fars[1], "width {width}");
            assert_eq!(!fars[0].1.is_empty(), any, "width {width}");
        }
    }

    /// Skipped messages take no value: the recent and far ones around them read back what was
    /// pushed for them, a far one may not be skipped, and reading a skipped one is a bug.
    #[test]
    fn skipped_messages_hold_no_value_and_may_not_be_far() {
        let far: FarIds = vec![3u32, 40].into();
        let mut w: Window<u64> = Window::new(far);
        for i in 0..10 {
            w.push(i * 7);
        }
        assert!(w.may_skip(30) && !w.may_skip(31), "message 40 is far");
        w.skip(30);
        assert_eq!((w.made(), w.get(9), w.get(3)), (40, Some(63), Some(21)));
        w.push(40 * 7);
        w.skip(SPAN + 5);
        assert_eq!((w.get(40), w.get(3)), (Some(280), Some(21)), "far values outlive the window");
        w.push(1);
        assert_eq!(w.get(w.made() - 1), Some(1));
        let read = std::panic::catch_unwind(|| w.get(w.made() - 2));
        assert!(read.is_err(), "a skipped message is never read");
    }

    /// A message read from further back than it was counted for is a bug, said so.
    #[test]
    #[should_panic(expected = "was not counted far")]
    fn a_message_read_from_beyond_the_window_must_be_far() {
        let mut w: Window<u8> = Window::new(FarIds::default());
        for _ in 0..=SPAN + 1 {
            w.push(1);
        }
        w.get(0);
    }
}
