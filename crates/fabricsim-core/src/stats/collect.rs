//! Turning a run's state into its tables: one row per message, per port, per reorder
//! distance, per sample, and the summary.

use super::ideal::{ideal_fct, message_packets, releases};
use super::{columns, mean, ns, percentile, Column, Nullable, RunResult, RunView, Summary, Table};
use crate::host::message::Message;
use crate::host::table::ConnTable;
use crate::switch::forward::ConnLosses;
use crate::switch::EgressPort;
use crate::time::Time;

/// What the tables read of the connections: per message, their summed rows and the reorder
/// table. Taken while the connection table exists; [`crate::Simulation::into_results`] drops
/// the table before the rest of the results are built, so that the two never take their full
/// memory together.
pub struct ConnColumns {
    first_send: Nullable<Time>,
    end: Nullable<Time>,
    /// delivered_bytes, packets, data_packets, retransmits, timeouts, ecn_acks, cnps,
    /// max_reorder, discarded, fast_nacks, in that order.
    counts: [Vec<u64>; 10],
    reorder: Table,
    lb_state_bytes: u64,
}

impl ConnColumns {
    /// The connections' part of the results of `messages`.
    pub fn of(messages: &[Message], flows: &ConnTable) -> ConnColumns {
        let mut counts: [Vec<u64>; 10] = Default::default();
        for c in counts.iter_mut() {
            c.reserve_exact(messages.len());
        }
        let (mut first_send, mut end) = (Nullable::with_capacity(messages.len()), Nullable::with_capacity(messages.len()));
        for m in messages {
            let (mut first, mut last, mut row) = (None::<Time>, None::<Time>, [0u64; 10]);
            for c in m.first..m.first + m.count {
                let r = flows.row(c);
                first = first.into_iter().chain(r.first_send()).min();
                last = last.into_iter().chain(r.end()).max();
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
                    s.discarded,
                    s.fast_nacks,
                ];
                for (x, a) in row.iter_mut().zip(add) {
                    *x += a;
                }
                row[7] = row[7].max(r.max_reorder as u64);
            }
            for (col, x) in counts.iter_mut().zip(row) {
                col.push(x);
            }
            first_send.push(first);
            end.push(if m.done == m.count { last } else { None });
        }
        // reorder distance distribution, long format: one row per (flow, distance) seen
        let mut rt = Table::new(columns::REORDER);
        let (mut rf, mut rd, mut rc) = (Vec::new(), Vec::new(), Vec::new());
        for (i, m) in messages.iter().enumerate() {
            let mut hist = [0u64; crate::host::connection::REORDER_BUCKETS];
            for c in m.first..m.first + m.count {
                flows.add_reorder(c, &mut hist);
            }
            for (d, &n) in hist.iter().enumerate().filter(|(_, &n)| n > 0) {
                rf.push(i as u64);
                rd.push(d as u64);
                rc.push(n);
            }
        }
        rt.add("flow", Column::U64(rf));
        rt.add("distance", Column::U64(rd));
        rt.add("arrivals", Column::U64(rc));
        // per message: all of its connections' load-balancer state
        let lb_state_bytes = messages.first().map_or(0, |m| flows.lb_state_bytes(0, &m.spec));
        ConnColumns { first_send, end, counts, reorder: rt, lb_state_bytes }
    }
}

