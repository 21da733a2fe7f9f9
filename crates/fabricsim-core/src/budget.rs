//! What a run will need, estimated from the checked configuration before anything is built, and
//! refused with a named field when it exceeds `stop.max_memory`: a valid but enormous fabric,
//! a flow list of millions, or a port time series of billions of rows fails in milliseconds
//! with a message, instead of aborting after minutes of allocation.
//!
//! The estimate counts what grows with the scenario: the egress ports (their queues filled to
//! the data buffer and their wires to one bandwidth-delay product), the hosts, each message's
//! rows, the per-packet state of the connections under way at once ([`messages`]), the
//! results tables, and the samples (one row
//! per sampled port per interval up to `stop.max_time`, the run's guard: a run that ends
//! sooner samples less), and what each piece of a run on several threads holds beyond the
//! first ([`pieces`]). It aims to be within a factor of two of the peak; the bound is a guard
//! against the impossible, not an accounting.

use crate::error::{ensure, ScenarioError};
use crate::host::connection::{RecvHalf, SendHalf, REORDER_BUCKETS};
use crate::host::message::{Message, MsgState};
use crate::host::table::{NARROW_PACKETS, STORED_ROW_BYTES, WIDE_ROW_BYTES};
use crate::host::TransportModel;
use crate::packet::Packet;
use crate::stats::columns::{Ty, FLOWS};
use crate::stats::Keep;
use crate::switch::{EgressPort, SwitchModel};
use crate::topology::{Cut, GraphSize, Topology};
use crate::workload::collective::Tag;
use crate::workload::window::{FarIds, Window};
use crate::workload::{Deps, MessageSpec};

/// Bytes of one row of the port time series: its four 8-byte values, and one more while the
/// Python binding copies a column out (the results move the rows into their table, and the
/// binding frees each column once copied).
const SAMPLE_ROW: u64 = 40;

/// The estimate, by part, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Estimate {
    pub fabric: u64,
    pub messages: u64,
    pub samples: u64,
    /// The pieces of a run on several threads, beyond the first.
    pub pieces: u64,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.fabric.saturating_add(self.messages).saturating_add(self.samples).saturating_add(self.pieces)
    }
}

/// Bytes of the forwarding tables (`topology::tables`, shared by the pieces): an entry per
/// (switch, destination class), and per host its class and its two ports.
fn tables(g: &GraphSize) -> u64 {
    g.switches.saturating_mul(g.classes * 4).saturating_add(g.hosts * 12)
}

/// Bytes per port of what a port always holds: its state, name, counters and results rows.
fn port_fixed() -> u64 {
    std::mem::size_of::<EgressPort>() as u64 + 96
}

/// The memory of a fabric's graph before any packet: its ports, its hosts and its forwarding
/// tables (checked before the fabric is built).
pub fn graph(g: &GraphSize) -> u64 {
    g.ports.saturating_mul(port_fixed()).saturating_add(g.hosts * 128).saturating_add(tables(g))
}

/// The memory of the fabric: [`graph`], and each port's queues filled to the data buffer and
/// its wire holding a BDP.
pub fn fabric(g: &GraphSize, switch: &SwitchModel, mtu: u64, bdp_packets: u64) -> u64 {
    let packet = std::mem::size_of::<Packet>() as u64 + 8; // a queue or pipe entry
    let queued = switch.classes as u64 * switch.buffer.div_ceil(mtu) + bdp_packets;
    g.ports.saturating_mul(queued.saturating_mul(packet)).saturating_add(graph(g))
}

/// Bytes of one connection's state (both halves), before its per-packet state.
fn per_connection() -> u64 {
    (std::mem::size_of::<SendHalf>() + std::mem::size_of::<RecvHalf>()) as u64 + REORDER_BUCKETS as u64 * 8 + 256
}

/// The least memory a message takes: its rows (a compute task or a transfer on a scale-up
/// network has no connection: most of a training step's messages). Jobs are refused with it
/// before they are expanded.
pub fn message_floor(keep: &Keep) -> u64 {
    message_row(keep)
}

