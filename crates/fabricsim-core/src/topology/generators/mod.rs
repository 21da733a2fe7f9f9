//! The topology generators (`[topology] kind`), one file each: a generator checks its own
//! parameters and the ones every kind shares (`topology_kind!`), says how big its graph is
//! before building it (so that the memory budget refuses a fabric too large first), and builds
//! the graph: its nodes (hosts first), ports and host map. The forwarding tables, routes,
//! cut, summary and every result follow from the graph. A new generator is its file here and
//! one line in `generators!` (docs/extending.md).

use crate::error::ScenarioError;
use crate::registry::Param;
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
}

/// Declares a generator's `[topology]` parameters: its own, then those every kind shares. A
/// macro because serde's `deny_unknown_fields` (which refuses a field of another kind) does
/// not combine with a flattened shared part.
macro_rules! topology_kind {
    ($name:ident { $($(#[$attr:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        /// `[topology]` parameters: the kind's own, and those every kind shares.
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$attr])* pub $field: $ty,)*
            #[serde(default = "crate::topology::generators::d_rate")]
            pub link_rate: $crate::units::Rate,
            #[serde(default = "crate::topology::generators::d_latency")]
            pub link_latency: $crate::units::Duration,
            #[serde(default = "crate::topology::generators::d_latency")]
            pub switch_latency: $crate::units::Duration,
            #[serde(default = "crate::topology::generators::d_nics")]
            pub nics_per_server: u32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub scale_up_rate: Option<$crate::units::Rate>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub scale_up_latency: Option<$crate::units::Duration>,
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
                }
            }
        }
    };
}

pub(crate) fn d_rate() -> Rate {
    Rate(400_000_000_000)
}
pub(crate) fn d_latency() -> Duration {
    Duration(500_000)
}
pub(crate) fn d_nics() -> u32 {
    1
}

/// A kind's `PARAMS`: its own, then those every kind shares ([`SHARED`]).
macro_rules! kind_params {
    ($($own:expr),* $(,)?) => {{
        use $crate::topology::generators::SHARED as S;
        &[$($own,)* S[0], S[1], S[2], S[3], S[4], S[5]]
    }};
}

/// The parameters every kind shares, as each kind's `PARAMS` lists them.
pub(crate) const SHARED: [Param; 6] = [
    Param::new("link_rate", "Rate of every link that states none (a fat tree: every link tier not in `tier_link_rates`)."),
    Param::new("link_latency", "Propagation latency of every link that states none (a fat tree: every tier not in `tier_link_latencies`)."),
    Param::new("switch_latency", "Traversal latency of every switch, added when a packet arrives at one."),
    Param::new("nics_per_server", "NICs (hosts) per server: host `h` is NIC `h % n` of server `h / n`."),
    Param::new(
        "scale_up_rate",
        "A server's scale-up network (NVLink through an NVSwitch, say): the rate of each GPU's port on it; absent: none.",
    ),
    Param::new("scale_up_latency", "With `scale_up_rate`: its latency from one GPU to another (300 ns when not given)."),
];

/// Declares the generators, one line each (`Variant => module`).
macro_rules! generators {
    ($($Variant:ident => $module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        crate::registry::tagged_config! {
            /// `[topology]`: a generator and its parameters.
            TopologyConfig, default "fat_tree", $($Variant => $module),+
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
