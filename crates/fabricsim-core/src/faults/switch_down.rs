//! `switch_down`: every link of one switch dies from `start` (until `end`), as `link_down` on
//! each of them: a transient phase in which everything put on them is lost, then, after
//! `detection` plus `reconvergence`, the steady phase in which routing avoids the switch
//! (a dead spine: every leaf excludes its up-port to it; ARCANE sec. 3.2, Fig. 8's growing
//! failures). The switch is named as in port names (`"spine3"`, `"leaf0"`, `"agg2"`).

use super::{link_down, FaultContext, FaultKind, Source};
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "switch_down",
    summary: "every link of one switch drops everything from start (to end); routing avoids it after detection + reconvergence",
    reference: "ARCANE sec. 3.2",
};

fault_kind!(Config {
    /// The switch, by the name its ports carry (`"spine3"`).
    #[serde(default)]
    switch: String,
    /// Time for the switches to notice the failure.
    #[serde(default = "super::d_detection")]
    detection: Duration,
    /// Time for routing to converge after detection.
    #[serde(default = "super::d_reconvergence")]
    reconvergence: Duration,
});

impl FaultKind for Config {
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
        let (link, links, fraction) = self.target();
        ensure(
            link.is_none() && links.is_none() && fraction.is_none(),
            &ctx.field("link"),
            "a link target",
            "allowed: only `switch` for switch_down",
        )?;
        let links = ctx.switch_links(&self.switch)?;
        let period = ctx.period(self.period())?;
        link_down::down(links, period, self.detection.0.saturating_add(self.reconvergence.0), ctx, out);
        Ok(())
    }
}
