//! A piece of a run: some hosts and switches (units), their state and their event queue.
//!
//! A run is cut into pieces by node ([`partition`]): an edge switch (a leaf) with its hosts,
//! the switches above with the pieces below them or spread over the pieces. A piece runs only
//! its own units' events, in its own queue; what one piece's unit does to another's reaches it
//! only by a link (a packet put on a wire whose far end is elsewhere waits in the fabric's
//! outbox) or by a release notice (the NICs' outbox), which the driver hands over
//! ([`Piece::hand_over`]). Each piece holds only its own units, at local indices
//! ([`crate::topology::Cut`]): its hosts' NICs and connections, its switches, the ports its
//! nodes send on and the wires into them, and the counters of its units' events; ids stay
//! global between pieces and in the results, which read each unit in the piece it belongs to
//! or sum over the pieces. Event keys are (time, unit, sequence within the unit), so the
//! pieces' queues merged by key give one order whatever the cut: a run gives the same results
//! in one piece or many.

use crate::budget;
use crate::engine::{node_unit, Event, EventQueue, Notice, Origin};
use crate::host::nic::{Host, Input as HostInput, NicCounts, Nics};
use crate::packet::{Kind, Packet};
use crate::scenario::Model;
use crate::switch::forward::{Fabric, Input, Switch};
use crate::switch::links::{Handed, Links, Sink};
use crate::time::{serialization, Time};
use crate::topology::{Cut, Topology};

/// What one piece sends another: packets for the wires it holds (where it keeps the wire,
/// arrival, packet) and what a host tells its hosts (release notices, messages on a scale-up
/// network).
#[derive(Default)]
pub(crate) struct Mail {
    pub packets: Vec<(u32, Time, Packet)>,
    pub notices: Vec<Notice>,
}

impl Mail {
    /// Whether it holds neither packets nor notices.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty() && self.notices.is_empty()
    }
}

/// Hosts and switches with their state and their events.
pub(crate) struct Piece {
    pub queue: EventQueue,
    /// Its ports and wires, and what it hands other pieces.
    pub links: Links,
    /// Its switches, and what they share.
    pub switches: Vec<Switch>,
    pub fabric: Fabric,
    /// Its hosts, and what they share.
    pub hosts: Vec<Host>,
    pub nics: Nics,
    /// Completions the driver has counted of this piece's.
    pub counted: u32,
    /// Events its last parallel window ran.
    pub ran: u64,
}

/// Why [`Piece::run`] paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pause {
    /// A duty of the whole run came up (taken from the queue; `u32`: its unit): the driver
    /// runs it.
    Duty(Event, u32),
    /// An event completed a message or handed something to another piece.
    Changed,
    /// The next event's key is at the bound, the queue is empty, or the budget is spent.
    Bound,
}

impl Pause {
    /// When [`Piece::run`] pauses besides duties and its bound: after a completion or a
    /// hand-over, ...
    pub const ON_ALL: u8 = 2;
    /// ... after a completion ...
    pub const ON_COMPLETION: u8 = 1;
    /// ... or never.
    pub const NEVER: u8 = 0;
}

impl Piece {
    /// Runs this piece's events while their keys stay below `bound` and `left` allows (each
    /// event takes one; `now` follows them), until one needs the driver ([`Pause`]). With
    /// `PAUSE` one of [`Pause::ON_ALL`] (in turns with other pieces), [`Pause::ON_COMPLETION`]
    /// (the only piece: nothing is handed over) or [`Pause::NEVER`] (a window of the parallel
    /// engine, which no other piece can reach into and no duty falls in).
    #[inline]
    pub fn run<const PAUSE: u8>(&mut self, bound: u128, left: &mut u64, now: &mut Time) -> Pause {
        while *left > 0 {
            let Some((at, event, by)) = self.queue.pop_below(bound) else { break };
            *left -= 1;
            *now = at;
            if by < 2 {
                // numbered by the fault timeline or the recorders: a duty of the whole run. A
                // sample only reads the run, and a trace's next messages join it before they
                // start: neither is one of its events, so that `stop.max_events` cuts a run at
                // the same event with `[samples]` or without, its trace drawn as it goes or not
                if matches!(event, Event::Sample | Event::Generate) {
                    *left += 1;
                }
                return Pause::Duty(event, by);
            }
            // start loading what the next event reads so that its cache miss overlaps this
            // event's work: the large runs are memory-bound
            match self.queue.peek_drained() {
                Some(Event::PipeArrive(p)) => self.links.prefetch(p),
                Some(Event::PortFree(p)) => self.links.prefetch_out(p),
                _ => {}
            }
            debug_assert_eq!(self.unit_of(event, by), self.owner_of(event), "{event:?} scheduled by unit {by}");
            debug_assert!(self.links.is_home(self.unit_of(event, by) - 2), "{event:?} runs in its unit's piece");
            self.dispatch(at, event, by);
            if (PAUSE != Pause::NEVER && self.nics.reported() != self.counted) || (PAUSE == Pause::ON_ALL && self.has_outgoing()) {
                return Pause::Changed;
            }
        }
        Pause::Bound
    }

