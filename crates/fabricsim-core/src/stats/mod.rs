//! Results: one row per flow, one row per port, a summary, and the packet accounting.
//!
//! Columnar on purpose: the Python side turns each column into a DataFrame column without
//! per-row work. The ideal FCT follows DESIGN.md: the flow alone on an idle fabric, computed
//! exactly by running its packets through the store-and-forward tandem of its path.

use serde::Serialize;

use crate::host::{Flow, Message};
use crate::lb::LoadBalancer;
use crate::sim::Simulation;
use crate::switch::EgressPort;
use crate::time::{serialization, Time};
use crate::topology::Hop;

/// Time from the first bit sent to the last bit received of a `bytes` message alone on
/// `path`: each packet leaves the sender back to back, and hop h starts a packet when the
/// packet has fully arrived and the hop's link is free (`f[h][i] = max(f[h][i-1],
/// arrival[h][i]) + ser(s_i, r_h)`). With equal rates this is
/// `bytes_on_wire / rate + (hops - 1) * ser(max packet) + latencies`.
pub fn ideal_fct(path: &[Hop], bytes: u64, mtu: u64, header: u64) -> Time {
    let payload = mtu - header;
    let n = bytes.div_ceil(payload);
    let last = bytes - (n - 1) * payload + header;
    let mut free = vec![0 as Time; path.len()];
    let mut arrival = 0;
    for i in 0..n {
        let size = if i + 1 == n { last } else { mtu };
        let mut t = 0;
        for (h, hop) in path.iter().enumerate() {
            free[h] = free[h].max(t) + serialization(size, hop.rate);
            t = free[h] + hop.latency;
        }
        arrival = t;
    }
    arrival
}

/// Every data packet the hosts sent, by fate. `data_sent == data_delivered + data_trimmed +
/// data_dropped + data_in_flight` always; a trimmed packet goes on as a header.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Accounting {
    pub data_sent: u64,
    pub data_delivered: u64,
    pub data_trimmed: u64,
    pub data_dropped: u64,
    pub data_in_flight: u64,
    pub headers_delivered: u64,
    pub headers_dropped: u64,
    pub headers_in_flight: u64,
}

impl Accounting {
    pub fn balanced(&self) -> bool {
        self.data_sent == self.data_delivered + self.data_trimmed + self.data_dropped + self.data_in_flight
            && self.data_trimmed == self.headers_delivered + self.headers_dropped + self.headers_in_flight
    }
}

/// A typed column.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
}

/// Named columns of equal length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    fn add(&mut self, name: &'static str, col: Column) {
        self.columns.push((name, col));
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
    pub fn u64(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Some(Column::U64(v)) => v,
            _ => panic!("no u64 column {name}"),
        }
    }
    pub fn f64(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
    pub fn bool(&self, name: &str) -> &[bool] {
        match self.get(name) {
            Some(Column::Bool(v)) => v,
            _ => panic!("no bool column {name}"),
        }
    }
}

/// The run summary (keys fixed by the core issue).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub status: &'static str,
    pub stop_reason: &'static str,
    pub flows: u64,
    pub completed: u64,
    pub max_fct_ns: f64,
    pub mean_fct_ns: f64,
    pub p99_fct_ns: f64,
    pub max_slowdown: f64,
    pub mean_slowdown: f64,
    pub data_packets: u64,
    pub retransmits: u64,
    pub trims: u64,
    pub drops: u64,
    pub ecn_marks: u64,
    pub max_queue_bytes: u64,
    pub events: u64,
    pub wall_s: f64,
    pub sim_time_ns: f64,
    pub lb_state_bytes: u64,
    pub base_rtt_ns: f64,
    pub bdp_bytes: u64,
    /// Payload share of a full packet, (mtu - header) / mtu, and the goodput of a host link
    /// at that share: the most a flow can reach.
    pub payload_efficiency: f64,
    pub line_goodput_gbps: f64,
}

/// Everything a run returns.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub flows: Table,
    pub ports: Table,
    /// Reorder distances at the receivers: (flow, distance, arrivals), distance 63 = 63 or more.
    pub reorder: Table,
    /// Port time series (`[samples]`): time_ps, port, queue_bytes, utilization; empty if off.
    pub samples: Table,
    pub summary: Summary,
    pub accounting: Accounting,
    /// The scenario with every default filled in, as JSON.
    pub scenario_json: String,
}

