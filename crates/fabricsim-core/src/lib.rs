//! # fabricsim-core
//!
//! A packet-level discrete-event simulator of AI/ML datacenter fabrics: how a load-balancing
//! scheme changes flow completion times, queues, trims and drops on a given fat tree and
//! workload. Pure Rust, deterministic, no I/O: the Python package drives it.
//!
//! ## Layers, bottom up
//!
//! Each module uses only those listed before it (`tests/test_layers.py` checks this).
//! - [`time`], [`error`], [`units`]: integer picoseconds; the error that names a field (and
//!   serde's messages put in the scenario's words); bytes, bits/s, unit strings parsed exactly.
//! - [`packet`]: the packet carried by value, its entropy value ([`packet::Ev`]) and the
//!   multi-part EV layout that hosts write and switches read.
//! - [`registry`](mod@registry): one line per kind: [`AlgorithmInfo`] and the macros that build each
//!   component's configuration enum and dispatch from its list of files.
//! - [`engine`]: the calendar event queue ordered by (time, unit, sequence within the unit),
//!   the run [`Status`], the seeded RNG streams, the no-progress guard.
//! - [`topology`]: the fabric as a graph (`[topology]`: the fat tree generator, or a graph
//!   given), ports named `leaf3:up2`, the forwarding tables built from it and the routes read
//!   from them.
//! - [`lb`]: host load balancers, one file each, behind one trait (`[lb]`).
//! - [`workload`]: permutation, tornado, incast, explicit lists, one file each (`[workload]`).
//! - [`faults`]: the fault kinds, one file each (`[[faults]]`), their timeline, and what a
//!   fault leaves on a link's wire.
//! - [`switch`]: egress ports (queues, RED/ECN, trimming, schedulers), the wires their far
//!   ends hold, a piece's links and the sink a unit writes its outputs to, next-hop rules one
//!   file each, and the fabric that forwards packets (`[switch]`).
//! - [`host`]: the NICs (send, receive, RTO), connections, transports and congestion
//!   controls one file each (`[transport]`).
//! - [`stats`]: the declared output columns, the tables, the summary, ideal FCT, samples.
//! - [`budget`]: what a run will need, estimated before anything is built (`stop.max_memory`).
//! - [`scenario`]: the scenario: composes the components' configurations and checks what
//!   spans several.
//! - [`sim`]: [`Simulation`], the event loop that owns the components of one run, in pieces
//!   (hosts and switches with their state and queue, which reach each other only by wires
//!   and notices), hands each event to the one it concerns and reads the pieces as one run.
//!
//! A user touches [`Scenario`] (build or parse one), [`Simulation`] (run it, or step it) and
//! [`stats::RunResult`] (read the tables).
//!
//! ```
//! use fabricsim_core::{Scenario, Simulation};
//! let scenario = Scenario::from_json(r#"{
//!     "topology": {"hosts": 16, "radix": 8, "link_latency": "1us", "switch_latency": "0ns"},
//!     "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 9, "size": "64KiB"}]}
//! }"#).unwrap();
//! let result = Simulation::new(&scenario).unwrap().run();
//! let fct = result.flows.opt_u64("fct_ps")[0]; // None had it not completed
//! assert_eq!(fct, Some(result.flows.u64("ideal_fct_ps")[0])); // alone on an idle fabric
//! ```

pub mod budget;
pub mod engine;
pub mod error;
pub mod faults;
pub mod host;
pub mod lb;
pub mod packet;
pub mod registry;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod switch;
pub mod time;
pub mod topology;
pub mod units;
pub mod workload;

pub use engine::Status;
pub use error::ScenarioError;
pub use scenario::Scenario;
pub use sim::Simulation;

pub use registry::AlgorithmInfo;

/// Everything a scenario can name, with one-line docs: load balancers, workloads, switch
/// routing rules, faults, congestion controls, transports and topologies.
pub fn registry() -> Vec<AlgorithmInfo> {
    let mut v: Vec<AlgorithmInfo> = lb::ALGORITHMS.to_vec();
    v.extend_from_slice(workload::WORKLOADS);
    v.extend_from_slice(workload::collective::ALGORITHMS);
    v.push(workload::collective::tuner::INFO);
    v.extend_from_slice(switch::routing::RULES);
    v.extend_from_slice(faults::FAULTS);
    v.extend_from_slice(host::CcKind::KINDS);
    v.extend_from_slice(host::TransportKind::KINDS);
    v.extend_from_slice(host::LOSS_DETECTIONS);
    v.extend_from_slice(topology::KINDS);
    v
}

/// Every parameter of every kind of the `kind`-tagged tables, as (table, kind, parameter):
/// `lb`, `workload`, `faults` and `topology` ([`registry::Param`]), read from each kind's
/// `Config` declaration ([`registry::options`]). What docs/scenario.md's per-kind tables are
/// generated from.
pub fn parameters() -> Vec<(&'static str, &'static str, registry::Param)> {
    let tables: [(&str, Vec<registry::KindParams>); 4] = [
        ("lb", lb::LbConfig::params()),
        ("workload", workload::WorkloadConfig::params()),
        ("faults", faults::FaultConfig::params()),
        ("topology", topology::TopologyConfig::params()),
    ];
    let mut v = Vec::new();
    for (table, kinds) in tables {
        for (kind, params) in kinds {
            v.extend(params.into_iter().map(|p| (table, kind, p)));
        }
    }
    v
}

/// Checks a scenario as a run would before it starts, faults and samples against the built
/// topology included (a link or switch name that does not exist), without building the rest.
pub fn check(scenario: &Scenario) -> Result<(), ScenarioError> {
    warnings(scenario).map(drop)
}

/// What a scenario's run will take, before it is built: the events it is expected to make
/// ([`sim::threads::expected_events`]) and the memory it is estimated to need, bytes.
pub fn estimate(scenario: &Scenario) -> Result<(u64, u64), ScenarioError> {
    survey(scenario).map(|(_, events, memory)| (events, memory))
}

/// Legal but probably unintended settings of a scenario, which is first checked as [`check`]
/// does (an invalid one is refused), the scenario resolved and its topology built once: a
/// front end checks a scenario and shows its warnings before the run.
pub fn warnings(scenario: &Scenario) -> Result<Vec<String>, ScenarioError> {
    survey(scenario).map(|(warnings, ..)| warnings)
}

/// [`warnings`] and [`estimate`] (its port samples included, as a run counts them; not what
/// more threads add, which the run says) from one survey ([`Scenario::survey`]: the jobs' messages
/// counted as they are made, never held), or one resolve where only that tells: what a front
/// end checks and says before a run (a sweep's points are checked and estimated at once).
pub fn survey(scenario: &Scenario) -> Result<(Vec<String>, u64, u64), ScenarioError> {
    let s = match scenario.survey()? {
        Some(s) => s,
        None => {
            let model = scenario.resolve()?;
            let events = sim::threads::expected_events(&model);
            scenario::Survey { warnings: model.warnings, events, need: model.need, topo: model.topo, max_time: model.max_time }
        }
    };
    let topo = &s.topo;
    faults::timeline(&scenario.faults, topo, scenario.seed, s.max_time)?;
    let (mut warnings, mut need) = (s.warnings, s.need);
    if let Some(cfg) = &scenario.samples {
        let sampler = cfg.resolve(topo)?;
        warnings.extend(sampler.warning(s.max_time));
        need = budget::with_samples(need, sampler.rows_until(s.max_time));
    }
    Ok((warnings, s.events, need.total()))
}

/// The crate version, recorded with every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
