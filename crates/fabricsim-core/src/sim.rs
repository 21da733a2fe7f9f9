//! The simulation: one value that owns the clock, the event queue, the
//! fabric, the hosts and their flows. No globals; two simulations never share anything.
//!
//! The packet path, per hop: a packet reaches an egress port (or, at a host, is pulled from a
//! flow when the NIC is free: line-rate pacing with no NIC queue). If the port is free it goes
//! on the wire at once; otherwise it queues (or is trimmed, dropped, ECN-marked) and the port
//! wakes (`PortFree`) when its wire frees to send the next one. On the wire it travels the
//! link's pipe (`PipeArrive` when its last bit reaches the far end, plus the switch traversal
//! latency there) and is routed to the next egress port or handed to the host. The heap holds
//! at most one wake-up per port and one pipe-head event per link.

use std::time::Instant;

use crate::engine::rng::{mix64, Rng, Stream};
use crate::engine::{Event, EventQueue};
use crate::error::{ensure, ScenarioError};
use crate::faults::{Change, FaultAction};
use crate::host::cc::Window;
use crate::host::{Flow, Message, SendRecord};
use crate::lb::{Ev, HostLb, LoadBalancer};
use crate::packet::{Kind, Packet};
use crate::scenario::{EcnMark, LossDetection, Model, Overflow, Scenario, TransportKind};
use crate::stats::{ideal_fct, Accounting, RunResult};
use crate::switch::routing::{MpEvLayout, Rule};
use crate::switch::{red_mark, EgressPort};
use crate::time::{serialization, Time};
use crate::topology::{FatTreeSpec, Topology};
use crate::workload::FlowSpec;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    /// Every flow completed.
    Complete,
    /// The next event lies beyond `stop.max_time`.
    TimeLimit,
    /// `stop.max_events` events were processed.
    EventLimit,
    /// Nothing left to do but flows are unfinished (a bug guard; should not happen).
    Stalled,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Complete => "complete",
            _ => "incomplete",
        }
    }
    pub fn reason(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Complete => "all flows completed",
            Status::TimeLimit => "stop.max_time reached",
            Status::EventLimit => "stop.max_events reached",
            Status::Stalled => "no events left",
        }
    }
}

/// Packet counts for the conservation check.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub data_sent: u64,
    pub data_delivered: u64,
    pub data_trimmed: u64,
    pub data_dropped: u64,
    pub headers_delivered: u64,
    pub headers_dropped: u64,
    pub control_sent: u64,
    pub control_delivered: u64,
    pub control_dropped: u64,
}

#[derive(Debug, Clone)]
struct HostState {
    rng: Rng,
    active: Vec<u32>,
    rr: usize,
}

/// Columns of the port time series.
#[derive(Debug, Clone, Default)]
pub struct SampleRows {
    pub time: Vec<Time>,
    pub port: Vec<u64>,
    pub queue: Vec<u64>,
    pub util: Vec<f64>,
}

#[derive(Debug, Clone)]
struct Sampler {
    every: Time,
    ports: Vec<u32>,
    last_bytes: Vec<u64>,
    rows: SampleRows,
}

/// A compact copy of a node's routing fields (hot path).
#[derive(Debug, Clone, Copy)]
struct Route {
    /// Index into `Model::rules` (the switch tier); unused for hosts and top switches.
    tier: u8,
    rule: Rule,
    lo: u32,
    hi: u32,
    span: u32,
    first_port: u32,
    n_down: u32,
    n_up: u32,
    salt: u64,
}

/// A fabric, its workload and the clock.
pub struct Simulation {
    scenario: Scenario,
    model: Model,
    topo: Topology,
    queue: EventQueue,
    ports: Vec<EgressPort>,
    routes: Vec<Route>,
    switch_rng: Vec<Rng>,
    hosts: Vec<HostState>,
    /// Connections (one per message, or its MPTCP subflows).
    flows: Vec<Flow>,
    /// The workload's messages and, per connection, its message.
    messages: Vec<Message>,
    conn_msg: Vec<u32>,
    counters: Counters,
    flows_done: u32,
    events: u64,
    status: Status,
    scratch: Vec<SendRecord>,
    scratch_psn: Vec<u32>,
    faults: Vec<FaultAction>,
    /// Ports routing has excluded, and the resulting usable up-ports per (switch, leaf);
    /// empty while nothing is excluded.
    excluded: Vec<bool>,
    restricted: Vec<Option<Box<[u32]>>>,
    sampler: Option<Sampler>,
    wall: std::time::Duration,
}

