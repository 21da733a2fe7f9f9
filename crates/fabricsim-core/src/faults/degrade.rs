//! `degrade`: the link runs at `rate` from `start` (until `end`, when its nominal rate
//! returns), in both directions (ARCANE sec. 4.3.2: an uplink reduced to 200 Gb/s).

use super::{hold, FaultContext, FaultKind, Source};
use crate::error::{ensure, ScenarioError};
use crate::faults::link::Change;
use crate::registry::AlgorithmInfo;
use crate::units::Rate;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "degrade",
    summary: "a link runs at a lower rate from start (to end)",
    reference: "ARCANE sec. 4.3.2",
};

fault_kind!(Config { rate: Rate });

impl FaultKind for Config {
    fn sources(&self, ctx: &FaultContext<'_>, out: &mut Vec<Source>) -> Result<(), ScenarioError> {
        ensure(self.rate.0 > 0, &ctx.field("rate"), self.rate, "allowed: a positive rate (use link_down for a dead link)")?;
        let period = ctx.period(self.period())?;
        for (target, ports) in ctx.targets(self.target())?.into_iter().enumerate() {
            let nominal = ctx.topo.ports[ports[0] as usize].rate;
            ensure(self.rate.0 <= nominal, &ctx.field("rate"), self.rate, format!("allowed: at most the link's rate ({}): a degraded link is slower", Rate(nominal)))?;
            out.push(Source::new(ports, hold(period, Change::Rate(self.rate.0), Change::NominalRate), ctx.index as u32, target as u32));
        }
        Ok(())
    }
}
