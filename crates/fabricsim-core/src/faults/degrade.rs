//! `degrade`: the link runs at `rate` from `start` (until `end`, when its nominal rate
//! returns), in both directions (ARCANE sec. 4.3.2: an uplink reduced to 200 Gb/s).

use super::{FaultContext, FaultKind, Source};
use crate::error::ScenarioError;
use crate::registry::AlgorithmInfo;
use crate::units::Rate;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "degrade",
    summary: "a link runs at a lower rate from start (to end)",
    reference: "ARCANE sec. 4.3.2",
};

fault_kind!(Config {
    /// The rate the link runs at (at most its own).
    #[schemars(example = crate::registry::example("\"200Gbps\""))]
    rate: Rate,
});

impl FaultKind for Config {
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
        let period = ctx.period(self.period())?;
        ctx.degrade(ctx.targets(self.target())?, self.rate, period, out)
    }
}