/// Events a data packet makes, about, per tier of the fabric: per hop its wire's arrival and
/// its port's wake-up, there and back (the ACK), and the host's work at each end. Measured:
/// 14.7 events per data packet on `perm-128-8MiB-ops` and 15.0 on `perm-1024-8MiB-ops`, both
/// 2-tier (events / data packets of `fabricsim bench`).
pub const EVENTS_PER_PACKET_TIER: u64 = 8;

/// The events message `m` is expected to make (a run's `expected_events`, one
/// message's part; `m`'s hosts by leaf slot, as a run's model holds them; `mss`: a packet's
/// payload).
pub fn events(topo: &Topology, mss: u64, m: &MessageSpec) -> u64 {
    if m.is_compute() || topo.scale_up_between(m.src, m.dst).is_some() {
        return EVENTS_PER_PACKET_TIER;
    }
    let tiers = (topo.links(m.src, m.dst) / 2) as u64;
    m.bytes.div_ceil(mss).max(1).saturating_mul(EVENTS_PER_PACKET_TIER * tiers)
}

/// The memory of the messages. Every message keeps its row, its connections' results rows and
/// its results-table row for the whole run; a connection's full state (per packet, at both
/// ends) exists only while its message is under way ([`crate::host::table`]). Messages that
/// wait for none start together at worst; dependent ones run in waves, counted as the two
/// heaviest consecutive levels of the dependency graph (a message's level is one more than its
/// deepest dependency's). Where a message waits for a later one the levels are not computed and
/// every message counts as under way.
/// `far`: the messages read from far on ([`crate::workload::window::Far::of`] `deps`); `keep`:
/// the flows table's columns the caller reads.
pub fn messages(
    topo: &Topology,
    transport: &TransportModel,
    subflows: u32,
    messages: &[MessageSpec],
    deps: &Deps,
    far: FarIds,
    keep: &Keep,
) -> Result<u64, ScenarioError> {
    let mut tally = Tally::new(transport, far, keep);
    for (i, m) in messages.iter().enumerate() {
        tally.add(m, deps.of(i), connections(topo, subflows, m));
    }
    tally.check_connections()?;
    Ok(tally.bytes())
}

/// The connections message `m` (its hosts by id, as a workload makes it) runs on
/// ([`crate::stats::least::connections`] of its hosts by leaf slot).
pub fn connections(topo: &Topology, subflows: u32, m: &MessageSpec) -> u64 {
    let on = MessageSpec { src: topo.slot(m.src), dst: topo.slot(m.dst), ..*m };
    crate::stats::least::connections(topo, subflows, &on).into()
}

/// [`messages`] counted one message at a time, in order, without holding them: what a
/// workload's messages will need as it makes them (a scenario's survey). Holds a message's
/// level while a later message may read it ([`Window`]).
#[derive(Debug, Clone)]
pub struct Tally {
    payload: u64,
    /// What a message keeps ([`message_row`] of the columns kept).
    row: u64,
    all_evs: u64,
    made: u32,
    kept: u64,
    /// Each message's level, and the bytes under way at each level (`None` once a message
    /// waits for a later one) ...
    levels: Option<(Window<u32>, Vec<u64>)>,
    /// ... and the bytes of every message under way at once.
    all: u64,
    entries: u64,
    /// The connections of the messages counted.
    connections: u64,
}

impl Tally {
    /// Messages numbered from 0, those in `far` read from far on
    /// ([`crate::workload::window::Far`]); `keep`: the flows table's columns the caller reads.
    pub fn new(transport: &TransportModel, far: FarIds, keep: &Keep) -> Tally {
        let payload = transport.mtu - transport.header;
        let all_evs = u64::from(transport.ack_policy.all_evs);
        let row = message_row(keep);
        Tally { payload, row, all_evs, made: 0, kept: 0, levels: Some((Window::new(far), Vec::new())), all: 0, entries: 0, connections: 0 }
    }

