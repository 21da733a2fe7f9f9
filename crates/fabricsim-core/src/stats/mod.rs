//! Results: one row per flow, one row per port, a summary, and the packet accounting.
//!
//! Columnar on purpose: the Python side turns each column into a DataFrame column without
//! per-row work. The ideal FCT ([`ideal`]) follows DESIGN.md.

use serde::Serialize;

pub mod buckets;
pub mod collect;
pub mod columns;
pub mod ideal;
pub mod jobs;
pub mod least;
mod plan;
pub mod sampler;

use crate::engine::Status;
use crate::error::ScenarioError;
use crate::host::TransportModel;
use crate::switch::EgressPort;
use crate::time::Time;
use crate::topology::Topology;
use columns::{ColumnSpec, Ty};
pub use ideal::{ideal_fct, message_packets};
use sampler::SampleRows;

/// What the last stage of the tables reads (see [`collect`]): the components' state, read-only.
pub struct RunView<'a> {
    pub transport: &'a TransportModel,
    pub base_rtt: Time,
    pub bdp_bytes: u64,
    /// A trace's offered load and the load it achieved (its messages' bytes, and the payload
    /// they delivered in its window, over the hosts' capacity in the window).
    pub offered_load: Option<f64>,
    pub achieved_load: Option<f64>,
    pub topo: &'a Topology,
    pub ports: &'a [EgressPort],
    /// Each port's (time paused, PFC frames sent), by global id (empty without PFC).
    pub pfc: Vec<(Time, u64)>,
    /// The port time series (empty without `[samples]`), moved into its table.
    pub samples: SampleRows,
    pub accounting: Accounting,
    pub status: Status,
    pub now: Time,
    pub events: u64,
    pub wall_s: f64,
    pub scenario_json: String,
    pub warnings: Vec<String>,
    /// What an incomplete run left unfinished and what it waited for ("" when complete).
    pub stop_detail: String,
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

impl std::ops::Add for Accounting {
    type Output = Accounting;

    /// The packets of two parts of a run (its pieces).
    fn add(self, o: Accounting) -> Accounting {
        Accounting {
            data_sent: self.data_sent + o.data_sent,
            data_delivered: self.data_delivered + o.data_delivered,
            data_trimmed: self.data_trimmed + o.data_trimmed,
            data_dropped: self.data_dropped + o.data_dropped,
            data_in_flight: self.data_in_flight + o.data_in_flight,
            headers_delivered: self.headers_delivered + o.headers_delivered,
            headers_dropped: self.headers_dropped + o.headers_dropped,
            headers_in_flight: self.headers_in_flight + o.headers_in_flight,
        }
    }
}

impl Accounting {
    pub fn balanced(&self) -> bool {
        self.data_sent == self.data_delivered + self.data_trimmed + self.data_dropped + self.data_in_flight
            && self.data_trimmed == self.headers_delivered + self.headers_dropped + self.headers_in_flight
    }
}

/// A column whose values may not exist: values and a validity mask, as Arrow holds one (9
/// bytes a row where a `Vec<Option<u64>>` takes 16; a missing value's slot holds 0).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Nullable<T> {
    pub values: Vec<T>,
    pub valid: Vec<bool>,
}

impl<T: Copy + Default> Nullable<T> {
    pub fn with_capacity(n: usize) -> Self {
        Nullable { values: Vec::with_capacity(n), valid: Vec::with_capacity(n) }
    }

    pub fn push(&mut self, v: Option<T>) {
        self.values.push(v.unwrap_or_default());
        self.valid.push(v.is_some());
    }

    pub fn get(&self, i: usize) -> Option<T> {
        self.valid[i].then(|| self.values[i])
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Reverses the rows in place (a column made from its last row to its first).
    pub fn reverse(&mut self) {
        self.values.reverse();
        self.valid.reverse();
    }

    pub fn iter(&self) -> impl Iterator<Item = Option<T>> + '_ {
        self.values.iter().zip(&self.valid).map(|(&v, &ok)| ok.then_some(v))
    }

    /// The values that exist, in order.
    pub fn present(&self) -> impl Iterator<Item = T> + '_ {
        self.iter().flatten()
    }
}

