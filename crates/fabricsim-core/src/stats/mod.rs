//! Results: one row per flow, one row per port, a summary, and the packet accounting.
//!
//! Columnar on purpose: the Python side turns each column into a DataFrame column without
//! per-row work. The ideal FCT ([`ideal`]) follows DESIGN.md.

use serde::Serialize;

pub mod collect;
pub mod ideal;
pub mod sampler;

use crate::engine::Status;
use crate::host::connection::{Connection, Message};
use crate::scenario::Model;
use crate::switch::forward::ConnLosses;
use crate::switch::EgressPort;
use crate::time::Time;
use crate::topology::Topology;
pub use ideal::ideal_fct;
use sampler::SampleRows;

/// What the tables are made from: the components' state, read-only.
pub struct RunView<'a> {
    pub model: &'a Model,
    pub topo: &'a Topology,
    pub ports: &'a [EgressPort],
    pub messages: &'a [Message],
    pub conns: &'a [Connection],
    /// Per connection, what the fabric lost of it.
    pub losses: &'a [ConnLosses],
    pub samples: Option<&'a SampleRows>,
    pub accounting: Accounting,
    pub status: Status,
    pub now: Time,
    pub events: u64,
    pub wall_s: f64,
    pub scenario_json: String,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[5.0], 99.0), 5.0);
    }
}
