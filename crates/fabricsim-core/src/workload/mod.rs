//! Workloads: who sends how much to whom, and when. One file per kind, each with its
//! parameters (`Config`, each field described in its doc comment) and the messages it makes ([`Workload`]); one
//! line per kind in the list below; what they share lives in `support/`.

use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::time::Time;
use serde::{Deserialize, Serialize};

use crate::units::{Duration, Size};
pub use deps::Deps;

pub mod collective;
mod support;
pub use support::{deps, job, making, relay, stripe, window};
pub mod training;

/// One message as the core runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageSpec {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start: Time,
    /// Data class at the switches.
    pub class: u8,
    /// How it travels: by the load balancer, pinned to one path, or through its server's
    /// scale-up switch (NVLink SHARP's legs).
    pub via: Via,
    /// With dependencies ([`Deps`]): the time between the last of them completing and this
    /// message's release (compute time).
    pub delay: Time,
    /// The CPU of its source host its `delay` runs on, one task at a time (a GOAL schedule's
    /// `cpu N`; the host NIC's `claim` keeps the CPU's time); `None`: its delay overlaps anything.
    pub cpu: Option<u16>,
    /// The queue pair of its (source, destination, class) it goes on under
    /// `transport.connections = "per_pair"`: a collective's channel (NCCL runs each channel
    /// on its own queue pairs), and with `qps` above 1 the channel's queue pair it takes in
    /// turn ([`collective::QpCycle`]).
    pub qp: u16,
}

impl AsRef<MessageSpec> for MessageSpec {
    fn as_ref(&self) -> &MessageSpec {
        self
    }
}

impl MessageSpec {
    /// A compute task (a training job's): a rank's message to itself with no bytes, done when
    /// released (its `delay` is the computation).
    #[inline]
    pub fn is_compute(&self) -> bool {
        self.src == self.dst && self.bytes == 0
    }

    /// The message as the compute-only schedule takes it (`compute_only_ps`): in no time, its
    /// NCCL latencies too (a message's delay is its launch's base latency or its step's); a
    /// compute task keeps its delay, the computation.
    pub fn taking_no_time(&self) -> MessageSpec {
        if self.is_compute() {
            *self
        } else {
            MessageSpec { delay: 0, ..*self }
        }
    }

    /// A message with no delay, not pinned.
    pub fn new(src: u32, dst: u32, bytes: u64, start: Time, class: u8) -> MessageSpec {
        MessageSpec { src, dst, bytes, start, class, via: Via::Lb, delay: 0, cpu: None, qp: 0 }
    }

    /// The message with its hosts numbered as the engine numbers them (by leaf slot: the same
    /// ids, unless `topology.rails`).
    pub fn on_slots(&self, topo: &crate::topology::Topology) -> MessageSpec {
        if topo.hosts.node_of.is_empty() {
            *self
        } else {
            MessageSpec { src: topo.slot(self.src), dst: topo.slot(self.dst), ..*self }
        }
    }

    /// Pinned to one path (ECMP) whatever the scenario's load balancer (`[mixed]`).
    #[inline]
    pub fn pinned(&self) -> bool {
        self.via == Via::Pinned
    }
}

/// How a message travels ([`MessageSpec::via`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Via {
    /// Over the fabric by the scenario's load balancer; on a scale-up network from its
    /// source's port to its destination's.
    #[default]
    Lb,
    /// Over the fabric on one path (ECMP) whatever the scenario's load balancer (`[mixed]`).
    Pinned,
    /// Into its server's scale-up switch, which reduces or multicasts it (NVLink SHARP): it
    /// holds its source's port and no destination port; its destination (the GPU the switch
    /// works for) counts it when its last bit is in (`host::nic::scale_up`).
    IntoSwitch,
    /// Out of the switch (a reduction's result, a multicast's copy): it holds its destination's
    /// port and no source port.
    OutOfSwitch,
    /// [`Via::IntoSwitch`] cutting through ([`Pass::Through`]).
    IntoSwitchThrough,
    /// [`Via::OutOfSwitch`] cutting through ([`Pass::Through`]).
    OutOfSwitchThrough,
}