    /// Counts the next message, `m`, which waits for `after` and runs on `conns` connections
    /// ([`connections`]).
    pub fn add(&mut self, m: &MessageSpec, after: &[u32], conns: u64) {
        let (kept, live) = self.sizes(m, conns);
        self.kept = self.kept.saturating_add(kept);
        self.all = self.all.saturating_add(live);
        self.entries += after.len() as u64;
        self.connections += conns;
        let i = self.made;
        self.made += 1;
        let Some((level, cost)) = &mut self.levels else { return };
        if after.iter().any(|&j| j >= i) {
            self.levels = None;
            return;
        }
        let l = after.iter().filter_map(|&j| level.get(j)).map(|l| l + 1).max().unwrap_or(0);
        level.push(l);
        if cost.len() < l as usize + 2 {
            cost.resize(l as usize + 2, 0);
        }
        cost[l as usize] = cost[l as usize].saturating_add(live);
    }

    /// What message `m` on `conns` connections keeps for the whole run, and what it holds
    /// while under way.
    pub fn sizes(&self, m: &MessageSpec, conns: u64) -> (u64, u64) {
        // sender: state, transmit count, send log entry, send time (kept with an adaptive RTO
        // or an RTT-driven window; counted always, as a bound) and, reporting every EV, the EV
        // sent; receiver: its bitmap (and the marks' bitmap when reporting every EV)
        let per_packet = 1 + 2 + 24 + 8 + 4 * self.all_evs;
        let packets = m.bytes.div_ceil(self.payload);
        let live = match conns {
            0 => 0,
            _ => (conns * per_connection()).saturating_add(packets.saturating_mul(per_packet) + packets * (1 + self.all_evs) / 8),
        };
        // a connection of more packets than its row's counters hold keeps them in a map
        let wide = if conns > 0 && packets.div_ceil(conns) > NARROW_PACKETS { WIDE_ROW_BYTES } else { 0 };
        (self.row + conns * (connection_row() + wide), live)
    }

    /// Each message's level, while counted (`None` once a message waited for a later one).
    pub(crate) fn levels(&self) -> Option<&Window<u32>> {
        self.levels.as_ref().map(|(w, _)| w)
    }

    /// Counts `count` messages at once ([`Sink::rounds`](crate::workload::collective::Sink::rounds)
    /// in closed form): what they keep, hold under way and wait for, their connections, and
    /// what each level holds under way more (`under_way[l]`: the bytes at level `from + l`);
    /// the levels of the last `last.len()` of them are `last`, the others are never read.
    pub(crate) fn add_counted(
        &mut self,
        count: u32,
        (kept, live, entries, conns): (u64, u64, u64, u64),
        from: u32,
        under_way: &[u64],
        last: &[u32],
    ) {
        self.kept = self.kept.saturating_add(kept);
        self.all = self.all.saturating_add(live);
        self.entries += entries;
        self.connections += conns;
        self.made += count;
        let Some((level, cost)) = &mut self.levels else { return };
        let top = from as usize + under_way.len();
        if cost.len() < top + 1 {
            cost.resize(top + 1, 0);
        }
        for (c, &u) in cost[from as usize..].iter_mut().zip(under_way) {
            *c = c.saturating_add(u);
        }
        level.skip(count - last.len() as u32);
        last.iter().for_each(|&l| level.push(l));
    }

    /// Refuses more connections than a run numbers ([`MAX_CONNECTIONS`]).
    pub fn check_connections(&self) -> Result<(), ScenarioError> {
        ensure(
            self.connections <= MAX_CONNECTIONS,
            "workload",
            format!("{} connections", self.connections),
            format!("allowed: at most {MAX_CONNECTIONS} connections in a run (a connection's id is 32 bits: fewer messages, or fewer lb.subflows)"),
        )
    }

    /// The bytes of the messages counted so far.
    pub fn bytes(&self) -> u64 {
        let under_way = match &self.levels {
            Some((_, cost)) => cost.windows(2).map(|w| w[0].saturating_add(w[1])).max().unwrap_or(0),
            None => self.all,
        };
        // the dependency lists, built as one list a message, then compressed with their reverse
        self.kept.saturating_add(under_way).saturating_add(self.entries.saturating_mul(DEPENDENCY))
    }
}

/// Connections a run numbers: a connection's id is 32 bits.
pub const MAX_CONNECTIONS: u64 = u32::MAX as u64;

/// Bytes a dependency entry may take at its peak: in the list a message's is built in, in
/// the compressed lists and in their reverse.
const DEPENDENCY: u64 = 16;