impl Simulation {
    /// Checks the scenario and builds the fabric; nothing runs yet.
    pub fn new(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
        let model = scenario.resolve()?;
        let topo = Topology::build(&model.tree);
        let hosts_n = topo.hosts();
        let ports = topo
            .ports
            .iter()
            .map(|p| EgressPort::new(p.from, p.to, p.from.saturating_sub(hosts_n), p.rate, p.delay, model.classes as usize))
            .collect();
        let salt_rng = |i: u64| Rng::stream(model.seed, Stream::Salt, i).next_u64();
        let routes = topo
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| Route {
                tier: n.tier.unwrap_or(0) as u8,
                rule: n.tier.and_then(|t| model.rules.get(t as usize)).copied().unwrap_or(Rule::Ecmp),
                lo: n.lo,
                hi: n.hi,
                span: n.span,
                first_port: n.first_port,
                n_down: n.n_down,
                n_up: n.n_up,
                salt: salt_rng(i as u64),
            })
            .collect();
        let switch_rng = (0..topo.switches()).map(|i| Rng::stream(model.seed, Stream::Switch, i as u64)).collect();
        let mut hosts: Vec<HostState> =
            (0..hosts_n).map(|h| HostState { rng: Rng::stream(model.seed, Stream::Host, h as u64), active: Vec::new(), rr: 0 }).collect();
        let faults = crate::faults::resolve(&scenario.faults, &topo, model.seed, model.max_time)?;
        // the calendar's ring should cover a hop, the longest link delay plus a packet: every
        // packet event falls within it (timers go beyond). Its memory grows with its span.
        let hop = topo.ports.iter().map(|p| p.delay + serialization(model.mtu, p.rate)).max().unwrap_or(0);
        let mut queue = EventQueue::with_horizon(hop + hop / 8);
        for (i, f) in faults.iter().enumerate() {
            queue.schedule(f.at, Event::Fault(i as u32));
        }
        let sampler = match &scenario.samples {
            None => None,
            Some(cfg) => {
                ensure(cfg.every.0 > 0, "samples.every", cfg.every, "allowed: a positive duration")?;
                let mut ports = Vec::new();
                for (i, pattern) in cfg.ports.iter().enumerate() {
                    let matched: Vec<u32> = (0..topo.ports.len() as u32)
                        .filter(|&p| match pattern.strip_suffix('*') {
                            Some(prefix) => topo.ports[p as usize].name.starts_with(prefix),
                            None => topo.ports[p as usize].name == *pattern,
                        })
                        .collect();
                    ensure(
                        !matched.is_empty(),
                        &format!("samples.ports[{i}]"),
                        format!("{pattern:?}"),
                        "allowed: a port name (\"leaf0:up3\") or a prefix ending in * (\"leaf0:up*\") that matches a port",
                    )?;
                    ports.extend(matched);
                }
                if cfg.ports.is_empty() {
                    ports = (0..topo.ports.len() as u32).collect();
                }
                ports.sort_unstable();
                ports.dedup();
                queue.schedule(0, Event::Sample);
                Some(Sampler { every: cfg.every.0, last_bytes: vec![0; ports.len()], ports, rows: SampleRows::default() })
            }
        };
        let (mut flows, mut messages, mut conn_msg) = (Vec::new(), Vec::new(), Vec::new());
        for (m, spec) in model.flows.iter().enumerate() {
            let shares = crate::lb::mptcp::shares(spec.bytes, model.lb.subflows());
            let k = shares.len() as u64;
            // subflows share the line-rate window at first, each may grow to max_cwnd
            let init = if k > 1 { (model.init_cwnd / k).max(model.mtu) } else { model.init_cwnd };
            messages.push(Message { spec: *spec, first: flows.len() as u32, count: k as u32, done: 0 });
            for bytes in shares {
                let rng = &mut hosts[spec.src as usize].rng;
                let lb = if spec.pinned {
                    HostLb::Ecmp(crate::lb::ecmp::Ecmp::new(crate::lb::MAX_EVS, rng))
                } else {
                    HostLb::new(&model.lb, &model.lb_ctx, rng)
                };
                let window = Window::new(model.cc, init, model.max_cwnd, model.mtu);
                queue.schedule(spec.start, Event::FlowStart(flows.len() as u32));
                let mut flow = Flow::new(FlowSpec { bytes, ..*spec }, model.mtu, model.header, window, lb, model.ack_policy);
                flow.n_paths = model.tree.path_count(spec.src, spec.dst);
                flows.push(flow);
                conn_msg.push(m as u32);
            }
        }
        Ok(Simulation {
            scenario: scenario.filled(),
            model,
            topo,
            queue,
            ports,
            routes,
            switch_rng,
            hosts,
            flows,
            messages,
            conn_msg,
            counters: Counters::default(),
            flows_done: 0,
            events: 0,
            status: Status::Running,
            scratch: Vec::new(),
            scratch_psn: Vec::new(),
            faults,
            sampler,
            excluded: Vec::new(),
            restricted: Vec::new(),
            wall: std::time::Duration::ZERO,
        })
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> RunResult {
        self.step(u64::MAX);
        self.results()
    }

