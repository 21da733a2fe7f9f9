//! Messages that join a run as it goes: a trace's arrivals drawn as the clock reaches them
//! ([`crate::workload::trace::Arrivals`]), and a session's messages ([`super::session`]).
//!
//! A trace drawn as the run goes (`Scenario::draws_as_it_goes`) gives the run its first
//! messages at the build, and a duty of the run ([`Event::Generate`]) at the start of the last
//! of them takes the next: a batch of at least [`BATCH_PER_HOST`] a host, and every message
//! that starts with the batch's last, so that every message joins the run strictly before its
//! start. What the run makes of a message does not depend on when it joined: its id is its
//! place in the trace's order (by start, then source host), its start's order key is numbered
//! by the message (`engine::start_order`), its load balancers draw from its own stream
//! (`host::factory`), and what each host will receive all told (the parallel engine's end
//! bound) is counted at the build over the whole trace. So a trace drawn as the run goes and
//! the same messages given up front give the same run, to the picosecond (the golden trace
//! scenario, and `tests/integration/generate.rs` in batches of 16 messages, on one piece, three
//! and two threads). A run that stops before its trace is drawn takes the rest then, for its
//! tables, without scheduling their starts: the messages it never started are rows as they
//! would have been.

use std::sync::Arc;

use super::Simulation;
use crate::engine::{node_unit, Event};
use crate::host::factory::ConnFactory;
use crate::host::message::Message;
use crate::host::nic::More;
use crate::host::table::{ConnCatalog, End, Layout};
use crate::scenario::Model;
use crate::switch::links::Sink;
use crate::time::Time;
use crate::workload::collective::Tag;
use crate::workload::MessageSpec;

/// The least messages a host a batch of a trace's arrivals holds, on average; and the batches a
/// run that stopped takes the rest of its trace in.
const BATCH_PER_HOST: usize = 1;
const WHOLE_BATCH_PER_HOST: usize = 64;

impl Model {
    /// The run's messages, a trace's drawn as it goes and jobs made as it goes included.
    pub fn message_count(&self) -> usize {
        self.messages.len() + self.left_to_join()
    }

    /// Messages of a trace drawn as the run goes, or of jobs made as it goes, that have not
    /// joined it yet.
    pub fn left_to_join(&self) -> usize {
        self.arrivals.as_ref().map_or(0, |a| a.left() as usize) + self.making.as_ref().map_or(0, |m| m.producer.left() as usize)
    }

    /// Calls `f` with each of the run's messages (hosts by leaf slot), in no set order.
    pub(crate) fn each_message(&self, mut f: impl FnMut(&MessageSpec)) {
        self.each_drawn(&mut f);
        self.messages.iter().for_each(f);
    }

    /// Calls `f` with each message of a trace drawn as the run goes not drawn yet (hosts by
    /// leaf slot), in no set order.
    fn each_drawn(&self, mut f: impl FnMut(&MessageSpec)) {
        if let Some(a) = &self.arrivals {
            a.each(|m| f(&m.on_slots(&self.topo)));
        }
    }

    /// What a trace drawn as the run goes will bring, counted at the build: what each host will
    /// receive, added to `incoming` (the parallel engine's end bound reads it from the first
    /// window), and its connections, returned.
    pub(crate) fn count_drawn(&self, factory: &ConnFactory, incoming: &mut [u64]) -> u64 {
        let mut conns = 0;
        self.each_drawn(|m| {
            incoming[m.dst as usize] += factory.incoming(m);
            conns += u64::from(crate::stats::least::connections(&self.topo, self.lb.subflows(), m));
        });
        conns
    }

    /// Makes a trace drawn as the run goes whole, as the first of the messages (a run across
    /// processes takes its messages up front).
    pub(crate) fn draw_whole(&mut self) {
        let Some(a) = self.arrivals.take() else { return };
        let topo = self.topo.clone();
        let mut drawn: Vec<MessageSpec> = a.map(|m| m.on_slots(&topo)).collect();
        drawn.append(&mut self.messages);
        self.messages = drawn;
        self.tags.splice(0..0, std::iter::repeat_n(Tag::NONE, self.messages.len() - self.tags.len()));
    }
}

