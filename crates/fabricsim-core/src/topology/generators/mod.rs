//! The topology generators (`[topology] kind`), one file each: a generator checks its own
//! parameters and the ones every kind shares (`topology_kind!`), says how big its graph is
//! before building it (so that the memory budget refuses a fabric too large first), and builds
//! the graph: its nodes (hosts first), ports and host map. The forwarding tables, routes,
//! cut, summary and every result follow from the graph. A new generator is its file here and
//! one line in `generators!` (docs/extending.md).

use crate::error::ScenarioError;
use crate::topology::file::Defaults;
use crate::topology::{scale_up, GraphSize, Topology};
use crate::units::{Duration, Rate};

/// What a generator does with its parameters.
pub trait Generator {
    /// Checks the parameters and says how big the graph is, without building it.
    fn size(&self) -> Result<GraphSize, ScenarioError>;
    /// The fabric's graph (the parameters were checked by [`Generator::size`]).
    fn build(&self) -> Result<Topology, ScenarioError>;
    /// Writes into the scenario as run the defaults that follow from other fields (a fat
    /// tree's per-tier link lists, a graph's NICs per server).
    fn fill(&mut self) {}
}

/// The parameters every kind shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shared {
    pub link_rate: Rate,
    pub link_latency: Duration,
    pub switch_latency: Duration,
    pub nics_per_server: u32,
    pub scale_up_rate: Option<Rate>,
    pub scale_up_latency: Option<Duration>,
    pub scale_up_nvls: Option<bool>,
}

/// Declares a generator's `[topology]` parameters: its own, then those every kind shares. A
/// macro because serde's `deny_unknown_fields` (which refuses a field of another kind) does
/// not combine with a flattened shared part.
macro_rules! topology_kind {
    ($name:ident { $($(#[$attr:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        /// `[topology]` parameters: the kind's own, and those every kind shares.
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$attr])* pub $field: $ty,)*
            /// Rate of every link tier not given in `tier_link_rates`.
            #[serde(default = "crate::topology::generators::d_rate")]
            pub link_rate: $crate::units::Rate,
            /// Propagation latency of every link tier not given in `tier_link_latencies`.
            #[serde(default = "crate::topology::generators::d_latency")]
            pub link_latency: $crate::units::Duration,
            /// Traversal latency of every switch (added when a packet arrives at a switch).
            #[serde(default = "crate::topology::generators::d_latency")]
            pub switch_latency: $crate::units::Duration,
            /// NICs (hosts) per server: host `h` is NIC `h % n` of server `h / n`. `hosts` must be a multiple. Used by
            /// `placement = "rail"` and `rails`.
            #[serde(default = "crate::topology::generators::d_nics")]
            #[schemars(extend("x-type" = "integer ≥ 1"))]
            pub nics_per_server: u32,
            /// GPU servers with a scale-up network (NVLink through an NVSwitch, say): each server's `nics_per_server` hosts
            /// are its GPUs, each with its own NIC on the fabric, joined inside the server by a non-blocking switch whose
            /// port per GPU has this rate each way (`"7200Gbps"` is 900 GB/s each way, NVLink 5's; H100's NVLink 4, "900
            /// GB/s" counting both directions, is `"3600Gbps"`). A message between two GPUs of one server crosses it and
            /// never touches a NIC or the fabric (flows column `scale_up`). Needs `nics_per_server` ≥ 2. Model:
            /// [model.md](model.md#scale-up-networks).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-default" = "absent (none)"))]
            pub scale_up_rate: Option<$crate::units::Rate>,
            /// With `scale_up_rate`: from one GPU to another over it.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-default" = "`\"300ns\"`"))]
            pub scale_up_latency: Option<$crate::units::Duration>,
            /// With `scale_up_rate`: whether its switch reduces and multicasts (NVLink SHARP, an NVSwitch of H100 or later's):
            /// `algorithm = "nvls"` needs it, and `"auto"` picks NVLS where NCCL's tuner would. `false` for a switch that only
            /// forwards. [workloads.md](workloads.md#nvlink-sharp).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-default" = "`true`"))]
            pub scale_up_nvls: Option<bool>,
        }

        impl Default for $name {
            /// Every field at its default (each has one).
            fn default() -> Self {
                serde_json::from_value(serde_json::json!({})).expect("every [topology] field has a default")
            }
        }

        impl $name {
            /// The parameters every kind shares.
            pub fn shared(&self) -> $crate::topology::generators::Shared {
                $crate::topology::generators::Shared {
                    link_rate: self.link_rate,
                    link_latency: self.link_latency,
                    switch_latency: self.switch_latency,
                    nics_per_server: self.nics_per_server,
                    scale_up_rate: self.scale_up_rate,
                    scale_up_latency: self.scale_up_latency,
                    scale_up_nvls: self.scale_up_nvls,
                }
            }
        }
    };
}

