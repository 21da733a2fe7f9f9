//! Turning a run's state into its tables: one row per message, per port, per reorder
//! distance, per sample, and the summary.
//!
//! In three stages, each reading one part of the run's state, so that
//! [`crate::Simulation::into_results`] can free that part before the next stage adds columns
//! (a flows table of millions of messages and the state it is read from are a run's largest
//! allocations; they never take their full memory together):
//! 1. [`MessageColumns::of`]: what the tables read of the messages and of the model's job
//!    structures (the jobs and steps tables, the ideals, the connections' first send and end);
//! 2. [`ConnColumns::of`]: the connections' counters, reorder table and losses, by message;
//! 3. [`RunResult::collect`]: the rest, from the columns of the first two and the fabric.

use std::collections::BTreeMap;

mod ends;
mod messages;

pub use ends::Ends;

use super::jobs::{JobBounds, JobTables};
use super::{columns, mean, ns, percentile, Column, Keep, Labels, Nullable, RunResult, RunView, Summary, Table};
use crate::host::message::{Message, MsgState};
use crate::host::parts::ConnParts;
use crate::host::TransportModel;
use crate::switch::forward::ConnLosses;
use crate::switch::EgressPort;
use crate::time::Time;
use crate::topology::Routes;
use crate::workload::collective::Tag;
use crate::workload::job::JobInfo;

/// The workload as the run kept it: what the first stage reads.
pub struct WorkView<'a> {
    /// The routes between hosts (and through them the fabric).
    pub routes: Routes,
    pub transport: &'a TransportModel,
    pub messages: &'a [Message],
    /// What the messages' ends counted of them (one per message).
    pub states: &'a [MsgState],
    /// When each message on a scale-up network was sent and delivered (`Time::MAX`: not).
    pub up: &'a BTreeMap<u32, [Time; 2]>,
    /// Each message's job tag, and the jobs.
    pub tags: &'a [Tag],
    pub jobs: &'a [JobInfo],
    /// What the jobs' tables hold before the run (`Model::job_bounds`; of the messages that
    /// joined, while a run that makes its jobs as it goes has not taken them all).
    pub bounds: std::borrow::Cow<'a, JobBounds>,
}

/// Whose each message is and how far it climbs: the flows table's `job`, `iteration`,
/// `traffic` and `path_links`.
struct Source {
    job: Nullable<u64>,
    iteration: Nullable<u64>,
    traffic: Labels,
    path_links: Vec<u64>,
}

impl Source {
    /// The columns `keep` keeps (the others empty).
    fn of(w: &WorkView<'_>, keep: &Keep) -> Source {
        let of_job = |name: &str, f: &dyn Fn(&Tag) -> u32| {
            let kept = w.tags.iter().filter(|_| keep.has(name));
            kept.map(|t| (t.job != Tag::NONE.job).then(|| u64::from(f(t)))).collect()
        };
        Source {
            job: of_job("job", &|t| t.job),
            iteration: of_job("iteration", &|t| t.iteration),
            traffic: (0..w.messages.len()).filter(|_| keep.has("traffic")).map(|i| super::jobs::traffic(w, i)).collect(),
            // made with the messages' other columns (`MessageColumns::add_messages`)
            path_links: Vec::new(),
        }
    }
}

/// What the tables read of the messages: their columns of the flows table, the jobs and
/// steps tables, and the load balancers' state size.
pub struct MessageColumns {
    src: Vec<u64>,
    dst: Vec<u64>,
    bytes: Vec<u64>,
    start: Vec<Time>,
    ready: Nullable<Time>,
    class: Vec<u64>,
    pinned: Vec<bool>,
    scale_up: Vec<bool>,
    source: Source,
    /// Compute tasks (training jobs): not rows of the flows table.
    compute: Vec<bool>,
    first_send: Nullable<Time>,
    end: Nullable<Time>,
    ideal: Vec<Time>,
    jobs: JobTables,
    lb_state_bytes: u64,
}

