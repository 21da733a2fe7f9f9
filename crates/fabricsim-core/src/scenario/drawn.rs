//! What resolving a scenario counts of a trace drawn as the run goes
//! ([`crate::workload::trace::Arrivals`], `Scenario::draws_as_it_goes`): its messages' memory
//! and packets, over its arrivals as they are drawn, one host's after another, without holding
//! them. Nothing counted here depends on the messages' order (none waits for another).

use super::frame::{packets_error, too_many_packets};
use crate::budget::{self, Tally};
use crate::error::ScenarioError;
use crate::host::TransportModel;
use crate::stats::Keep;
use crate::topology::Topology;
use crate::workload::trace::Arrivals;
use crate::workload::window::Far;

/// The memory the trace's messages need ([`budget::messages`] of them all), or the error of
/// the first in more packets of `payload` bytes than a message may have.
pub(super) fn memory(
    arrivals: &Arrivals,
    topo: &Topology,
    transport: &TransportModel,
    subflows: u32,
    payload: u64,
    keep: &Keep,
) -> Result<u64, ScenarioError> {
    let mut tally = Tally::new(transport, Far::default().shared(), keep);
    let mut too_many = None;
    arrivals.each(|m| {
        if too_many.is_none() && too_many_packets(m, payload) {
            too_many = Some(m.bytes);
        }
        tally.add(m, &[], budget::connections(topo, subflows, m));
    });
    if let Some(bytes) = too_many {
        return Err(packets_error("workload.size".into(), bytes, payload));
    }
    tally.check_connections()?;
    Ok(tally.bytes())
}
