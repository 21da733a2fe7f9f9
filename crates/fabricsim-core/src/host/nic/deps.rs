//! Releasing messages that wait for others ([`crate::workload::Deps`]). Each message waiting
//! for message `m` is released by its own source host, which learns that `m` completed as a
//! host can:
//! - `m`'s receiver knows when its last byte arrives (a ring's next step, sent by the rank
//!   that just received);
//! - `m`'s sender knows when its last packet is acknowledged: the final ACK crossed the
//!   fabric back to it (a rank's next step that waits for its own send);
//! - any other host hears of it by a notice from the receiver (`Release`), which takes an
//!   empty packet's one-way latency over a shortest path (links and switch traversals, no
//!   serialization or queueing), or its server's scale-up network's latency if shorter.
//!
//! A message on a scale-up network tells its sender `L` after its delivery (`UpAck`,
//! `scale_up.rs`); a compute task, done when released, tells its own host at once.
//!
//! No host learns of another's completion sooner than a packet could tell it, so a run cut
//! into pieces sees every influence between hosts take time. A message is released when it
//! has heard of the last of its dependencies, after its own delay and not before its start;
//! one whose delay runs on a CPU of its host (`MessageSpec::cpu`) claims the CPU then and
//! begins its delay when the CPU is free (LogGOPSim's `nexto` per CPU: Hoefler et al.,
//! "LogGOPSim", LSAP 2010, sec. 3; its `LogGOPSim.cpp`, where an operation whose CPU is busy
//! is queued again at the time it frees).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{Host, Nics};
use crate::engine::{node_unit, start_order, Event, EventQueue};
use crate::host::message::MsgState;
use crate::host::table::End;
use crate::switch::links::{Links, Sink};
use crate::time::Time;
use crate::workload::collective::first_release;
use crate::workload::making::Reaches;
use crate::workload::Deps;

/// What a run's lists of dependencies did not have when it was built: for a message, the
/// messages sent into the running run (a session's `after`) that wait for it. Shared by the
/// pieces, as the messages are; grown between windows.
pub type More = Arc<FxHashMap<u32, Vec<u32>>>;

/// A run whose jobs are made as it goes (`sim::generate`): each message released asks that
/// every message that may wait for it have joined the run before it can complete (the
/// furthest it reaches, [`Reaches::reach`]); the piece pauses for the driver then, as for a
/// completion, which takes them ([`Nics::take_asked`]).
#[derive(Debug)]
pub struct Asking {
    pub reaches: Reaches,
    /// The furthest message asked for, and the asks not yet taken.
    pub wants: u32,
    asked: u32,
}

impl Asking {
    pub fn new(reaches: Reaches) -> Asking {
        Asking { reaches, wants: 0, asked: 0 }
    }
}

impl Nics {
    /// The dependencies added since the run was built ([`More`]).
    pub fn set_more(&mut self, more: More) {
        self.more = more;
    }

    /// The pauses asked for messages to join the run since the last call ([`Asking`]): the
    /// completions reported count them too.
    pub fn take_asked(&mut self) -> u32 {
        self.asking.as_mut().map_or(0, |a| std::mem::take(&mut a.asked))
    }

    /// Message `m` is done with its dependents (they heard of it): where this piece alone
    /// holds the added lists, its list goes.
    pub(super) fn forget(&mut self, m: usize) {
        if let Some(more) = Arc::get_mut(&mut self.more) {
            more.remove(&(m as u32));
        }
    }

    /// The dependencies added since the run was built, taken (none are left).
    pub fn take_more(&mut self) -> More {
        std::mem::take(&mut self.more)
    }

    /// Messages whose added lists of dependents are held ([`More`]).
    pub fn more_len(&self) -> usize {
        self.more.len()
    }

    /// Whether any message waits for another.
    pub(super) fn has_waiters(&self) -> bool {
        !self.dependents.is_empty() || !self.more.is_empty()
    }

    /// How many messages wait for message `m`, and the `k`-th of them.
    pub(super) fn waiters(&self, m: usize) -> usize {
        self.dependents.of(m).len() + self.more.get(&(m as u32)).map_or(0, Vec::len)
    }

    pub(super) fn waiter(&self, m: usize, k: usize) -> usize {
        let listed = self.dependents.of(m);
        match listed.get(k) {
            Some(&d) => d as usize,
            None => self.more[&(m as u32)][k - listed.len()] as usize,
        }
    }

    /// Message `m`'s count at its `end` (this piece must hold that end).
    pub fn state(&self, m: usize, end: End) -> MsgState {
        self.states[self.conns.msg_at(m, end)]
    }

    /// Message `m`, of this piece's hosts, waits for `count` more messages.
    pub fn wait_for(&mut self, m: usize, count: u32) {
        let at = self.conns.msg_at(m, End::Tx);
        self.waiting[at] = count;
    }

    /// Takes the messages' dependencies (`deps`, one list per message, and `dependents`, its
    /// reverse: [`Deps::dependents`]) and schedules the start of every message of this
    /// piece's hosts that waits for none, numbered by its source host (into `q`; a start
    /// puts nothing on `links`).
    pub fn schedule_starts(&mut self, hosts: &mut [Host], q: &mut EventQueue, links: &mut Links, deps: &Deps, dependents: Arc<Deps>) {
        self.waiting = vec![0; self.states.len()];
        self.dependents = dependents;
        for m in 0..self.messages.len() {
            let spec = self.messages[m].spec;
            if !links.is_home(spec.src) {
                continue;
            }
            let waits = deps.of(m).len() as u32;
            self.waiting[self.conns.msg_at(m, End::Tx)] = waits;
            if waits == 0 {
                let me = q.origin(node_unit(spec.src));
                let h = &mut hosts[self.slot.of(spec.src)];
                self.start_free(h, &mut Sink::new(q, links, me), m);
            }
        }
    }

