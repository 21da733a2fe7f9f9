//! The output columns, declared once: name, type, unit, whether a value may be missing (null,
//! never 0), and meaning. Tables are built against these lists (`Table::add` checks
//! name, order and type); the Python binding exports them (`_core.columns()`), the Python
//! results take their schema from them, and the Outputs section of docs/scenario.md is
//! generated from them (`tools/gen_outputs_doc.py`, checked by a test).
//!
//! Units are in the names (`_ps`, `_ns`, `_bytes`, `_bps`, `_gbps`): tables in picoseconds,
//! the summary in nanoseconds.

use serde::Serialize;

/// A column's value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ty {
    U64,
    F64,
    Bool,
    Str,
    /// A list of strings (summary only).
    StrList,
}

/// One declared column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub ty: Ty,
    /// The unit, or "" for counts, ids and names.
    pub unit: &'static str,
    /// When the value is missing (null), or "" if it always exists.
    pub null_when: &'static str,
    pub meaning: &'static str,
}

const fn col(name: &'static str, ty: Ty, unit: &'static str, meaning: &'static str) -> ColumnSpec {
    ColumnSpec { name, ty, unit, null_when: "", meaning }
}

const fn opt(name: &'static str, ty: Ty, unit: &'static str, null_when: &'static str, meaning: &'static str) -> ColumnSpec {
    ColumnSpec { name, ty, unit, null_when, meaning }
}

const UNFINISHED: &str = "the message did not complete";

/// One row per message of the workload (under `mptcp`, its subflows summed).
/// Why a flows row has no job.
const BACKGROUND: &str = "background: a message of the `[workload]`, not of a job";

pub const FLOWS: &[ColumnSpec] = &[
    col("flow", Ty::U64, "", "message id, in workload order"),
    col("src", Ty::U64, "", "sending host"),
    col("dst", Ty::U64, "", "receiving host"),
    col("bytes", Ty::U64, "bytes", "payload size"),
    col("start_ps", Ty::U64, "ps", "when the message may start"),
    opt(
        "ready_ps",
        Ty::U64,
        "ps",
        "it still waits for a message it depends on",
        "when it was released: start_ps, or the last of its dependencies completing plus its delay",
    ),
    col("class", Ty::U64, "", "data class at the switches"),
    col("pinned", Ty::Bool, "", "pinned to one ECMP path by `[mixed]`"),
    col("scale_up", Ty::Bool, "", "carried by its server's scale-up network (`topology.scale_up_rate`), not the fabric"),
    opt("job", Ty::U64, "", BACKGROUND, "the `[[jobs]]` entry it belongs to (its index)"),
    opt("iteration", Ty::U64, "", BACKGROUND, "its job's iteration"),
    col(
        "traffic",
        Ty::Str,
        "",
        "what it is: background (the `[workload]`), a job's collective (allreduce, ...), a training job's tp, pp, dp or ep, or trace",
    ),
    col(
        "path_links",
        Ty::U64,
        "",
        "links on its shortest path through the fabric: 2 under one leaf, 4 through a spine or aggregation switch, 6 through a core; 0 on a scale-up network",
    ),
    opt("first_send_ps", Ty::U64, "ps", "nothing was sent", "when its first packet left the NIC (on a scale-up network: its first bit)"),
    opt("end_ps", Ty::U64, "ps", UNFINISHED, "when its last byte was received"),
    opt("fct_ps", Ty::U64, "ps", UNFINISHED, "flow completion time: first bit sent to last bit received"),
    col("ideal_fct_ps", Ty::U64, "ps", "its FCT alone on an idle fabric using all its paths (docs/model.md)"),
    opt("slowdown", Ty::F64, "", UNFINISHED, "fct_ps / ideal_fct_ps"),
    col("completed", Ty::Bool, "", "every byte was received"),
    col("delivered_bytes", Ty::U64, "bytes", "payload received so far"),
    col("packets", Ty::U64, "", "data packets the message is split into"),
    col("data_packets", Ty::U64, "", "data packets sent, retransmissions included"),
    col("retransmits", Ty::U64, "", "data packets sent again"),
    col("timeouts", Ty::U64, "", "packets declared lost by the retransmission timer"),
    col("trims", Ty::U64, "", "its data packets trimmed to a header by a switch"),
    col("drops", Ty::U64, "", "its data packets dropped (full queue, dead or lossy link)"),
    col("ecn_acks", Ty::U64, "", "ACKs that echoed an ECN mark"),
    col("cnps", Ty::U64, "", "congestion notification packets its receiver sent (`cc = \"dcqcn\"`)"),
    col("max_reorder", Ty::U64, "", "largest number of PSNs an arrival trailed the highest PSN received before it"),
    col("out_of_order", Ty::U64, "", "arrivals that trailed the highest PSN received before them (reorder distance above 0)"),
    col("discarded", Ty::U64, "", "out-of-order arrivals the receiver threw away (Go-back-N, or beyond `reorder_limit`)"),
    col("fast_nacks", Ty::U64, "", "NACKs of path-ID loss detection"),
    opt("goodput_gbps", Ty::F64, "Gb/s", UNFINISHED, "payload bits over the FCT"),
];