    /// The unit an event belongs to (what it schedules is numbered by that unit), from the
    /// unit that scheduled it (`by`): the same unit, except for a packet's arrival (the far
    /// end of the wire) and a release notice (the message's source host). Every other event
    /// is scheduled by the unit that handles it: a port's wake-up by its node, a connection's
    /// start and timers by its source host, a CNP window by its receiver (a debug assertion
    /// checks this on every event the tests run).
    #[inline]
    pub fn unit_of(&self, event: Event, by: u32) -> u32 {
        match event {
            Event::PipeArrive(w) => node_unit(self.links.wire_at(w).to),
            Event::Release(m) | Event::UpAck(m) => node_unit(self.nics.messages()[m as usize].spec.src),
            Event::UpArrive(m) => node_unit(self.nics.messages()[m as usize].spec.dst),
            _ => by,
        }
    }

    /// The unit that owns `event`'s state, found the long way (for the debug check).
    pub fn owner_of(&self, event: Event) -> u32 {
        match event {
            Event::PortFree(at) => node_unit(self.fabric.topology().ports[self.links.port_at(at).id as usize].from),
            Event::PipeArrive(w) => node_unit(self.fabric.topology().ports[self.links.wire_at(w).id() as usize].to),
            Event::ConnStart(c) | Event::Posted(c) | Event::Rto(c) | Event::CcTimer(c) => node_unit(self.nics.ends(c).0),
            Event::CnpTimer(c) => node_unit(self.nics.ends(c).1),
            Event::Release(m) | Event::UpSend(m) | Event::UpAck(m) | Event::Computed(m) => {
                node_unit(self.nics.messages()[m as usize].spec.src)
            }
            Event::UpArrive(m) | Event::UpDone(m) | Event::UpBegin(m) => node_unit(self.nics.messages()[m as usize].spec.dst),
            Event::NicWake(h) | Event::UpFree(h) => node_unit(h),
            Event::Faults | Event::Sample | Event::Window | Event::Watch | Event::Generate => unreachable!("the driver's duties"),
        }
    }

    /// Hands a host's or a switch's event to the component it concerns (inlined into each
    /// loop that runs events: a call per event costs 6 % of the instructions), as its unit
    /// ([`Piece::unit_of`] from `by`, the unit that numbered it; a packet's arrival learns its
    /// unit from the wire it takes, which saves a look at the wire before the event).
    #[inline(always)]
    pub fn dispatch(&mut self, now: Time, event: Event, by: u32) {
        let q = &mut self.queue;
        // the most common event first, on its own (one match less for it: 3 M instructions of
        // the mid run)
        if let Event::PipeArrive(p) = event {
            // the node and the packet apart: an `Option<(node, packet)>` was copied through
            // the stack at an offset of 4 bytes, and the next reads of it stalled
            let w = self.links.wire_at(p);
            let (node, at) = (w.to, w.to_at);
            let pkt = self.links.arrive(q, p);
            let out = &mut Sink::new(q, &mut self.links, Origin { unit: node_unit(node), at });
            if self.fabric.is_host(node) {
                let h = &mut self.hosts[Cut::host_at(at)];
                debug_assert_eq!(h.node, node);
                self.nics.handle(h, out, now, HostInput::Packet(pkt));
            } else {
                let sw = &mut self.switches[self.fabric.switch_at(at)];
                debug_assert_eq!(sw.node, node);
                sw.handle(&mut self.fabric, out, now, Input::Packet(pkt, p));
            }
            return;
        }
        // the next most common (its port knows its node's counter)
        if let Event::PortFree(p) = event {
            let port = self.links.port_at(p);
            let (me, nic) = (Origin { unit: by, at: port.from_at }, self.links.is_nic(p));
            self.links.on_port_free(p);
            let out = &mut Sink::new(q, &mut self.links, me);
            if nic {
                self.nics.handle(&mut self.hosts[Cut::host_at(me.at)], out, now, HostInput::PortFree(p));
            } else {
                self.switches[self.fabric.switch_at(me.at)].handle(&mut self.fabric, out, now, Input::PortFree(p));
            }
            return;
        }
        let unit = match event {
            Event::Release(m) | Event::UpAck(m) => node_unit(self.nics.messages()[m as usize].spec.src),
            Event::UpArrive(m) => node_unit(self.nics.messages()[m as usize].spec.dst),
            _ => by,
        };
        let me = q.origin(unit);
        let out = &mut Sink::new(q, &mut self.links, me);
        // every other event is a host's
        self.nics.handle(&mut self.hosts[Cut::host_at(me.at)], out, now, HostInput::Event(event));
    }

