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
use crate::workload::collective::{Sink, Tag};
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
        for i in 0..deps.len() {
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
}

impl<T: Copy> Window<T> {
    /// A window over messages whose far ones are `far_ids`.
    pub fn new(far_ids: FarIds) -> Window<T> {
        Window { recent: Vec::new(), made: 0, far_ids, far: Vec::new() }
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

    /// Message `id`'s value: `None` for a message not made yet. A message that is neither
    /// recent nor far was said to be read by none from here (a bug: panics).
    pub fn get(&self, id: u32) -> Option<T> {
        if id >= self.made {
            return None;
        }
        if self.made - id <= SPAN {
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
