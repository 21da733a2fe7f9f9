//! `delay`: `extra` propagation latency on the link from `start` (until `end`), for paths of
//! unequal delay (the China Mobile slides' reordering). A wire never reorders: a packet never
//! arrives before one sent earlier on the same link, even when the extra latency ends.

use super::{hold, FaultAction, FaultContext, FaultKind};
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

fault_kind!(Config { extra: Duration });

impl FaultKind for Config {
    fn actions(&self, ctx: &FaultContext<'_>, out: &mut Vec<FaultAction>) -> Result<(), ScenarioError> {
        let period = ctx.period(self.period())?;
        for ports in ctx.targets(self.target())? {
            hold(out, ports, period, Change::ExtraDelay(self.extra.0), Change::ExtraDelay(0));
        }
        Ok(())
    }
}