/// One row per egress port (one direction of a link).
pub const PORTS: &[ColumnSpec] = &[
    col("port", Ty::U64, "", "port id"),
    col("name", Ty::Str, "", "stable name, `leaf3:up2` (faults and samples use it)"),
    col("from", Ty::Str, "", "sending node"),
    col("to", Ty::Str, "", "receiving node"),
    col("tier", Ty::U64, "", "link tier: 0 host-leaf, 1 leaf-up, 2 aggregation-core"),
    col("up", Ty::Bool, "", "the port leads up the tree"),
    col("rate_bps", Ty::U64, "bit/s", "its rate at the end of the run (a fault may have changed it)"),
    col("bytes", Ty::U64, "bytes", "wire bytes sent"),
    col("packets", Ty::U64, "", "packets sent, control included"),
    col("data_packets", Ty::U64, "", "untrimmed data packets sent"),
    col("max_queue_bytes", Ty::U64, "bytes", "largest data queue"),
    col("mean_queue_bytes", Ty::F64, "bytes", "time-averaged data queue"),
    col("utilization", Ty::F64, "", "share of the run the link spent sending (0 for a run of 0 ps)"),
    col("ecn_marks", Ty::U64, "", "data packets ECN-marked here"),
    col("trims", Ty::U64, "", "data packets trimmed here"),
    col("drops", Ty::U64, "", "packets lost here (full queue, dead or lossy link)"),
    col("pfc_frames", Ty::U64, "", "PFC frames (PAUSE and RESUME) sent here (`switch.overflow = \"pfc\"`)"),
    col("paused_ps", Ty::U64, "ps", "time the far end held a data class of this port paused (PFC)"),
];

/// Reorder distances at the receivers, one row per (message, distance) seen.
pub const REORDER: &[ColumnSpec] = &[
    col("flow", Ty::U64, "", "message id"),
    col("distance", Ty::U64, "", "PSNs the arrival trailed the highest PSN received before it (0 = in order; 63 = 63 or more)"),
    col("arrivals", Ty::U64, "", "arrivals at that distance"),
];

/// The port time series (`[samples]`), one row per sampled port per interval.
pub const SAMPLES: &[ColumnSpec] = &[
    col("time_ps", Ty::U64, "ps", "sample time"),
    col("port", Ty::U64, "", "port id (join with the ports table for its name)"),
    col("queue_bytes", Ty::U64, "bytes", "data queued at that instant"),
    col("utilization", Ty::F64, "", "share of the interval the link spent sending (a packet across a boundary split between the two)"),
];

const NONE_DONE: &str = "no message completed";

