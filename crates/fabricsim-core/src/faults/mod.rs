//! Faults: a timeline of changes to links, `[[faults]]` in a scenario.
//!
//! - `link_down`: the link blackholes everything from `start` (until `end`): each direction
//!   keeps serializing what it is given, at its rate, into a dead wire, and every packet is
//!   lost silently (counted as a drop). This is the *transient* phase. After `detection` plus
//!   `reconvergence` the switches remove the link from their routing groups (the *steady*
//!   phase): every switch stops using an up-port from which the destination's leaf can no
//!   longer be reached, so traffic for a leaf behind a dead spine link is routed around it
//!   from the first hop (ARCANE sec. 3.2: "10 ms to exclude a failed cable from a routing
//!   group"; PRIME sec. IV-A2). When the link comes back, routing takes it back after the
//!   same delay.
//! - `flap`: a `link_down` that repeats: down for `down_for`, up for `up_for`, from `start`
//!   until `end`. Routing follows the link with the same lag: at each convergence time it
//!   adopts the link's state of that moment.
//! - `degrade`: the link runs at `rate` from `start` (until `end`), in both directions (ARCANE
//!   sec. 4.3.2: an uplink reduced to 200 Gb/s).
//! - `random_degrade`: a `fraction` of the links of one tier (`links = "host"`, `"leaf_up"`
//!   or `"agg_up"`), chosen by seed, degraded to `rate` (PRIME sec. IV-A2: a share of links
//!   loses bandwidth to in-network-computing traffic; ARCANE sec. 4.3.2: 2% of ToR uplinks).
//! - `delay`: `extra` propagation latency on the link from `start` (until `end`), for paths of
//!   unequal delay. A wire never reorders: a packet never arrives before one sent earlier on
//!   the same link.
//! - `random_loss`: each packet put on the link is lost with `probability` (bit errors, a bad
//!   optic), from `start` (until `end`).
//!
//! A fault hits one link, named by either of its ports as in the results (`link =
//! "leaf0:up3"` is the link between leaf 0 and spine 3, the same as `"spine3:down0"`), or a
//! seeded share of one tier's links (`links = "leaf_up"`, `fraction = 0.02`: 2% of the leaf
//! uplinks). Both directions of a link are hit.
//! A name that does not exist is an error before the run. No fault can hang a run: flows
//! that cannot finish end at the run guard, reported incomplete.

pub mod link;

use serde::{Deserialize, Serialize};

use crate::engine::rng::{Rng, Stream};
use crate::error::{ensure, ScenarioError};
use crate::registry::{self, AlgorithmInfo};
use crate::time::Time;
use crate::topology::Topology;
use crate::units::{Duration, Rate};
pub use link::Change;

/// One `[[faults]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FaultConfig {
    LinkDown(LinkDown),
    Flap(Flap),
    Degrade(Degrade),
    RandomDegrade(RandomDegrade),
    Delay(Delay),
    RandomLoss(RandomLoss),
}

/// When a fault holds: from `start`, until `end` if given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivePeriod {
    pub start: Duration,
    pub end: Option<Duration>,
}