    /// Processes at most `budget` events; returns the status afterwards. Call again while
    /// it is [`Status::Running`] (the front ends do this to draw progress).
    pub fn step(&mut self, budget: u64) -> Status {
        if self.status != Status::Running {
            return self.status;
        }
        let started = Instant::now();
        let total_flows = self.messages.len() as u32;
        let mut n = 0;
        while n < budget {
            let Some(t) = self.queue.peek_time() else {
                self.status = Status::Stalled;
                break;
            };
            if t > self.model.max_time {
                self.status = Status::TimeLimit;
                break;
            }
            if self.events >= self.model.max_events {
                self.status = Status::EventLimit;
                break;
            }
            let Some((now, event)) = self.queue.pop() else { break };
            self.prefetch_next();
            self.events += 1;
            n += 1;
            match event {
                Event::PortFree(p) => self.on_port_free(now, p),
                Event::PipeArrive(p) => self.on_pipe_arrive(now, p),
                Event::FlowStart(f) => {
                    let src = self.flows[f as usize].spec.src;
                    self.hosts[src as usize].active.push(f);
                    self.host_kick(now, src);
                }
                Event::Rto(f) => self.on_rto(now, f),
                Event::Fault(i) => self.on_fault(i),
                Event::Sample => self.on_sample(now),
            }
            if self.flows_done == total_flows {
                self.status = Status::Complete;
                break;
            }
        }
        self.wall += started.elapsed();
        self.status
    }

    /// Starts loading what the next event will read (the head of a pipe, a port) so that its
    /// cache miss overlaps this event's work: the large runs are memory-bound, and the head
    /// of a pipe was written one link latency ago, long since evicted. A plain load whose
    /// value only feeds `black_box`: the out-of-order core issues it and moves on.
    #[inline]
    fn prefetch_next(&mut self) {
        if let Some(Event::PipeArrive(p) | Event::PortFree(p)) = self.queue.peek() {
            let port = &self.ports[p as usize];
            std::hint::black_box(port.pipe.front().map(|(t, _)| *t));
        }
    }

    // ---- ports -------------------------------------------------------------------------