impl MessageColumns {
    /// Messages in the run (the rows of the flows table).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The messages' part of the results that reads the run (their `ends`, read from the
    /// connections before these are freed, their states and tags, the jobs' tables); the
    /// columns of the messages themselves come from [`MessageColumns::add_messages`]. Columns
    /// only the flows table reads are made if `keep` keeps them.
    pub fn of(w: &WorkView<'_>, ends: Ends, keep: &Keep) -> MessageColumns {
        let Ends { first_send, end, lb_state_bytes } = ends;
        let jobs = super::jobs::tables(w, &w.bounds, &end);
        MessageColumns {
            src: Vec::new(),
            dst: Vec::new(),
            bytes: Vec::new(),
            start: Vec::new(),
            ready: w.states.iter().filter(|_| keep.has("ready_ps")).map(MsgState::ready).collect(),
            class: Vec::new(),
            pinned: Vec::new(),
            scale_up: Vec::new(),
            source: Source::of(w, keep),
            compute: Vec::new(),
            first_send,
            end,
            ideal: Vec::new(),
            jobs,
            lb_state_bytes,
        }
    }
}

/// The flows table's columns counted from the connections, in [`ConnColumns`]' order.
const COUNTS: [&str; 11] = [
    "delivered_bytes",
    "packets",
    "data_packets",
    "retransmits",
    "timeouts",
    "ecn_acks",
    "cnps",
    "max_reorder",
    "out_of_order",
    "discarded",
    "fast_nacks",
];

/// What the tables read of the connections, by message (a message's connections, its MPTCP
/// subflows, are summed): their counters, the reorder table and what the fabric lost of them.
pub struct ConnColumns {
    /// [`COUNTS`], in that order; an empty column is all zeros (or not kept).
    counts: [Vec<u64>; 11],
    /// The run's data packets and retransmissions.
    totals: (u64, u64),
    reorder: Table,
    /// By message; absent: nothing lost.
    losses: BTreeMap<u32, ConnLosses>,
}

impl ConnColumns {
    /// The connections' part of the results of `messages` messages; `losses`: by connection.
    /// The columns `keep` keeps of them (the run's totals of data packets and retransmissions
    /// always).
    pub fn of(messages: usize, flows: &ConnParts<'_>, losses: &BTreeMap<u32, ConnLosses>, keep: &Keep) -> ConnColumns {
        // a column is allocated at its first count that is not zero: a run without losses
        // keeps its loss counters empty while the connection table lives (the peak of a run
        // of many messages), and they become zeros once it is freed (`RunResult::collect`)
        let mut counts: [Vec<u64>; 11] = Default::default();
        let kept = COUNTS.map(|name| keep.has(name));
        let mut totals = (0, 0);
        let mut count = |col: usize, m: u32, a: u64, f: fn(u64, u64) -> u64| {
            if a != 0 && kept[col] {
                let col = &mut counts[col];
                if col.is_empty() {
                    *col = vec![0; messages];
                }
                col[m as usize] = f(col[m as usize], a);
            }
        };
        // reorder distance distribution, long format: one row per (flow, distance) seen; a
        // message's connections are consecutive ids
        // (made to their size: grown by doubling, three columns of a million rows took twice
        // their memory at the results' peak)
        let rows = flows.reorder_entries();
        let (mut rf, mut rd, mut rc) = (Vec::with_capacity(rows), Vec::with_capacity(rows), Vec::with_capacity(rows));
        let mut hist = [0u64; crate::host::connection::REORDER_BUCKETS];
        let mut flush = |m: u32, hist: &mut [u64; crate::host::connection::REORDER_BUCKETS]| {
            for (d, &n) in hist.iter().enumerate().filter(|(_, &n)| n > 0) {
                rf.push(m as u64);
                rd.push(d as u64);
                rc.push(n);
            }
            *hist = [0; crate::host::connection::REORDER_BUCKETS];
        };
        for c in 0..flows.len() as u32 {
            let (m, r) = (flows.message_of(c), flows.row(c));
            let s = &r.stats;
            let add = [
                r.delivered_bytes,
                r.n_pkts as u64,
                s.data_packets,
                s.retransmits,
                s.timeouts,
                s.ecn_acks,
                s.cnps,
                0,
                0,
                s.discarded,
                s.fast_nacks,
            ];
            (totals.0, totals.1) = (totals.0 + s.data_packets, totals.1 + s.retransmits);
            for (col, a) in add.into_iter().enumerate() {
                count(col, m, a, |x, a| x + a);
            }
            count(7, m, r.max_reorder as u64, u64::max);
            flows.add_reorder(c, &mut hist);
            if c + 1 == flows.len() as u32 || flows.message_of(c + 1) != m {
                // arrivals at a distance are out of order (the histogram's buckets above 0)
                count(8, m, hist[1..].iter().sum(), |x, a| x + a);
                flush(m, &mut hist);
            }
        }
        let mut reorder = Table::new(columns::REORDER);
        reorder.add("flow", Column::U64(rf));
        reorder.add("distance", Column::U64(rd));
        reorder.add("arrivals", Column::U64(rc));
        let mut by_message: BTreeMap<u32, ConnLosses> = BTreeMap::new();
        for (&c, l) in losses {
            let e = by_message.entry(flows.message_of(c)).or_default();
            e.trims += l.trims;
            e.drops += l.drops;
        }
        ConnColumns { counts, totals, reorder, losses: by_message }
    }
}