/// Bytes a message takes at the run's peak, when its results are made: what it keeps for the
/// whole run (its row, what its ends count of it, `MsgState`, its tag, its count of what it
/// waits for and its place in the reverse lists) with the results' scratch beside it
/// ([`RESULTS_SCRATCH`]), or its row of the flows table (the columns `keep` keeps), which is
/// built as the run's state is freed, whichever is larger; and its ends, held across both.
fn message_row(keep: &Keep) -> u64 {
    let kept = (std::mem::size_of::<Message>() + std::mem::size_of::<MsgState>() + std::mem::size_of::<Tag>() + 4 + 4) as u64;
    (kept + RESULTS_SCRATCH).max(flows_row(keep)) + ENDS
}

/// Bytes of a message's ends (first send and end) as the results read them (`stats::collect`).
const ENDS: u64 = 16;

/// Bytes of one row of the flows table with the columns `keep` keeps: 8 a number, 1 a flag or
/// a label (the `traffic` column's code), one more for a value that may be missing.
fn flows_row(keep: &Keep) -> u64 {
    FLOWS
        .iter()
        .filter(|c| keep.has(c.name))
        .map(|c| {
            let value = match c.ty {
                Ty::U64 | Ty::F64 => 8,
                Ty::Bool | Ty::Str | Ty::StrList => 1,
            };
            value + u64::from(!c.null_when.is_empty())
        })
        .sum()
}

/// Bytes a message takes while the results are made, beside its row: its ideal FCT
/// (`stats::collect`; the jobs' ideal spans are computed at resolve in one pass that keeps two
/// times a message, `stats::jobs::bounds`). Measured: Llama 3 405B on 1 024 GPUs (7.4 M
/// flows, all but 2 % without a connection), stopped at 10 M events, 183 bytes a flow at the
/// results' peak with every column, 113 with six (`examples/mem_stages.rs`); this estimate:
/// 252.
const RESULTS_SCRATCH: u64 = 8;

/// Bytes a connection keeps for the whole run: its stored row, its slot and message, two
/// entries of a reorder histogram, and its losses.
fn connection_row() -> u64 {
    STORED_ROW_BYTES + 8 + 16 + 16
}

/// Refuses an estimate above `limit` bytes, naming what to change.
pub fn check(e: &Estimate, limit: u64) -> Result<(), ScenarioError> {
    if e.total() <= limit {
        return Ok(());
    }
    let gib = |b: u64| match b {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
    };
    let mut parts = vec![format!("fabric {}", gib(e.fabric))];
    if e.messages > 0 {
        parts.push(format!("messages {}", gib(e.messages)));
    }
    if e.samples > 0 {
        parts.push(format!("samples {}", gib(e.samples)));
    }
    if e.pieces > 0 {
        parts.push(format!("threads {}", gib(e.pieces)));
    }
    Err(ScenarioError::new(
        "stop.max_memory",
        format!("a run that needs about {} ({})", gib(e.total()), parts.join(", ")),
        format!(
            "allowed: at most stop.max_memory ({}); shrink the scenario (hosts, flows, sizes, samples.every, stop.max_time) or raise stop.max_memory",
            gib(limit)
        ),
    ))
}

/// What `extra` pieces beyond the first hold of a run of `messages` messages and `conns`
/// connections, beyond what one piece would: each its calendar; the run's maps from ids to
/// where the pieces keep them (`topology::Cut`, shared); and, all pieces together, a second
/// copy of what the ends count of each message whose ends lie in two pieces (`MsgState` and a
/// dependency count) and of each such connection's row. The ports, wires and hosts are split
/// among the pieces, not copied.
pub fn pieces(extra: u64, g: &GraphSize, messages: u64, conns: u64) -> u64 {
    if extra == 0 {
        return 0;
    }
    let per_piece = 8192 * 24 + 16 * 8192;
    let maps = (g.hosts + g.switches) * Cut::BYTES_PER_NODE + g.ports * Cut::BYTES_PER_PORT;
    let second_ends = messages.saturating_mul(20).saturating_add(conns.saturating_mul(STORED_ROW_BYTES + 8));
    extra.saturating_mul(per_piece).saturating_add(maps).saturating_add(second_ends)
}