/// The summary keys (`summary.json`, `Results.summary`).
pub const SUMMARY: &[ColumnSpec] = &[
    col("status", Ty::Str, "", "`complete` or `incomplete`"),
    col("stop_reason", Ty::Str, "", "why the run ended"),
    col("stop_detail", Ty::Str, "", "an incomplete run: the messages left unfinished, when new data was last seen, what was pending; empty when complete"),
    col("flows", Ty::U64, "", "messages in the workload"),
    col("completed", Ty::U64, "", "messages that completed"),
    opt("max_fct_ns", Ty::F64, "ns", NONE_DONE, "largest FCT of a completed message"),
    opt("mean_fct_ns", Ty::F64, "ns", NONE_DONE, "mean FCT of the completed messages"),
    opt("p99_fct_ns", Ty::F64, "ns", NONE_DONE, "99th percentile FCT (nearest rank) of the completed messages"),
    opt("max_slowdown", Ty::F64, "", NONE_DONE, "largest FCT / ideal FCT"),
    opt("mean_slowdown", Ty::F64, "", NONE_DONE, "mean FCT / ideal FCT"),
    opt("max_jct_ns", Ty::F64, "ns", "no job iteration completed", "largest job iteration completion time"),
    opt("mean_jct_ns", Ty::F64, "ns", "no job iteration completed", "mean job iteration completion time"),
    opt("max_jct_slowdown", Ty::F64, "", "no job iteration completed", "largest JCT / ideal JCT"),
    col("data_packets", Ty::U64, "", "data packets sent"),
    col("retransmits", Ty::U64, "", "data packets sent again"),
    col("trims", Ty::U64, "", "data packets trimmed"),
    col("drops", Ty::U64, "", "data packets dropped (full queue, dead or lossy link): the sum of the flows' drops"),
    col("control_drops", Ty::U64, "", "ACKs, NACKs and trimmed headers dropped (the ports' drops minus the data packets)"),
    col("pfc_frames", Ty::U64, "", "PFC frames sent (`switch.overflow = \"pfc\"`; 0 otherwise)"),
    col("ecn_marks", Ty::U64, "", "data packets ECN-marked"),
    col("max_queue_bytes", Ty::U64, "bytes", "largest data queue of any port"),
    col("events", Ty::U64, "", "events processed"),
    col("wall_s", Ty::F64, "s", "wall-clock time of the simulation"),
    col("sim_time_ns", Ty::F64, "ns", "simulated time when the run ended"),
    col("lb_state_bytes", Ty::U64, "bytes", "load-balancer state of one message's connections"),
    col("base_rtt_ns", Ty::F64, "ns", "base RTT of the fabric's diameter path"),
    col("bdp_bytes", Ty::U64, "bytes", "one BDP, in whole packets"),
    opt(
        "offered_load",
        Ty::F64,
        "",
        "the workload is not a trace",
        "the trace's bytes over every host link's capacity during its duration (the target is workload.load)",
    ),
    opt(
        "achieved_load",
        Ty::F64,
        "",
        "the workload is not a trace, or the run stopped before the trace's window ended",
        "the payload the trace's messages delivered by the end of its window (workload.start + duration), over every host link's capacity during it",
    ),
    col("payload_efficiency", Ty::F64, "", "(mtu - header) / mtu"),
    col("line_goodput_gbps", Ty::F64, "Gb/s", "host link rate times the payload efficiency"),
    col("warnings", Ty::StrList, "", "legal but probably unintended settings (also printed before the run)"),
];

const NOT_DONE: &str = "a message of it did not complete";

/// One row per job iteration (`[[jobs]]`).
pub const JOBS: &[ColumnSpec] = &[
    col("job", Ty::U64, "", "job index in [[jobs]]; a trace (the [workload]'s messages, where any waits for another) comes after them"),
    col("name", Ty::Str, "", "job name"),
    col("collective", Ty::Str, "", "allreduce, reduce_scatter, allgather, alltoall, broadcast, training (a `model` job) or trace"),
    col("iteration", Ty::U64, "", "iteration, from 0"),
    col("ranks", Ty::U64, "", "ranks of the job"),
    col("size_bytes", Ty::U64, "bytes", "per-rank buffer (nccl-tests' size); 0 for training; a trace: all its bytes"),
    opt(
        "start_ps",
        Ty::U64,
        "ps",
        "none of its messages was released",
        "first release of a message of the iteration (training: the start of its first compute)",
    ),
    opt("end_ps", Ty::U64, "ps", NOT_DONE, "last message of the iteration received (training: or its last compute done)"),
    opt("jct_ps", Ty::U64, "ps", NOT_DONE, "iteration completion time: end_ps - start_ps"),
    col(
        "ideal_jct_ps",
        Ty::U64,
        "ps",
        "a lower bound of jct_ps: the larger of the critical path with every message at its ideal FCT and each NIC's busy time",
    ),
    opt("slowdown", Ty::F64, "", NOT_DONE, "jct_ps / ideal_jct_ps"),
    opt("algbw_gbps", Ty::F64, "Gb/s", "the iteration did not complete, or a training job", "size / jct (nccl-tests' algorithm bandwidth)"),
    opt(
        "busbw_gbps",
        Ty::F64,
        "Gb/s",
        "the iteration did not complete, or a training job",
        "algbw times nccl-tests' bus factor (2(n-1)/n for allreduce, (n-1)/n for reduce_scatter, allgather, alltoall, 1 for broadcast)",
    ),
    opt(
        "compute_only_ps",
        Ty::U64,
        "ps",
        "not a training job",
        "training: the iteration's span if every message, NCCL's latencies too, took no time (the critical path of its compute)",
    ),
    opt(
        "exposed_comm_ps",
        Ty::U64,
        "ps",
        "not a training job, or the iteration did not complete",
        "training: jct_ps - compute_only_ps, the communication the compute does not hide",
    ),
];