    /// Puts `pkt` on `port`'s wire now: its last bit leaves after the serialization time and
    /// reaches the far end `delay` later.
    #[inline]
    fn transmit(&mut self, now: Time, port: u32, pkt: Packet) {
        let p = &mut self.ports[port as usize];
        debug_assert!(p.busy_until <= now);
        let done = now + serialization(pkt.size as u64, p.rate);
        p.busy_until = done;
        if p.down {
            // a dead link: the port serializes into the void and the packet is lost
            p.stats.drops += 1;
            self.count_loss(&pkt);
            return;
        }
        p.stats.bytes += pkt.size as u64;
        p.stats.packets += 1;
        if pkt.kind == Kind::Data && !pkt.trimmed {
            p.stats.data_packets += 1;
        }
        if p.loss > 0.0 {
            if let Some(rng) = p.loss_rng.as_mut() {
                if (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < p.loss {
                    p.stats.drops += 1;
                    self.count_loss(&pkt);
                    return;
                }
            }
        }
        // a wire never reorders, even when its latency drops (a `delay` fault ending)
        let arrive = (done + p.delay).max(p.pipe.back().map_or(0, |&(t, _)| t));
        p.pipe.push_back((arrive, pkt));
        if p.pipe.len() == 1 {
            self.queue.schedule(arrive, Event::PipeArrive(port));
        }
    }

    /// Counts a packet lost on a link (dead or lossy) by its kind.
    fn count_loss(&mut self, pkt: &Packet) {
        match (pkt.kind, pkt.trimmed) {
            (Kind::Data, false) => {
                self.counters.data_dropped += 1;
                self.flows[pkt.flow as usize].stats.drops += 1;
            }
            (Kind::Data, true) => self.counters.headers_dropped += 1,
            _ => self.counters.control_dropped += 1,
        }
    }

    /// Schedules `port`'s wake-up for when its wire frees, unless one is pending.
    #[inline]
    fn wake_when_free(&mut self, port: u32) {
        let p = &mut self.ports[port as usize];
        if !p.wake_pending {
            p.wake_pending = true;
            self.queue.schedule(p.busy_until, Event::PortFree(port));
        }
    }

    fn on_port_free(&mut self, now: Time, port: u32) {
        let p = &mut self.ports[port as usize];
        p.wake_pending = false;
        let from = p.from;
        if from < self.hosts.len() as u32 {
            self.host_kick(now, from);
        } else {
            self.switch_next(now, port);
        }
    }

    /// A free switch port starts its next packet, control class first; ECN at dequeue.
    fn switch_next(&mut self, now: Time, port: u32) {
        let p = &mut self.ports[port as usize];
        let pkt = if let Some(pkt) = p.control.pop_front() {
            p.control_bytes -= pkt.size as u64;
            pkt
        } else {
            let Some(mut head) = p.pop_data(now, &self.model.scheduler) else { return };
            if let Some((kmin, kmax, EcnMark::Dequeue)) = self.model.ecn {
                let left = p.classes[head.class as usize].bytes;
                if red_mark(left, kmin, kmax, &mut self.switch_rng[p.switch as usize]) {
                    p.stats.ecn_marks += 1;
                    head.ecn = true;
                }
            }
            head
        };
        self.transmit(now, port, pkt);
        if self.ports[port as usize].has_queued() {
            self.wake_when_free(port);
        }
    }

    fn on_pipe_arrive(&mut self, now: Time, port: u32) {
        let p = &mut self.ports[port as usize];
        let Some((_, pkt)) = p.pipe.pop_front() else { return };
        if let Some(&(next, _)) = p.pipe.front() {
            self.queue.schedule(next, Event::PipeArrive(port));
        }
        let to = p.to;
        if to < self.hosts.len() as u32 {
            self.host_receive(now, to, pkt);
        } else {
            let mut pkt = pkt;
            let out = self.next_hop(to, &pkt);
            let r = &self.routes[to as usize];
            if out >= r.first_port + r.n_down {
                // going up: the switch stamps its choice into the path id (mixed radix)
                pkt.path = pkt.path.wrapping_mul(r.n_up as u16).wrapping_add((out - r.first_port - r.n_down) as u16);
            }
            self.enqueue(now, out, pkt);
        }
    }

    /// Down is deterministic; up follows the switch tier's rule (`switch::routing`), among
    /// the up-ports routing still allows towards the destination's leaf.
    #[inline]
    fn next_hop(&mut self, node: u32, pkt: &Packet) -> u32 {
        let r = self.routes[node as usize];
        if (r.lo..r.hi).contains(&pkt.dst) {
            return r.first_port + (pkt.dst - r.lo) / r.span;
        }
        let sw = (node - self.hosts.len() as u32) as usize;
        // a free function over the fields, so the switch's RNG can be borrowed alongside
        let set = usable(&self.restricted, &self.model.tree, sw, pkt.dst);
        let rng = &mut self.switch_rng[sw];
        let i = choose_up(&r, pkt, set, Some(rng), &self.ports, &self.model.lb_ctx.mp_ev);
        r.first_port + r.n_down + i.unwrap_or(0)
    }

    fn enqueue(&mut self, now: Time, port: u32, mut pkt: Packet) {
        let m = &self.model;
        let p = &mut self.ports[port as usize];
        let mut control = pkt.is_control();
        if !control && p.classes[pkt.class as usize].bytes + pkt.size as u64 > m.buffer {
            p.stats.max_queue = p.stats.max_queue.max(p.data_bytes);
            let flow = &mut self.flows[pkt.flow as usize];
            match m.overflow {
                Overflow::Trim => {
                    p.stats.trims += 1;
                    flow.stats.trims += 1;
                    self.counters.data_trimmed += 1;
                    pkt.trimmed = true;
                    pkt.size = m.header as u16;
                    control = true;
                }
                Overflow::Drop => {
                    p.stats.drops += 1;
                    flow.stats.drops += 1;
                    self.counters.data_dropped += 1;
                    return;
                }
            }
        }
        if control {
            if p.control_bytes + pkt.size as u64 > m.control_buffer {
                p.stats.drops += 1;
                if pkt.kind == Kind::Data {
                    self.counters.headers_dropped += 1;
                } else {
                    self.counters.control_dropped += 1;
                }
                return;
            }
            p.control_bytes += pkt.size as u64;
            p.control.push_back(pkt);
        } else if p.is_free(now) {
            // A free port has empty queues (a wake-up is pending whenever packets wait): the
            // packet goes straight onto the wire and was never queued; the queue it sees, at
            // enqueue or dequeue, is empty, so RED never marks it.
            debug_assert!(!p.has_queued());
            self.transmit(now, port, pkt);
            return;
        } else {
            if let Some((kmin, kmax, EcnMark::Enqueue)) = m.ecn {
                let ahead = p.classes[pkt.class as usize].bytes;
                if red_mark(ahead, kmin, kmax, &mut self.switch_rng[p.switch as usize]) {
                    p.stats.ecn_marks += 1;
                    pkt.ecn = true;
                }
            }
            p.push_data(now, pkt);
        }
        if p.is_free(now) {
            self.switch_next(now, port);
        } else {
            self.wake_when_free(port);
        }
    }

    // ---- hosts -------------------------------------------------------------------------

    /// If the host's NIC is free, start its next packet: control first, then data pulled
    /// round-robin from the flows whose window allows. A NIC that sends wakes up when the
    /// packet is out to pull the next one (line-rate pacing, no NIC queue).
    fn host_kick(&mut self, now: Time, host: u32) {
        let port = self.routes[host as usize].first_port;
        let p = &mut self.ports[port as usize];
        if !p.is_free(now) {
            return;
        }
        if let Some(pkt) = p.control.pop_front() {
            p.control_bytes -= pkt.size as u64;
            self.transmit(now, port, pkt);
            self.wake_when_free(port);
            return;
        }
        let hs = &mut self.hosts[host as usize];
        let n = hs.active.len();
        for k in 0..n {
            let i = (hs.rr + k) % n;
            let f = hs.active[i];
            let flow = &mut self.flows[f as usize];
            let Some(psn) = flow.next_psn() else { continue };
            let ev = flow.tx.lb.next_ev(now, &mut hs.rng);
            flow.on_sent(psn, ev, now);
            if !flow.tx.rto_armed {
                flow.tx.rto_armed = true;
                self.queue.schedule(now + self.model.rto, Event::Rto(f));
            }
            hs.rr = (i + 1) % n;
            self.counters.data_sent += 1;
            let pkt = Packet {
                kind: Kind::Data,
                trimmed: false,
                ecn: false,
                class: flow.spec.class,
                flow: f,
                psn,
                ev,
                src: flow.spec.src,
                dst: flow.spec.dst,
                path: 0,
                size: flow.wire_size(psn) as u16,
                sack_end: 0,
            };
            self.transmit(now, port, pkt);
            self.wake_when_free(port);
            return;
        }
    }

    /// Queues an ACK or NACK at `host`'s NIC (control class, never limited at the host).
    fn send_control(&mut self, now: Time, host: u32, packet: Packet) {
        self.counters.control_sent += 1;
        let port = self.routes[host as usize].first_port;
        let p = &mut self.ports[port as usize];
        p.control_bytes += packet.size as u64;
        p.control.push_back(packet);
        self.host_kick(now, host);
    }

    fn host_receive(&mut self, now: Time, host: u32, packet: Packet) {
        let f = packet.flow;
        let flow = &mut self.flows[f as usize];
        let header = self.model.header as u16;
        let gbn = self.model.transport == TransportKind::Gbn;
        let path_id = self.model.loss_detection == LossDetection::PathId;
        let reply = move |kind: Kind, ev: Ev, ecn: bool, sack_end: u32| Packet {
            kind,
            trimmed: false,
            ecn,
            class: 0,
            flow: f,
            psn: packet.psn,
            ev,
            src: host,
            dst: packet.src,
            path: 0,
            size: header,
            sack_end,
        };
        match packet.kind {
            Kind::Data if packet.trimmed => {
                self.counters.headers_delivered += 1;
                if gbn {
                    // the trimmed packet leaves a gap: NAK the expected PSN (once)
                    if let Some(e) = flow.rx.gap() {
                        let nak = Packet { psn: e, ..reply(Kind::Nack, packet.ev, false, 0) };
                        self.send_control(now, host, nak);
                    }
                } else {
                    let nack = reply(Kind::Nack, packet.ev, false, 0);
                    self.send_control(now, host, nack);
                }
            }
            Kind::Data => {
                self.counters.data_delivered += 1;
                let payload = flow.payload_of(packet.psn);
                let arrival = if gbn {
                    flow.rx.on_data_gbn(now, packet.psn, payload, packet.ev, packet.ecn)
                } else {
                    flow.rx.on_data(now, packet.psn, payload, packet.ev, packet.ecn)
                };
                if arrival.discarded {
                    flow.stats.discarded += 1;
                }
                if let Some(e) = arrival.nak {
                    let nak = Packet { psn: e, ..reply(Kind::Nack, packet.ev, false, 0) };
                    self.send_control(now, host, nak);
                }
                if path_id {
                    let flow = &mut self.flows[f as usize];
                    self.scratch_psn.clear();
                    flow.rx.lost_by_path(packet.psn, packet.path, flow.n_paths, &mut self.scratch_psn);
                    flow.stats.fast_nacks += self.scratch_psn.len() as u64;
                    for i in 0..self.scratch_psn.len() {
                        let nack = Packet { psn: self.scratch_psn[i], ..reply(Kind::Nack, packet.ev, false, 0) };
                        self.send_control(now, host, nack);
                    }
                }
                let flow = &mut self.flows[f as usize];
                if arrival.completed {
                    let m = &mut self.messages[self.conn_msg[f as usize] as usize];
                    m.done += 1;
                    if m.done == m.count {
                        self.flows_done += 1;
                    }
                }
                if arrival.send_ack {
                    let ack = reply(Kind::Ack, packet.ev, packet.ecn, flow.rx.sack_log.len() as u32);
                    self.send_control(now, host, ack);
                }
            }
            Kind::Ack => {
                self.counters.control_delivered += 1;
                let from = flow.tx.sack_cursor as usize;
                let newly = flow.on_ack(packet.sack_end);
                if self.model.ack_policy.all_evs {
                    // the ACK reports every packet since the previous one: feed each EV and
                    // mark to the load balancer and the window, as per-packet ACKs would
                    for i in from..(packet.sack_end as usize).max(from) {
                        let (ev, ecn) = flow.rx.ack_info[i];
                        flow.stats.ecn_acks += ecn as u64;
                        flow.tx.window.on_ack(flow.wire_size(flow.rx.sack_log[i]), ecn);
                        flow.tx.lb.on_ack(now, ev, ecn);
                    }
                } else {
                    if packet.ecn {
                        flow.stats.ecn_acks += 1;
                    }
                    flow.tx.window.on_ack(newly, packet.ecn);
                    flow.tx.lb.on_ack(now, packet.ev, packet.ecn);
                }
                if flow.sender_done() {
                    self.hosts[host as usize].active.retain(|&x| x != f);
                }
                self.host_kick(now, host);
            }
            Kind::Nack => {
                self.counters.control_delivered += 1;
                let lost = if gbn { flow.go_back(packet.psn) } else { flow.declare_lost(packet.psn) };
                if lost {
                    flow.tx.window.on_loss();
                }
                flow.tx.lb.on_nack(now, packet.ev);
                self.host_kick(now, host);
            }
        }
    }

    fn on_rto(&mut self, now: Time, f: u32) {
        let rto = self.model.rto;
        let flow = &mut self.flows[f as usize];
        flow.tx.rto_armed = false;
        self.scratch.clear();
        flow.expired(now, rto, &mut self.scratch);
        let gbn = self.model.transport == TransportKind::Gbn;
        for r in &self.scratch {
            // Go-back-N resends from the first unacknowledged PSN (ACKs are cumulative)
            let lost = if gbn { flow.go_back(flow.tx.acked) } else { flow.declare_lost(r.psn) };
            if lost {
                flow.stats.timeouts += 1;
                flow.tx.window.on_loss();
                flow.tx.lb.on_timeout(now, r.ev);
            }
        }
        if let Some(front) = flow.tx.send_log.front() {
            flow.tx.rto_armed = true;
            self.queue.schedule(front.at + rto, Event::Rto(f));
        }
        let src = flow.spec.src;
        self.host_kick(now, src);
    }

    /// Records each sampled port's data queue and its utilization since the last sample.
    fn on_sample(&mut self, now: Time) {
        let Some(s) = self.sampler.as_mut() else { return };
        for (k, &port) in s.ports.iter().enumerate() {
            let p = &self.ports[port as usize];
            let sent = p.stats.bytes - s.last_bytes[k];
            s.last_bytes[k] = p.stats.bytes;
            s.rows.time.push(now);
            s.rows.port.push(port as u64);
            s.rows.queue.push(p.data_bytes);
            // bits sent over what the link could send in the interval (at its current rate)
            s.rows.util.push(if now == 0 { 0.0 } else { sent as f64 * 8.0 / (p.rate as f64 * s.every as f64 / 1e12) });
        }
        self.queue.schedule(now + s.every, Event::Sample);
    }

    fn on_fault(&mut self, i: u32) {
        let f = self.faults[i as usize];
        for port in f.ports {
            let p = &mut self.ports[port as usize];
            match f.change {
                Change::Rate(r) => p.rate = r,
                Change::NominalRate => p.rate = p.nominal_rate,
                Change::Down => p.down = true,
                Change::Up => p.down = false,
                Change::ExtraDelay(x) => p.delay = p.nominal_delay + x,
                Change::Loss(pr) => {
                    p.loss = pr;
                    let seed = self.model.seed;
                    p.loss_rng.get_or_insert_with(|| Box::new(Rng::stream(seed, Stream::Fault, (1 << 32) | port as u64)));
                }
                Change::Converge => {
                    let down = p.down;
                    if self.excluded.is_empty() {
                        self.excluded = vec![false; self.ports.len()];
                    }
                    self.excluded[port as usize] = down;
                }
            }
        }
        if f.change == Change::Converge {
            self.restricted = if self.excluded.iter().any(|&x| x) { self.topo.usable_up_ports(&self.excluded) } else { Vec::new() };
        }
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
    pub fn flows_done(&self) -> u32 {
        self.flows_done
    }
    /// Messages of the workload (the rows of the flows table).
    pub fn flow_count(&self) -> u32 {
        self.messages.len() as u32
    }
    pub fn model(&self) -> &Model {
        &self.model
    }
    pub fn topology(&self) -> &Topology {
        &self.topo
    }
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    pub(crate) fn messages(&self) -> &[Message] {
        &self.messages
    }
    /// Connections: one per message, or its MPTCP subflows.
    pub(crate) fn connections(&self) -> &[Flow] {
        &self.flows
    }
    pub(crate) fn egress_ports(&self) -> &[EgressPort] {
        &self.ports
    }
    /// Wall-clock seconds spent in `step` so far.
    pub fn wall_s(&self) -> f64 {
        self.wall.as_secs_f64()
    }
    /// The port time series recorded so far (`[samples]`).
    pub fn samples(&self) -> Option<&SampleRows> {
        self.sampler.as_ref().map(|s| &s.rows)
    }

    /// The egress ports a packet of `flow` with entropy `ev` crosses from source to
    /// destination; `None` if a switch on the way decides at random or by load.
    pub fn path_of(&self, flow: u32, ev: Ev) -> Option<Vec<u32>> {
        let spec = self.flows[flow as usize].spec;
        let probe = Packet {
            kind: Kind::Data,
            trimmed: false,
            ecn: false,
            class: 0,
            flow,
            psn: 0,
            ev,
            src: spec.src,
            dst: spec.dst,
            path: 0,
            size: 0,
            sack_end: 0,
        };
        let mut port = self.routes[spec.src as usize].first_port;
        let mut path = vec![port];
        let mut node = self.topo.ports[port as usize].to;
        while node != spec.dst {
            let r = self.routes[node as usize];
            port = if (r.lo..r.hi).contains(&spec.dst) {
                r.first_port + (spec.dst - r.lo) / r.span
            } else {
                let set = usable(&self.restricted, &self.model.tree, (node - self.hosts.len() as u32) as usize, spec.dst);
                r.first_port + r.n_down + choose_up(&r, &probe, set, None, &self.ports, &self.model.lb_ctx.mp_ev)?
            };
            path.push(port);
            node = self.topo.ports[port as usize].to;
        }
        Some(path)
    }

    /// The one path of a flow whose load balancer uses a single EV (`ecmp`); `None` for
    /// per-packet load balancers.
    pub fn flow_path(&self, flow: u32) -> Option<Vec<u32>> {
        let ev = self.flows.get(flow as usize)?.tx.lb.fixed_ev()?;
        self.path_of(flow, ev)
    }

    /// Every data packet the hosts sent, by fate.
    pub fn accounting(&self) -> Accounting {
        let held = || self.ports.iter().flat_map(|p| p.packets()).filter(|p| p.kind == Kind::Data);
        let in_flight = held().filter(|p| !p.trimmed).count() as u64;
        let headers_in_flight = held().filter(|p| p.trimmed).count() as u64;
        let c = &self.counters;
        Accounting {
            data_sent: c.data_sent,
            data_delivered: c.data_delivered,
            data_trimmed: c.data_trimmed,
            data_dropped: c.data_dropped,
            data_in_flight: in_flight,
            headers_delivered: c.headers_delivered,
            headers_dropped: c.headers_dropped,
            headers_in_flight,
        }
    }

    /// Per-flow, per-port and summary results of the run so far.
    pub fn results(&self) -> RunResult {
        let mut ideal_cache = std::collections::HashMap::new();
        let ideals: Vec<Time> = self
            .messages
            .iter()
            .map(|m| {
                let spec = m.spec;
                let tiers = self.model.tree.link_tiers(spec.src, spec.dst);
                *ideal_cache
                    .entry((tiers.len(), spec.bytes))
                    .or_insert_with(|| ideal_fct(&self.model.tree.path(spec.src, spec.dst), spec.bytes, self.model.mtu, self.model.header))
            })
            .collect();
        RunResult::collect(self, &ideals)
    }
}

/// The up-ports switch `sw` (index among switches) may use towards `dst` after routing
/// excluded links; `None` while nothing restricts it.
#[inline]
fn usable<'a>(restricted: &'a [Option<Box<[u32]>>], tree: &FatTreeSpec, sw: usize, dst: u32) -> Option<&'a [u32]> {
    if restricted.is_empty() {
        return None;
    }
    let leaf = (dst / tree.down0) as usize;
    restricted[sw * tree.leaves as usize + leaf].as_deref()
}