/// Declares a fault kind's table: its own fields, plus the target (`link`, or `links` with
/// `fraction`) and the window (`start`, `end`) that every kind shares. A macro because serde's
/// `flatten` cannot be combined with `deny_unknown_fields`.
macro_rules! fault_kind {
    ($name:ident { $($(#[$attr:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// One link, by either port's name ...
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub link: Option<String>,
            /// ... or a share (`fraction`) of one tier's links, chosen by seed.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub links: Option<LinkSet>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub fraction: Option<f64>,
            #[serde(default = "d_start")]
            pub start: Duration,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub end: Option<Duration>,
            $($(#[$attr])* pub $field: $ty,)*
        }

        impl $name {
            fn window(&self) -> ActivePeriod {
                ActivePeriod { start: self.start, end: self.end }
            }
            fn target(&self) -> (&Option<String>, Option<LinkSet>, Option<f64>) {
                (&self.link, self.links, self.fraction)
            }
        }
    };
}

fault_kind!(LinkDown {
    /// Time for the switches to notice the failure.
    #[serde(default = "d_detection")]
    detection: Duration,
    /// Time for routing to converge after detection.
    #[serde(default = "d_reconvergence")]
    reconvergence: Duration,
});

fault_kind!(Flap {
    down_for: Duration,
    up_for: Duration,
    #[serde(default = "d_detection")]
    detection: Duration,
    #[serde(default = "d_reconvergence")]
    reconvergence: Duration,
});

fault_kind!(Degrade { rate: Rate });

fault_kind!(Delay { extra: Duration });

fault_kind!(RandomLoss { probability: f64 });

/// Which links `random_degrade` draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkSet {
    /// Host-leaf links.
    Host,
    /// Leaf uplinks (ToR uplinks).
    LeafUp,
    /// Aggregation-core links (3 tiers).
    AggUp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomDegrade {
    pub links: LinkSet,
    pub fraction: f64,
    pub rate: Rate,
    #[serde(default = "d_start")]
    pub start: Duration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Duration>,
}

fn d_start() -> Duration {
    Duration(0)
}
fn d_detection() -> Duration {
    Duration(100_000_000) // 100 us
}
fn d_reconvergence() -> Duration {
    Duration(10_000_000_000) // 10 ms, ARCANE sec. 3.2
}

impl<'de> Deserialize<'de> for FaultConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (kind, rest) = registry::split_kind(d, "")?;
        Ok(match kind.as_str() {
            "link_down" => FaultConfig::LinkDown(registry::fields(rest)?),
            "flap" => FaultConfig::Flap(registry::fields(rest)?),
            "degrade" => FaultConfig::Degrade(registry::fields(rest)?),
            "random_degrade" => FaultConfig::RandomDegrade(registry::fields(rest)?),
            "delay" => FaultConfig::Delay(registry::fields(rest)?),
            "random_loss" => FaultConfig::RandomLoss(registry::fields(rest)?),
            other => return Err(registry::unknown_kind(other, &FAULTS.iter().map(|a| a.name).collect::<Vec<_>>())),
        })
    }
}

pub const FAULTS: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        category: "fault",
        name: "link_down",
        summary: "a link drops everything from start (to end); routing excludes it after detection + reconvergence",
        reference: "ARCANE sec. 3.2, 4.3.3; PRIME sec. IV-A2",
    },
    AlgorithmInfo { category: "fault", name: "flap", summary: "a link goes down and up periodically", reference: "ARCANE sec. 3.2" },
    AlgorithmInfo {
        category: "fault",
        name: "degrade",
        summary: "a link runs at a lower rate from start (to end)",
        reference: "ARCANE sec. 4.3.2",
    },
    AlgorithmInfo {
        category: "fault",
        name: "random_degrade",
        summary: "a seeded fraction of one tier's links runs at a lower rate",
        reference: "PRIME sec. IV-A2; ARCANE sec. 4.3.2",
    },
    AlgorithmInfo {
        category: "fault",
        name: "delay",
        summary: "extra latency on a link, for paths of unequal delay",
        reference: "China Mobile slides (reordering)",
    },
    AlgorithmInfo { category: "fault", name: "random_loss", summary: "each packet on a link is lost with a probability", reference: "" },
];

/// A resolved fault event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultAction {
    pub at: Time,
    pub ports: [u32; 2],
    pub change: Change,
}

/// Both directions of the link named by `name` (either port's name).
fn link_ports(topo: &Topology, name: &str) -> Option<[u32; 2]> {
    let p = topo.port_by_name(name)?;
    Some([p, reverse(topo, p)?])
}

