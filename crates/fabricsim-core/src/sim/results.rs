//! What a run shows: its state as one run, whatever pieces hold it (each unit's entries are
//! those of its piece; counts add up, a message's and a connection's parts merge), and its
//! results tables.

use crate::engine::watchdog::Activity;
use std::borrow::Cow;
use std::collections::BTreeMap;

use super::duties::port_of;
use super::Simulation;
use crate::engine::Status;
use crate::host::message::MsgState;
use crate::host::parts::ConnParts;
use crate::packet::{DataExt, Ev, Packet};
use crate::scenario::{Model, Scenario};
use crate::stats::collect::{ConnColumns, Ends, MessageColumns, WorkView};
use crate::stats::sampler::SampleRows;
use crate::stats::{Accounting, Keep, RunResult, RunView};
use crate::switch::forward::ConnLosses;
use crate::switch::EgressPort;
use crate::time::Time;
use crate::topology::{Routes, Topology};

impl Simulation {
    pub fn status(&self) -> Status {
        self.status
    }
    pub fn now(&self) -> Time {
        self.now
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    /// The events the run was expected to make, roughly (what a progress bar and a time
    /// estimate read).
    pub fn expected_events(&self) -> u64 {
        self.expected_events
    }
    /// What the no-progress guard reads of the hosts, summed over every piece's.
    pub(super) fn activity(&self) -> Activity {
        activity(&self.pieces)
    }

    /// Messages completed so far.
    pub fn flows_done(&self) -> u32 {
        self.pieces.iter().flat_map(|p| &p.hosts).map(|h| h.done()).sum()
    }
    /// Messages of the workload (the rows of the flows table), a trace's not drawn yet
    /// included.
    pub fn flow_count(&self) -> u32 {
        (self.pieces[0].nics.messages().len() + self.model.left_to_join()) as u32
    }
    /// What a run that stopped incomplete left unfinished and what it waited for (empty for a
    /// complete or running one): the summary's `stop_detail`.
    pub fn stop_detail(&self) -> String {
        if matches!(self.status, Status::Complete | Status::Running) {
            return String::new();
        }
        let us = |t: Time| format!("{:.3} us", t as f64 / 1e6);
        let (n, done) = (self.flow_count(), self.flows_done());
        let mut out = format!("{} of {n} messages unfinished", n.saturating_sub(done));
        let seen = self.watchdog.progressed_at();
        if let Some((class, cycle)) = self.pfc_deadlock().filter(|_| self.status == Status::PfcDeadlock) {
            let names: Vec<&str> = cycle.iter().map(|&p| self.topology().ports[p as usize].name.as_str()).collect();
            out += &format!("; ports {} paused for class {class} in a cycle, each waiting on the next", names.join(" -> "));
            return out;
        }
        if self.status == Status::NoProgress {
            out += &format!("; no new data for {} (1000 RTOs) and nothing pending", us(self.watchdog.window()));
            return out;
        }
        if seen > 0 {
            out += &format!("; new data last seen by the no-progress check at {} (it looks every {})", us(seen), us(self.watchdog.every()));
        }
        let a = self.activity();
        if let Some(at) = self.faults.next_time() {
            out +=
                &format!("; a fault action (a link's change or routing reconverging) was pending at {}, so the guard kept waiting", us(at));
        } else if a.starts_pending() {
            out += "; message starts or release notices were pending";
        }
        out
    }
    pub fn model(&self) -> &Model {
        &self.model
    }
    pub fn topology(&self) -> &Topology {
        self.pieces[0].fabric.topology()
    }
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    /// Legal but probably unintended settings of this run (also in the summary).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// The most connections whose full state was held at once so far (a connection is built
    /// when its message starts and reduced to its results row when its sender is done); in
    /// pieces, the sum of each piece's most.
    pub fn peak_live_connections(&self) -> usize {
        self.pieces.iter().map(|p| p.nics.connections().peak_live()).sum()
    }
    /// Wall-clock seconds spent in `step` so far.
    pub fn wall_s(&self) -> f64 {
        self.wall.as_secs_f64()
    }

    /// The egress ports a packet of connection `conn` with entropy `ev` crosses from source
    /// to destination; `None` if a switch on the way decides at random or by load.
    pub fn path_of(&self, conn: u32, ev: Ev) -> Option<Vec<u32>> {
        let spec = self.pieces[0].nics.conn_spec(conn)?;
        let flow = self.pieces[usize::from(self.cut.home(spec.src))].nics.flow_of(conn);
        let mut probe = Packet::data(conn, flow, 0, 0, ev, (spec.src, spec.dst), 0, DataExt::default());
        // each switch's choice in the piece that holds it
        let topo = self.topology();
        let mut port = topo.tables.out_of_host(spec.src);
        let mut path = vec![port];
        let mut node = topo.ports[port as usize].to;
        while node != spec.dst {
            let piece = &self.pieces[usize::from(self.cut.home(node))];
            let sw = &piece.switches[piece.fabric.switch_of(node)];
            port = piece.fabric.hop_of(sw, piece.links.ports(), &mut probe)?;
            path.push(port);
            node = topo.ports[port as usize].to;
        }
        Some(path)
    }

    /// The one path of a connection whose load balancer uses a single EV (`ecmp`); `None`
    /// for per-packet load balancers.
    pub fn flow_path(&self, conn: u32) -> Option<Vec<u32>> {
        let src = self.pieces[0].nics.conn_spec(conn)?.src;
        let ev = self.pieces[usize::from(self.cut.home(src))].nics.fixed_ev(conn)?;
        self.path_of(conn, ev)
    }

    /// Every data packet the hosts sent, by fate.
    pub fn accounting(&self) -> Accounting {
        let of = |p: &super::Piece| {
            let (n, l, (in_flight, headers_in_flight)) = (p.nic_counts(), p.links.losses(), p.links.data_in_flight());
            Accounting {
                data_sent: n.data_sent,
                data_delivered: n.data_delivered,
                data_trimmed: l.data_trimmed,
                data_dropped: l.data_dropped,
                data_in_flight: in_flight,
                headers_delivered: n.headers_delivered,
                headers_dropped: l.headers_dropped,
                headers_in_flight,
            }
        };
        self.pieces.iter().map(|p| of(p)).fold(Accounting::default(), |a, b| a + b)
    }

    /// A rank of a run across ranks holds the others' pieces hollow: only rank 0, once it
    /// gathered them, holds the run's results (a misuse of the API, said as such).
    fn whole(&self) {
        assert!(self.across.is_none(), "a run across ranks has its results on rank 0, after Simulation::gather");
    }

    /// Per-flow, per-port and summary results of the run so far (the run can go on).
    pub fn results(&self) -> RunResult {
        self.results_keeping(&Keep::all())
    }

    /// [`Simulation::results`] with the flows table's columns `keep` keeps.
    pub fn results_keeping(&self, keep: &Keep) -> RunResult {
        self.whole();
        let (states, up) = (self.states(), self.up_times());
        let w = self.work(&states, &up);
        let mut m = MessageColumns::of(&w, Ends::of(&w, &self.conns()), keep);
        // the run goes on: its messages are only read
        m.add_messages(Cow::Borrowed(w.messages), &w.routes, w.transport, keep);
        let c = ConnColumns::of(m.len(), &self.conns(), &self.conn_losses(), keep);
        let samples = self.sampler.as_ref().map(|s| s.rows.clone()).unwrap_or_default();
        let ports = self.ports();
        RunResult::collect(self.view(&ports, self.accounting(), self.achieved_load(), samples, self.stop_detail()), m, c, keep)
    }

    /// The results of the run, freeing its state as they are built (see
    /// [`crate::stats::collect`]): the hosts' schedulers and dependency lists first, the
    /// connection table once its columns (and each message's first send and end) exist, the
    /// messages and the jobs' structures once theirs do. Same tables as
    /// [`Simulation::results`].
    pub fn into_results(self) -> RunResult {
        self.into_results_keeping(&Keep::all())
    }

    /// [`Simulation::into_results`] with the flows table's columns `keep` keeps: a caller that
    /// reads a few columns of millions of rows lets the others never be made.
    pub fn into_results_keeping(mut self, keep: &Keep) -> RunResult {
        self.whole();
        let (accounting, achieved, detail) = (self.accounting(), self.achieved_load(), self.stop_detail());
        self.pieces.iter_mut().for_each(|p| {
            p.nics.free_schedule();
            p.hosts.iter_mut().for_each(|h| h.free_schedule());
        });
        // the connections are read first and freed before the messages' columns are made
        // (`MessageColumns::of`; the jobs' ideal spans were computed at resolve,
        // `Model::job_bounds`)
        // (the messages' states are taken whole first: several pieces' are merged through the
        // connection catalog, which goes with the connections; one piece's are moved, not
        // copied)
        let states = match &mut self.pieces[..] {
            [one] => one.nics.take_states(),
            _ => self.states().into_owned(),
        };
        let up = self.up_times();
        let c = ConnColumns::of(states.len(), &self.conns(), &self.conn_losses(), keep);
        self.pieces.iter_mut().for_each(|p| p.nics.connections_mut().free_reorder());
        let ends = match &mut self.pieces[..] {
            // one piece gives each connection's row back once its message's ends are read
            [one] => {
                let mut table = one.nics.take_connections();
                let ends = Ends::giving_back(&self.work(&states, &up), &mut table);
                drop(table);
                ends
            }
            _ => Ends::of(&self.work(&states, &up), &self.conns()),
        };
        self.pieces.iter_mut().for_each(|p| p.nics.free_connections());
        let mut m = MessageColumns::of(&self.work(&states, &up), ends, keep);
        drop(states);
        // the messages' own columns, made as the list gives its memory back: the list itself
        // where the pieces held the only handles (a copy otherwise)
        let mut lists: Vec<_> = self.pieces.iter_mut().map(|p| p.nics.take_messages()).collect();
        let list = lists.swap_remove(0);
        drop(lists);
        let list = std::sync::Arc::try_unwrap(list).unwrap_or_else(|shared| (*shared).clone());
        m.add_messages(Cow::Owned(list), &Routes::new(self.model.topo.clone()), &self.model.transport, keep);
        self.pieces.iter_mut().for_each(|p| p.nics.free_messages());
        self.model.tags = Default::default();
        let samples = self.sampler.take().map(|s| s.rows).unwrap_or_default();
        let ports = self.ports();
        RunResult::collect(self.view(&ports, accounting, achieved, samples, detail), m, c, keep)
    }

    /// What the messages' ends counted, as one run's: each end's counts from its piece.
    fn states(&self) -> Cow<'_, [MsgState]> {
        let pieces = &self.pieces[..];
        let [first, rest @ ..] = pieces else { return Cow::Borrowed(&[]) };
        if rest.is_empty() {
            return Cow::Borrowed(first.nics.states());
        }
        let part = |p: u16, at: u32| pieces[usize::from(p)].nics.states()[at as usize];
        let merged = (0..first.nics.messages().len()).filter_map(|m| first.nics.connections().message_side(m)).map(|side| {
            let mut s = part(side.piece[0], side.at[0]);
            if side.piece[1] != side.piece[0] {
                s.merge(&part(side.piece[1], side.at[1]));
            }
            s
        });
        Cow::Owned(merged.collect())
    }

