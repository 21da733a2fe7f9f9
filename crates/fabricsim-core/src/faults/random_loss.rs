//! `random_loss`: each packet put on the link is lost with `probability` (bit errors, a bad
//! optic), from `start` (until `end`). Each link direction draws its losses from its own
//! stream.

use super::{hold, FaultContext, FaultKind, Source};
use crate::error::{ensure, ScenarioError};
use crate::faults::link::Change;
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "random_loss",
    summary: "each packet on a link is lost with a probability",
    reference: "",
};

fault_kind!(Config {
    /// Each packet put on the link is lost with this probability, in [0, 1].
    #[schemars(example = crate::registry::example("0.01"))]
    probability: f64,
});

impl FaultKind for Config {
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
        let p = self.probability;
        ensure((0.0..=1.0).contains(&p), &ctx.field("probability"), p, "allowed: a probability in [0, 1]")?;
        let period = ctx.period(self.period())?;
        for (target, ports) in ctx.targets(self.target())?.into_iter().enumerate() {
            out.push(Source::new(ports, hold(period, Change::Loss(p), Change::Loss(0.0)), ctx.index as u32, target as u32));
        }
        Ok(())
    }
}
