//! Any fabric given as its graph: hosts, switches and links, each link with its own rate and
//! latency, inline (`graph`) or from a file the Python front end reads (`file`: TOML/JSON, a
//! NetworkX edge list, GraphML). Switches route by shortest paths, in the manner of htsim's
//! route tables (`routetable.h`). Format and checks: `topology/file.rs`, docs/topologies.md.

use super::Generator;
use crate::error::{ensure, ScenarioError};
use crate::registry::{AlgorithmInfo, Param};
use crate::topology::file::GraphConfig;
use crate::topology::{GraphSize, Topology};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "topology",
    name: "graph",
    summary: "any fabric given as hosts, switches and links (inline, or a TOML/JSON, edge list or GraphML file), routed by shortest paths",
    reference: "htsim routetable.h",
};

pub const PARAMS: &[Param] = kind_params![
    Param::new(
        "graph",
        "The fabric: `hosts = [{name, id?, server?}]`, `switches = [{name, tier?}]`, `links = [{a, b, rate?, latency?}]` (docs/topologies.md).",
    ),
    Param::new("file", "A topology file the Python front end reads into `graph`, relative to the scenario file; kept for the record."),
];

topology_kind!(Config {
    /// The fabric's hosts, switches and links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    graph: Option<GraphConfig>,
    /// The file the front end read `graph` from, kept for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<String>,
});

impl Config {
    fn graph(&self) -> Result<&GraphConfig, ScenarioError> {
        self.graph.as_ref().ok_or_else(|| {
            ScenarioError::new(
                "topology.graph",
                "missing",
                "allowed: the fabric's hosts, switches and links, inline or `file` read by the Python front end (docs/topologies.md)",
            )
        })
    }
}

impl Generator for Config {
    fn size(&self) -> Result<GraphSize, ScenarioError> {
        ensure(self.link_rate.0 > 0, "topology.link_rate", self.link_rate, "allowed: a positive rate")?;
        ensure(self.nics_per_server >= 1, "topology.nics_per_server", self.nics_per_server, "allowed: 1 or more")?;
        Ok(self.graph()?.size())
    }

    fn build(&self) -> Result<Topology, ScenarioError> {
        let defaults = self.shared().defaults()?;
        self.graph()?.build(&defaults)
    }

    fn fill(&mut self) {
        if let Some(n) = self.graph.as_ref().and_then(|g| g.nics_per_server()) {
            self.nics_per_server = n;
        }
    }
}