    /// Runs a window of the parallel engine: every event with a key below `bound` (no duty
    /// of the whole run falls there, and nothing another piece does reaches it).
    pub fn window(&mut self, bound: u128) {
        let (mut left, mut now) = (u64::MAX, 0);
        let pause = self.run::<{ Pause::NEVER }>(bound, &mut left, &mut now);
        debug_assert_eq!(pause, Pause::Bound, "a window holds no duty");
        self.ran = u64::MAX - left;
    }

    /// A time before which the run cannot have completed every message, as far as this
    /// piece's hosts tell (`now`, the least time of any event left, when they have
    /// everything). A host that still misses `missing` bytes of data packets receives them
    /// over its one link from its leaf: those not yet on that link's wire (which this piece
    /// holds, everything handed over) start being sent at `now` or later, one after another
    /// at most at the link's nominal rate, and take its nominal latency on top (faults only
    /// slow a link and lengthen its latency). On a scale-up network, the last message its
    /// ports took ends no earlier than they tell ([`crate::host::nic::UpPorts::bound`]).
    pub fn completion_bound(&self, now: Time) -> Time {
        Self::bound_of(now, self.completion_parts())
    }

    /// The bound [`Piece::completion_bound`] gives from its parts (`completion_parts`, or the
    /// greatest of several pieces' parts): the latest of `now`, the time and `now` plus the span.
    pub fn bound_of(now: Time, (at, after): (Time, Time)) -> Time {
        now.max(at).max(now.saturating_add(after))
    }

    /// [`Piece::completion_bound`] in two parts that do not depend on `now`: a time (the
    /// scale-up ports') and a span after `now` (the bytes still to cross a host's link); the
    /// bound is the latest of `now`, the time and `now` plus the span. Processes that each hold
    /// some pieces (`sim::ranks`) tell each other these before they know the next event's time.
    pub fn completion_parts(&self) -> (Time, Time) {
        let topo = self.fabric.topology();
        let (mut at, mut after) = (0, 0);
        for h in &self.hosts {
            let host = h.node;
            at = at.max(self.nics.up_bound(host));
            let missing = h.missing();
            if missing == 0 {
                continue;
            }
            let down = topo.tables.into_host(host);
            let on_wire: u64 = self.links.wire(down).packets().filter(|(_, p)| p.kind == Kind::Data).map(|(_, p)| u64::from(p.size)).sum();
            if missing > on_wire {
                let link = &topo.ports[down as usize];
                after = after.max(serialization(missing - on_wire, link.rate) + link.delay);
            }
        }
        (at, after)
    }

    /// Data packets by fate at this piece's hosts, summed over them.
    pub fn nic_counts(&self) -> NicCounts {
        self.hosts.iter().map(Host::counts).fold(NicCounts::default(), |a, h| NicCounts {
            data_sent: a.data_sent + h.data_sent,
            data_delivered: a.data_delivered + h.data_delivered,
            headers_delivered: a.headers_delivered + h.headers_delivered,
        })
    }

    /// The messages this piece completed since the driver last asked (and it counts them as
    /// counted, so that [`Piece::run`] no longer pauses for them).
    pub fn newly_done(&mut self) -> u32 {
        let reported = self.nics.reported();
        // (a run that makes its jobs as it goes pauses, too, for messages to join)
        let new = reported - self.counted - self.nics.take_asked();
        self.counted = reported;
        new
    }

    /// Whether this piece put something in its outboxes.
    #[inline]
    pub fn has_outgoing(&self) -> bool {
        self.links.has_outgoing()
    }

