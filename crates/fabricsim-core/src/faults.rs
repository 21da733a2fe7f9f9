//! Faults: a timeline of changes to links, `[[faults]]` in a scenario.
//!
//! - `degrade`: the link runs at `rate` from `start` (until `end`, if given), in both
//!   directions (ARCANE sec. 4.3.2: an uplink reduced to 200 Gb/s; PRIME sec. IV-A2).
//! - `link_down`: the link blackholes everything from `start` (until `end`): each direction
//!   keeps serializing what it is given, at its rate, into a dead wire, and every packet is
//!   lost silently (counted as a drop). Routing does not react (the transient phase of a
//!   failure; detection and reconvergence are a later addition).
//!
//! A link is named by either of its ports, as in the results: `"leaf0:up3"` is the link
//! between leaf 0 and spine 3, the same link as `"spine3:down0"`. A name that does not exist
//! is an error before the run.

use serde::{Deserialize, Serialize};

use crate::error::{ensure, ScenarioError};
use crate::lb::AlgorithmInfo;
use crate::tagged;
use crate::time::Time;
use crate::topology::Topology;
use crate::units::{Duration, Rate};

/// One `[[faults]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FaultConfig {
    Degrade(Degrade),
    LinkDown(LinkDown),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Degrade {
    pub link: String,
    pub rate: Rate,
    #[serde(default = "d_start")]
    pub start: Duration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDown {
    pub link: String,
    #[serde(default = "d_start")]
    pub start: Duration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Duration>,
}

fn d_start() -> Duration {
    Duration(0)
}

impl<'de> Deserialize<'de> for FaultConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (kind, rest) = tagged::split_kind(d, "")?;
        Ok(match kind.as_str() {
            "degrade" => FaultConfig::Degrade(tagged::fields(rest)?),
            "link_down" => FaultConfig::LinkDown(tagged::fields(rest)?),
            other => return Err(tagged::unknown_kind(other, &FAULTS.iter().map(|a| a.name).collect::<Vec<_>>())),
        })
    }
}

pub const FAULTS: &[AlgorithmInfo] = &[
    AlgorithmInfo { category: "fault", name: "degrade", summary: "a link runs at a lower rate from start (to end)", reference: "ARCANE sec. 4.3.2; PRIME sec. IV-A2" },
    AlgorithmInfo { category: "fault", name: "link_down", summary: "a link silently drops everything from start (to end)", reference: "ARCANE sec. 3.2, 4.3.3" },
];

/// What a fault event does to both directions of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Set the rate (bit/s).
    Rate(u64),
    /// Back to the link's nominal rate.
    NominalRate,
    Down,
    Up,
}

/// A resolved fault event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultAction {
    pub at: Time,
    pub ports: [u32; 2],
    pub change: Change,
}

/// Both directions of the link named by `name` (either port's name).
fn link_ports(topo: &Topology, name: &str) -> Option<[u32; 2]> {
    let p = topo.port_by_name(name)?;
    let (from, to) = (topo.ports[p as usize].from, topo.ports[p as usize].to);
    let back = topo.ports.iter().position(|q| q.from == to && q.to == from)? as u32;
    Some([p, back])
}

/// Checks the faults against the topology and turns them into timed actions.
pub fn resolve(faults: &[FaultConfig], topo: &Topology) -> Result<Vec<FaultAction>, ScenarioError> {
    let mut out = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        let field = |k: &str| format!("faults[{i}].{k}");
        let (link, start, end) = match f {
            FaultConfig::Degrade(d) => (&d.link, d.start, d.end),
            FaultConfig::LinkDown(d) => (&d.link, d.start, d.end),
        };
        let ports = link_ports(topo, link).ok_or_else(|| {
            ScenarioError::new(
                field("link"),
                format!("{link:?}"),
                format!(
                    "allowed: a port name such as {:?} or {:?} (see the ports table of a run)",
                    topo.ports[topo.hosts() as usize].name,
                    topo.ports.last().map_or("", |p| p.name.as_str())
                ),
            )
        })?;
        if let Some(end) = end {
            ensure(end.0 > start.0, &field("end"), end, format!("allowed: after start ({start})"))?;
        }
        let (on, off) = match f {
            FaultConfig::Degrade(d) => {
                ensure(d.rate.0 > 0, &field("rate"), d.rate, "allowed: a positive rate (use link_down for a dead link)")?;
                (Change::Rate(d.rate.0), Change::NominalRate)
            }
            FaultConfig::LinkDown(_) => (Change::Down, Change::Up),
        };
        out.push(FaultAction { at: start.0, ports, change: on });
        if let Some(end) = end {
            out.push(FaultAction { at: end.0, ports, change: off });
        }
    }
    Ok(out)
}