/// `[topology] kind`: what docs/scenario.md's table says of it (the kinds' names come from
/// the registry).
pub(crate) const KIND: crate::registry::options::KindDoc = crate::registry::options::KindDoc {
    default: "`\"fat_tree\"`, or `\"graph\"` where `file` is given",
    doc: "`fat_tree`: built from the fields below. `dragonfly`: Kim et al.'s groups of fully connected routers, from `hosts_per_router`, `routers_per_group`, `global_links_per_router`, `groups`, `global_link_latency` and `group_routing` (`\"minimal\"`, default; `\"valiant\"`; `\"ugal\"`: how packets cross between groups) ([topologies.md](topologies.md#dragonfly)), with the shared fields below. `rail_only`: Wang et al.'s one network per rail, no spine, from `hosts` and `radix` (default 64) with `nics_per_server` of 2 or more and a `scale_up_rate`; messages between rails are relayed through the source server's scale-up network ([topologies.md](topologies.md#rail-only)). `multi_plane`: `planes` (default 2) independent leaf-spines of `hosts` and `radix` (default 16), every host with a port in each at `link_rate`; a message is striped over the planes ([topologies.md](topologies.md#multi-plane)). `graph`: the hosts, switches and links of `graph` or `file` ([topologies.md](topologies.md)); of the fields below it takes only the ones every kind shares, `link_rate`, `link_latency` (for links that give none), `switch_latency`, `nics_per_server` (where no host gives its `server`), `scale_up_rate`, `scale_up_latency` and `scale_up_nvls`, and refuses a fat tree's (`tiers`, `hosts`, `radix`, ...) by name, as a fat tree refuses `graph` and `file`. Each kind is one file of `topology/generators/` ([extending.md](extending.md)).",
};

pub(crate) fn d_rate() -> Rate {
    Rate(400_000_000_000)
}
pub(crate) fn d_latency() -> Duration {
    Duration(500_000)
}
pub(crate) fn d_nics() -> u32 {
    1
}

/// Declares the generators, one line each (`Variant => module`).
macro_rules! generators {
    ($($Variant:ident => $module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        crate::registry::tagged_config! {
            /// `[topology]`: a generator and its parameters.
            TopologyConfig, default "fat_tree" or "graph" (KIND), $($Variant => $module),+
        }

        impl TopologyConfig {
            /// The generator this table names.
            pub fn generator(&self) -> &dyn Generator {
                match self {
                    $(TopologyConfig::$Variant(c) => c),+
                }
            }

            /// [`TopologyConfig::generator`], to fill in defaults.
            pub fn generator_mut(&mut self) -> &mut dyn Generator {
                match self {
                    $(TopologyConfig::$Variant(c) => c),+
                }
            }

            /// The parameters every kind shares.
            pub fn shared(&self) -> Shared {
                match self {
                    $(TopologyConfig::$Variant(c) => c.shared()),+
                }
            }
        }
    };
}

generators! {
    FatTree => fat_tree,
    Graph => graph,
    Dragonfly => dragonfly,
    RailOnly => rail_only,
    MultiPlane => multi_plane,
}

impl Shared {
    /// What a graph's links take from these where they say nothing (`topology/file.rs`),
    /// the scale-up network checked.
    pub fn defaults(&self) -> Result<Defaults, ScenarioError> {
        Ok(Defaults {
            rate: self.link_rate,
            latency: self.link_latency,
            switch_latency: self.switch_latency.0,
            nics: self.nics_per_server,
            scale_up: scale_up(self)?,
            planes: 1,
        })
    }
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig::FatTree(fat_tree::Config::default())
    }
}

impl TopologyConfig {
    /// The fabric this describes; `fits` may refuse its graph's size before it is built (the
    /// scenario's memory budget).
    pub fn build(&self, fits: impl Fn(GraphSize) -> Result<(), ScenarioError>) -> Result<Topology, ScenarioError> {
        let g = self.generator();
        fits(g.size()?)?;
        g.build()
    }
}
