//! Any fabric given as its graph: hosts, switches and links, each link with its own rate and
//! latency, inline (`graph`) or from a file the Python front end reads (`file`: TOML/JSON, a
//! NetworkX edge list, GraphML). Switches route by shortest paths, in the manner of htsim's
//! route tables (`routetable.h`). Format and checks: `topology/file.rs`, docs/topologies.md.

use super::Generator;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::topology::file::GraphConfig;
use crate::topology::{GraphSize, Topology};

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "topology",
    name: "graph",
    summary: "any fabric given as hosts, switches and links (inline, or a TOML/JSON, edge list or GraphML file), routed by shortest paths",
    reference: "htsim routetable.h",
};

topology_kind!(Config {
    /// With `kind = "graph"`: `hosts = [{name, id?, server?}]`, `switches = [{name, tier?}]`, `links = [{a, b, rate?,
    /// latency?, cost?}]` ([topologies.md](topologies.md)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    graph: Option<GraphConfig>,
    /// With `kind = "graph"`: a topology file, relative to the scenario file: `.toml` or `.json` (the graph),
    /// `.edgelist`/`.edges`/`.txt` (NetworkX edge list, or the ns-3 RDMA simulators' `topology.txt`: HPCC, ConWeave,
    /// SimAI), `.graphml` (FNSS's too), `.topo` (htsim's fat tree; its switch latency becomes `switch_latency`) or
    /// InfraGraph (`.yaml`/`.yml`, or `.json` with `devices` and `instances`), read by the Python front end into `graph`
    /// ([topologies.md](topologies.md)). Given beside `graph`, the two must agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-type" = "path"))]
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
