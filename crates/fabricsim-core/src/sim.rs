//! The simulation: one value that owns the clock, the event queue and the components, and
//! dispatches each event to the component it concerns. No globals; two simulations never
//! share anything.
//!
//! The packet path, per hop: a packet reaches an egress port (or, at a host, is pulled from a
//! connection when the NIC is free: line-rate pacing with no NIC queue). If the port is free
//! it goes on the wire at once; otherwise it queues (or is trimmed, dropped, ECN-marked) and
//! the port wakes (`PortFree`) when its wire frees to send the next one. On the wire it
//! travels the link's pipe (`PipeArrive` when its last bit reaches the far end, plus the
//! switch traversal latency there) and is forwarded to the next egress port ([`Fabric`]) or
//! handed to the host ([`Nics`]). The queue holds at most one wake-up per port and one
//! pipe-head event per link.

use std::time::Instant;

use crate::budget;
use crate::engine::watchdog::Watchdog;
use crate::engine::{node_unit, Event, EventQueue, Status, FAULT_UNIT, RECORD_UNIT};
use crate::error::ScenarioError;
use crate::faults::{self, Timeline};
use crate::host::cc::CcContext;
use crate::host::factory::ConnFactory;
use crate::host::nic::Nics;
use crate::host::table::ConnTable;
use crate::packet::{Ev, Kind, Packet};
use crate::scenario::{Model, Scenario};
use crate::stats::collect::{ConnColumns, MessageColumns, WorkView};
use crate::stats::sampler::{SampleRows, Sampler};
use crate::stats::{Accounting, RunResult, RunView};
use crate::switch::forward::Fabric;
use crate::switch::Overflow;
use crate::time::{serialization, Time};
use crate::topology::Topology;

/// A fabric, its workload and the clock.
pub struct Simulation {
    scenario: Scenario,
    model: Model,
    queue: EventQueue,
    fabric: Fabric,
    nics: Nics,
    faults: Timeline,
    sampler: Option<Sampler>,
    /// Legal but probably unintended settings: the scenario's and the run's.
    warnings: Vec<String>,
    events: u64,
    status: Status,
    watchdog: Watchdog,
    /// The loop stops once this many messages are done: all of them, or 0 when the watchdog
    /// stops the run (one comparison per event serves both) ...
    stop_at: u32,
    /// ... at the end of the picosecond in which that happened: every event of that instant
    /// runs, whichever unit it belongs to.
    finish_at: Option<Time>,
    wall: std::time::Duration,
    /// Payload a trace's messages had delivered when its window's second half began and when
    /// it ended.
    window_bytes: [Option<u64>; 2],
}

impl Simulation {
    /// Checks the scenario and builds the fabric; nothing runs yet.
    pub fn new(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
        let mut model = scenario.resolve()?;
        let topo = Topology::build(&model.tree);
        let faults = faults::timeline(&scenario.faults, &topo, model.seed, model.max_time)?;
        let sampler = scenario.samples.as_ref().map(|cfg| cfg.resolve(&topo)).transpose()?;
        let mut warnings = model.warnings.clone();
        if let Some(s) = &sampler {
            budget::check(&budget::with_samples(model.need, s.rows_until(model.max_time)), model.max_memory)?;
            warnings.extend(s.warning(model.max_time));
        }
        // the calendar's ring should cover a hop, the longest link delay plus a packet: every
        // packet event falls within it (timers go beyond). Its memory grows with its span.
        let mtu = model.transport.mtu;
        let hop = topo.ports.iter().map(|p| p.delay + serialization(mtu, p.rate)).max().unwrap_or(0);
        let mut queue = EventQueue::with_horizon(hop + hop / 8).with_nodes(topo.nodes.len());
        if let Some(at) = faults.next_time() {
            queue.schedule(at, Event::Faults); // numbered by the fault unit, first at `at`
        }
        queue.set_origin(RECORD_UNIT);
        if sampler.is_some() {
            queue.schedule(0, Event::Sample);
        }
        if let Some(w) = &model.load_window {
            queue.schedule(w.half, Event::Window);
            queue.schedule(w.end, Event::Window);
        }
        let watchdog = Watchdog::new(model.transport.rto);
        queue.schedule(watchdog.every(), Event::Watch);
        let mut nics = Nics::new(
            topo.hosts(),
            model.seed,
            model.transport.clone(),
            ConnTable::new(Self::factory(&model), model.transport.cc.sends_cnps()),
        );
        // the NICs keep the messages from here on (the model's copy would double them)
        for spec in std::mem::take(&mut model.messages) {
            nics.add(spec);
        }
        nics.schedule_starts(&mut queue, &model.deps);
        let fabric = Fabric::new(topo, model.switch.clone(), model.seed);
        let stop_at = nics.messages().len() as u32;
        Ok(Simulation {
            scenario: scenario.filled(),
            model,
            queue,
            fabric,
            nics,
            faults,
            sampler,
            warnings,
            events: 0,
            status: Status::Running,
            watchdog,
            stop_at,
            // nothing to complete: the run is done with instant 0, whatever runs first
            finish_at: (stop_at == 0).then_some(0),
            wall: std::time::Duration::ZERO,
            window_bytes: [None; 2],
        })
    }