/// The up-port offset a switch picks by its rule, among `set` (offsets) if routing restricts
/// it. `None` for the rules that need randomness when no `rng` is given (path inspection).
#[inline]
fn choose_up(
    r: &Route,
    pkt: &Packet,
    set: Option<&[u32]>,
    rng: Option<&mut Rng>,
    ports: &[EgressPort],
    layout: &MpEvLayout,
) -> Option<u32> {
    let n = set.map_or(r.n_up, |s| s.len() as u32);
    let at = |i: u32| set.map_or(i, |s| s[i as usize]);
    Some(match r.rule {
        Rule::Ecmp => at(ecmp_index(r.salt, pkt.src, pkt.dst, pkt.flow, pkt.ev, n)),
        Rule::MpEv => {
            let part = layout.part(pkt.ev, r.tier as usize);
            match set {
                // the named port is out of the group: hash over what is left, so the packets
                // that named it spread instead of doubling one neighbour's share
                Some(s) if !s.contains(&part) => s[ecmp_index(r.salt, pkt.src, pkt.dst, pkt.flow, pkt.ev, n) as usize],
                _ => part,
            }
        }
        Rule::Spray => at(rng?.below(n as u64) as u32),
        Rule::Adaptive => {
            // least-loaded queue; among equals, each is kept with probability 1/k
            // (reservoir sampling), so ties break uniformly at random
            let rng = rng?;
            let up = r.first_port + r.n_down;
            let (mut best, mut best_load, mut ties) = (0, u64::MAX, 0u64);
            for i in 0..n {
                let p = &ports[(up + at(i)) as usize];
                let load = p.data_bytes + p.control_bytes;
                if load < best_load {
                    (best, best_load, ties) = (at(i), load, 1);
                } else if load == best_load {
                    ties += 1;
                    if rng.below(ties) == 0 {
                        best = at(i);
                    }
                }
            }
            best
        }
    })
}

/// ECMP: a salted hash of the 5-tuple (hosts, flow id as the source port) and the EV, mapped
/// onto `n` up-ports with a multiply-shift (no modulo bias worth the name at n << 2^64).
#[inline]
pub fn ecmp_index(salt: u64, src: u32, dst: u32, flow: u32, ev: Ev, n: u32) -> u32 {
    let h = mix64(salt ^ mix64(((src as u64) << 32) | dst as u64) ^ ((flow as u64) << 32 | ev as u64));
    ((h as u128 * n as u128) >> 64) as u32
}
