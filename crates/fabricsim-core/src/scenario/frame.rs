//! What resolving a scenario makes before its jobs' messages ([`Frame`], [`Given`]) and the
//! checks every message meets: shared by a run's resolve, which lists the messages, and a
//! survey (`survey.rs`), which counts them.

use std::sync::Arc;

use super::{build_topology, MixedConfig, Scenario, DEFAULT_MAX_MEMORY};
use crate::budget::{self, Estimate};
use crate::engine::rng::{Rng, Stream};
use crate::error::{ensure, ScenarioError};
use crate::host::TransportModel;
use crate::lb::LbContext;
use crate::switch::routing::Rule;
use crate::switch::{SwitchContext, SwitchModel};
use crate::time::{serialization, Time};
use crate::topology::Topology;
use crate::units::{Duration, Size};
use crate::workload::trace::{Arrivals, LoadWindow};
use crate::workload::{Hosts, MessageSpec, WorkloadConfig};

/// The fabric and every component's model, the warnings so far and the fabric's part of the
/// estimate, checked against `stop.max_memory`.
pub(crate) struct Frame {
    pub topo: Arc<Topology>,
    pub transport: TransportModel,
    pub switch: SwitchModel,
    pub lb_ctx: LbContext,
    pub warnings: Vec<String>,
    pub need: Estimate,
    pub max_memory: u64,
    pub base_rtt: Time,
    pub bdp_packets: u64,
    pub bdp_bytes: u64,
}