/// When a leg of a scale-up switch ([`Via::IntoSwitch`], [`Via::OutOfSwitch`]) may go: once
/// what it waits for is done, or as the legs it waits for pass through the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Once every message it waits for is done (their last bits in).
    Whole,
    /// Cut through: once the first bit of every leg it waits for is through the switch (at
    /// its destination's port, or, a leg into the switch, at the switch) the switch passes
    /// their bytes on as they come: a reduction's result as its inputs arrive, a store's
    /// bytes as the result's, a multicast's copies as the store's. Every leg it waits for is
    /// a leg of the switch, and none is slower than it (all run at the ports' one rate), so
    /// it never overtakes them (`host::nic::scale_up`).
    Through,
}

impl Via {
    /// A leg into the switch that goes as `pass` says.
    pub fn into_switch(pass: Pass) -> Via {
        match pass {
            Pass::Whole => Via::IntoSwitch,
            Pass::Through => Via::IntoSwitchThrough,
        }
    }
    /// A leg out of the switch that goes as `pass` says.
    pub fn out_of_switch(pass: Pass) -> Via {
        match pass {
            Pass::Whole => Via::OutOfSwitch,
            Pass::Through => Via::OutOfSwitchThrough,
        }
    }
    /// A leg of a scale-up switch that cuts through ([`Pass::Through`]).
    #[inline]
    pub fn through(self) -> bool {
        matches!(self, Via::IntoSwitchThrough | Via::OutOfSwitchThrough)
    }
    /// A leg into or out of a scale-up switch.
    #[inline]
    pub fn switch_leg(self) -> bool {
        self.is_into_switch() || self.is_out_of_switch()
    }
    /// A leg into a scale-up switch.
    #[inline]
    pub fn is_into_switch(self) -> bool {
        matches!(self, Via::IntoSwitch | Via::IntoSwitchThrough)
    }
    /// A leg out of a scale-up switch.
    #[inline]
    pub fn is_out_of_switch(self) -> bool {
        matches!(self, Via::OutOfSwitch | Via::OutOfSwitchThrough)
    }
}

/// The hosts a workload runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hosts {
    pub count: u32,
    /// Host link rate, bit/s.
    pub rate: u64,
}

impl Hosts {
    /// `count` hosts with 400 Gb/s links.
    pub fn new(count: u32) -> Hosts {
        Hosts { count, rate: 400_000_000_000 }
    }
}

/// What a workload kind's `Config` provides.
pub trait Workload {
    /// The messages on the hosts `at` (seeded draws from the workload stream).
    fn messages(&self, at: &Hosts, rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError>;
}

/// Declares the workload kinds, one line each (`Variant => module`).
macro_rules! workloads {
    ($($Variant:ident => $module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        crate::registry::tagged_config! {
            /// The `[workload]` table.
            WorkloadConfig, default "permutation", $($Variant => $module),+
        }

        impl WorkloadConfig {
            /// The field that sets the size of message `i`.
            pub fn size_field(&self, i: usize) -> String {
                match self {
                    WorkloadConfig::Flows(_) => format!("workload.flows[{i}].size"),
                    _ => "workload.size".into(),
                }
            }

            /// What the messages of [`WorkloadConfig::messages`] wait for (only a flow list
            /// has dependencies).
            pub fn deps(&self) -> Result<Deps, ScenarioError> {
                match self {
                    WorkloadConfig::Flows(c) => c.deps(),
                    _ => Ok(Deps::default()),
                }
            }

            /// The messages of this workload on the hosts `at`.
            pub fn messages(&self, at: &Hosts, rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
                match self {
                    $(WorkloadConfig::$Variant(c) => c.messages(at, rng)),+
                }
            }
        }
    };
}

workloads! {
    Permutation => permutation,
    Tornado => tornado,
    Incast => incast,
    Flows => flows,
    Trace => trace,
}

/// The kinds `[workload] kind` accepts.
pub const WORKLOADS: &[AlgorithmInfo] = WorkloadConfig::KINDS;

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::Permutation(permutation::Config::default())
    }
}