    /// Empties this piece's outboxes into `mail[to]`, the mail for the piece each item is for
    /// (`home`: the piece of each node): a packet for its wire's far end, a notice for the
    /// host its event belongs to ([`Piece::unit_of`]).
    pub fn post<M: std::ops::DerefMut<Target = Mail>>(&mut self, home: &[u16], mail: &mut [M]) {
        let mut packets = std::mem::take(&mut self.links.outbox);
        let held = packets.len();
        for Handed { piece, wire, at, pkt } in packets.drain(..) {
            mail[usize::from(piece)].packets.push((wire, at, pkt));
        }
        trim(&mut packets, held);
        self.links.outbox = packets;
        let mut notices = std::mem::take(&mut self.links.notices);
        for notice in notices.drain(..) {
            let host = self.unit_of(notice.event, 0) - node_unit(0);
            mail[usize::from(home[host as usize])].notices.push(notice);
        }
        self.links.notices = notices;
    }

    /// Takes `mail` another piece posted for this one: packets onto its wires, notices into
    /// its queue.
    pub fn take(&mut self, mail: &mut Mail) {
        let held = mail.packets.len();
        for (wire, at, pkt) in mail.packets.drain(..) {
            self.links.accept(&mut self.queue, wire, at, pkt);
        }
        trim(&mut mail.packets, held);
        for notice in mail.notices.drain(..) {
            self.queue.schedule_ordered(notice.at, notice.order, notice.event);
        }
    }

    /// Hands what piece `from` put in its outboxes to the pieces it is for (`home`: the piece
    /// of each node), at once: a run in turns on one thread.
    pub fn hand_over(pieces: &mut [Box<Piece>], from: usize, home: &[u16]) {
        let mut mail: Vec<Mail> = (0..pieces.len()).map(|_| Mail::default()).collect();
        pieces[from].post(home, &mut mail.iter_mut().collect::<Vec<_>>());
        for (piece, mail) in pieces.iter_mut().zip(&mut mail) {
            piece.take(mail);
        }
    }
}

/// Gives back most of a drained buffer that once held far more than the `held` it held last:
/// an outbox and each of the `pieces x pieces` mailboxes would otherwise keep the most packets
/// they ever carried in one window (with 32 pieces of 8 192 hosts, 66 MB of 266).
fn trim<T>(buffer: &mut Vec<T>, held: usize) {
    if buffer.capacity() > 4 * held.max(16) {
        buffer.shrink_to(2 * held);
    }
}

/// Hosts a piece holds at least when a run is cut for the cache ([`blocks`]).
pub const BLOCK_HOSTS: u32 = 256;
/// Pieces a run is cut into at most for the cache: 32 pieces of 8 192 hosts took 0.57x the
/// wall time of 4 on the 8 MiB permutation; 128 pieces of 32 768 hosts ran about as fast as 32
/// (0.45x and 0.51x of 4) but held 1.55 GB against 1.26, and a run of them stopped by
/// `stop.max_events` took 36.6 s against 22.1 in 32: what runs in turns (the first span, the
/// last ones before the guard, the tail where messages complete) costs more the more pieces
/// there are (docs/performance.md, "Pieces for the cache").
pub const MAX_BLOCKS: usize = 32;
/// Messages a host sends at most, on average, in a run cut for the cache.
pub const BLOCK_MESSAGES: usize = 64;

/// The pieces a run is cut into whatever its threads. A thread runs its pieces one after
/// another in each window, so that what it touches for a while is one piece's hosts,
/// switches, wires and calendar: on the 1024-host permutation, 4 pieces on one thread took
/// 0.55x the wall time of one piece, with 29 % fewer reads that miss a 1 MiB cache. What pays
/// is a fabric busy with few large messages; so one piece per [`BLOCK_HOSTS`] hosts, at most
/// [`MAX_BLOCKS`], where the hosts send at most [`BLOCK_MESSAGES`] messages each on average
/// (a 1024-rank ring allreduce, 2 046 a host, took 1.2 to 1.4x the wall time in 4 pieces
/// when this was set; since windows got cheaper 0.94x, for 28 % more memory, and WebSearch at
/// 1 024 hosts up to 1.2x in 16, while a 1 024-GPU training step gains: docs/performance.md,
/// "Pieces for the cache"), and fewer while the memory
/// estimate of the pieces beyond the first ([`budget::pieces`]: each its calendar, and a
/// second count of what crosses between pieces) exceeds a quarter of the run's. Measured in docs/performance.md, "Pieces for the
/// cache".
pub fn blocks(topo: &Topology, model: &Model) -> usize {
    let hosts = topo.hosts();
    let messages = model.message_count();
    if messages > hosts as usize * BLOCK_MESSAGES {
        return 1;
    }
    let most = ((hosts / BLOCK_HOSTS) as usize).clamp(1, MAX_BLOCKS);
    let allowed = model.need.total() / 4;
    let extra = |n: usize| budget::pieces(n as u64 - 1, &topo.size(), messages as u64, messages as u64);
    (1..=most).rev().find(|&n| extra(n) <= allowed).unwrap_or(1)
}

