//! `flap`: a `link_down` that repeats: down for `down_for`, up for `up_for`, from `start`
//! until `end` (ARCANE sec. 3.2). Routing follows the link with the same lag as `link_down`:
//! at each convergence time it adopts the link's state of that moment.

use super::{FaultContext, FaultKind, Plan, Source};
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "flap",
    summary: "a link goes down and up periodically",
    reference: "ARCANE sec. 3.2",
};

fault_kind!(Config {
    /// How long the link is down each time.
    #[schemars(example = crate::registry::example("\"50us\""))]
    down_for: Duration,
    /// How long it is up between.
    #[schemars(example = crate::registry::example("\"50us\""))]
    up_for: Duration,
    /// Time for the switches to notice a change of the link (its death, its return).
    #[serde(default = "super::d_detection")]
    detection: Duration,
    /// Time for routing to converge after detection: `detection + reconvergence` after the change, switches stop
    /// (or resume) using every up-port from which a destination's leaf is no longer (or again) reachable.
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