/// The parameters of the kinds whose messages all have the same size and start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Uniform {
    /// Every message's size.
    #[serde(default = "d_size")]
    pub size: Size,
    /// When the messages start (a trace: when arrivals begin).
    #[serde(default)]
    pub start: Duration,
    /// The messages' data class, below `switch.classes`.
    #[serde(default)]
    pub class: u8,
}

impl Default for Uniform {
    fn default() -> Self {
        Uniform { size: d_size(), start: Duration(0), class: 0 }
    }
}

fn d_size() -> Size {
    Size(8 << 20)
}

fn check_size(field: &str, size: Size) -> Result<u64, ScenarioError> {
    ensure(size.0 > 0, field, size, "allowed: a positive size")?;
    Ok(size.0)
}

/// The warning for a workload whose compute tasks all take no time: it ends as if its ranks
/// never computed (issue 61: a Chakra trace of compute nodes without a duration finished in 0 us
/// without a word).
pub fn costless_compute(messages: &[MessageSpec]) -> Option<String> {
    let computing = messages.iter().filter(|m| m.is_compute()).count();
    (computing > 0 && messages.iter().all(|m| !m.is_compute() || m.delay == 0)).then(|| {
        format!(
            "workload: its {computing} compute tasks all take no time (delay 0): the trace's computation costs nothing; give them durations (a Chakra node's duration_micros, or num_ops with workload.gpu_tflops; a GOAL calc's time)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn a_message_spec_takes_40_bytes() {
        // every message of a run holds one (a Llama 3 405B step on 8 192 GPUs: tens of millions)
        assert_eq!(std::mem::size_of::<Via>(), 1);
        assert_eq!(std::mem::size_of::<MessageSpec>(), 40);
    }

    #[test]
    fn permutation_is_a_derangement_and_seeded() {
        let cfg = WorkloadConfig::default();
        let a = cfg.messages(&Hosts::new(128), &mut Rng::stream(1, Stream::Workload, 0)).unwrap();
        let b = cfg.messages(&Hosts::new(128), &mut Rng::stream(1, Stream::Workload, 0)).unwrap();
        let c = cfg.messages(&Hosts::new(128), &mut Rng::stream(2, Stream::Workload, 0)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut dsts: Vec<u32> = a.iter().map(|f| f.dst).collect();
        assert!(a.iter().all(|f| f.src != f.dst));
        dsts.sort_unstable();
        assert_eq!(dsts, (0..128).collect::<Vec<_>>());
    }

    #[test]
    fn tornado_and_incast_shapes() {
        let mut rng = Rng::stream(1, Stream::Workload, 0);
        let t = WorkloadConfig::Tornado(tornado::Config(Uniform { size: Size(1), start: Duration(0), class: 0 }))
            .messages(&Hosts::new(8), &mut rng)
            .unwrap();
        assert_eq!(t.iter().map(|f| f.dst).collect::<Vec<_>>(), vec![4, 5, 6, 7, 0, 1, 2, 3]);
        let i = WorkloadConfig::Incast(incast::Config { senders: 5, receiver: 3, size: Size(1), start: Duration(0), class: 0 })
            .messages(&Hosts::new(16), &mut rng)
            .unwrap();
        assert_eq!(i.len(), 5);
        assert!(i.iter().all(|f| f.dst == 3 && f.src != 3));
    }

    #[test]
    fn flows_to_missing_hosts_are_rejected() {
        let cfg = WorkloadConfig::Flows(flows::Config {
            flows: vec![flows::FlowEntry {
                src: 0,
                dst: 200,
                size: Size(10),
                start: Duration(0),
                class: 0,
                id: None,
                after: vec![],
                delay: Duration(0),
                cpu: None,
            }],
            ..Default::default()
        });
        let e = cfg.messages(&Hosts::new(128), &mut Rng::stream(1, Stream::Workload, 0)).unwrap_err();
        assert_eq!(e.field, "workload.flows[0].dst");
        assert!(e.message.contains("200") && e.message.contains("from 0 to 127"), "{e}");
    }
}
