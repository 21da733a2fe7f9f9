//! Faults: a timeline of changes to links, `[[faults]]` in a scenario. One file per kind
//! (its `INFO` and `Config`), one line per kind in the list below; what they share
//! lives in `support/`. The kinds and their parameters: docs/scenario.md, generated from them.
//!
//! A fault hits one link, named by either of its ports as in the results (`link =
//! "leaf0:up3"` is the link between leaf 0 and spine 3, the same as `"spine3:down0"`), or a
//! seeded share of one tier's links (`links = "leaf_up"`, `fraction = 0.02`: 2% of the leaf
//! uplinks). Both directions of a link are hit. It holds from `start` until `end` if given,
//! when the link gets back what the fault took. A name that does not exist is an error
//! before the run. No fault can hang a run: flows that cannot finish end at the run guard,
//! reported incomplete. What a fault leaves on a link lives on the link's wire
//! ([`link::LinkFault`]).

mod support;
pub use support::{link, timeline};

use serde::{Deserialize, Serialize};

use crate::engine::rng::{Rng, Stream};
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use crate::topology::Topology;
use crate::units::{Duration, Rate};
pub use link::Change;
pub use timeline::{Plan, Source, Timeline};

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
        /// `[[faults]]` parameters: the target and period every kind shares, and its own.
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// The link hit, by either of its ports' names as in the ports table (`"leaf0:up3"` and
            /// `"spine3:down0"` are the same link). Give `link`, or `links` with `fraction`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub link: Option<String>,
            /// Instead of `link`: a tier's links, `"host"`, `"leaf_up"` or `"agg_up"`, of which `fraction` are
            /// hit.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub links: Option<$crate::faults::LinkSet>,
            /// With `links`: the share hit, `round(fraction x links)`, at least one, chosen by seed.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub fraction: Option<f64>,
            /// When the fault begins.
            #[serde(default)]
            pub start: $crate::units::Duration,
            /// When it ends (the link gets back what the fault took); absent: it holds until the run ends.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub end: Option<$crate::units::Duration>,
            $($(#[$attr])* pub $field: $ty,)*
        }

        impl $name {
            fn period(&self) -> $crate::faults::ActivePeriod {
                $crate::faults::ActivePeriod { start: self.start, end: self.end }
            }
            fn target(&self) -> (&Option<String>, Option<$crate::faults::LinkSet>, Option<f64>) {
                (&self.link, self.links, self.fraction)
            }
        }
    };
}

/// Which links `random_degrade` draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkSet {
    /// Host-leaf links.
    Host,
    /// Leaf uplinks (ToR uplinks).
    LeafUp,
    /// Aggregation-core links (3 tiers).
    AggUp,
}

fn d_detection() -> Duration {
    Duration(100_000_000) // 100 us
}
fn d_reconvergence() -> Duration {
    Duration(10_000_000_000) // 10 ms, ARCANE sec. 3.2
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

/// A change that holds from `start`, undone at `end` if there is one (steps 0 and 1).
pub fn hold((start, end): (Time, Option<Time>), on: Change, off: Change) -> Plan {
    let mut steps = vec![(start, on, 0)];
    if let Some(end) = end {
        steps.push((end, off, 1));
    }
    Plan::Steps(steps)
}

/// What a fault kind's `Config` provides: its sources of actions on the timeline.
pub trait FaultKind {
    /// Checks the fault against the topology and appends its sources of actions.
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError>;
}

/// What a fault is resolved against: the topology, the run's seed and time guard, and its
/// index in `[[faults]]` (error paths, its own stream).
pub struct FaultContext<'a> {
    pub topo: &'a Topology,
    pub seed: u64,
    pub max_time: Time,
    pub index: usize,
}

/// The switches' names, in the fabric's order.
fn switches(topo: &Topology) -> Vec<&str> {
    topo.nodes.iter().filter(|n| n.tier.is_some()).map(|n| n.name.as_str()).collect()
}