    /// Schedules the start of message `m`, which waits for no other (one given up front, or
    /// sent into a running run): at its start, or when its CPU has run its delay, under the
    /// order keys of its first release ([`start_order`]), whenever it is made (`h`, `out`:
    /// its source host's).
    pub fn start_free(&mut self, h: &mut Host, out: &mut Sink, m: usize) {
        let spec = self.messages[m].spec;
        let at = match spec.cpu {
            Some(cpu) => h.claim(cpu, spec.start, spec.delay),
            None => first_release(&spec),
        };
        self.release(h, out, m, at, true);
    }

    /// What [`Nics::start_free`] records of message `m` (its release, what its host has
    /// pending) without scheduling its start: a message that joins a run that has ended (the
    /// rest of a trace, drawn for the tables: `sim::generate`). It waits for nothing, and its
    /// delay holds no CPU.
    pub fn start_never(&mut self, h: &mut Host, m: usize) {
        let msg = self.messages[m];
        self.states[self.conns.msg_at(m, End::Tx)].released = first_release(&msg.spec);
        h.pending += msg.count.max(1);
    }

    /// Releases message `m` at `at`: its connections start then, numbered by its source host,
    /// under the keys of its first release if `first`.
    pub(super) fn release(&mut self, h: &mut Host, out: &mut Sink, m: usize, at: Time, first: bool) {
        let msg = self.messages[m];
        if let Some(a) = &mut self.asking {
            let reach = a.reaches.reach(m as u32);
            if reach >= self.messages.len() as u32 && reach > a.wants {
                (a.wants, a.asked, self.reported) = (reach, a.asked + 1, self.reported + 1);
            }
        }
        self.states[self.conns.msg_at(m, End::Tx)].released = at;
        let unit = node_unit(msg.spec.src);
        debug_assert_eq!((out.me().unit, h.node), (unit, msg.spec.src), "a message is released by its source host");
        let mut schedule = |part: u32, event: Event| match first {
            true => out.schedule_ordered(at, start_order(unit, m as u32, part), event),
            false => out.schedule(at, event),
        };
        if msg.count == 0 {
            schedule(0, if msg.spec.is_compute() { Event::Computed(m as u32) } else { Event::UpSend(m as u32) });
            h.pending += 1;
            return;
        }
        for (part, c) in msg.connections().enumerate() {
            schedule(part as u32, Event::ConnStart(c as u32));
        }
        h.pending += msg.count;
    }

    /// Message `m` completed at `now` at its receiver `host`: each message waiting for it
    /// hears of it, at once if `host` is its source, by a notice if a third host is (its
    /// sender hears of it by its final ACK, [`Nics::acknowledged`]).
    #[cold]
    pub(super) fn completed(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: usize) {
        let (host, sender) = (h.node, self.messages[m].spec.src);
        for k in 0..self.waiters(m) {
            let d = self.waiter(m, k);
            let spec = self.messages[d].spec;
            let src = spec.src;
            if spec.via.through() {
                // a leg of a scale-up switch that cuts through heard of it at its first bit
                // (`scale_up`)
                continue;
            }
            if src == host {
                self.heard(h, out, now, d);
            } else if src != sender {
                h.notices_sent += 1;
                let at = now + self.conns.notify_latency(host, src);
                out.tell(src, at, Event::Release(d as u32));
            }
        }
    }

    /// Every packet of message `m` is acknowledged at its sender `host`, now: the messages
    /// it sources that wait for `m` hear of it.
    #[cold]
    pub(super) fn acknowledged(&mut self, h: &mut Host, out: &mut Sink, now: Time, m: usize) {
        let (host, receiver) = (h.node, self.messages[m].spec.dst);
        for k in 0..self.waiters(m) {
            let d = self.waiter(m, k);
            if self.messages[d].spec.src == host && host != receiver {
                self.heard(h, out, now, d);
            }
        }
        self.forget(m);
    }

    /// `Release`: message `d`'s source host learns that one of the messages it waits for
    /// completed.
    pub(super) fn on_release(&mut self, h: &mut Host, out: &mut Sink, now: Time, d: u32) {
        h.notices_taken += 1;
        self.heard(h, out, now, d as usize);
    }

    /// One of the messages `d` waits for is known complete at `now`: once none is left, it
    /// is released after its delay and not before its start.
    pub(super) fn heard(&mut self, h: &mut Host, out: &mut Sink, now: Time, d: usize) {
        let at = self.conns.msg_at(d, End::Tx);
        self.waiting[at] -= 1;
        if self.waiting[at] == 0 {
            let spec = self.messages[d].spec;
            let at = match spec.cpu {
                Some(cpu) => h.claim(cpu, spec.start.max(now), spec.delay),
                None => spec.start.max(now.saturating_add(spec.delay)),
            };
            self.release(h, out, d, at, false);
        }
    }
}
