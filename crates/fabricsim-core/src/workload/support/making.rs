//! Jobs made as the run goes: the planner that expands `[[jobs]]` into messages runs on a
//! thread of its own ([`Producer`]) and hands them over in batches, in the order it makes
//! them (their ids), through a bounded channel; the run takes them as it needs them
//! (`sim::generate`). The planner's own loops (iterations, micro-batches in their pipeline
//! schedule, layers, a collective's steps) are its cursor: what it holds is where it is, not
//! the messages it made. It is the same planner a resolve runs, from the same stream, so the
//! messages are the same ones whenever they are taken.
//!
//! What the run needs to know before it takes a message ([`Reach`], one pass of the planner
//! at the build that keeps no message): how far ahead of a message its readers may be (the
//! messages that wait for it: within [`SPAN`](super::window::SPAN) after it, or, for the few read from further on,
//! the last that reads it), and from when each message that waits for none may start.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use super::deps::Deps;
use super::window::{Far, FarIds};
use crate::time::Time;
use crate::topology::Topology;
use crate::workload::collective::{Sink, Tag};
use crate::workload::MessageSpec;

/// Messages a batch of the producer holds, and batches it may be ahead of the run.
const BATCH: usize = 4096;
const AHEAD: usize = 4;

/// What a pass over a workload's messages found of who reads whom ([`Reach`] as a sink).
#[derive(Debug)]
pub struct Reach {
    far: Far,
    /// How far after a message its readers are looked for before they count as far ([`SPAN`](super::window::SPAN);
    /// less in tests, so that small runs make their jobs as they go), and the last message that
    /// reads each message read from further on.
    span: u32,
    last: FxHashMap<u32, u32>,
    /// (start, id) of each message that waits for none.
    free: Vec<(Time, u32)>,
}

impl Sink for Reach {
    fn push(&mut self, spec: MessageSpec, after: &[u32], _: Tag) -> u32 {
        let i = self.far.len_made();
        self.far.see(after);
        for &d in after.iter().filter(|&&d| i - d > self.span) {
            let e = self.last.entry(d).or_insert(i);
            *e = (*e).max(i);
        }
        if after.is_empty() {
            self.free.push((spec.start, i));
        }
        i
    }

    fn len(&self) -> usize {
        self.far.len_made() as usize
    }
}

/// What the run reads of a [`Reach`] pass: the far messages ([`FarIds`], for the windows of
/// the passes that follow the messages), how far each message's readers reach, and when the
/// messages that wait for none must have been taken.
#[derive(Debug, Clone)]
pub struct Reaches {
    pub far: FarIds,
    span: u32,
    last: Arc<FxHashMap<u32, u32>>,
    /// (time, id): by `time`, the messages up to `id` must have joined the run (each that
    /// waits for none joins before its start); increasing in both.
    steps: Arc<[(Time, u32)]>,
    /// Messages in all.
    pub total: u32,
}

impl Reach {
    /// A pass whose readers further than `span` after a message count as far.
    pub fn new(span: u32) -> Reach {
        Reach { far: Far::default(), span, last: FxHashMap::default(), free: Vec::new() }
    }

    /// What the pass found.
    pub fn finish(mut self) -> Reaches {
        let total = self.far.len_made();
        self.free.sort_unstable();
        let mut steps: Vec<(Time, u32)> = Vec::new();
        for (at, id) in self.free {
            match steps.last_mut() {
                Some(last) if id <= last.1 => {}
                Some(last) if last.0 == at => last.1 = id,
                _ => steps.push((at, id)),
            }
        }
        Reaches { far: self.far.shared(), span: self.span, last: Arc::new(self.last), steps: steps.into(), total }
    }
}

impl Reaches {
    /// The last message that may wait for message `m`.
    #[inline]
    pub fn reach(&self, m: u32) -> u32 {
        let near = m.saturating_add(self.span).min(self.total.saturating_sub(1));
        self.last.get(&m).map_or(near, |&far| far.max(near))
    }