    /// When each message on a scale-up network was sent and delivered, as one run's: each
    /// end's time from its piece.
    fn up_times(&self) -> BTreeMap<u32, [Time; 2]> {
        let mut all: BTreeMap<u32, [Time; 2]> = BTreeMap::new();
        for p in &self.pieces {
            for (&m, t) in &p.nics.up.times {
                let e = all.entry(m).or_insert([Time::MAX; 2]);
                *e = [e[0].min(t[0]), e[1].min(t[1])];
            }
        }
        all
    }

    /// The connection tables of the pieces, read as one.
    fn conns(&self) -> ConnParts<'_> {
        ConnParts::new(self.pieces.iter().map(|p| p.nics.connections()).collect())
    }

    /// What each connection lost in the fabric (a port's losses are in its piece).
    fn conn_losses(&self) -> BTreeMap<u32, ConnLosses> {
        let mut all = BTreeMap::new();
        for p in &self.pieces {
            for (c, l) in p.links.conn_losses() {
                let e: &mut ConnLosses = all.entry(c).or_default();
                (e.trims, e.drops) = (e.trims + l.trims, e.drops + l.drops);
            }
        }
        all
    }

    /// The egress ports, each as the piece of its sending node holds it.
    fn ports(&self) -> Cow<'_, [EgressPort]> {
        match &self.pieces[..] {
            [one] => Cow::Borrowed(one.links.ports()),
            all => Cow::Owned((0..self.topology().ports.len() as u32).map(|p| port_of(all, &self.cut, p).clone()).collect()),
        }
    }

    /// Payload the trace's messages (the first of the run) have delivered so far.
    #[cold]
    pub(super) fn trace_delivered(&self) -> u64 {
        let count = self.trace_messages();
        self.pieces.iter().map(|p| delivered(p, count)).sum()
    }

    /// The trace's messages (the first `count` of the run; 0 without a trace).
    pub(super) fn trace_messages(&self) -> usize {
        self.model.load_window.map_or(0, |w| w.messages as usize)
    }

    /// The trace's achieved load: what it delivered in its window's second half (where every
    /// message completed before a snapshot, the run's end stands in for it).
    fn achieved_load(&self) -> Option<f64> {
        let w = self.model.load_window?;
        let done = (self.status == Status::Complete).then(|| self.trace_delivered());
        let [half, end] = self.window_bytes;
        Some(w.load(end.or(done)? - half.or(done)?))
    }

    /// What the first stage of the tables reads.
    fn work<'a>(&'a self, states: &'a [MsgState], up: &'a BTreeMap<u32, [Time; 2]>) -> WorkView<'a> {
        let m = &self.model;
        let messages = self.pieces[0].nics.messages();
        WorkView {
            routes: Routes::new(m.topo.clone()),
            transport: &m.transport,
            messages,
            states,
            up,
            tags: &m.tags,
            jobs: &m.jobs,
            bounds: match &m.making {
                Some(making) => Cow::Owned(making.bounds.so_far()),
                None => Cow::Borrowed(&m.job_bounds),
            },
        }
    }

    /// Each port's time paused and PFC frames sent, by global id (empty without PFC).
    fn pfc_counts(&self) -> Vec<(Time, u64)> {
        if self.model.switch.pfc.is_none() {
            return Vec::new();
        }
        let ports = self.topology().ports.len() as u32;
        (0..ports)
            .map(|p| {
                let piece = &self.pieces[usize::from(self.cut.home(self.topology().ports[p as usize].from))];
                piece.links.pfc.as_ref().expect("PFC's state where it runs").port_counts(self.cut.port(p), self.now)
            })
            .collect()
    }

    /// What the tables are made from.
    fn view<'a>(
        &'a self,
        ports: &'a [EgressPort],
        accounting: Accounting,
        achieved_load: Option<f64>,
        samples: SampleRows,
        stop_detail: String,
    ) -> RunView<'a> {
        let m = &self.model;
        RunView {
            transport: &m.transport,
            base_rtt: m.base_rtt,
            bdp_bytes: m.bdp_bytes,
            offered_load: m.load_window.map(|w| w.offered),
            achieved_load,
            topo: self.topology(),
            ports,
            pfc: self.pfc_counts(),
            samples,
            accounting,
            status: self.status,
            // a run stopped by its time guard simulated exactly [0, max_time], whatever its last
            // event was (a sample would otherwise move the end, and the mean queues with it)
            now: if self.status == Status::TimeLimit { self.model.max_time } else { self.now },
            events: self.events,
            wall_s: self.wall_s(),
            scenario_json: self.scenario.to_json(),
            warnings: self.warnings.clone(),
            stop_detail,
        }
    }
}

/// Payload the first `count` messages of the run have delivered so far, as piece `p` counts it
/// (those of a trace it has not drawn yet delivered nothing).
pub(super) fn delivered(p: &super::Piece, count: usize) -> u64 {
    let (conns, messages) = (p.nics.connections(), p.nics.messages());
    messages[..count.min(messages.len())].iter().flat_map(|m| m.first..m.first + m.count).map(|c| conns.row(c).delivered_bytes).sum()
}

/// What the no-progress guard reads of `pieces`' hosts, summed over them.
pub(super) fn activity(pieces: &[Box<super::Piece>]) -> Activity {
    pieces.iter().flat_map(|p| &p.hosts).fold(Activity::default(), |a, h| a + h.activity())
}