/// `names` as ranges where they number on (`leaf0-leaf15, spine0-spine7`; `leaf0:up0-leaf0:up7`),
/// at most 12 ranges and then how many in all.
fn ranges(names: &[&str]) -> String {
    // a name's stem and number: "leaf12" is ("leaf", 12); "h-a" has none
    let split = |n: &str| {
        let digits = n.len() - n.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (stem, num) = n.split_at(n.len() - digits);
        num.parse::<u64>().ok().filter(|_| !num.starts_with('0') || num == "0").map(|k| (stem.to_string(), k))
    };
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(String, u64, u64)> = None; // stem, first number, last number
    let close = |run: &Option<(String, u64, u64)>, out: &mut Vec<String>| {
        if let Some((stem, a, b)) = run {
            out.push(if a == b { format!("{stem}{a}") } else { format!("{stem}{a}-{stem}{b}") });
        }
    };
    for &n in names {
        match (split(n), &mut run) {
            (Some((stem, k)), Some((s, _, last))) if *s == stem && k == *last + 1 => *last = k,
            (Some((stem, k)), _) => {
                close(&run, &mut out);
                run = Some((stem, k, k));
            }
            (None, _) => {
                close(&run, &mut out);
                run = None;
                out.push(n.to_string());
            }
        }
    }
    close(&run, &mut out);
    const SHOWN: usize = 12;
    if out.len() > SHOWN {
        format!("{}, ... ({} names in all)", out[..SHOWN].join(", "), names.len())
    } else {
        out.join(", ")
    }
}

impl FaultContext<'_> {
    /// The dotted path of one of this fault's fields.
    pub fn field(&self, key: &str) -> String {
        format!("faults[{}].{key}", self.index)
    }

    /// The links a fault hits: one by name, or a seeded share of a tier.
    pub fn targets(
        &self,
        (link, links, fraction): (&Option<String>, Option<LinkSet>, Option<f64>),
    ) -> Result<Vec<[u32; 2]>, ScenarioError> {
        let topo = self.topo;
        match (link, links) {
            (Some(name), None) => {
                ensure(
                    fraction.is_none(),
                    &self.field("fraction"),
                    fraction.unwrap_or(0.0),
                    "allowed: only with `links`, not with `link`",
                )?;
                let ports = link_ports(topo, name).ok_or_else(|| {
                    // the ports of the node it names, if that node exists; else the switches
                    let node = name.split_once(':').map_or(name.as_str(), |(n, _)| n);
                    let own: Vec<&str> =
                        topo.ports.iter().map(|p| p.name.as_str()).filter(|p| p.split_once(':').is_some_and(|(n, _)| n == node)).collect();
                    let there = if own.is_empty() {
                        let hosts: Vec<&str> = topo.nodes.iter().filter(|n| n.tier.is_none()).map(|n| n.name.as_str()).collect();
                        format!("a port (NODE:PORT) of a host ({}) or a switch ({})", ranges(&hosts), ranges(&switches(topo)))
                    } else {
                        format!("one of {node}'s ports, {}", ranges(&own))
                    };
                    ScenarioError::new(
                        self.field("link"),
                        format!("{name:?}"),
                        format!("allowed: {there} (the ports table of a run lists them)"),
                    )
                })?;
                Ok(vec![ports])
            }
            (None, Some(set)) => {
                let fraction = fraction.ok_or_else(|| {
                    ScenarioError::new(self.field("fraction"), "nothing", "allowed: a fraction in (0, 1] of the `links` tier")
                })?;
                self.pick(set, fraction)
            }
            (Some(_), Some(_)) => {
                Err(ScenarioError::new(self.field("links"), "both `link` and `links`", "allowed: one link, or a share of a tier"))
            }
            (None, None) => Err(ScenarioError::new(
                self.field("link"),
                "nothing",
                "allowed: `link = \"leaf0:up3\"`, or `links = \"leaf_up\"` with `fraction`",
            )),
        }
    }

    /// Every link of the switch named `name` (its ports are `"name:..."`), each as the pair
    /// of its two directions.
    pub fn switch_links(&self, name: &str) -> Result<Vec<[u32; 2]>, ScenarioError> {
        let topo = self.topo;
        let prefix = format!("{name}:");
        let own: Vec<u32> = (0..topo.ports.len() as u32).filter(|&p| topo.ports[p as usize].name.starts_with(&prefix)).collect();
        let is_host = own.iter().any(|&p| topo.ports[p as usize].tier == 0 && topo.ports[p as usize].up);
        ensure(
            !own.is_empty() && !is_host,
            &self.field("switch"),
            format!("{name:?}"),
            format!("allowed: a switch's name as its ports carry it: {}", ranges(&switches(topo))),
        )?;
        Ok(own.into_iter().map(|p| [p, reverse(topo, p).unwrap_or(p)]).collect())
    }

    /// `links` run at `rate` over `period` (both directions), then at their own rate again;
    /// `rate` must be positive and at most each link's rate.
    pub fn degrade(
        &self,
        links: Vec<[u32; 2]>,
        rate: Rate,
        period: (Time, Option<Time>),
        out: &mut Vec<Source>,
    ) -> Result<(), ScenarioError> {
        ensure(rate.0 > 0, &self.field("rate"), rate, "allowed: a positive rate (use link_down for a dead link)")?;
        for (target, ports) in links.into_iter().enumerate() {
            let nominal = Rate(self.topo.ports[ports[0] as usize].rate);
            ensure(
                rate <= nominal,
                &self.field("rate"),
                rate,
                format!("allowed: at most the link's rate ({nominal}): a degraded link is slower"),
            )?;
            let plan = hold(period, Change::Rate(rate.0), Change::NominalRate);
            out.push(Source::new(ports, plan, self.index as u32, target as u32));
        }
        Ok(())
    }

    /// Checks a period: (start, end) in ps.
    pub fn period(&self, w: ActivePeriod) -> Result<(Time, Option<Time>), ScenarioError> {
        if let Some(end) = w.end {
            ensure(end.0 > w.start.0, &self.field("end"), end, format!("allowed: after start ({})", w.start))?;
        }
        Ok((w.start.0, w.end.map(|e| e.0)))
    }

    /// A seeded share of one tier's links: `round(fraction x links)`, at least one.
    pub fn pick(&self, set: LinkSet, fraction: f64) -> Result<Vec<[u32; 2]>, ScenarioError> {
        let topo = self.topo;
        ensure(fraction > 0.0 && fraction <= 1.0, &self.field("fraction"), fraction, "allowed: a fraction in (0, 1]")?;
        let tier = match set {
            LinkSet::Host => 0,
            LinkSet::LeafUp => 1,
            LinkSet::AggUp => 2,
        };
        let mut candidates: Vec<u32> =
            (0..topo.ports.len() as u32).filter(|&p| topo.ports[p as usize].tier == tier && topo.ports[p as usize].up).collect();
        ensure(
            !candidates.is_empty(),
            &self.field("links"),
            format!("{set:?}"),
            "allowed: a link tier this topology has (agg_up needs 3 tiers)",
        )?;
        let count = ((fraction * candidates.len() as f64).round() as usize).clamp(1, candidates.len());
        let mut rng = Rng::stream(self.seed, Stream::Fault, self.index as u64);
        rng.shuffle(&mut candidates);
        Ok(candidates[..count].iter().map(|&p| [p, reverse(topo, p).unwrap_or(p)]).collect())
    }
}

