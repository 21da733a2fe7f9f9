//! `link_down`: the link blackholes everything from `start` (until `end`): each direction
//! keeps serializing what it is given, at its rate, into a dead wire, and every packet is
//! lost silently (counted as a drop). This is the *transient* phase. After `detection` plus
//! `reconvergence` the switches remove the link from their routing groups (the *steady*
//! phase): every switch stops using an up-port from which the destination's leaf can no
//! longer be reached, so traffic for a leaf behind a dead spine link is routed around it
//! from the first hop (ARCANE sec. 3.2: "10 ms to exclude a failed cable from a routing
//! group"; PRIME sec. IV-A2). When the link comes back, routing takes it back after the
//! same delay.

use super::{hold, FaultContext, FaultKind, Plan, Source};
use crate::error::ScenarioError;
use crate::faults::link::Change;
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "fault",
    name: "link_down",
    summary: "a link drops everything from start (to end); routing excludes it after detection + reconvergence",
    reference: "ARCANE sec. 3.2, 4.3.3; PRIME sec. IV-A2",
};

fault_kind!(Config {
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
        let period = ctx.period(self.period())?;
        let lag = self.detection.0.saturating_add(self.reconvergence.0);
        down(ctx.targets(self.target())?, period, lag, ctx, out);
        Ok(())
    }
}

/// `links` die over `period`; routing follows each change `lag` later (also `switch_down`).
pub(super) fn down(links: Vec<[u32; 2]>, (start, end): (Time, Option<Time>), lag: Time, ctx: &FaultContext<'_>, out: &mut Vec<Source>) {
    for (target, ports) in links.into_iter().enumerate() {
        // the link (steps 0, 1), then routing adopting its state after the lag (2, 3)
        out.push(Source::new(ports, hold((start, end), Change::Down, Change::Up), ctx.index as u32, target as u32));
        let mut routing = vec![(start.saturating_add(lag), Change::Converge, 2)];
        if let Some(end) = end {
            routing.push((end.saturating_add(lag), Change::Converge, 3));
        }
        out.push(Source::new(ports, Plan::Steps(routing), ctx.index as u32, target as u32));
    }
}