impl Scenario {
    /// Resolves and checks everything but the messages (see [`Scenario::resolve`]).
    pub(crate) fn frame(&self) -> Result<Frame, ScenarioError> {
        let (mtu, header) = self.transport.packet_sizes()?;
        ensure(self.stop.max_time.0 > 0, "stop.max_time", self.stop.max_time, "allowed: a positive duration")?;
        ensure(self.stop.max_events > 0, "stop.max_events", self.stop.max_events, "allowed: a positive count")?;
        if let Some(w) = self.stop.max_wall {
            ensure(w.0 >= 1_000, "stop.max_wall", w, "allowed: at least 1ns")?;
        }

        // refuse a fabric that cannot fit before building it (a 268M-host tree): its graph and
        // tables first, its queues once the BDP that sizes them is known
        let max_memory = self.stop.max_memory.or(Size(DEFAULT_MAX_MEMORY)).0;
        let topo = Arc::new(build_topology(&self.topology, max_memory)?);
        // an event's order key numbers its unit: a node, or one of the run's two duties
        let units = crate::engine::MAX_UNITS - 2;
        ensure(
            topo.nodes.len() <= units,
            "topology",
            format!("{} nodes", topo.nodes.len()),
            format!("allowed: at most {units} hosts and switches"),
        )?;

        // Base RTT: a full data packet over the diameter path and its ACK back.
        let path = topo.diameter_route().hops;
        let one_way = |bytes: u64| -> Time { path.iter().map(|h| serialization(bytes, h.rate) + h.latency).sum::<Time>() };
        let base_rtt = one_way(mtu) + one_way(header);
        let host_rate = topo.host_rate();
        let bdp_bits = host_rate as u128 * base_rtt as u128;
        let bdp_packets = bdp_bits.div_ceil(8 * crate::time::PS_PER_S as u128 * mtu as u128) as u64;
        let bdp_bytes = bdp_packets * mtu;

        let transport = self.transport.resolve(bdp_packets, self.connections())?;
        ensure(
            !(transport.per_pair && self.lb.subflows() > 1),
            "transport.connections",
            "\"per_pair\"",
            "allowed: \"per_message\" with lb = \"mptcp\" (its subflows are connections of their own)",
        )?;
        self.lb.validate()?;
        let up_ports = topo.choices_per_tier();
        let writes_mp_ev = self.lb.writes_mp_ev();
        let slices = topo.slices();
        let pfc_headroom = match self.switch.overflow {
            crate::switch::Overflow::Pfc => {
                let back = topo.ports.iter().zip(topo.reverse_ports()).map(|(p, b)| ((p.rate, p.delay), &topo.ports[b as usize]));
                back.map(|(fwd, b)| crate::switch::pfc::config::auto_headroom(mtu, fwd, (b.rate, b.delay))).max().unwrap_or(0)
            }
            _ => 0,
        };
        let ctx = SwitchContext { bdp_packets, mtu, header, up_ports: &up_ports, writes_mp_ev, slices: &slices, pfc_headroom };
        let switch = self.switch.resolve(&ctx)?;
        let mut warnings = Vec::new();
        if writes_mp_ev {
            for (tier, rule) in switch.rules.iter().enumerate() {
                if *rule != Rule::MpEv {
                    warnings.push(format!(
                        "lb.kind = {:?} writes a multi-part EV (one up-port index per tier), but switch.routing makes tier-{tier} switches use {:?}: its round robin is lost; use routing = \"auto\" or \"mp_ev\"",
                        self.lb.name(),
                        rule.name()
                    ));
                }
            }
        }
        let rto_field = if transport.rto_adaptive { "transport.rto_min" } else { "transport.rto" };
        // a fixed RTO below the base RTT resends every packet before its ACK can return: the
        // run would spend its whole budget on spurious retransmits (often a unit slip in
        // link_latency, "1ms" for "1us"); an estimated RTO backs off and recovers
        let switch_latency = |p: &crate::topology::PortInfo| if p.to >= topo.hosts() { self.topology.shared().switch_latency.0 } else { 0 };
        let longest = topo.ports.iter().map(|p| p.delay - switch_latency(p)).max().unwrap_or(0);
        let slip = if longest >= 100 * crate::time::PS_PER_US {
            format!(", or a shorter topology.link_latency ({} per link: a datacenter link is about 1us)", Duration(longest))
        } else {
            String::new()
        };
        ensure(
            transport.rto_adaptive || transport.rto >= base_rtt,
            "transport.rto",
            Duration(transport.rto),
            format!(
                "allowed: at least the fabric's base RTT ({:.3}us), else every packet times out before its ACK returns and is sent again; a larger transport.rto, transport.rto = \"adaptive\"{slip}",
                base_rtt as f64 / 1e6
            ),
        )?;
        if transport.rto < base_rtt {
            warnings.push(format!(
                "{rto_field} ({}) is below the fabric's base RTT ({:.3}us): packets time out before their ACK can return, and flows may never finish",
                Duration(transport.rto),
                base_rtt as f64 / 1e6
            ));
        }
        for (i, f) in self.faults.iter().enumerate() {
            if let crate::faults::FaultConfig::Delay(d) = f {
                if !transport.rto_adaptive && transport.rto < base_rtt + d.extra.0 {
                    warnings.push(format!(
                        "transport.rto ({}) is below the base RTT through the link faults[{i}] delays ({:.3}us): every packet sent on it times out and is resent spuriously; transport.rto = \"adaptive\" estimates it",
                        Duration(transport.rto),
                        (base_rtt + d.extra.0) as f64 / 1e6
                    ));
                }
            }
            if f.start().0 >= self.stop.max_time.0 {
                warnings.push(format!(
                    "faults[{i}] starts at {}, at or after stop.max_time ({}): it never takes effect",
                    f.start(),
                    self.stop.max_time
                ));
            }
        }
        let lb_ctx = LbContext {
            bdp_packets,
            base_rtt,
            mtu,
            mp_ev: switch.mp_ev.clone(),
            kmin_packets: switch.ecn.map_or(switch.buffer, |(kmin, _, _)| kmin).div_ceil(mtu),
            buffer_packets: switch.buffer.div_ceil(mtu),
            packet_time: serialization(mtu, host_rate),
        };
        // refuse what cannot fit before making anything more: the fabric before any workload
        // is generated, then the messages
        let need = Estimate { fabric: budget::fabric(&topo.size(), &switch, mtu, bdp_packets), ..Estimate::default() };
        budget::check(&need, max_memory)?;
        Ok(Frame { topo, transport, switch, lb_ctx, warnings, need, max_memory, base_rtt, bdp_packets, bdp_bytes })
    }
}

/// The `[workload]`'s messages, as given (a run's jobs come after them).
pub(crate) struct Given {
    pub workload: Option<WorkloadConfig>,
    pub messages: Vec<MessageSpec>,
    /// What each waits for.
    pub lists: Vec<Vec<u32>>,
    /// With a trace workload: its window and the load its messages offer.
    pub load_window: Option<LoadWindow>,
    /// A trace drawn as the run goes ([`Scenario::draws_as_it_goes`]): its messages are these
    /// arrivals, and `messages` is empty.
    pub arrivals: Option<Arrivals>,
}