    /// Whether most of the messages must join a run at its first instant that any does (a job
    /// that starts at 0 after a long one, an alltoall's every message): a run makes them
    /// before its first event then, their lists of dependents in the build's compressed form
    /// rather than a list each (`host::nic::More`).
    pub fn front_heavy(&self) -> bool {
        self.step(0).is_some_and(|(_, id)| u64::from(id) + 1 > u64::from(self.total) / 2)
    }

    /// How far after a message its readers are looked for before they count as far.
    pub fn span(&self) -> u32 {
        self.span
    }

    /// The `k`-th (time, id) by which messages that wait for none must have joined.
    pub fn step(&self, k: usize) -> Option<(Time, u32)> {
        self.steps.get(k).copied()
    }
}

/// A batch of messages as the planner made them: hosts by leaf slot, what each waits for,
/// their tags.
#[derive(Debug, Default)]
pub struct Made {
    pub specs: Vec<MessageSpec>,
    pub deps: Deps,
    pub tags: Vec<Tag>,
}

impl Made {
    pub fn len(&self) -> usize {
        self.specs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}

/// The planner on its own thread, its messages taken in order ([`Producer::take`]).
#[derive(Debug)]
pub struct Producer {
    /// (in a lock only so that a run may be shared between threads: it is taken from with
    /// `&mut`, never locked)
    rx: Mutex<Receiver<Made>>,
    /// The batch being taken from, and how many of it were taken.
    current: Made,
    at: usize,
    /// Messages taken so far, and in all.
    taken: u32,
    total: u32,
}

/// The sink the planner makes into on the producer's thread.
struct Channel {
    tx: SyncSender<Made>,
    batch: Made,
    made: u32,
    base: u32,
    topo: Arc<Topology>,
}

/// What unwinds the planner once the run that took its messages went away.
struct Gone;

impl Channel {
    fn send(&mut self) {
        let batch = std::mem::take(&mut self.batch);
        if !batch.is_empty() && self.tx.send(batch).is_err() {
            // the run went away: the planner stops (unwound without the panic hook: no message)
            std::panic::resume_unwind(Box::new(Gone));
        }
    }
}

impl Sink for Channel {
    fn push(&mut self, spec: MessageSpec, after: &[u32], tag: Tag) -> u32 {
        self.batch.specs.push(spec.on_slots(&self.topo));
        self.batch.deps.push(after);
        self.batch.tags.push(tag);
        if self.batch.len() >= BATCH {
            self.send();
        }
        self.made += 1;
        self.base + self.made - 1
    }