fn reverse(topo: &Topology, p: u32) -> Option<u32> {
    let (from, to) = (topo.ports[p as usize].from, topo.ports[p as usize].to);
    topo.ports.iter().position(|q| q.from == to && q.to == from).map(|i| i as u32)
}

/// A change that holds from `start`, undone at `end` if there is one.
fn hold(out: &mut Vec<FaultAction>, ports: [u32; 2], (start, end): (Time, Option<Time>), on: Change, off: Change) {
    out.push(FaultAction { at: start, ports, change: on });
    if let Some(end) = end {
        out.push(FaultAction { at: end, ports, change: off });
    }
}

/// A seeded share of one tier's links: `round(fraction x links)`, at least one.
fn pick(
    topo: &Topology,
    set: LinkSet,
    fraction: f64,
    seed: u64,
    index: u64,
    field: &dyn Fn(&str) -> String,
) -> Result<Vec<[u32; 2]>, ScenarioError> {
    ensure(fraction > 0.0 && fraction <= 1.0, &field("fraction"), fraction, "allowed: a fraction in (0, 1]")?;
    let tier = match set {
        LinkSet::Host => 0,
        LinkSet::LeafUp => 1,
        LinkSet::AggUp => 2,
    };
    let mut candidates: Vec<u32> =
        (0..topo.ports.len() as u32).filter(|&p| topo.ports[p as usize].tier == tier && topo.ports[p as usize].up).collect();
    ensure(!candidates.is_empty(), &field("links"), format!("{set:?}"), "allowed: a link tier this topology has (agg_up needs 3 tiers)")?;
    let count = ((fraction * candidates.len() as f64).round() as usize).clamp(1, candidates.len());
    let mut rng = Rng::stream(seed, Stream::Fault, index);
    rng.shuffle(&mut candidates);
    Ok(candidates[..count].iter().map(|&p| [p, reverse(topo, p).unwrap_or(p)]).collect())
}

