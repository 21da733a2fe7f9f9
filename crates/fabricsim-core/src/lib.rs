//! # fabricsim-core
//!
//! A packet-level discrete-event simulator of AI/ML datacenter fabrics: how a load-balancing
//! scheme changes flow completion times, queues, trims and drops on a given fat tree and
//! workload. Pure Rust, deterministic, no I/O: the Python package drives it.
//!
//! ## Layers, bottom up
//! - [`time`], [`units`]: integer picoseconds, bytes, bits/s; unit strings parsed exactly.
//! - [`engine`]: the event queue ordered by (time, insertion) and the seeded RNG streams.
//! - [`topology`]: 2- and 3-tier fat trees, ports named `leaf3:up2`, arithmetic routing.
//! - [`switch`]: egress ports: strict-priority control class, byte-limited data queue,
//!   RED/ECN, trimming or tail drop, and the link pipe.
//! - [`host`]: the NIC: out-of-order SACK transport, retransmission, congestion window.
//! - [`lb`]: host load balancers behind one trait (`ecmp`, `ops`).
//! - [`workload`]: permutation, tornado, incast, explicit flow lists.
//! - [`faults`]: a timeline of link changes: degraded rates, dead links.
//! - [`stats`]: per-flow and per-port columns, summary, ideal FCT, packet accounting.
//! - [`scenario`]: the serde model of a scenario, its defaults and its checks.
//! - [`sim`]: [`Simulation`], which owns all of the above for one run.
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

pub use registry::{registry, AlgorithmInfo};

/// The crate version, recorded with every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