    /// What builds the connections of a message.
    pub(crate) fn factory(model: &Model) -> ConnFactory {
        let t = &model.transport;
        let cc = CcContext {
            init: t.init_cwnd,
            max: t.max_cwnd,
            mtu: t.mtu,
            mss: t.mtu - t.header,
            base_rtt: model.base_rtt,
            rate: model.tree.tier_rates[0],
            trimming: model.switch.overflow == Overflow::Trim,
        };
        ConnFactory::new(t.clone(), model.lb.clone(), model.lb_ctx.clone(), cc, model.tree.clone())
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> RunResult {
        self.step(u64::MAX);
        self.into_results()
    }

    /// Processes at most `budget` events; returns the status afterwards. Call again while
    /// it is [`Status::Running`] (the front ends do this to draw progress).
    pub fn step(&mut self, budget: u64) -> Status {
        if self.status != Status::Running {
            return self.status;
        }
        let started = Instant::now();
        // the event guard folded into the budget, the time guard and the end of a finished
        // run's last instant into one horizon: one comparison per event for all three
        let budget = budget.min(self.model.max_events.saturating_sub(self.events));
        let mut horizon = self.horizon();
        let mut n = 0;
        loop {
            let next = self.queue.peek_time();
            if next.is_none_or(|t| t > horizon) {
                self.status = self.guard(next);
                break;
            }
            if n == budget {
                if self.events >= self.model.max_events {
                    self.status = Status::EventLimit;
                }
                break;
            }
            // the wall clock is read once every 2^16 events (a few ms of work)
            if n & 0xFFFF == 0 {
                if let Some(limit) = self.model.max_wall {
                    if self.wall + started.elapsed() >= limit {
                        self.status = Status::WallLimit;
                        break;
                    }
                }
            }
            let Some((now, event, by)) = self.queue.pop_keyed() else { break };
            // start loading what the next event reads so that its cache miss overlaps this
            // event's work: the large runs are memory-bound
            if let Some(Event::PipeArrive(p) | Event::PortFree(p)) = self.queue.peek() {
                self.fabric.prefetch(p);
            }
            self.events += 1;
            n += 1;
            let unit = self.unit_of(event, by);
            debug_assert_eq!(unit, self.owner_of(event), "{event:?} scheduled by unit {by}");
            self.queue.set_origin(unit);
            self.dispatch(now, event);
            if self.nics.reported() >= self.stop_at && self.finish_at.is_none() {
                self.finish_at = Some(now);
                horizon = self.horizon();
            }
        }
        self.wall += started.elapsed();
        self.status
    }

    /// The last instant an event may run at: the time guard's, or the end of the instant in
    /// which the run finished.
    fn horizon(&self) -> Time {
        self.finish_at.map_or(self.model.max_time, |end| end.min(self.model.max_time))
    }

    /// Why the run ends when its next event (`next`) lies beyond [`Simulation::horizon`].
    fn guard(&self, next: Option<Time>) -> Status {
        if let Some(end) = self.finish_at {
            if next.is_none_or(|t| t > end) {
                let total = self.nics.messages().len() as u32;
                return if self.nics.reported() == total { Status::Complete } else { Status::NoProgress };
            }
        }
        match next {
            None => Status::Stalled,
            Some(_) => Status::TimeLimit,
        }
    }

    /// The unit an event belongs to (what it schedules is numbered by that unit), from the
    /// unit that scheduled it (`by`): the same unit, except for a packet's arrival (the far
    /// end of the wire) and a release notice (the message's source host). Every other event
    /// is scheduled by the unit that handles it: a port's wake-up by its node, a connection's
    /// start and timers by its source host, a CNP window by its receiver, the global duties
    /// by themselves (a debug assertion checks this on every event the tests run).
    #[inline]
    fn unit_of(&self, event: Event, by: u32) -> u32 {
        match event {
            Event::PipeArrive(p) => node_unit(self.fabric.ports()[p as usize].to),
            Event::Release(m) => node_unit(self.nics.messages()[m as usize].spec.src),
            _ => by,
        }
    }

    /// The unit that owns `event`'s state, found the long way (for the debug check).
    fn owner_of(&self, event: Event) -> u32 {
        match event {
            Event::PortFree(p) => node_unit(self.fabric.ports()[p as usize].from),
            Event::PipeArrive(p) => node_unit(self.fabric.ports()[p as usize].to),
            Event::ConnStart(c) | Event::Rto(c) | Event::CcTimer(c) => node_unit(self.nics.ends(c).0),
            Event::CnpTimer(c) => node_unit(self.nics.ends(c).1),
            Event::Release(m) => node_unit(self.nics.messages()[m as usize].spec.src),
            Event::NicWake(h) => node_unit(h),
            Event::Faults => FAULT_UNIT,
            Event::Sample | Event::Window | Event::Watch => RECORD_UNIT,
        }
    }

    /// Hands an event to the component it concerns.
    #[inline]
    fn dispatch(&mut self, now: Time, event: Event) {
        let q = &mut self.queue;
        match event {
            Event::PortFree(p) => {
                self.fabric.on_port_free(p);
                match self.fabric.nic_of(p) {
                    Some(host) => self.nics.kick(q, &mut self.fabric, now, host),
                    None => self.fabric.switch_next(q, now, p),
                }
            }
            Event::PipeArrive(p) => {
                if let Some((node, pkt)) = self.fabric.arrive(q, p) {
                    if self.fabric.is_host(node) {
                        self.nics.receive(q, &mut self.fabric, now, node, pkt);
                    } else {
                        self.fabric.forward(q, now, node, pkt);
                    }
                }
            }
            Event::ConnStart(c) => self.nics.start(q, &mut self.fabric, now, c),
            Event::Release(m) => self.nics.on_release(q, now, m),
            Event::NicWake(h) => self.nics.wake(q, &mut self.fabric, now, h),
            Event::CcTimer(c) => self.nics.on_cc_timer(q, &mut self.fabric, now, c),
            Event::CnpTimer(c) => self.nics.on_cnp_timer(q, &mut self.fabric, now, c),
            Event::Rto(c) => self.nics.on_rto(q, &mut self.fabric, now, c),
            Event::Watch => {
                let pending = self.nics.starts_pending() || self.faults.next_time().is_some();
                if self.watchdog.stalled(now, self.nics.progress(), pending) {
                    self.stop_at = 0;
                } else if !q.is_empty() {
                    q.schedule(now + self.watchdog.every(), Event::Watch);
                }
            }
            Event::Faults => {
                let fabric = &mut self.fabric;
                self.faults.fire(now, |ports, change| fabric.apply(ports, change));
                if let Some(at) = self.faults.next_time() {
                    q.schedule(at, Event::Faults);
                }
            }
            Event::Sample => {
                if let Some(s) = self.sampler.as_mut() {
                    s.sample(now, self.fabric.ports());
                    q.schedule(now + s.every, Event::Sample);
                }
            }
            Event::Window => {
                let slot = usize::from(self.window_bytes[0].is_some());
                self.window_bytes[slot] = Some(self.trace_delivered());
            }
        }
    }

    /// Payload the trace's messages (the first of the run) have delivered so far.
    #[cold]
    fn trace_delivered(&self) -> u64 {
        let count = self.model.load_window.map_or(0, |w| w.messages as usize);
        let conns = self.nics.connections();
        self.nics.messages()[..count].iter().flat_map(|m| m.first..m.first + m.count).map(|c| conns.row(c).delivered_bytes).sum()
    }

    /// The trace's achieved load: what it delivered in its window's second half (where every
    /// message completed before a snapshot, the run's end stands in for it).
    fn achieved_load(&self) -> Option<f64> {
        let w = self.model.load_window?;
        let done = (self.status == Status::Complete).then(|| self.trace_delivered());
        let [half, end] = self.window_bytes;
        Some(w.load(end.or(done)? - half.or(done)?))
    }

    // ---- inspection ----------------------------------------------------------------------

    pub fn status(&self) -> Status {
        self.status
    }
    pub fn now(&self) -> Time {
        self.queue.now()
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    /// Messages completed so far.
    pub fn flows_done(&self) -> u32 {
        self.nics.messages_done()
    }
    /// Messages of the workload (the rows of the flows table).
    pub fn flow_count(&self) -> u32 {
        self.nics.messages().len() as u32
    }
    pub fn model(&self) -> &Model {
        &self.model
    }
    pub fn topology(&self) -> &Topology {
        self.fabric.topology()
    }
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    /// Legal but probably unintended settings of this run (also in the summary).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// The most connections whose full state was held at once so far (a connection is built
    /// when its message starts and reduced to its results row when its sender is done).
    pub fn peak_live_connections(&self) -> usize {
        self.nics.connections().peak_live()
    }
    /// Wall-clock seconds spent in `step` so far.
    pub fn wall_s(&self) -> f64 {
        self.wall.as_secs_f64()
    }

    /// The egress ports a packet of connection `conn` with entropy `ev` crosses from source
    /// to destination; `None` if a switch on the way decides at random or by load.
    pub fn path_of(&self, conn: u32, ev: Ev) -> Option<Vec<u32>> {
        let spec = self.nics.conn_spec(conn)?;
        let probe = Packet {
            kind: Kind::Data,
            trimmed: false,
            ecn: false,
            class: 0,
            conn,
            psn: 0,
            ev,
            src: spec.src,
            dst: spec.dst,
            path: 0,
            size: 0,
            cum: 0,
            sack: 0,
        };
        self.fabric.path_of(&probe)
    }

    /// The one path of a connection whose load balancer uses a single EV (`ecmp`); `None`
    /// for per-packet load balancers.
    pub fn flow_path(&self, conn: u32) -> Option<Vec<u32>> {
        let ev = self.nics.fixed_ev(conn)?;
        self.path_of(conn, ev)
    }

    /// Every data packet the hosts sent, by fate.
    pub fn accounting(&self) -> Accounting {
        let (in_flight, headers_in_flight) = self.fabric.data_in_flight();
        let (n, l) = (&self.nics.counts(), &self.fabric.losses());
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
    }

    /// Per-flow, per-port and summary results of the run so far (the run can go on).
    pub fn results(&self) -> RunResult {
        let m = MessageColumns::of(&self.work(), self.nics.connections());
        let c = ConnColumns::of(m.len(), self.nics.connections(), &self.fabric.conn_losses());
        let samples = self.sampler.as_ref().map(|s| s.rows.clone()).unwrap_or_default();
        RunResult::collect(self.view(self.accounting(), self.achieved_load(), samples), m, c)
    }

    /// The results of the run, freeing its state as they are built (see
    /// [`crate::stats::collect`]): the hosts' schedulers, dependency lists and streams first,
    /// the messages and the jobs' structures once their columns exist, the connection table
    /// once its columns do. Same tables as [`Simulation::results`].
    pub fn into_results(mut self) -> RunResult {
        let (accounting, achieved) = (self.accounting(), self.achieved_load());
        self.nics.free_schedule();
        let m = MessageColumns::of(&self.work(), self.nics.connections());
        self.nics.free_messages();
        (self.model.deps, self.model.tags) = Default::default();
        let c = ConnColumns::of(m.len(), self.nics.connections(), &self.fabric.conn_losses());
        self.nics.free_connections();
        let samples = self.sampler.take().map(|s| s.rows).unwrap_or_default();
        RunResult::collect(self.view(accounting, achieved, samples), m, c)
    }

    /// What the first stage of the tables reads.
    fn work(&self) -> WorkView<'_> {
        let m = &self.model;
        WorkView { tree: &m.tree, transport: &m.transport, messages: self.nics.messages(), deps: &m.deps, tags: &m.tags, jobs: &m.jobs }
    }

    /// What the tables are made from.
    fn view(&self, accounting: Accounting, achieved_load: Option<f64>, samples: SampleRows) -> RunView<'_> {
        let m = &self.model;
        RunView {
            tree: &m.tree,
            transport: &m.transport,
            base_rtt: m.base_rtt,
            bdp_bytes: m.bdp_bytes,
            offered_load: m.load_window.map(|w| w.offered),
            achieved_load,
            topo: self.fabric.topology(),
            ports: self.fabric.ports(),
            samples,
            accounting,
            status: self.status,
            // a run stopped by its time guard simulated exactly [0, max_time], whatever its last
            // event was (a sample would otherwise move the end, and the mean queues with it)
            now: if self.status == Status::TimeLimit { self.model.max_time } else { self.queue.now() },
            events: self.events,
            wall_s: self.wall_s(),
            scenario_json: self.scenario.to_json(),
            warnings: self.warnings.clone(),
        }
    }
}