impl RunResult {
    /// The tables of a run so far, from its state (`v`) and the columns of the messages (`m`)
    /// and of the connections (`c`).
    pub fn collect(v: RunView<'_>, m: MessageColumns, c: ConnColumns, keep: &Keep) -> RunResult {
        let (topo, ports) = (v.topo, v.ports);
        let (now, wall_s, status, transport) = (v.now, v.wall_s, v.status, v.transport);
        let (ids, m, c) = without_compute(m, c);
        let MessageColumns {
            src,
            dst,
            bytes,
            start,
            ready,
            class,
            pinned,
            scale_up,
            source,
            first_send,
            end,
            ideal,
            jobs,
            lb_state_bytes,
            ..
        } = m;
        let ConnColumns { counts, totals: (total_data, total_retx), reorder: rt, losses } = c;
        let n = bytes.len();
        // a count column none of whose rows counted is empty until its column is made
        let dense = move |v: Vec<u64>| Column::U64(if v.is_empty() { vec![0; n] } else { v });
        let [delivered, packets, data_packets, retransmits, timeouts, ecn_acks, cnps, max_reorder, out_of_order, discarded, fast_nacks] =
            counts;
        let fct: Nullable<Time> = end.iter().zip(first_send.iter()).zip(&start).map(|((e, f), &s)| e.map(|e| e - f.unwrap_or(s))).collect();
        let slowdown: Nullable<f64> = fct.iter().zip(&ideal).map(|(f, &i)| f.map(|f| f as f64 / i as f64)).collect();
        let buckets = super::buckets::table(bytes.iter().copied().zip(slowdown.iter()));
        let (fct_stats, slow_stats) = (Stats::of(fct.present().map(ns)), Stats::of(slowdown.present()));
        // payload bits over the FCT: what the application sees (Juniper post's accounting)
        let goodput =
            || -> Nullable<f64> { bytes.iter().zip(fct.iter()).map(|(&b, f)| f.map(|f| b as f64 * 8.0 / f as f64 * 1e3)).collect() };
        let goodput = keep.has("goodput_gbps").then(goodput);
        let completed: Vec<bool> = fct.valid.clone();
        // a message on a scale-up network has no connection to count its bytes: it delivers
        // them all at once
        let delivered = || {
            let mut d = if delivered.is_empty() { vec![0; n] } else { delivered };
            for (i, _) in scale_up.iter().enumerate().filter(|(i, &up)| up && completed[*i]) {
                d[i] = bytes[i];
            }
            Column::U64(d)
        };
        let delivered = keep.has("delivered_bytes").then(delivered);
        let lost = |f: &dyn Fn(&ConnLosses) -> u64| {
            let mut col = vec![0; n];
            for (&i, l) in &losses {
                col[i as usize] = f(l);
            }
            Column::U64(col)
        };
        let (trims, drops) = (losses.values().map(|l| l.trims).sum(), losses.values().map(|l| l.drops).sum::<u64>());
        let mut ft = Table::new(columns::FLOWS);
        let k = keep;
        ft.add_if(k, "flow", || Column::U64(ids));
        ft.add_if(k, "src", || Column::U64(src));
        ft.add_if(k, "dst", || Column::U64(dst));
        ft.add_if(k, "bytes", || Column::U64(bytes));
        ft.add_if(k, "start_ps", || Column::U64(start));
        ft.add_if(k, "ready_ps", || Column::OptU64(ready));
        ft.add_if(k, "class", || Column::U64(class));
        ft.add_if(k, "pinned", || Column::Bool(pinned));
        ft.add_if(k, "scale_up", || Column::Bool(scale_up));
        ft.add_if(k, "job", || Column::OptU64(source.job));
        ft.add_if(k, "iteration", || Column::OptU64(source.iteration));
        ft.add_if(k, "traffic", || Column::Labels(source.traffic));
        ft.add_if(k, "path_links", || Column::U64(source.path_links));
        ft.add_if(k, "first_send_ps", || Column::OptU64(first_send));
        ft.add_if(k, "end_ps", || Column::OptU64(end));
        ft.add_if(k, "fct_ps", || Column::OptU64(fct));
        ft.add_if(k, "ideal_fct_ps", || Column::U64(ideal));
        ft.add_if(k, "slowdown", || Column::OptF64(slowdown));
        ft.add_if(k, "completed", || Column::Bool(completed));
        // every connection belongs to one message: the run's totals are the columns' sums
        ft.add_if(k, "delivered_bytes", || delivered.expect("kept"));
        ft.add_if(k, "packets", || dense(packets));
        ft.add_if(k, "data_packets", || dense(data_packets));
        ft.add_if(k, "retransmits", || dense(retransmits));
        ft.add_if(k, "timeouts", || dense(timeouts));
        ft.add_if(k, "trims", || lost(&|l| l.trims));
        ft.add_if(k, "drops", || lost(&|l| l.drops));
        ft.add_if(k, "ecn_acks", || dense(ecn_acks));
        ft.add_if(k, "cnps", || dense(cnps));
        ft.add_if(k, "max_reorder", || dense(max_reorder));
        ft.add_if(k, "out_of_order", || dense(out_of_order));
        ft.add_if(k, "discarded", || dense(discarded));
        ft.add_if(k, "fast_nacks", || dense(fast_nacks));
        ft.add_if(k, "goodput_gbps", || Column::OptF64(goodput.expect("kept")));

        let mut pt = Table::new(columns::PORTS);
        let pu = |f: &dyn Fn(&EgressPort) -> u64| Column::U64(ports.iter().map(f).collect());
        pt.add("port", Column::U64((0..ports.len() as u64).collect()));
        pt.add("name", Column::Str(topo.ports.iter().map(|p| p.name.clone()).collect()));
        pt.add("from", Column::Str(topo.ports.iter().map(|p| topo.nodes[p.from as usize].name.clone()).collect()));
        pt.add("to", Column::Str(topo.ports.iter().map(|p| topo.nodes[p.to as usize].name.clone()).collect()));
        pt.add("tier", Column::U64(topo.ports.iter().map(|p| p.tier as u64).collect()));
        pt.add("up", Column::Bool(topo.ports.iter().map(|p| p.up).collect()));
        pt.add("rate_bps", pu(&|p| p.rate));
        pt.add("bytes", pu(&|p| p.stats.bytes));
        pt.add("packets", pu(&|p| p.stats.packets));
        pt.add("data_packets", pu(&|p| p.stats.data_packets));
        pt.add("max_queue_bytes", pu(&|p| p.stats.max_queue));
        pt.add("mean_queue_bytes", Column::F64(ports.iter().map(|p| p.mean_queue(now)).collect()));
        pt.add(
            "utilization",
            Column::F64(ports.iter().map(|p| if now == 0 { 0.0 } else { p.busy_time(now) as f64 / now as f64 }).collect()),
        );
        pt.add("ecn_marks", pu(&|p| p.stats.ecn_marks));
        pt.add("trims", pu(&|p| p.stats.trims));
        pt.add("drops", pu(&|p| p.stats.drops));
        let pfc = |i: usize| v.pfc.get(i).copied().unwrap_or_default();
        pt.add("pfc_frames", Column::U64((0..ports.len()).map(|i| pfc(i).1).collect()));
        pt.add("paused_ps", Column::U64((0..ports.len()).map(|i| pfc(i).0).collect()));

        let summary = Summary {
            status: status.label(),
            stop_reason: status.reason(),
            stop_detail: v.stop_detail.clone(),
            flows: n as u64,
            completed: fct_stats.count,
            max_fct_ns: fct_stats.max,
            mean_fct_ns: fct_stats.mean,
            p99_fct_ns: fct_stats.p99,
            max_slowdown: slow_stats.max,
            mean_slowdown: slow_stats.mean,
            max_jct_ns: jobs.max_jct_ns,
            mean_jct_ns: jobs.mean_jct_ns,
            max_jct_slowdown: jobs.max_jct_slowdown,
            data_packets: total_data,
            retransmits: total_retx,
            trims,
            // data packets, as the flows count them; the rest of what ports lost apart
            drops,
            control_drops: ports.iter().map(|p| p.stats.drops).sum::<u64>() - drops,
            pfc_frames: v.pfc.iter().map(|c| c.1).sum(),
            ecn_marks: ports.iter().map(|p| p.stats.ecn_marks).sum(),
            max_queue_bytes: ports.iter().map(|p| p.stats.max_queue).max().unwrap_or(0),
            events: v.events,
            wall_s,
            sim_time_ns: ns(now),
            lb_state_bytes,
            base_rtt_ns: ns(v.base_rtt),
            bdp_bytes: v.bdp_bytes,
            offered_load: v.offered_load,
            achieved_load: v.achieved_load,
            payload_efficiency: (transport.mtu - transport.header) as f64 / transport.mtu as f64,
            line_goodput_gbps: v.topo.host_rate() as f64 / 1e9 * (transport.mtu - transport.header) as f64 / transport.mtu as f64,
            warnings: v.warnings.clone(),
        };
        let mut st = Table::new(columns::SAMPLES);
        let rows = v.samples;
        st.add("time_ps", Column::U64(rows.time));
        st.add("port", Column::U64(rows.port));
        st.add("queue_bytes", Column::U64(rows.queue));
        st.add("utilization", Column::F64(rows.util));
        RunResult {
            flows: ft,
            ports: pt,
            reorder: rt,
            samples: st,
            jobs: jobs.jobs,
            steps: jobs.steps,
            buckets,
            summary,
            accounting: v.accounting.clone(),
            scenario_json: v.scenario_json.clone(),
        }
    }
}