impl Scenario {
    /// The `[workload]`'s messages on `topo` (`open`: a session's, which has none unless given).
    pub(crate) fn given(&self, topo: &Topology, open: bool) -> Result<Given, ScenarioError> {
        let workload = if open { self.workload.clone() } else { self.workload() };
        let mut rng = Rng::stream(self.seed, Stream::Workload, 0);
        let hosts = Hosts { count: topo.gpus(), rate: topo.host_rate() };
        let mut arrivals = None;
        let (messages, lists) = match &workload {
            Some(WorkloadConfig::Trace(t)) if self.draws_as_it_goes(topo, open) => {
                arrivals = Some(t.arrivals(&hosts, &mut rng)?);
                (Vec::new(), Vec::new())
            }
            Some(w) => {
                let m = w.messages(&hosts, &mut rng)?;
                let d = w.deps()?;
                let lists: Vec<Vec<u32>> = (0..m.len()).map(|i| d.of(i).to_vec()).collect();
                (m, lists)
            }
            None => (Vec::new(), Vec::new()),
        };
        let load_window = match &workload {
            Some(WorkloadConfig::Trace(t)) => Some(match &arrivals {
                Some(a) => t.window_of(a.bytes, a.count, &hosts),
                None => t.window(&messages, &hosts),
            }),
            _ => None,
        };
        Ok(Given { workload, messages, lists, load_window, arrivals })
    }

    /// Whether a trace `[workload]` is drawn as the run goes (`sim::generate`) rather than
    /// made whole before the first event: in a closed run (not a session's), with no jobs
    /// beside it and no `[mixed]` share (drawn over the run's every message), on a fabric that
    /// does not rewrite messages (a rail-only fabric's relays, a host's NIC ports). Either way
    /// the run is the same, to the picosecond.
    pub(crate) fn draws_as_it_goes(&self, topo: &Topology, open: bool) -> bool {
        !open && self.jobs.is_empty() && self.mixed.is_none() && topo.tables.split().is_none() && topo.planes() == 1
    }
}

impl MixedConfig {
    /// Its share and class, against the switches' `classes`.
    pub(crate) fn check(&self, classes: u32) -> Result<(), ScenarioError> {
        ensure(self.share > 0.0 && self.share <= 1.0, "mixed.share", self.share, "allowed: a fraction in (0, 1]")?;
        ensure(self.class < classes, "mixed.class", self.class, format!("allowed: a class below switch.classes ({classes})"))
    }
}

/// Where message `i` (of job `job`, after the `[workload]`'s `given` messages) had its field
/// `k` written, for errors.
pub(crate) fn message_field(i: usize, k: &str, job: u32, given: usize, workload: Option<&WorkloadConfig>) -> String {
    match workload {
        _ if i >= given => format!("jobs[{job}].{k}"),
        Some(w) if k == "size" => w.size_field(i),
        Some(WorkloadConfig::Flows(_)) | None => format!("workload.flows[{i}].{k}"),
        Some(_) => format!("workload.{k}"),
    }
}

/// Whether `m` needs more packets of `payload` bytes than a 32-bit PSN counts.
#[inline]
pub(crate) fn too_many_packets(m: &MessageSpec, payload: u64) -> bool {
    m.bytes.div_ceil(payload) > u32::MAX as u64
}

/// The error of a message of `bytes` in too many packets ([`too_many_packets`]), at `field`.
pub(crate) fn packets_error(field: String, bytes: u64, payload: u64) -> ScenarioError {
    let packets = bytes.div_ceil(payload);
    ScenarioError::new(
        field,
        format!("{bytes} B in {packets} packets of {payload} B payload"),
        format!("allowed: at most {} packets per message (a larger mtu, or a smaller size)", u32::MAX),
    )
}

/// The error of a message in class `class` at `field`, where the switches have `classes`.
pub(crate) fn class_error(field: String, class: u8, classes: u32) -> ScenarioError {
    ScenarioError::new(field, class, format!("allowed: a class below switch.classes ({classes})"))
}

/// Refuses more messages than a run may have.
pub(crate) fn check_count(n: usize) -> Result<(), ScenarioError> {
    ensure(
        n <= crate::engine::MAX_MESSAGES,
        "workload",
        format!("{n} messages"),
        format!("allowed: at most {} messages in a run", crate::engine::MAX_MESSAGES),
    )
}
