//! `random_degrade`: a `fraction` of the links of one tier (`links = "host"`, `"leaf_up"` or
//! `"agg_up"`), chosen by seed, degraded to `rate` (PRIME sec. IV-A2: a share of links loses
//! bandwidth to in-network-computing traffic; ARCANE sec. 4.3.2: 2% of ToR uplinks).

use serde::{Deserialize, Serialize};

use super::{ActivePeriod, FaultContext, FaultKind, LinkSet, Source};
use crate::error::ScenarioError;
use crate::registry::AlgorithmInfo;
use crate::units::{Duration, Rate};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "random_degrade",
    summary: "a seeded fraction of one tier's links runs at a lower rate",
    reference: "PRIME sec. IV-A2; ARCANE sec. 4.3.2",
};

/// `[[faults]]` parameters (the share is required: no single `link`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The tier whose links are drawn from: `"host"`, `"leaf_up"` or `"agg_up"`.
    #[schemars(example = crate::registry::example("\"leaf_up\""))]
    pub links: LinkSet,
    /// The share of them degraded, `round(fraction x links)`, at least one, chosen by seed.
    #[schemars(example = crate::registry::example("0.02"))]
    pub fraction: f64,
    /// The rate they run at (at most their own).
    #[schemars(example = crate::registry::example("\"200Gbps\""))]
    pub rate: Rate,
    /// When the fault begins.
    #[serde(default)]
    pub start: Duration,
    /// When it ends (the link gets back what the fault took); absent: it holds until the run ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Duration>,
}

impl FaultKind for Config {
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
        let period = ctx.period(ActivePeriod { start: self.start, end: self.end })?;
        ctx.degrade(ctx.pick(self.links, self.fraction)?, self.rate, period, out)
    }
}
