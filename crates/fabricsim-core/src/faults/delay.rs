//! `delay`: `extra` propagation latency on the link from `start` (until `end`), for paths of
//! unequal delay (the China Mobile slides' reordering). A wire never reorders: a packet never
//! arrives before one sent earlier on the same link, even when the extra latency ends.

use super::{hold, FaultContext, FaultKind, Source};
use crate::error::ScenarioError;
use crate::faults::link::Change;
use crate::registry::AlgorithmInfo;
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "delay",
    summary: "extra latency on a link, for paths of unequal delay",
    reference: "China Mobile slides (reordering)",
};

fault_kind!(Config {
    /// Propagation latency added; a wire never reorders what it carries.
    #[schemars(example = crate::registry::example("\"2us\""))]
    extra: Duration,
});

impl FaultKind for Config {
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
        let period = ctx.period(self.period())?;
        for (target, ports) in ctx.targets(self.target())?.into_iter().enumerate() {
            out.push(Source::new(ports, hold(period, Change::ExtraDelay(self.extra.0), Change::ExtraDelay(0)), ctx.index as u32, target as u32));
        }
        Ok(())
    }
}
