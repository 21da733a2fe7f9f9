//! `switch_down`: every link of one switch dies from `start` (until `end`), as `link_down` on
//! each of them: a transient phase in which everything put on them is lost, then, after
//! `detection` plus `reconvergence`, the steady phase in which routing avoids the switch
//! (a dead spine: every leaf excludes its up-port to it; ARCANE sec. 3.2, Fig. 8's growing
//! failures). The switch is named as in port names (`"spine3"`, `"leaf0"`, `"agg2"`).

use serde::{Deserialize, Serialize};

use super::{link_down, ActivePeriod, FaultContext, FaultKind, Source};
use crate::error::ScenarioError;
use crate::registry::{AlgorithmInfo, Param};
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "switch_down",
    summary: "every link of one switch drops everything from start (to end); routing avoids it after detection + reconvergence",
    reference: "ARCANE sec. 3.2",
};

/// Its `[[faults]]` parameters (docs/scenario.md's table is generated from them).
pub const PARAMS: &[Param] = &[
    Param::required("switch", "The switch, by the name its ports carry (`\"spine3\"`, `\"leaf0\"`, `\"agg2\"`).", "\"spine0\""),
    super::START,
    super::END,
    super::DETECTION,
    super::RECONVERGENCE,
];

/// `[[faults]]` parameters (the target is the switch: no `link` or `links`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The switch, by the name its ports carry (`"spine3"`).
    pub switch: String,
    #[serde(default)]
    pub start: Duration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Duration>,
    /// Time for the switches to notice the failure.
    #[serde(default = "super::d_detection")]
    pub detection: Duration,
    /// Time for routing to converge after detection.
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