impl<T: Copy + Default> FromIterator<Option<T>> for Nullable<T> {
    fn from_iter<I: IntoIterator<Item = Option<T>>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut n = Nullable::with_capacity(iter.size_hint().0);
        for v in iter {
            n.push(v);
        }
        n
    }
}

/// A typed column; the `Opt` ones hold values that may not exist (null, never 0).
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// A string column of a few values over many rows, as each row's index into its values
    /// (the flows table's `traffic`: 16 or more bytes a row as strings, one as a code).
    Labels(Labels),
    OptU64(Nullable<u64>),
    OptF64(Nullable<f64>),
}

/// Rows of a string column with few distinct values: `labels[codes[row]]` is a row's value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Labels {
    pub codes: Vec<u8>,
    pub labels: Vec<&'static str>,
}

impl Labels {
    /// A row's value.
    pub fn get(&self, row: usize) -> &'static str {
        self.labels[usize::from(self.codes[row])]
    }

    /// Appends a row; its value joins the labels the first time it is seen (at most 256).
    pub fn push(&mut self, value: &'static str) {
        let code = self.labels.iter().position(|&l| l == value).unwrap_or_else(|| {
            self.labels.push(value);
            self.labels.len() - 1
        });
        self.codes.push(u8::try_from(code).expect("at most 256 distinct labels"));
    }
}

impl FromIterator<&'static str> for Labels {
    fn from_iter<I: IntoIterator<Item = &'static str>>(iter: I) -> Labels {
        let mut l = Labels::default();
        iter.into_iter().for_each(|v| l.push(v));
        l
    }
}