impl RunResult {
    /// The tables of a run so far, from its state (`v`) and its connections' part (`c`).
    pub fn collect(v: &RunView<'_>, c: ConnColumns) -> RunResult {
        let (messages, topo, ports, losses) = (v.messages, v.topo, v.ports, &v.losses);
        let (now, wall_s, status, tree, transport) = (v.now, v.wall_s, v.status, v.tree, v.transport);
        // the ideal depends only on the path's tiers, the size and the connections: computed
        // once per (tiers, size, connections)
        let mut ideal_cache = std::collections::HashMap::new();
        let ideals: Vec<Time> = messages
            .iter()
            .map(|m| {
                let spec = m.spec;
                let tiers = tree.link_tiers(spec.src, spec.dst);
                *ideal_cache.entry((tiers.len(), spec.bytes, m.count)).or_insert_with(|| {
                    let (mtu, header) = (transport.mtu, transport.header);
                    let packets = message_packets(spec.bytes, mtu, header, m.count);
                    ideal_fct(&tree.path(spec.src, spec.dst), &packets, &releases(spec.bytes, mtu, header, m.count, transport.rate_cap))
                })
            })
            .collect();
        let ideals = &ideals[..];
        let mut ft = Table::new(columns::FLOWS);
        // one row per message; a message's connections (MPTCP subflows) are summed
        let lost =
            |m: &Message, f: &dyn Fn(&ConnLosses) -> u64| -> u64 { losses.range(m.first..m.first + m.count).map(|(_, l)| f(l)).sum() };
        let ConnColumns { first_send, end, counts, reorder: rt, lb_state_bytes } = c;
        let [delivered, packets, data_packets, retransmits, timeouts, ecn_acks, cnps, max_reorder, discarded, fast_nacks] = counts;
        let fct: Nullable<Time> =
            end.iter().zip(first_send.iter()).zip(messages).map(|((e, f), m)| e.map(|e| e - f.unwrap_or(m.spec.start))).collect();
        let slowdown: Nullable<f64> = fct.iter().zip(ideals).map(|(f, &i)| f.map(|f| f as f64 / i as f64)).collect();
        // what needs scratch memory runs before the table's other columns exist (a flows
        // table of millions of messages is the run's largest allocation)
        let jobs = super::jobs::tables(v, ideals, &end);
        let buckets = super::buckets::table(messages.iter().map(|m| m.spec.bytes).zip(slowdown.iter()));
        let (fct_stats, slow_stats) = (Stats::of(fct.present().map(ns)), Stats::of(slowdown.present()));
        // payload bits over the FCT: what the application sees (Juniper post's accounting)
        let goodput: Nullable<f64> =
            messages.iter().zip(fct.iter()).map(|(m, f)| f.map(|f| m.spec.bytes as f64 * 8.0 / f as f64 * 1e3)).collect();
        let completed: Vec<bool> = fct.valid.clone();
        let spec = |f: &dyn Fn(&Message) -> u64| Column::U64(messages.iter().map(f).collect());
        ft.add("flow", Column::U64((0..messages.len() as u64).collect()));
        // the engine's host ids are leaf slots; the table speaks the scenario's host ids
        ft.add("src", spec(&|m| tree.host(m.spec.src) as u64));
        ft.add("dst", spec(&|m| tree.host(m.spec.dst) as u64));
        ft.add("bytes", spec(&|m| m.spec.bytes));
        ft.add("start_ps", spec(&|m| m.spec.start));
        ft.add("ready_ps", Column::OptU64(messages.iter().map(Message::ready).collect()));
        ft.add("class", spec(&|m| m.spec.class as u64));
        ft.add("pinned", Column::Bool(messages.iter().map(|m| m.spec.pinned).collect()));
        ft.add("first_send_ps", Column::OptU64(first_send));
        ft.add("end_ps", Column::OptU64(end));
        ft.add("fct_ps", Column::OptU64(fct));
        ft.add("ideal_fct_ps", Column::U64(ideals.to_vec()));
        ft.add("slowdown", Column::OptF64(slowdown));
        ft.add("completed", Column::Bool(completed));
        // every connection belongs to one message: the run's totals are the columns' sums
        let (total_data, total_retx) = (data_packets.iter().sum(), retransmits.iter().sum());
        ft.add("delivered_bytes", Column::U64(delivered));
        ft.add("packets", Column::U64(packets));
        ft.add("data_packets", Column::U64(data_packets));
        ft.add("retransmits", Column::U64(retransmits));
        ft.add("timeouts", Column::U64(timeouts));
        ft.add("trims", Column::U64(messages.iter().map(|m| lost(m, &|l| l.trims)).collect()));
        ft.add("drops", Column::U64(messages.iter().map(|m| lost(m, &|l| l.drops)).collect()));
        ft.add("ecn_acks", Column::U64(ecn_acks));
        ft.add("cnps", Column::U64(cnps));
        ft.add("max_reorder", Column::U64(max_reorder));
        ft.add("discarded", Column::U64(discarded));
        ft.add("fast_nacks", Column::U64(fast_nacks));
        ft.add("goodput_gbps", Column::OptF64(goodput));

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

        let summary = Summary {
            status: status.label(),
            stop_reason: status.reason(),
            flows: messages.len() as u64,
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
            trims: losses.values().map(|l| l.trims).sum(),
            // data packets, as the flows count them; the rest of what ports lost apart
            drops: losses.values().map(|l| l.drops).sum(),
            control_drops: ports.iter().map(|p| p.stats.drops).sum::<u64>() - losses.values().map(|l| l.drops).sum::<u64>(),
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
            line_goodput_gbps: tree.tier_rates[0] as f64 / 1e9 * (transport.mtu - transport.header) as f64 / transport.mtu as f64,
            warnings: v.warnings.clone(),
        };
        let mut st = Table::new(columns::SAMPLES);
        let rows = v.samples.cloned().unwrap_or_default();
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
