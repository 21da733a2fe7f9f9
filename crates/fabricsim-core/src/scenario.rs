//! The scenario: the one input of a run.
//!
//! [`Scenario`] is the serde model of the TOML a person writes (quantities as unit strings,
//! every field defaulted, unknown keys rejected). [`Scenario::from_json`] and
//! [`Scenario::from_deserializer`] (a TOML table, any serde data) report the dotted path of a
//! bad field. Each component owns its table and its checks (`topology::TopologyConfig`,
//! `switch::SwitchConfig`, `host::TransportConfig`, each load balancer's, workload's and
//! fault's parameters in its own file); [`Scenario::resolve`] composes them and checks what
//! spans several (the BDP that buffers and windows are measured in, the switch rule a load
//! balancer needs, the classes flows use), turning the scenario into a [`Model`]: plain
//! integers in picoseconds, bytes and bits per second. The filled-in scenario (every default
//! written out) is recorded with the results.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::budget::{self, Estimate};
use crate::engine::rng::{Rng, Stream};
use crate::error::ScenarioError;
use crate::faults::FaultConfig;
use crate::host::cc::CcKind;
use crate::host::{Connections, TransportConfig, TransportModel};
use crate::lb::{LbConfig, LbContext};
use crate::stats::least::Least;
use crate::stats::sampler::SamplesConfig;
use crate::stats::Keep;
use crate::switch::{SwitchConfig, SwitchModel};
use crate::time::Time;
use crate::topology::{Routes, Topology, TopologyConfig};
use crate::units::{AutoOr, Duration, Size};
use crate::workload::collective::{Listed, Tag};
use crate::workload::job::{self, JobConfig, JobInfo};
use crate::workload::trace::{Arrivals, LoadWindow};
use crate::workload::window::Far;
use crate::workload::{relay, stripe};
use crate::workload::{Deps, MessageSpec, Via, WorkloadConfig};

/// A whole scenario. Its fields' doc comments (and those of the tables they hold) are the
/// reference: docs/scenario.md's tables and the scenario's JSON schema are generated from them
/// ([`crate::registry::options`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Seed of every random stream (permutation, EV choices, ECMP salts, RED draws). Same scenario + seed = identical
    /// results.
    #[serde(default = "d_seed")]
    pub seed: u64,
    /// The fabric: its kind (a fat tree by default) and shape; see `[topology]` below.
    #[serde(default)]
    pub topology: TopologyConfig,
    /// Egress queues, buffers, ECN marking and next-hop rules of every switch; see `[switch]` below.
    #[serde(default)]
    pub switch: SwitchConfig,
    /// What every connection runs: packets, ACKs, loss recovery and congestion control; see `[transport]` below.
    #[serde(default)]
    pub transport: TransportConfig,
    /// The host load balancer that picks each data packet's entropy value; see `[lb]` below.
    #[serde(default)]
    pub lb: LbConfig,
    /// Traffic beside the jobs: a permutation when neither `[workload]` nor `[[jobs]]` is given; see `[workload]`
    /// below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadConfig>,
    /// AI training jobs: collectives or training steps on placed ranks; see `[[jobs]]` below.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobConfig>,
    /// When the run stops at the latest (simulated time, events, memory, wall time); see `[stop]` below.
    #[serde(default)]
    pub stop: StopConfig,
    /// Link faults over time; see `[[faults]]` below.
    #[serde(default)]
    pub faults: Vec<FaultConfig>,
    /// A share of ECMP flows in their own class; see `[mixed]` below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<MixedConfig>,
    /// Port time series; see `[samples]` below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<SamplesConfig>,
    /// The flows table's columns the caller will read (not a field of the scenario text: the
    /// caller's, [`Scenario::keeping`]); the memory estimate counts those.
    #[serde(skip)]
    pub keep: Keep,
}

fn d_seed() -> u64 {
    1
}