/// One row per step of a job iteration.
pub const STEPS: &[ColumnSpec] = &[
    col("job", Ty::U64, "", "job index in [[jobs]]"),
    col("iteration", Ty::U64, "", "iteration, from 0"),
    col(
        "step",
        Ty::U64,
        "",
        "step of the algorithm (alltoall: wave of max_connections sends); training: the kind's index; a trace: the rank (host)",
    ),
    col(
        "kind",
        Ty::Str,
        "",
        "`step` for a collective; training: compute, tp, pp, dp, ep or cp (the work of that kind in the iteration); `rank` for a trace",
    ),
    col("messages", Ty::U64, "", "messages in the step (training compute: tasks; a trace: those the rank sends, compute tasks included)"),
    col("bytes", Ty::U64, "bytes", "their bytes"),
    col("scale_up_bytes", Ty::U64, "bytes", "of which on a scale-up network"),
    opt("start_ps", Ty::U64, "ps", "none of its messages was released", "first release of a message of the step"),
    opt("end_ps", Ty::U64, "ps", NOT_DONE, "last message of the step received (a trace's rank: of those it sends or receives)"),
    col(
        "ideal_end_ps",
        Ty::U64,
        "ps",
        "a lower bound of end_ps: the latest ideal finish of those messages (a trace's rank: end_ps / ideal_end_ps is its slowdown)",
    ),
];

/// FCT slowdown by message size, in the papers' buckets (KB = 1000 bytes).
pub const BUCKETS: &[ColumnSpec] = &[
    col("bucket", Ty::Str, "", "<100KB, 100KB-1MB, 1-10MB or >10MB"),
    col("min_bytes", Ty::U64, "bytes", "smallest size in the bucket"),
    col("messages", Ty::U64, "", "messages of that size"),
    col("completed", Ty::U64, "", "of which completed"),
    opt("p50_slowdown", Ty::F64, "", "none of them completed", "median slowdown (nearest rank) of the completed ones"),
    opt("p99_slowdown", Ty::F64, "", "none of them completed", "99th percentile slowdown (nearest rank)"),
    opt("mean_slowdown", Ty::F64, "", "none of them completed", "mean slowdown"),
];

/// Every declared table, by name.
pub const TABLES: &[(&str, &[ColumnSpec])] = &[
    ("flows", FLOWS),
    ("ports", PORTS),
    ("reorder", REORDER),
    ("samples", SAMPLES),
    ("jobs", JOBS),
    ("steps", STEPS),
    ("buckets", BUCKETS),
    ("summary", SUMMARY),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The unit convention: a column with a unit says it in its name, and only then.
    #[test]
    fn every_unit_is_in_its_column_name() {
        let suffix = |unit: &str| match unit {
            "ps" => Some("_ps"),
            "ns" => Some("_ns"),
            "s" => Some("_s"),
            "bytes" => Some("bytes"),
            "bit/s" => Some("_bps"),
            "Gb/s" => Some("_gbps"),
            "" => None,
            other => panic!("undeclared unit {other}"),
        };
        for (table, cols) in TABLES {
            for c in *cols {
                match suffix(c.unit) {
                    Some(s) => assert!(c.name.ends_with(s), "{table}.{} ({}) should end in {s}", c.name, c.unit),
                    None => {
                        let unitless = ["_ps", "_ns", "_bytes", "_bps", "_gbps"].iter().all(|s| !c.name.ends_with(s));
                        assert!(unitless, "{table}.{} has a unit suffix but no unit", c.name);
                    }
                }
            }
        }
    }
}
