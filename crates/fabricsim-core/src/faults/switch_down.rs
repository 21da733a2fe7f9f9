//! `switch_down`: every link of one switch dies from `start` (until `end`), as `link_down` on
//! each of them: a transient phase in which everything put on them is lost, then, after
//! `detection` plus `reconvergence`, the steady phase in which routing avoids the switch
//! (a dead spine: every leaf excludes its up-port to it; ARCANE sec. 3.2, Fig. 8's growing
//! failures). The switch is named as in port names (`"spine3"`, `"leaf0"`, `"agg2"`).

use serde::{Deserialize, Serialize};

use super::{link_down, ActivePeriod, FaultContext, FaultKind, Source};
use crate::error::ScenarioError;
use crate::registry::AlgorithmInfo;
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "switch_down",
    summary: "every link of one switch drops everything from start (to end); routing avoids it after detection + reconvergence",
    reference: "ARCANE sec. 3.2",
};

/// `[[faults]]` parameters (the target is the switch: no `link` or `links`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The switch, by the name its ports carry (`"spine3"`, `"leaf0"`, `"agg2"`).
    #[schemars(example = crate::registry::example("\"spine0\""))]
    pub switch: String,
    /// When the fault begins.
    #[serde(default)]
    pub start: Duration,
    /// When it ends (the link gets back what the fault took); absent: it holds until the run ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Duration>,
    /// Time for the switches to notice a change of the link (its death, its return).
    #[serde(default = "super::d_detection")]
    pub detection: Duration,
    /// Time for routing to converge after detection: `detection + reconvergence` after the change, switches stop
    /// (or resume) using every up-port from which a destination's leaf is no longer (or again) reachable.
    #[serde(default = "super::d_reconvergence")]
    pub reconvergence: Duration,
}

impl FaultKind for Config {
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
        let links = ctx.switch_links(&self.switch)?;
        let period = ctx.period(ActivePeriod { start: self.start, end: self.end })?;
        link_down::down(links, period, self.detection.0.saturating_add(self.reconvergence.0), ctx, out);
        Ok(())
    }
}
