//! Jobs made as the run goes (`Scenario::makes_jobs_as_it_goes`: a closed run in one piece):
//! their planner runs beside the run (`workload::making::Producer`) and the run takes its
//! messages, in the order they were made, as late as it may:
//! - every message that may wait for message `m` joins the run before `m` can complete: when
//!   `m` is released, it asks for those up to the last that may read it (`Reaches::reach`:
//!   within `SPAN` after it, or the last reader of the few read from further on), and the
//!   piece pauses for the driver, which takes them before the next event (`Asking`);
//! - a message that waits for none joins by its start: a duty of the run
//!   ([`Event::Generate`]) at each time by which the messages up to some id must have joined
//!   (`Reaches::step`), before any host's event of that instant.
//!
//! So no message that waits has heard of anything when it joins (what it waits for cannot
//! have completed), and it is registered as the build registers a message given up front:
//! its count of what it waits for, and its id on each of their lists (`host::nic::deps::More`,
//! in id order, as the build's reverse lists are); a message that waits for none starts at its
//! start under the order keys of its first release. What the run makes of a message does not
//! depend on when it joined (its id, its start's order key, its load balancers' own streams),
//! so a run whose jobs are made as it goes gives the tables of the same jobs made before its
//! first event, to the picosecond (`made/tests.rs`; the tests that compare one thread with
//! two compare the two ways too). A list of dependents goes once its message has told them
//! all (`Nics::forget`), so the lists follow the messages in flight. A run that stops takes
//! the rest for its tables, started never; the jobs' bounds are counted as messages join
//! (`stats::jobs::BoundsPass`) and are whole once the last has.

use super::generate::Joining;
use super::Simulation;
use crate::engine::{node_unit, Event};
use crate::host::nic::Asking;
use crate::switch::links::Sink;

/// The fewest messages the run takes when a released message asks for more, and the most a
/// run that stopped takes at once.
const AT_ONCE: u32 = 4096;
/// (a few in tests, so that the small runs stopped there take theirs in chunks)
const AT_END: u32 = if cfg!(test) { 64 } else { 1 << 20 };

impl Simulation {
    /// The run's first messages, at the build: those that wait for none and start at 0, and
    /// what they ask for; and the duty that takes the next.
    pub(super) fn begin_jobs(&mut self) {
        let Some(making) = &self.model.making else { return };
        self.pieces[0].nics.asking = Some(Box::new(Asking::new(making.reaches.clone())));
        self.jobs_duty(0);
    }

    /// [`Event::Generate`] at `now` (or the build at 0): the messages that wait for none and
    /// start by `now`, what they ask for, and the duty at the next such time.
    pub(super) fn jobs_duty(&mut self, now: crate::time::Time) {
        loop {
            let Some(making) = &mut self.model.making else { return };
            let drawn = self.pieces[0].nics.messages().len() as u32;
            match making.reaches.step(making.step) {
                Some((_, id)) if id < drawn => making.step += 1,
                Some((at, id)) if at <= now => {
                    making.step += 1;
                    self.make_jobs(id + 1 - drawn, false);
                }
                Some((at, _)) => {
                    self.schedule_duty(at, Event::Generate);
                    break;
                }
                None => break,
            }
        }
        self.take_asked();
    }

    /// Takes what the released messages asked for (every message that may wait for one of
    /// them), until they ask for nothing more.
    pub(super) fn take_asked(&mut self) {
        while self.model.making.is_some() {
            let nics = &self.pieces[0].nics;
            let Some(a) = &nics.asking else { return };
            let (drawn, wants) = (nics.messages().len() as u32, a.wants);
            if wants < drawn {
                return;
            }
            // (a few thousand at a time, fewer where readers are looked for less far: a message
            // joining earlier than it must changes nothing)
            self.make_jobs((wants + 1 - drawn).max(AT_ONCE.min(a.reaches.span())), false);
        }
    }

    /// The next `count` messages of the jobs join the run (never to start, `ended`: the rest
    /// of a run that stopped, for its tables, a chunk at a time into lists made room for at
    /// once).
    pub(super) fn make_jobs(&mut self, count: u32, ended: bool) {
        if ended && count > AT_END {
            for _ in 0..count.div_ceil(AT_END) {
                // (room for all that is left, this chunk's included: reserved once)
                let room = self.model.making.as_ref().map_or(0, |m| m.producer.left() as usize);
                self.make_chunk(AT_END, room, ended);
            }
            return;
        }
        self.make_chunk(count, 0, ended);
    }

    /// [`Simulation::make_jobs`] of at most `count` messages, `room` (with these) still to
    /// come that the lists make room for at once ([`Joining::Waiting`]).
    fn make_chunk(&mut self, count: u32, room: usize, ended: bool) {
        let Some(making) = &mut self.model.making else { return };
        let made = making.producer.take(count);
        for (i, spec) in made.specs.iter().enumerate() {
            making.bounds.push(spec, made.deps.of(i), made.tags[i]);
        }
        if making.producer.left() == 0 {
            let making = self.model.making.take().expect("making");
            self.model.job_bounds = making.bounds.finish();
        }
        let first = self.add_all(&made.specs, Joining::Waiting { room });
        self.model.tags[first as usize..].copy_from_slice(&made.tags);
        let p = &mut self.pieces[0];
        let mut lists = Vec::new();
        for (id, spec) in (first..).zip(&made.specs) {
            let after = made.deps.of((id - first) as usize);
            let h = &mut p.hosts[self.cut.host(spec.src)];
            if after.is_empty() {
                match ended {
                    true => p.nics.start_never(h, id as usize),
                    false => {
                        let me = p.queue.origin(node_unit(spec.src));
                        p.nics.start_free(h, &mut Sink::new(&mut p.queue, &mut p.links, me), id as usize);
                    }
                }
            } else if !ended {
                lists.extend(after.iter().map(|&d| (d, id)));
                p.nics.wait_for(id as usize, after.len() as u32);
            }
        }
        self.add_dependents(&lists);
    }

    /// Whether a message of the jobs that waits for none has not joined yet (it starts later,
    /// as those that joined and wait for their start: the no-progress guard).
    pub(super) fn jobs_to_start(&self) -> bool {
        self.model.making.as_ref().is_some_and(|m| m.reaches.step(m.step).is_some())
    }

    /// A run that stopped takes the rest of its jobs, for its tables.
    pub(super) fn make_rest(&mut self) {
        if let Some(making) = &self.model.making {
            self.make_jobs(making.producer.left(), true);
        }
    }
}

#[cfg(test)]
mod tests;