/// The piece of each node when a run is cut into `pieces` (at most one per edge switch): each
/// edge switch (a leaf) with its hosts, edge switches in consecutive blocks; then, tier by
/// tier, a switch all of whose neighbours below it are in one piece joins it (a 3-tier tree's
/// aggregation switches, with their pod), and the others (spines, cores) are dealt out in
/// turn. Any cut gives the same results; this one keeps most packets within a piece.
pub fn partition(topo: &Topology, pieces: usize) -> Vec<u16> {
    let t = &topo.tables;
    let (hosts, classes) = (topo.hosts() as usize, t.classes());
    let pieces = pieces.clamp(1, classes.clamp(1, usize::from(u16::MAX)));
    const NONE: u16 = u16::MAX;
    let mut home = vec![NONE; topo.nodes.len()];
    for c in 0..classes {
        home[t.edge(c as u32) as usize] = (c * pieces / classes) as u16;
    }
    let tier = |n: usize| topo.nodes[n].tier.unwrap_or(0);
    let mut below: Vec<Vec<u32>> = vec![Vec::new(); topo.nodes.len()];
    for p in topo.ports.iter().filter(|p| p.from as usize >= hosts && p.to as usize >= hosts) {
        if tier(p.to as usize) < tier(p.from as usize) {
            below[p.from as usize].push(p.to);
        }
    }
    let mut rest: Vec<usize> = (hosts..topo.nodes.len()).filter(|&n| home[n] == NONE).collect();
    rest.sort_by_key(|&n| tier(n)); // stable: by id within a tier
    let mut dealt = 0;
    for n in rest {
        let mut pieces_below = below[n].iter().map(|&b| home[b as usize]);
        let first = pieces_below.next();
        home[n] = match first {
            Some(p) if p != NONE && pieces_below.all(|q| q == p) => p,
            _ => {
                dealt += 1;
                ((dealt - 1) % pieces) as u16
            }
        };
    }
    for host in 0..hosts {
        // a multi-plane host's ports go with its first plane's, so that it tells itself what
        // a part on another plane finished at once, within its piece
        let edge = topo.ports[t.out_of_host(topo.first_port(host as u32)) as usize].to;
        home[host] = home[edge as usize];
    }
    home
}

#[cfg(test)]
impl super::Simulation {
    /// The run's pieces, built and not run: what a unit test of a host or a switch feeds
    /// inputs to and reads outputs from, without a whole run.
    #[allow(clippy::vec_box, reason = "the run's pieces as it holds them")]
    pub(crate) fn into_pieces(self) -> Vec<Box<Piece>> {
        self.pieces
    }
}

#[cfg(test)]
mod tests {
    use crate::topology::Cut;
    use crate::{Scenario, Simulation};

    #[test]
    fn a_piece_holds_only_its_own_units() {
        let json = r#"{"topology": {"hosts": 128, "radix": 16}, "workload": {"kind": "permutation", "size": "64KiB"}}"#;
        let scenario = Scenario::from_json(json).expect("valid");
        for pieces in [1u16, 3, 8] {
            // a cut that splits servers, leaves and spines alike
            let sim =
                Simulation::cut_by(&scenario, |t| (0..t.nodes.len()).map(|n| (n * 5 % pieces as usize) as u16).collect()).expect("builds");
            let topo = sim.topology();
            let cut = Cut::new(topo, sim.cut.homes().clone());
            let mut all = (0, 0, 0, 0);
            for (me, piece) in sim.pieces.iter().enumerate() {
                let share = cut.share(me as u16);
                let (ports, wires, switches) = (piece.links.ports().len(), piece.links.wires().len(), piece.switches.len());
                assert_eq!((ports, wires, switches), (share.ports as usize, share.wires as usize, share.switches as usize));
                assert_eq!(piece.hosts.len(), share.hosts as usize);
                all = (all.0 + ports, all.1 + wires, all.2 + switches, all.3 + piece.hosts.len());
            }
            assert_eq!(all, (topo.ports.len(), topo.ports.len(), topo.switches(), topo.hosts() as usize), "{pieces} pieces");
        }
    }
}