impl Simulation {
    /// Adds the next batch of a trace drawn as the run goes (all that is left with `whole`, a
    /// batch at a time), and schedules the duty that takes the batch after it, at the start of
    /// this one's last.
    pub(super) fn draw(&mut self, whole: bool) {
        let batch = self.model.topo.hosts() as usize * if whole { WHOLE_BATCH_PER_HOST } else { BATCH_PER_HOST };
        loop {
            let Some(arrivals) = self.model.arrivals.as_mut() else { return };
            let mut specs = Vec::with_capacity(batch.min(arrivals.left() as usize));
            while let Some(m) = arrivals.next() {
                specs.push(m.on_slots(&self.model.topo));
                if specs.len() >= batch && arrivals.peek() != Some(m.start) {
                    break;
                }
            }
            let last = specs.last().map(|m| m.start);
            // room for the whole trace at its first batch (no list grows by doubling past it)
            let room = specs.len() + arrivals.left() as usize;
            if arrivals.peek().is_none() {
                self.model.arrivals = None;
            }
            self.add_all(&specs, if whole { Joining::Ended { room } } else { Joining::Drawn { room } });
            if !whole {
                if let (Some(at), Some(_)) = (last, &self.model.arrivals) {
                    self.schedule_duty(at, Event::Generate);
                }
                return;
            }
        }
    }

    /// Adds messages `specs` (each waits for nothing) to the run, between windows, numbered
    /// after those it has, as `how` says; returns the first's id.
    pub(super) fn add_all(&mut self, specs: &[MessageSpec], how: Joining) -> u32 {
        let (room, expect) = match how {
            Joining::Sent => (0, true),
            Joining::Waiting { room } => (room, true),
            Joining::Drawn { room } | Joining::Ended { room } => (room, false),
        };
        let first = self.pieces[0].nics.messages().len() as u32;
        let home = (self.pieces.len() > 1).then(|| self.cut.homes().clone());
        let rows = self.pieces.iter().map(|p| p.nics.connections().rows_held()).collect();
        let held = self.pieces.iter().map(|p| p.nics.states().len()).collect();
        let first_conn = self.pieces[0].nics.connections().len() as u32;
        let mut layout = Layout::after(rows, held, (first, first_conn));
        let factory = self.pieces[0].nics.connections().factory();
        let incoming: Vec<u64> = specs.iter().map(|spec| layout.push(factory, spec, home.as_deref())).collect();
        // the shared lists grow in place: every piece lets go of them, one appends
        let mut catalogs: Vec<ConnCatalog> = self.pieces.iter_mut().map(|p| p.nics.connections_mut().take_catalog()).collect();
        let mut catalog = catalogs.pop().unwrap_or_default();
        drop(catalogs);
        let (alone, conns) = (self.pieces.len() == 1, room * self.model.lb.subflows() as usize);
        catalog.reserve(room, conns, !alone);
        catalog.append(&layout.catalog);
        let mut lists: Vec<_> = self.pieces.iter_mut().map(|p| p.nics.take_messages()).collect();
        let mut messages = lists.pop().unwrap_or_default();
        drop(lists);
        let list = std::sync::Arc::make_mut(&mut messages);
        list.reserve_exact(room);
        list.extend(specs.iter().zip(&layout.ids).map(|(&spec, ids)| Message { spec, first: ids.start, count: ids.len() as u32 }));
        for (i, p) in self.pieces.iter_mut().enumerate() {
            p.nics.connections_mut().give_catalog(catalog.clone());
            p.nics.give_messages(messages.clone());
            if alone {
                // (a piece of several holds the ends of some: they grow as they go)
                p.nics.connections_mut().reserve(conns);
                p.nics.reserve(room);
            }
            p.nics.connections_mut().add_rows(&layout.bytes[i]);
            p.nics.add_message(layout.messages[i]);
            if expect {
                for (spec, &bytes) in specs.iter().zip(&incoming).filter(|(s, _)| p.links.is_home(s.dst)) {
                    p.hosts[self.cut.host(spec.dst)].expect(bytes);
                }
            }
        }
        self.model.tags.reserve_exact(room);
        self.model.tags.extend(std::iter::repeat_n(Tag::NONE, specs.len()));
        for (m, spec) in (first..).zip(specs) {
            let p = &mut self.pieces[usize::from(self.cut.home(spec.src))];
            let me = p.queue.origin(node_unit(spec.src));
            let h = &mut p.hosts[self.cut.host(spec.src)];
            match how {
                Joining::Ended { .. } => p.nics.start_never(h, m as usize),
                Joining::Waiting { .. } => {}
                _ => p.nics.start_free(h, &mut Sink::new(&mut p.queue, &mut p.links, me), m as usize),
            }
        }
        first
    }
}