/// Declares the fault kinds, one line each (`Variant => module`).
macro_rules! faults {
    ($($Variant:ident => $module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        crate::registry::tagged_config! {
            /// One `[[faults]]` entry.
            FaultConfig, default "", $($Variant => $module),+
        }

        impl FaultConfig {
            /// When the fault first takes effect.
            pub fn start(&self) -> Duration {
                match self {
                    $(FaultConfig::$Variant(c) => c.start),+
                }
            }

            fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
                match self {
                    $(FaultConfig::$Variant(c) => c.sources(ctx, out)),+
                }
            }
        }
    };
}

faults! {
    LinkDown => link_down,
    SwitchDown => switch_down,
    Flap => flap,
    Degrade => degrade,
    RandomDegrade => random_degrade,
    Delay => delay,
    RandomLoss => random_loss,
}

/// The kinds `[[faults]] kind` accepts.
pub const FAULTS: &[AlgorithmInfo] = FaultConfig::KINDS;

/// Checks the faults against the topology and lays them out on a lazy [`Timeline`].
pub fn timeline(faults: &[FaultConfig], topo: &Topology, seed: u64, max_time: Time) -> Result<Timeline, ScenarioError> {
    let mut sources = Vec::new();
    for (index, f) in faults.iter().enumerate() {
        f.sources(&FaultContext { topo, seed, max_time, index }, &mut sources)?;
    }
    Ok(Timeline::new(sources))
}