    fn len(&self) -> usize {
        self.made as usize
    }
}

impl Producer {
    /// Runs `plan` on a thread of its own: the messages it makes (`total` of them, numbered
    /// from `base`; hosts by leaf slot of `topo`) wait to be taken.
    pub fn spawn(base: u32, total: u32, topo: Arc<Topology>, plan: impl FnOnce(&mut dyn Sink) + Send + 'static) -> Producer {
        let (tx, rx) = sync_channel(AHEAD);
        std::thread::Builder::new()
            .name("fabricsim-jobs".into())
            .spawn(move || {
                let mut sink = Channel { tx, batch: Made::default(), made: 0, base, topo };
                let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    plan(&mut sink);
                    sink.send();
                }));
                // (a panic of the planner's own goes on: the run's next take says so)
                if let Err(why) = made {
                    if !why.is::<Gone>() {
                        std::panic::resume_unwind(why);
                    }
                }
            })
            .expect("a thread for the jobs' planner");
        Producer { rx: Mutex::new(rx), current: Made::default(), at: 0, taken: 0, total }
    }

    /// Messages taken so far.
    pub fn taken(&self) -> u32 {
        self.taken
    }

    /// Messages not taken yet.
    pub fn left(&self) -> u32 {
        self.total - self.taken
    }

    /// The next `count` messages (fewer where fewer are left).
    pub fn take(&mut self, count: u32) -> Made {
        let count = count.min(self.left()) as usize;
        let mut out = Made { specs: Vec::with_capacity(count), deps: Deps::default(), tags: Vec::with_capacity(count) };
        while out.len() < count {
            if self.at == self.current.len() {
                let rx = self.rx.get_mut().expect("the producer's channel");
                self.current = rx.recv().expect("the jobs' planner makes the messages it counted");
                self.at = 0;
            }
            let n = (count - out.len()).min(self.current.len() - self.at);
            for i in self.at..self.at + n {
                out.deps.push(self.current.deps.of(i));
            }
            out.specs.extend_from_slice(&self.current.specs[self.at..self.at + n]);
            out.tags.extend_from_slice(&self.current.tags[self.at..self.at + n]);
            self.at += n;
        }
        self.taken += count as u32;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyConfig;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// The messages come in the order made, numbered from the base, each with what it waits
    /// for and its tag; a run that goes away stops the planner (it made at most the batches
    /// the channel holds, not all it would have).
    #[test]
    fn messages_come_in_order_and_the_planner_stops_when_the_run_goes() {
        let topo = Arc::new(TopologyConfig::default().build(|_| Ok(())).expect("the default fabric"));
        let made = Arc::new(AtomicU32::new(0));
        let count = made.clone();
        let plan = move |sink: &mut dyn Sink| {
            for i in 0..10_000_000u32 {
                let after: &[u32] = if i > 0 { &[100 + i - 1] } else { &[] };
                sink.push(MessageSpec::new(i % 4, 5, u64::from(i) + 1, 0, 0), after, Tag { job: 0, iteration: i, step: 0 });
                count.fetch_add(1, Ordering::Relaxed);
            }
        };
        let mut p = Producer::spawn(100, 10_000_000, topo, plan);
        let a = p.take(3);
        let b = p.take(BATCH as u32 + 2);
        assert_eq!((a.len(), b.len(), p.taken(), p.left()), (3, BATCH + 2, BATCH as u32 + 5, 10_000_000 - BATCH as u32 - 5));
        assert_eq!((a.specs[2].bytes, a.deps.of(2), a.tags[2].iteration), (3, &[101][..], 2));
        assert_eq!((b.specs[0].bytes, b.deps.of(0), b.tags[BATCH + 1].iteration), (4, &[102][..], BATCH as u32 + 4));
        drop(p);
        std::thread::sleep(std::time::Duration::from_millis(200));
        let stopped = made.load(Ordering::Relaxed);
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(made.load(Ordering::Relaxed), stopped, "the planner stopped");
        assert!(stopped as usize <= BATCH * (AHEAD + 3), "{stopped} made");
    }

    /// The readers' reach: within the span, or the last far reader; the messages that wait for
    /// none by their start, in steps increasing in both.
    #[test]
    fn reach_finds_the_last_reader_and_the_steps_of_messages_that_wait_for_none() {
        let mut r = Reach::new(4);
        let tag = Tag::NONE;
        let at = |start| MessageSpec::new(0, 1, 1, start, 0);
        r.push(at(5), &[], tag); // 0
        r.push(at(0), &[], tag); // 1
        r.push(at(0), &[0], tag); // 2
        r.push(at(9), &[], tag); // 3
        for _ in 4..10 {
            r.push(at(0), &[2], tag); // 4..9: 9 reads 2 from 7 back
        }
        r.push(at(5), &[], tag); // 10
        let r = r.finish();
        assert_eq!(r.total, 11);
        assert_eq!((r.reach(2), r.reach(0), r.reach(8)), (9, 4, 10));
        assert_eq!((r.step(0), r.step(1), r.step(2), r.step(3)), (Some((0, 1)), Some((5, 10)), None, None));
        assert!(!r.front_heavy());
    }
}