/// The sample part of the estimate.
pub fn with_samples(mut e: Estimate, rows: u64) -> Estimate {
    e.samples = rows.saturating_mul(SAMPLE_ROW);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message's estimate stays within the factor of two the module aims for of what one
    /// took at the results' peak with every column, measured (183 bytes, `RESULTS_SCRATCH`),
    /// and does not go below it.
    #[test]
    fn a_message_costs_about_what_it_was_measured_to() {
        let all = message_row(&Keep::all());
        assert!((183..=2 * 183).contains(&all), "{all}");
    }

    /// A caller that reads a few columns of the flows table needs less a message: no less
    /// than what the run keeps of it.
    #[test]
    fn a_message_costs_the_columns_kept() {
        let six = Keep::only(&["bytes", "job", "traffic", "path_links", "slowdown", "completed"]).expect("columns");
        let (all, few, none) = (message_row(&Keep::all()), message_row(&six), message_row(&Keep::only::<&str>(&[]).expect("none")));
        assert!(few < all && none <= few, "{all} {few} {none}");
        assert_eq!(
            none,
            (std::mem::size_of::<Message>() + std::mem::size_of::<MsgState>() + std::mem::size_of::<Tag>() + 8) as u64
                + RESULTS_SCRATCH
                + ENDS
        );
    }

    /// A compute task or a scale-up transfer has no connection: its rows, nothing under way.
    #[test]
    fn a_message_without_a_connection_counts_only_its_rows() {
        let transport =
            crate::host::TransportConfig::default().resolve(16, crate::host::Connections::PerMessage).expect("the defaults resolve");
        let m = MessageSpec::new(0, 1, 1 << 20, 0, 0);
        let mut t = Tally::new(&transport, FarIds::default(), &Keep::all());
        t.add(&m, &[], 0);
        assert_eq!(t.bytes(), message_row(&Keep::all()));
        let mut t = Tally::new(&transport, FarIds::default(), &Keep::all());
        t.add(&m, &[], 1);
        assert!(t.bytes() > message_row(&Keep::all()) + connection_row() + per_connection(), "{}", t.bytes());
    }

    /// A connection of more packets than its stored row's counters hold keeps them in a map:
    /// counted beside its row, and only then.
    #[test]
    fn a_connection_past_its_rows_counters_counts_their_map() {
        let transport =
            crate::host::TransportConfig::default().resolve(16, crate::host::Connections::PerMessage).expect("the defaults resolve");
        let payload = transport.mtu - transport.header;
        let kept = |packets: u64, conns: u64| {
            let mut t = Tally::new(&transport, FarIds::default(), &Keep::all());
            t.add(&MessageSpec::new(0, 1, packets * payload, 0, 0), &[], conns);
            t.kept
        };
        assert_eq!(kept(NARROW_PACKETS, 1), message_row(&Keep::all()) + connection_row());
        assert_eq!(kept(NARROW_PACKETS + 1, 1), message_row(&Keep::all()) + connection_row() + WIDE_ROW_BYTES);
        assert_eq!(kept(NARROW_PACKETS + 1, 2), message_row(&Keep::all()) + 2 * connection_row(), "two subflows share the packets");
    }

    /// A connection's id is 32 bits: a run of more connections is refused, naming the count.
    #[test]
    fn more_connections_than_a_run_numbers_are_refused() {
        let transport =
            crate::host::TransportConfig::default().resolve(16, crate::host::Connections::PerMessage).expect("the defaults resolve");
        let m = MessageSpec::new(0, 1, 1 << 20, 0, 0);
        let mut t = Tally::new(&transport, FarIds::default(), &Keep::all());
        t.add(&m, &[], MAX_CONNECTIONS - 1);
        t.add(&m, &[], 1);
        assert!(t.check_connections().is_ok());
        t.add(&m, &[], 1);
        let e = t.check_connections().expect_err("one past");
        assert_eq!(e.field, "workload");
        assert!(e.message.contains("4294967296 connections") && e.message.contains("at most 4294967295"), "{e}");
    }
}