/// Checks the faults against the topology and turns them into timed actions.
fn resolve(faults: &[FaultConfig], topo: &Topology, seed: u64, max_time: Time) -> Result<Vec<FaultAction>, ScenarioError> {
    let mut out = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        let field = |k: &str| format!("faults[{i}].{k}");
        let targets = |(link, links, fraction): (&Option<String>, Option<LinkSet>, Option<f64>)| -> Result<Vec<[u32; 2]>, ScenarioError> {
            match (link, links) {
                (Some(name), None) => {
                    ensure(fraction.is_none(), &field("fraction"), fraction.unwrap_or(0.0), "allowed: only with `links`, not with `link`")?;
                    let ports = link_ports(topo, name).ok_or_else(|| {
                        ScenarioError::new(
                            field("link"),
                            format!("{name:?}"),
                            format!(
                                "allowed: a port name such as {:?} or {:?} (see the ports table of a run)",
                                topo.ports[topo.hosts() as usize].name,
                                topo.ports.last().map_or("", |p| p.name.as_str())
                            ),
                        )
                    })?;
                    Ok(vec![ports])
                }
                (None, Some(set)) => {
                    let fraction = fraction.ok_or_else(|| {
                        ScenarioError::new(field("fraction"), "nothing", "allowed: a fraction in (0, 1] of the `links` tier")
                    })?;
                    pick(topo, set, fraction, seed, i as u64, &field)
                }
                (Some(_), Some(_)) => {
                    Err(ScenarioError::new(field("links"), "both `link` and `links`", "allowed: one link, or a share of a tier"))
                }
                (None, None) => Err(ScenarioError::new(
                    field("link"),
                    "nothing",
                    "allowed: `link = \"leaf0:up3\"`, or `links = \"leaf_up\"` with `fraction`",
                )),
            }
        };
        let window = |w: &ActivePeriod| -> Result<(Time, Option<Time>), ScenarioError> {
            if let Some(end) = w.end {
                ensure(end.0 > w.start.0, &field("end"), end, format!("allowed: after start ({})", w.start))?;
            }
            Ok((w.start.0, w.end.map(|e| e.0)))
        };
        match f {
            FaultConfig::LinkDown(d) => {
                let (start, end) = window(&d.window())?;
                let lag = d.detection.0 + d.reconvergence.0;
                for ports in targets(d.target())? {
                    hold(&mut out, ports, (start, end), Change::Down, Change::Up);
                    out.push(FaultAction { at: start + lag, ports, change: Change::Converge });
                    if let Some(end) = end {
                        out.push(FaultAction { at: end + lag, ports, change: Change::Converge });
                    }
                }
            }
            FaultConfig::Flap(d) => {
                let all = targets(d.target())?;
                let (start, end) = window(&d.window())?;
                ensure(d.down_for.0 > 0, &field("down_for"), d.down_for, "allowed: a positive duration")?;
                ensure(d.up_for.0 > 0, &field("up_for"), d.up_for, "allowed: a positive duration")?;
                let end = end.unwrap_or(max_time).min(max_time);
                let lag = d.detection.0 + d.reconvergence.0;
                for ports in all {
                    let mut t = start;
                    while t < end {
                        out.push(FaultAction { at: t, ports, change: Change::Down });
                        out.push(FaultAction { at: t + lag, ports, change: Change::Converge });
                        let up = (t + d.down_for.0).min(end);
                        out.push(FaultAction { at: up, ports, change: Change::Up });
                        out.push(FaultAction { at: up + lag, ports, change: Change::Converge });
                        t = up + d.up_for.0;
                    }
                }
            }
            FaultConfig::Degrade(d) => {
                ensure(d.rate.0 > 0, &field("rate"), d.rate, "allowed: a positive rate (use link_down for a dead link)")?;
                let w = window(&d.window())?;
                for ports in targets(d.target())? {
                    hold(&mut out, ports, w, Change::Rate(d.rate.0), Change::NominalRate);
                }
            }
            FaultConfig::RandomDegrade(d) => {
                ensure(d.rate.0 > 0, &field("rate"), d.rate, "allowed: a positive rate")?;
                let w = window(&ActivePeriod { start: d.start, end: d.end })?;
                for ports in pick(topo, d.links, d.fraction, seed, i as u64, &field)? {
                    hold(&mut out, ports, w, Change::Rate(d.rate.0), Change::NominalRate);
                }
            }
            FaultConfig::Delay(d) => {
                let w = window(&d.window())?;
                for ports in targets(d.target())? {
                    hold(&mut out, ports, w, Change::ExtraDelay(d.extra.0), Change::ExtraDelay(0));
                }
            }
            FaultConfig::RandomLoss(d) => {
                ensure((0.0..=1.0).contains(&d.probability), &field("probability"), d.probability, "allowed: a probability in [0, 1]")?;
                let w = window(&d.window())?;
                for ports in targets(d.target())? {
                    hold(&mut out, ports, w, Change::Loss(d.probability), Change::Loss(0.0));
                }
            }
        }
    }
    out.sort_by_key(|a| a.at); // stable: same-time actions keep their order
    Ok(out)
}

/// The faults of a run as a timeline of actions, in time order.
#[derive(Debug, Clone, Default)]
pub struct FaultTimeline {
    actions: Vec<FaultAction>,
}

impl FaultTimeline {
    /// Checks the faults against the topology and lays out their actions.
    pub fn new(faults: &[FaultConfig], topo: &Topology, seed: u64, max_time: Time) -> Result<FaultTimeline, ScenarioError> {
        Ok(FaultTimeline { actions: resolve(faults, topo, seed, max_time)? })
    }

    /// When each action takes effect, in order (the event of action i is `Fault(i)`).
    pub fn times(&self) -> impl Iterator<Item = Time> + '_ {
        self.actions.iter().map(|a| a.at)
    }

    pub fn action(&self, i: u32) -> FaultAction {
        self.actions[i as usize]
    }
}