/// The message and connection columns without the compute tasks' rows, and the message id of
/// each row left.
fn without_compute(mut m: MessageColumns, mut c: ConnColumns) -> (Vec<u64>, MessageColumns, ConnColumns) {
    let keep: Vec<bool> = m.compute.iter().map(|&x| !x).collect();
    let ids: Vec<u64> = (0..keep.len() as u64).filter(|&i| keep[i as usize]).collect();
    if ids.len() == keep.len() {
        return (ids, m, c);
    }
    fn only<T: Copy>(v: &mut Vec<T>, keep: &[bool]) {
        let mut k = keep.iter();
        v.retain(|_| *k.next().expect("one flag per row"));
    }
    fn nullable<T: Copy>(v: &mut Nullable<T>, keep: &[bool]) {
        only(&mut v.values, keep);
        only(&mut v.valid, keep);
    }
    for v in [&mut m.src, &mut m.dst, &mut m.bytes, &mut m.start, &mut m.class, &mut m.ideal, &mut m.source.path_links] {
        only(v, &keep);
    }
    only(&mut m.source.traffic.codes, &keep);
    for v in [&mut m.pinned, &mut m.scale_up, &mut m.compute] {
        only(v, &keep);
    }
    for v in [&mut m.ready, &mut m.first_send, &mut m.end, &mut m.source.job, &mut m.source.iteration] {
        nullable(v, &keep);
    }
    for v in &mut c.counts {
        only(v, &keep);
    }
    // losses by row (the ids kept ascend; a compute task loses nothing)
    let row = |id: u32| ids.binary_search(&u64::from(id)).expect("a loss of a message kept") as u32;
    c.losses = std::mem::take(&mut c.losses).into_iter().map(|(id, l)| (row(id), l)).collect();
    (ids, m, c)
}

/// Count, max, mean and 99th percentile of a column's values.
struct Stats {
    count: u64,
    max: Option<f64>,
    mean: Option<f64>,
    p99: Option<f64>,
}

impl Stats {
    fn of(values: impl Iterator<Item = f64>) -> Stats {
        let v: Vec<f64> = values.collect();
        Stats { count: v.len() as u64, max: v.iter().copied().reduce(f64::max), mean: mean(&v), p99: percentile(&v, 99.0) }
    }
}