impl Simulation {
    /// Adds message `spec` (hosts by leaf slot), which waits for the messages `after` (each of
    /// them crossing the fabric), between windows at time `now` (every event before it ran);
    /// returns its id. Its source hears of each as it would have had the message been in the
    /// run from the start (`host::nic::deps`): at once at the receiver, at the final ACK at
    /// the sender, after a notice elsewhere. One heard of by `now` counts as done; one whose
    /// notice is still on its way is told when it would arrive; the others tell it when they
    /// complete ([`More`]). Waiting for none left, it starts at its start.
    pub(super) fn add_waiting(&mut self, spec: MessageSpec, after: &[u32], now: Time) -> u32 {
        let d = self.add_all(&[spec], Joining::Waiting { room: 0 });
        let (mut waits, mut tells, mut lists) = (0, Vec::new(), Vec::new());
        for &a in after {
            let msg = self.pieces[0].nics.messages()[a as usize];
            let (rx, tx) = (usize::from(self.cut.home(msg.spec.dst)), usize::from(self.cut.home(msg.spec.src)));
            let done = self.pieces[rx].nics.state(a as usize, End::Rx).done == msg.count;
            let acked = self.pieces[tx].nics.state(a as usize, End::Tx).acked == msg.count;
            let by = spec.src;
            let heard = match by {
                by if by == msg.spec.dst => done,
                by if by == msg.spec.src => acked,
                _ if !done => false,
                _ => {
                    // complete: its receiver's notice reaches `by` a latency after its end
                    let conns = self.pieces[rx].nics.connections();
                    let end = msg.connections().filter_map(|c| conns.row(c as u32).end()).max().unwrap_or(now);
                    let at = end + conns.notify_latency(msg.spec.dst, by);
                    if at > now {
                        tells.push(at);
                        waits += 1;
                    }
                    continue;
                }
            };
            if !heard {
                lists.push((a, d));
                waits += 1;
            }
        }
        self.add_dependents(&lists);
        let p = &mut self.pieces[usize::from(self.cut.home(spec.src))];
        let me = p.queue.origin(node_unit(spec.src));
        if waits == 0 {
            let h = &mut p.hosts[self.cut.host(spec.src)];
            p.nics.start_free(h, &mut Sink::new(&mut p.queue, &mut p.links, me), d as usize);
        } else {
            p.nics.wait_for(d as usize, waits);
            for at in tells {
                p.queue.schedule(me, at, Event::Release(d));
            }
        }
        d
    }
}

impl Simulation {
    /// Adds message `d` to the added list of dependents of message `a`, for each `(a, d)` of
    /// `pairs` ([`More`]). Every piece holds the same lists: they let go of them while they
    /// grow (no copy is made) and take them back, and no other copy is kept, so that a run in
    /// one piece drops a list once its message has told them all (`Nics::forget`).
    pub(super) fn add_dependents(&mut self, pairs: &[(u32, u32)]) {
        if pairs.is_empty() {
            return;
        }
        let mut more = self.pieces[0].nics.take_more();
        for p in &mut self.pieces[1..] {
            p.nics.set_more(More::default());
        }
        let lists = Arc::make_mut(&mut more);
        for &(a, d) in pairs {
            lists.entry(a).or_default().push(d);
        }
        for p in &mut self.pieces[1..] {
            p.nics.set_more(more.clone());
        }
        self.pieces[0].nics.set_more(more);
    }
}

/// How messages join a running run ([`Simulation::add_all`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Joining {
    /// Sent into a session: each adds its bytes to what its destination will receive.
    Sent,
    /// As `Sent`, what each waits for and its start left to the caller: sent into a session
    /// waiting for other messages ([`Simulation::add_waiting`]), or made by the jobs' planner
    /// as the run goes (`sim::made`); `room` messages still to come with these, which the
    /// lists make room for at once (the rest of a run that stopped; none as it goes: they grow
    /// as lists do).
    Waiting { room: usize },
    /// Drawn from a trace (what each host receives was counted at the build), `room` messages
    /// still to come with these, which the lists make room for at once.
    Drawn { room: usize },
    /// Drawn from a trace for the tables of a run that has ended: never started.
    Ended { room: usize },
}