/// `[mixed]`: a share of the flows pinned to one path (ECMP) in a class of their own, beside
/// the scenario's load balancer (PRIME sec. IV-A2; ARCANE sec. 4.3.2, Fig. 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixedConfig {
    /// `round(share x flows)` flows (at least one), chosen by seed.
    #[schemars(extend("x-type" = "fraction in (0, 1]"))]
    pub share: f64,
    /// Their class; below `switch.classes`.
    #[serde(default = "d_mixed_class")]
    pub class: u32,
}
fn d_mixed_class() -> u32 {
    1
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopConfig {
    /// Simulated-time guard. The run stops as soon as every flow has completed; if this comes first, the run ends
    /// `incomplete`. A job (or the `[workload]`) that cannot complete by it is warned of before the run starts: its *least
    /// time*, the critical path of its messages each taking its ideal FCT from its release (as the jobs' ideal bound
    /// schedules them), is a bound no run beats (a Llama 3 405B step on 1 024 GPUs, TP 8, PP 16, 16 micro-batches at 400
    /// TFLOPS: 13.79 s).
    #[serde(default = "d_max_time")]
    pub max_time: Duration,
    /// Event budget guard; hitting it ends the run `incomplete`.
    #[serde(default = "d_max_events")]
    pub max_events: u64,
    /// Memory the run may need, estimated before anything is built (ports with full queues and a BDP on every wire, every
    /// message's rows and results, the per-packet state of the connections that can be under way at once (docs/model.md,
    /// Memory), the samples up to `max_time`, and, on several threads, what each piece beyond the first adds: its calendar,
    /// the run's maps from ids to where the pieces keep them, and a second copy of the counts of each message and
    /// connection between two pieces (the ports, wires and hosts are split among the pieces, not copied)). A scenario above
    /// it is refused with the estimate by part (`error: stop.max_memory: got a run that needs about 17216.0 GiB (fabric
    /// ...)`). `"auto"` is half of the machine's memory under the Python package (written into the scenario as run), 8 GiB
    /// for the Rust core alone.
    #[serde(default)]
    #[schemars(extend("x-type" = "size or `\"auto\"`"))]
    pub max_memory: AutoOr<Size>,
    /// Wall-clock guard: the run stops, `incomplete` with `stop_reason = "stop.max_wall reached"`, after this long. Unlike
    /// the others it depends on the machine, so a run it cuts is not reproducible; none by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "none"))]
    pub max_wall: Option<Duration>,
}
/// `stop.max_memory = "auto"` when no front end says how much memory the machine has.
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;

fn d_max_time() -> Duration {
    Duration(100_000_000_000)
}
fn d_max_events() -> u64 {
    20_000_000_000
}
impl Default for StopConfig {
    fn default() -> Self {
        StopConfig { max_time: d_max_time(), max_events: d_max_events(), max_memory: AutoOr::Auto, max_wall: None }
    }
}

/// Everything a run needs, in core units, checked.
#[derive(Debug)]
pub struct Model {
    /// What the jobs' tables hold before any run (`stats::jobs::bounds`).
    pub job_bounds: crate::stats::jobs::JobBounds,
    pub seed: u64,
    /// The fabric, built once and shared by every piece of a run.
    pub topo: Arc<Topology>,
    pub switch: SwitchModel,
    pub transport: TransportModel,
    pub lb: LbConfig,
    /// What the host load balancers know of the fabric.
    pub lb_ctx: LbContext,
    /// The messages (the `[workload]`'s, then the jobs'), what each waits for, and the job,
    /// iteration and step of each (`Tag::NONE` for the workload's). A [`crate::Simulation`]
    /// moves the messages into its NICs and what they wait for into its pieces' counts and
    /// reverse lists: its model's lists of both are empty.
    pub messages: Vec<MessageSpec>,
    pub deps: Deps,
    pub tags: Vec<Tag>,
    pub jobs: Vec<JobInfo>,
    pub max_time: Time,
    pub max_events: u64,
    /// Bytes the run may need (`stop.max_memory`), and the estimate without samples.
    pub max_memory: u64,
    pub need: Estimate,
    /// The wall-clock guard, if any.
    pub max_wall: Option<std::time::Duration>,
    /// Legal but probably unintended settings, for the front end to show.
    pub warnings: Vec<String>,
    /// Base RTT of the diameter path (DESIGN.md, BDP).
    pub base_rtt: Time,
    pub bdp_packets: u64,
    pub bdp_bytes: u64,
    /// With a trace workload: its window and the load its messages offer.
    pub load_window: Option<LoadWindow>,
    /// A trace drawn as the run goes (`Scenario::draws_as_it_goes`): its messages are the
    /// first of the run, made as its clock reaches them (`sim::generate`); `messages` holds
    /// none of them.
    pub arrivals: Option<Arrivals>,
    /// Jobs made as the run goes (`Scenario::makes_jobs_as_it_goes`): `messages`, `deps` and
    /// `tags` hold none of theirs, `job_bounds` is counted as the run takes them.
    pub making: Option<Box<Making>>,
}

impl Scenario {
    /// Parses a scenario from JSON text; errors name the dotted field path.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        // serde would read a table from an array of its fields in order (`topology =
        // ["fat_tree", 2, 16]`): refused, for the tables the scenario's declaration has
        crate::registry::tables_not_arrays(text, crate::registry::options::table_shapes)?;
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(path_error)
    }

    /// Parses a scenario from any serde data (a TOML table, a JSON value).
    pub fn from_deserializer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Scenario, ScenarioError>
    where
        D::Error: std::fmt::Display,
    {
        serde_path_to_error::deserialize(d).map_err(|e| located(crate::registry::dotted(e.path()), e.inner().to_string()))
    }

    /// The scenario run by a caller that reads only the flows table's columns `keep` keeps
    /// (its results made with [`crate::Simulation::into_results_keeping`] and the same `keep`):
    /// its memory estimate counts those columns, not every one.
    pub fn keeping(mut self, keep: Keep) -> Scenario {
        self.keep = keep;
        self
    }

    /// The `[workload]`: as given, else a permutation unless there are jobs.
    pub fn workload(&self) -> Option<WorkloadConfig> {
        match (&self.workload, self.jobs.is_empty()) {
            (Some(w), _) => Some(w.clone()),
            (None, true) => Some(WorkloadConfig::default()),
            (None, false) => None,
        }
    }

    /// The scenario with every default written out, as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a scenario always serializes")
    }

    /// Resolves each component's configuration (each checks its own fields) and checks what
    /// spans several: the BDP that buffers and windows are measured in, the switch rule the
    /// load balancer needs, the classes flows use.
    pub fn resolve(&self) -> Result<Model, ScenarioError> {
        self.resolve_as(false)
    }

    /// [`Scenario::resolve`]; `open`: for a session (`sim::session`), whose scenario may have
    /// no workload (then it has no message until one is sent).
    pub fn resolve_as(&self, open: bool) -> Result<Model, ScenarioError> {
        self.resolve_in(self.frame()?, open)
    }

    /// [`Scenario::resolve_as`] in `frame` (what [`Scenario::frame`] made).
    pub(crate) fn resolve_in(&self, frame: Frame, open: bool) -> Result<Model, ScenarioError> {
        let Frame { topo, transport, switch, lb_ctx, mut warnings, mut need, max_memory, base_rtt, bdp_packets, bdp_bytes } = frame;
        let Given { workload, mut messages, mut lists, load_window, arrivals } = self.given(&topo, open)?;
        let mut tags = vec![Tag::NONE; messages.len()];
        // the jobs' messages after the workload's, refused before they are made if even their
        // bookkeeping would not fit
        let mut plan = Listed { base: messages.len() as u32, ..Listed::default() };
        let mut jobs = job::plan(
            &self.jobs,
            &mut plan,
            &topo,
            max_memory / budget::message_floor(&self.keep),
            &mut Rng::stream(self.seed, Stream::Workload, 1),
        )?;
        let file = match &workload {
            Some(WorkloadConfig::Flows(f)) => f.file.as_deref(),
            _ => None,
        };
        jobs.extend(job::trace(&messages, &lists, file, jobs.len() as u32, &mut tags));
        let workload_messages = messages.len();
        warnings.extend(crate::workload::costless_compute(&messages));
        let made = plan.messages.len();
        messages.extend(plan.messages);
        tags.extend(plan.tags);
        let (deps, relayed) = if topo.tables.split().is_some() || topo.planes() > 1 {
            lists.extend(plan.deps.to_lists(made));
            drop(plan.deps);
            // on a fabric of islands (rail-only), messages between them go through a GPU of
            // their source's server
            let relayed = relay::through_scale_up(&topo, &mut messages, &mut lists, &mut tags);
            // over a host's NIC ports (planes, a GPU's NICs): a job's channel on the port NCCL
            // puts it on where the job has a channel a port, else every message in a part a port
            stripe::over_planes(&topo, &mut messages, &mut lists, &mut tags, &self.jobs);
            (Deps::from_lists(&lists), relayed)
        } else {
            let mut deps = Deps::from_lists(&lists);
            deps.append(lists.len(), &plan.deps, made);
            (deps.finish(), Ok(0))
        };
        drop(lists);
        // where a message's size and class were written, for errors
        let field_of = |i: usize, k: &str| message_field(i, k, tags[i].job, workload_messages, workload.as_ref());
        if let Err((i, key, why)) = relayed {
            let m = &messages[i];
            let value = if key == "dst" { m.dst } else { m.src };
            return Err(ScenarioError::new(
                field_of(i, key),
                value,
                format!("{why}; allowed: hosts the fabric, or their servers' scale-up networks, join"),
            ));
        }
        let payload = transport.mtu - transport.header;
        warnings.extend(job::small_slices(&self.jobs, payload));
        // PSNs are 32-bit: a message may need at most 2^32 - 1 packets (the error's words are
        // made only for a message that fails: formatting them for every message was most of
        // the time of this loop)
        if let Some((i, f)) = messages.iter().enumerate().find(|(_, f)| too_many_packets(f, payload)) {
            return Err(packets_error(field_of(i, "size"), f.bytes, payload));
        }
        let drawn = arrivals.as_ref().map_or(0, |a| a.count as usize);
        check_count(messages.len() + drawn)?;
        // the messages read from far on by a later one: what the counting passes hold beyond
        // their window (`workload::window`)
        let far = Far::of(&deps).shared();
        need.messages = match &arrivals {
            // a trace drawn as the run goes has no other message (`Scenario::draws_as_it_goes`)
            Some(a) => drawn::memory(a, &topo, &transport, self.lb.subflows(), payload, &self.keep)?,
            None => budget::messages(&topo, &transport, self.lb.subflows(), &messages, &deps, far.clone(), &self.keep)?,
        };
        budget::check(&need, max_memory)?;
        if let Some(m) = &self.mixed {
            m.check(switch.classes)?;
            let mut order: Vec<usize> = (0..messages.len()).collect();
            Rng::stream(self.seed, Stream::Mixed, 0).shuffle(&mut order);
            // at least one message when there are any (a trace may draw none: nothing to mix)
            let count = ((m.share * messages.len() as f64).round() as usize).clamp(1.min(messages.len()), messages.len());
            for &i in &order[..count] {
                messages[i].class = m.class as u8;
                // a scale-up switch's legs keep their way (no path to pin)
                if messages[i].via == Via::Lb {
                    messages[i].via = Via::Pinned;
                }
            }
        }
        if let Some((i, f)) = messages.iter().enumerate().find(|(_, f)| u32::from(f.class) >= switch.classes) {
            return Err(class_error(field_of(i, "class"), f.class, switch.classes));
        }
        if let Some(class) = arrivals.as_ref().and_then(|a| a.class()).filter(|&c| u32::from(c) >= switch.classes) {
            return Err(class_error(field_of(0, "class"), class, switch.classes));
        }
        // the engine numbers hosts by leaf slot: the same ids, unless topology.rails
        if !topo.hosts.node_of.is_empty() {
            for m in &mut messages {
                (m.src, m.dst) = (topo.slot(m.src), topo.slot(m.dst));
            }
        }
        // a job or the [workload] that cannot complete by stop.max_time
        let routes = Routes::new(topo.clone());
        let names: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
        warnings.extend({
            let mut least = Least::new(&routes, &transport, self.lb.subflows(), workload_messages + drawn, far);
            if let Some(a) = &arrivals {
                a.each(|m| least.add(&m.on_slots(&topo), &[], Tag::NONE.job));
            }
            for (i, m) in messages.iter().enumerate() {
                least.add(m, deps.of(i), tags[i].job);
            }
            least.warnings(self.stop.max_time.0, &names)
        });

        // what the jobs' tables hold before any run (their ideal spans), from the workload
        let job_bounds = crate::stats::jobs::bounds(&crate::stats::jobs::Plan {
            routes: &routes,
            transport: &transport,
            specs: &messages,
            subflows: self.lb.subflows(),
            deps: &deps,
            tags: &tags,
            jobs: &jobs,
        });

        let frame = Frame { topo, transport, switch, lb_ctx, warnings, need, max_memory, base_rtt, bdp_packets, bdp_bytes };
        Ok(Model { job_bounds, messages, deps, tags, jobs, load_window, arrivals, ..self.framed(frame) })
    }

    /// A model of `frame` with no message (its warnings and estimate the frame's).
    pub(crate) fn framed(&self, frame: Frame) -> Model {
        let Frame { topo, transport, switch, lb_ctx, warnings, need, max_memory, base_rtt, bdp_packets, bdp_bytes } = frame;
        Model {
            job_bounds: Default::default(),
            seed: self.seed,
            topo,
            switch,
            transport,
            lb: self.lb.clone(),
            lb_ctx,
            messages: Vec::new(),
            deps: Deps::default(),
            tags: Vec::new(),
            jobs: Vec::new(),
            warnings,
            max_time: self.stop.max_time.0,
            max_events: self.stop.max_events,
            max_memory,
            need,
            max_wall: self.stop.max_wall.map(|d| std::time::Duration::from_nanos(d.0 / 1_000)),
            base_rtt,
            bdp_packets,
            bdp_bytes,
            load_window: None,
            arrivals: None,
            making: None,
        }
    }

    /// The scenario with derived defaults written in (per-tier lists filled, the ECN
    /// thresholds from the buffer).
    /// `transport.connections`, or where it is left out: `per_pair` for a scenario with jobs
    /// (NCCL's network transport keeps a queue pair per peer and channel for the communicator's
    /// life, `src/transport/net_ib.cc`), unless `cc = "dcqcn"`, or `lb = "mptcp"` with more than
    /// one subflow, which need a connection per message; `per_message` otherwise.
    pub fn connections(&self) -> Connections {
        self.transport.connections.unwrap_or(if !self.jobs.is_empty() && self.transport.cc != CcKind::Dcqcn && self.lb.subflows() <= 1 {
            Connections::PerPair
        } else {
            Connections::PerMessage
        })
    }

    pub fn filled(&self) -> Scenario {
        let mut s = self.clone();
        s.transport.connections = Some(s.connections());
        s.switch.fill();
        s.workload = s.workload();
        // a fat tree's per-tier links, a graph's NICs per server (where its hosts name their
        // servers): as the run reads them
        s.topology.generator_mut().fill();
        s
    }
}