impl Column {
    /// The declared type this column holds, and whether it may hold nulls.
    pub fn ty(&self) -> (Ty, bool) {
        match self {
            Column::U64(_) => (Ty::U64, false),
            Column::F64(_) => (Ty::F64, false),
            Column::Bool(_) => (Ty::Bool, false),
            Column::Str(_) => (Ty::Str, false),
            Column::Labels(_) => (Ty::Str, false),
            Column::OptU64(_) => (Ty::U64, true),
            Column::OptF64(_) => (Ty::F64, true),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Labels(v) => v.codes.len(),
            Column::OptU64(v) => v.len(),
            Column::OptF64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The columns of the flows table a caller keeps: every one ([`Keep::all`], the default) or
/// those it names ([`Keep::only`]). A run of millions of messages whose caller reads a few
/// columns (the CLI's printed summary) builds only those: the others are never made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keep(Option<Vec<&'static str>>);

impl Keep {
    pub fn all() -> Keep {
        Keep(None)
    }

    /// The columns `names` names; a name the flows table does not declare is refused, naming
    /// it and the columns there are.
    pub fn only<S: AsRef<str>>(names: &[S]) -> Result<Keep, ScenarioError> {
        let declared = columns::FLOWS;
        let kept = names.iter().map(|n| {
            let n = n.as_ref();
            declared.iter().find(|c| c.name == n).map(|c| c.name).ok_or_else(|| {
                let all: Vec<&str> = declared.iter().map(|c| c.name).collect();
                ScenarioError::new("columns", format!("{n:?}"), format!("allowed: the flows table's columns ({})", all.join(", ")))
            })
        });
        Ok(Keep(Some(kept.collect::<Result<_, _>>()?)))
    }

    /// Whether column `name` is kept.
    pub fn has(&self, name: &str) -> bool {
        self.0.as_ref().is_none_or(|k| k.contains(&name))
    }
}

/// Named columns of equal length, in the order and types of their declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub spec: &'static [ColumnSpec],
    pub columns: Vec<(&'static str, Column)>,
    /// The next declared column (those left out by a [`Keep`] count).
    next: usize,
}

impl Table {
    /// An empty table declared by `spec` (see [`columns`]).
    pub fn new(spec: &'static [ColumnSpec]) -> Table {
        Table { spec, columns: Vec::new(), next: 0 }
    }

    /// Adds the next declared column. Its name, type and nullability must match the
    /// declaration: a mismatch is a bug in the core, caught by every test that runs.
    fn add(&mut self, name: &'static str, col: Column) {
        self.add_if(&Keep::all(), name, || col);
    }

    /// Adds the next declared column if `keep` keeps it (`col` is made only then), as
    /// [`Table::add`] does.
    fn add_if(&mut self, keep: &Keep, name: &'static str, col: impl FnOnce() -> Column) {
        let d = self.spec.get(self.next).unwrap_or_else(|| panic!("undeclared column {name}"));
        assert_eq!(d.name, name, "columns are added in declaration order");
        self.next += 1;
        if keep.has(name) {
            let col = col();
            assert_eq!(col.ty(), (d.ty, !d.null_when.is_empty()), "column {name} has its declared type");
            self.columns.push((name, col));
        }
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
    pub fn str(&self, name: &str) -> &[String] {
        match self.get(name) {
            Some(Column::Str(v)) => v,
            _ => panic!("no string column {name}"),
        }
    }
    /// A string column's values, however it holds them.
    pub fn strs(&self, name: &str) -> Vec<&str> {
        match self.get(name) {
            Some(Column::Str(v)) => v.iter().map(String::as_str).collect(),
            Some(Column::Labels(v)) => (0..v.codes.len()).map(|r| v.get(r)).collect(),
            _ => panic!("no string column {name}"),
        }
    }
    /// A nullable u64 column (`None` where the value does not exist).
    pub fn opt_u64(&self, name: &str) -> Vec<Option<u64>> {
        match self.get(name) {
            Some(Column::OptU64(v)) => v.iter().collect(),
            _ => panic!("no nullable u64 column {name}"),
        }
    }
    /// A nullable f64 column (`None` where the value does not exist).
    pub fn opt_f64(&self, name: &str) -> Vec<Option<f64>> {
        match self.get(name) {
            Some(Column::OptF64(v)) => v.iter().collect(),
            _ => panic!("no nullable f64 column {name}"),
        }
    }
}

/// The run summary (keys declared in [`columns::SUMMARY`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub status: &'static str,
    pub stop_reason: &'static str,
    /// What an incomplete run left unfinished and what it waited for ("" when complete).
    pub stop_detail: String,
    pub flows: u64,
    pub completed: u64,
    pub max_fct_ns: Option<f64>,
    pub mean_fct_ns: Option<f64>,
    pub p99_fct_ns: Option<f64>,
    pub max_slowdown: Option<f64>,
    pub mean_slowdown: Option<f64>,
    pub max_jct_ns: Option<f64>,
    pub mean_jct_ns: Option<f64>,
    pub max_jct_slowdown: Option<f64>,
    pub data_packets: u64,
    pub retransmits: u64,
    pub trims: u64,
    pub drops: u64,
    pub control_drops: u64,
    pub pfc_frames: u64,
    pub ecn_marks: u64,
    pub max_queue_bytes: u64,
    pub events: u64,
    pub wall_s: f64,
    pub sim_time_ns: f64,
    pub lb_state_bytes: u64,
    pub base_rtt_ns: f64,
    pub bdp_bytes: u64,
    pub offered_load: Option<f64>,
    pub achieved_load: Option<f64>,
    /// Payload share of a full packet, (mtu - header) / mtu, and the goodput of a host link
    /// at that share: the most a flow can reach.
    pub payload_efficiency: f64,
    pub line_goodput_gbps: f64,
    /// Legal but probably unintended settings (also printed before the run).
    pub warnings: Vec<String>,
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
    /// `[[jobs]]`: one row per job iteration, and per step of each; empty without jobs.
    pub jobs: Table,
    pub steps: Table,
    /// FCT slowdown by message size (<100 KB, 100 KB-1 MB, 1-10 MB, >10 MB).
    pub buckets: Table,
    pub summary: Summary,
    pub accounting: Accounting,
    /// The scenario with every default filled in, as JSON.
    pub scenario_json: String,
}

fn ns(ps: u64) -> f64 {
    ps as f64 / 1e3
}

/// The mean, or `None` of nothing.
fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Nearest-rank percentile (`p` in 0..=100) of unsorted values; `None` of nothing.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    Some(v[rank.min(v.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 100.0), Some(100.0));
        assert_eq!(percentile(&[5.0], 99.0), Some(5.0));
        assert_eq!(percentile(&[], 99.0), None);
    }
}
