//! A workload as the jobs' bounds read it ([`Plan`]): its messages, what each holds while it
//! is sent (its NIC, its scale-up port, or nothing shared) and for how long.

use super::ideal::{ideal_fct, smallest_packet, wire_time};
use super::least::connections;
use crate::host::TransportModel;
use crate::time::{serialization, Time};
use crate::topology::Routes;
use crate::workload::collective::{Lane, Tag};
use crate::workload::job::JobInfo;
use crate::workload::{Deps, MessageSpec};

/// A workload as the jobs' bounds read it, before any run: its messages (hosts by leaf slot,
/// as a run's model holds them), what they wait for, their tags and jobs.
pub struct Plan<'a> {
    pub routes: &'a Routes,
    pub transport: &'a TransportModel,
    pub specs: &'a [MessageSpec],
    /// The scenario's subflows a message (`lb.subflows()`): its connections over the fabric.
    pub subflows: u32,
    pub deps: &'a Deps,
    pub tags: &'a [Tag],
    pub jobs: &'a [JobInfo],
}

impl Plan<'_> {
    /// Message `i`'s connections as the run builds them ([`connections`]).
    pub(super) fn count(&self, i: usize) -> u32 {
        connections(self.routes.topology(), self.subflows, &self.specs[i])
    }
    /// What posting message `i` costs its host before its NIC may send it
    /// (`transport.message_overhead`; a message that crosses the fabric only).
    pub(super) fn posting(&self, i: usize) -> Time {
        match self.transport.posting {
            Some((o, _)) if !self.specs[i].is_compute() && !self.on_scale_up(i) => o,
            _ => 0,
        }
    }
    /// Whether message `i` crosses its server's scale-up network (`Message::on_scale_up`).
    pub(super) fn on_scale_up(&self, i: usize) -> bool {
        let m = &self.specs[i];
        !m.is_compute() && self.routes.topology().scale_up_between(m.src, m.dst).is_some()
    }
    /// What message `i` holds while it is sent: its sender's NIC, its scale-up port, or
    /// nothing shared (a compute task, a leg out of a scale-up switch, or any message of a
    /// training job).
    pub(super) fn lane(&self, i: usize) -> Lane {
        let job = self.tags[i].job;
        match &self.specs[i] {
            _ if job != Tag::NONE.job && self.jobs[job as usize].training() => Lane::Alone,
            m if m.is_compute() || m.via.is_out_of_switch() => Lane::Alone,
            _ if self.on_scale_up(i) => Lane::ScaleUp,
            _ => Lane::Nic,
        }
    }
    /// How long message `i` holds its sender's NIC (its packets back to back) or its port on
    /// the scale-up network.
    pub(super) fn wire(&self, i: usize) -> Time {
        let (m, topo) = (&self.specs[i], self.routes.topology());
        match topo.scale_up_between(m.src, m.dst) {
            Some(up) => serialization(m.bytes, up.rate),
            None => wire_time(m.bytes, self.transport.mtu, self.transport.header, self.count(i), topo.host_rate()),
        }
    }
    /// The least message `i` (ideal FCT `fct`, holding its lane for `wire`) takes after its
    /// last byte left: on a NIC, its smallest packet alone on its path at whatever pace the
    /// NIC sends (one packet's flight cached in `flight` by path and size: a run has few of
    /// either); a scale-up transfer is one piece, what follows its port's.
    pub(super) fn tail(&self, i: usize, fct: Time, wire: Time, flight: &mut Flights) -> Time {
        if self.lane(i) != Lane::Nic {
            return fct.saturating_sub(wire);
        }
        let (m, t) = (&self.specs[i], self.transport);
        let rate = self.routes.topology().host_rate();
        let smallest = smallest_packet(m.bytes, t.mtu, t.header, self.count(i));
        *flight.entry((self.routes.ideal_key(m.src, m.dst), smallest)).or_insert_with(|| {
            let hops = self.routes.ideal_route(m.src, m.dst).hops;
            ideal_fct(&hops, &[smallest], &[0]).saturating_sub(serialization(smallest, rate))
        })
    }
}

/// One packet's flight after it left its NIC, by route ([`crate::topology::Routes::ideal_key`])
/// and size.
pub(super) type Flights = rustc_hash::FxHashMap<(crate::topology::RouteKey, u64), Time>;