/// The fabric of `config`, refused before it is built where its graph alone would need more
/// than `max_memory` bytes (`budget::graph`: a 268M-host tree fails in milliseconds).
pub fn build_topology(config: &TopologyConfig, max_memory: u64) -> Result<Topology, ScenarioError> {
    config.build(|size| budget::check(&Estimate { fabric: budget::graph(&size), ..Estimate::default() }, max_memory))
}

fn clean(msg: String) -> String {
    // serde_json appends " at line L column C" and toml "\nin `a.b`"; the field path
    // already says where.
    let msg = msg.split("\nin `").next().unwrap_or_default();
    let msg = match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    };
    crate::error::readable(msg, &[])
}

fn path_error(e: serde_path_to_error::Error<serde_json::Error>) -> ScenarioError {
    located(crate::registry::dotted(e.path()), e.inner().to_string())
}

/// A parse error at `path`, whose message may carry an inner path (see [`crate::registry`]).
fn located(path: String, message: String) -> ScenarioError {
    let (mut field, mut message) = crate::registry::join(if path == "." { "" } else { &path }, &clean(message));
    // serde reports a missing field at its table ("workload: missing field `senders`"): name
    // the field itself, as every other error does
    if let Some(name) = message.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
        field = if field.is_empty() { name.to_string() } else { format!("{field}.{name}") };
        message = "missing; this field has no default and must be given".into();
    }
    ScenarioError { field: if field.is_empty() { "scenario".into() } else { field }, message }
}

#[cfg(test)]
mod tests;

mod drawn;
mod frame;
pub(crate) mod making;
mod survey;
use frame::{check_count, class_error, message_field, packets_error, too_many_packets, Frame, Given};
pub use making::Making;
pub use survey::Survey;