fn ns(ps: u64) -> f64 {
    ps as f64 / 1e3
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Nearest-rank percentile (`p` in 0..=100) of unsorted values.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

impl RunResult {
    /// The tables of `sim` so far; `ideals` holds each message's ideal FCT.
    pub(crate) fn collect(sim: &Simulation, ideals: &[Time]) -> RunResult {
        let (messages, flows, topo, ports) = (sim.messages(), sim.connections(), sim.topology(), sim.egress_ports());
        let (now, wall_s) = (sim.now(), sim.wall_s());
        let status = sim.status();
        let mut ft = Table::default();
        // one row per message; a message's connections (MPTCP subflows) are summed
        let conns = |m: &Message| &flows[m.connections()];
        let sum = |f: &dyn Fn(&Flow) -> u64| Column::U64(messages.iter().map(|m| conns(m).iter().map(f).sum()).collect());
        let first_send: Vec<Option<Time>> = messages.iter().map(|m| conns(m).iter().filter_map(|c| c.tx.first_send).min()).collect();
        let end: Vec<Option<Time>> =
            messages.iter().map(|m| if m.done == m.count { conns(m).iter().filter_map(|c| c.rx.end).max() } else { None }).collect();
        let fct: Vec<Option<Time>> =
            end.iter().zip(&first_send).zip(messages).map(|((e, f), m)| e.map(|e| e - f.unwrap_or(m.spec.start))).collect();
        let slowdown: Vec<f64> = fct.iter().zip(ideals).map(|(f, &i)| f.map_or(f64::NAN, |f| f as f64 / i as f64)).collect();
        let spec = |f: &dyn Fn(&Message) -> u64| Column::U64(messages.iter().map(f).collect());
        ft.add("flow", Column::U64((0..messages.len() as u64).collect()));
        ft.add("src", spec(&|m| m.spec.src as u64));
        ft.add("dst", spec(&|m| m.spec.dst as u64));
        ft.add("bytes", spec(&|m| m.spec.bytes));
        ft.add("start_ps", spec(&|m| m.spec.start));
        ft.add("class", spec(&|m| m.spec.class as u64));
        ft.add("pinned", Column::Bool(messages.iter().map(|m| m.spec.pinned).collect()));
        ft.add("first_send_ps", Column::U64(first_send.iter().map(|f| f.unwrap_or(0)).collect()));
        ft.add("end_ps", Column::U64(end.iter().map(|e| e.unwrap_or(0)).collect()));
        ft.add("fct_ps", Column::U64(fct.iter().map(|f| f.unwrap_or(0)).collect()));
        ft.add("ideal_fct_ps", Column::U64(ideals.to_vec()));
        ft.add("slowdown", Column::F64(slowdown.clone()));
        ft.add("completed", Column::Bool(fct.iter().map(Option::is_some).collect()));
        ft.add("delivered_bytes", sum(&|f| f.rx.delivered_bytes));
        ft.add("packets", sum(&|f| f.n_pkts as u64));
        ft.add("data_packets", sum(&|f| f.stats.data_packets));
        ft.add("retransmits", sum(&|f| f.stats.retransmits));
        ft.add("timeouts", sum(&|f| f.stats.timeouts));
        ft.add("trims", sum(&|f| f.stats.trims));
        ft.add("drops", sum(&|f| f.stats.drops));
        ft.add("ecn_acks", sum(&|f| f.stats.ecn_acks));
        ft.add(
            "max_reorder",
            Column::U64(messages.iter().map(|m| conns(m).iter().map(|f| f.rx.max_reorder as u64).max().unwrap_or(0)).collect()),
        );
        ft.add("discarded", sum(&|f| f.stats.discarded));
        ft.add("fast_nacks", sum(&|f| f.stats.fast_nacks));
        // payload bits over the FCT: what the application sees (Juniper post's accounting)
        ft.add(
            "goodput_gbps",
            Column::F64(
                messages.iter().zip(&fct).map(|(m, f)| f.map_or(f64::NAN, |f| m.spec.bytes as f64 * 8.0 / f as f64 * 1e3)).collect(),
            ),
        );

        // reorder distance distribution, long format: one row per (flow, distance) seen
        let mut rt = Table::default();
        let (mut rf, mut rd, mut rc) = (Vec::new(), Vec::new(), Vec::new());
        for (i, m) in messages.iter().enumerate() {
            let mut hist = [0u64; crate::host::REORDER_BUCKETS];
            for c in conns(m) {
                for (d, n) in c.rx.reorder_hist.iter().enumerate() {
                    hist[d] += n;
                }
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

        let mut pt = Table::default();
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
        pt.add("ecn_marks", pu(&|p| p.stats.ecn_marks));
        pt.add("trims", pu(&|p| p.stats.trims));
        pt.add("drops", pu(&|p| p.stats.drops));

        let done_fct: Vec<f64> = fct.iter().flatten().map(|&f| ns(f)).collect();
        let done_slow: Vec<f64> = slowdown.iter().copied().filter(|s| !s.is_nan()).collect();
        let total = |f: &dyn Fn(&Flow) -> u64| flows.iter().map(f).sum::<u64>();
        let model = sim.model();
        let summary = Summary {
            status: status.label(),
            stop_reason: status.reason(),
            flows: messages.len() as u64,
            completed: done_fct.len() as u64,
            max_fct_ns: done_fct.iter().copied().fold(0.0, f64::max),
            mean_fct_ns: mean(&done_fct),
            p99_fct_ns: percentile(&done_fct, 99.0),
            max_slowdown: done_slow.iter().copied().fold(0.0, f64::max),
            mean_slowdown: mean(&done_slow),
            data_packets: total(&|f| f.stats.data_packets),
            retransmits: total(&|f| f.stats.retransmits),
            trims: total(&|f| f.stats.trims),
            drops: ports.iter().map(|p| p.stats.drops).sum(),
            ecn_marks: ports.iter().map(|p| p.stats.ecn_marks).sum(),
            max_queue_bytes: ports.iter().map(|p| p.stats.max_queue).max().unwrap_or(0),
            events: sim.events(),
            wall_s,
            sim_time_ns: ns(now),
            // per message: all of its connections' load-balancer state
            lb_state_bytes: messages.first().map_or(0, |m| conns(m).iter().map(|f| f.tx.lb.state_bytes() as u64).sum()),
            base_rtt_ns: ns(model.base_rtt),
            bdp_bytes: model.bdp_bytes,
            payload_efficiency: (model.mtu - model.header) as f64 / model.mtu as f64,
            line_goodput_gbps: model.tree.tier_rates[0] as f64 / 1e9 * (model.mtu - model.header) as f64 / model.mtu as f64,
        };
        let mut st = Table::default();
        let rows = sim.samples().cloned().unwrap_or_default();
        st.add("time_ps", Column::U64(rows.time));
        st.add("port", Column::U64(rows.port));
        st.add("queue_bytes", Column::U64(rows.queue));
        st.add("utilization", Column::F64(rows.util));
        RunResult {
            flows: ft,
            ports: pt,
            reorder: rt,
            samples: st,
            summary,
            accounting: sim.accounting(),
            scenario_json: sim.scenario().to_json(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_matches_closed_form_for_equal_rates() {
        let hop = |lat| Hop { rate: 400_000_000_000, latency: lat };
        let path = [hop(1_000_000), hop(1_000_000), hop(1_000_000), hop(1_000_000)];
        // 8 MiB in 4096 B payloads: 2048 packets of 4160 B, 83.2 ns each.
        let ideal = ideal_fct(&path, 8 << 20, 4160, 64);
        assert_eq!(ideal, 2048 * 83_200 + 3 * 83_200 + 4 * 1_000_000);
        // A short last packet still waits behind the full one before it at every hop.
        let ideal = ideal_fct(&path, 4096 + 100, 4160, 64);
        assert_eq!(ideal, 83_200 + serialization(164, 400_000_000_000) + 3 * 83_200 + 4 * 1_000_000);
    }

    #[test]
    fn ideal_uses_the_bottleneck() {
        let path = [Hop { rate: 100_000_000_000, latency: 0 }, Hop { rate: 400_000_000_000, latency: 0 }];
        // 10 packets at 332.8 ns on the slow first hop, then the last one at 83.2 ns.
        assert_eq!(ideal_fct(&path, 10 * 4096, 4160, 64), 10 * 332_800 + 83_200);
    }

    #[test]
    fn percentile_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[5.0], 99.0), 5.0);
    }
}
