//! `flap`: a `link_down` that repeats: down for `down_for`, up for `up_for`, from `start`
//! until `end` (ARCANE sec. 3.2). Routing follows the link with the same lag as `link_down`:
//! at each convergence time it adopts the link's state of that moment.

use super::{FaultContext, FaultKind, Plan, Source};
use crate::error::{ensure, ScenarioError};
use crate::registry::{AlgorithmInfo, Param};
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "flap",
    summary: "a link goes down and up periodically",
    reference: "ARCANE sec. 3.2",
};

/// Its `[[faults]]` parameters (docs/scenario.md's table is generated from them).
pub const PARAMS: &[Param] = &[
    super::LINK,
    super::LINKS,
    super::FRACTION,
    super::START,
    Param::new("end", "When the flapping stops; absent: at `stop.max_time`."),
    Param::required("down_for", "How long the link is down each time.", "\"50us\""),
    Param::required("up_for", "How long it is up between.", "\"50us\""),
    super::DETECTION,
    super::RECONVERGENCE,
];

fault_kind!(Config {
    down_for: Duration,
    up_for: Duration,
    #[serde(default = "super::d_detection")]
    detection: Duration,
    #[serde(default = "super::d_reconvergence")]
    reconvergence: Duration,
});

impl FaultKind for Config {
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
        let all = ctx.targets(self.target())?;
        let (start, end) = ctx.period(self.period())?;
        ensure(self.down_for.0 > 0, &ctx.field("down_for"), self.down_for, "allowed: a positive duration")?;
        ensure(self.up_for.0 > 0, &ctx.field("up_for"), self.up_for, "allowed: a positive duration")?;
        let end = end.unwrap_or(ctx.max_time).min(ctx.max_time);
        let lag = self.detection.0.saturating_add(self.reconvergence.0);
        for (target, ports) in all.into_iter().enumerate() {
            // the link, and routing following it with the lag: both produced lazily
            for routing in [None, Some(lag)] {
                let plan = Plan::Flap { start, down_for: self.down_for.0, up_for: self.up_for.0, end, routing };
                out.push(Source::new(ports, plan, ctx.index as u32, target as u32));
            }
        }
        Ok(())
    }
}
