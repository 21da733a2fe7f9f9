//! `flap`: a `link_down` that repeats: down for `down_for`, up for `up_for`, from `start`
//! until `end` (ARCANE sec. 3.2). Routing follows the link with the same lag as `link_down`:
//! at each convergence time it adopts the link's state of that moment.

use super::{FaultAction, FaultContext, FaultKind};
use crate::error::{ensure, ScenarioError};
use crate::faults::link::Change;
use crate::registry::AlgorithmInfo;
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "flap",
    summary: "a link goes down and up periodically",
    reference: "ARCANE sec. 3.2",
};

fault_kind!(Config {
    down_for: Duration,
    up_for: Duration,
    #[serde(default = "super::d_detection")]
    detection: Duration,
    #[serde(default = "super::d_reconvergence")]
    reconvergence: Duration,
});

impl FaultKind for Config {
    fn actions(&self, ctx: &FaultContext<'_>, out: &mut Vec<FaultAction>) -> Result<(), ScenarioError> {
        let all = ctx.targets(self.target())?;
        let (start, end) = ctx.period(self.period())?;
        ensure(self.down_for.0 > 0, &ctx.field("down_for"), self.down_for, "allowed: a positive duration")?;
        ensure(self.up_for.0 > 0, &ctx.field("up_for"), self.up_for, "allowed: a positive duration")?;
        let end = end.unwrap_or(ctx.max_time).min(ctx.max_time);
        let lag = self.detection.0 + self.reconvergence.0;
        for ports in all {
            let mut t = start;
            while t < end {
                out.push(FaultAction { at: t, ports, change: Change::Down });
                out.push(FaultAction { at: t + lag, ports, change: Change::Converge });
                let up = (t + self.down_for.0).min(end);
                out.push(FaultAction { at: up, ports, change: Change::Up });
                out.push(FaultAction { at: up + lag, ports, change: Change::Converge });
                t = up + self.up_for.0;
            }
        }
        Ok(())
    }
}
