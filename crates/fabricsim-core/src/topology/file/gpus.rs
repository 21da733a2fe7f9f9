//! Graph hosts that name their GPU (`gpu`): a GPU of several NICs, each a host of the graph
//! with its own link, as a fat tree's `nics_per_gpu` builds them (docs/topologies.md, "Several
//! NICs a GPU"); what `fabricsim topology --export` writes for a fabric of several ports a host.

use super::{Defaults, GraphConfig, FIELD};
use crate::error::{ensure, ScenarioError};
use crate::topology::HostMap;

impl GraphConfig {
    /// The host map of hosts that name their GPU: GPU `g`'s NIC `p` is the `p`-th host naming
    /// `g`; servers are consecutive GPUs (every NIC of a GPU on its server), all as large.
    pub(super) fn gpus(&self, d: &Defaults) -> Result<HostMap, ScenarioError> {
        let h = self.hosts.len();
        let at = |i: usize, k: &str| format!("{FIELD}.hosts[{i}].{k}");
        let shown = |v: Option<u32>| v.map_or("none".to_string(), |v| v.to_string());
        // per GPU, its NICs' places
        let mut nics_of: Vec<Vec<u32>> = Vec::new();
        for (i, x) in self.hosts.iter().enumerate() {
            ensure(x.gpu.is_some(), &at(i, "gpu"), "none", "allowed: a gpu on every host or on none")?;
            ensure(x.id.is_none(), &at(i, "id"), shown(x.id), "allowed: none where hosts name their gpu (the gpu is the id)")?;
            let g = x.gpu.unwrap_or(0) as usize;
            ensure(g < h, &at(i, "gpu"), g, format!("allowed: 0 to {}", h - 1))?;
            if nics_of.len() <= g {
                nics_of.resize(g + 1, Vec::new());
            }
            nics_of[g].push(i as u32);
        }
        let (gpus, k) = (nics_of.len(), nics_of[0].len());
        if let Some(g) = (0..gpus).find(|&g| nics_of[g].len() != k || k == 0) {
            return Err(ScenarioError::new(
                format!("{FIELD}.hosts"),
                format!("GPU {g} with {} NICs", nics_of[g].len()),
                format!("allowed: GPUs 0 to {} each with as many NICs as GPU 0 ({k}), at least one", gpus - 1),
            ));
        }
        ensure(gpus >= 2, &format!("{FIELD}.hosts"), format!("{gpus} GPU"), "allowed: at least 2 GPUs")?;
        // every NIC on its GPU's server, servers of consecutive GPUs, all as large
        let server_of = |g: usize| self.hosts[nics_of[g][0] as usize].server;
        for (i, x) in self.hosts.iter().enumerate() {
            let own = server_of(x.gpu.unwrap_or(0) as usize);
            ensure(x.server == own, &at(i, "server"), shown(x.server), format!("allowed: its GPU's first NIC's ({})", shown(own)))?;
        }
        let per = match server_of(0) {
            Some(first) => (0..gpus).filter(|&g| server_of(g) == Some(first)).count(),
            None => d.nics as usize,
        };
        ensure(
            per >= 1 && gpus.is_multiple_of(per),
            &format!("{FIELD}.hosts"),
            format!("{gpus} GPUs"),
            format!("allowed: a multiple of the {per} GPUs per server"),
        )?;
        for (g, nics) in nics_of.iter().enumerate() {
            let want = server_of(0).map(|first| first + (g / per) as u32);
            let i = nics[0] as usize;
            ensure(
                server_of(g) == want,
                &at(i, "server"),
                shown(server_of(g)),
                format!("allowed: servers of {per} GPUs numbered in order, on every host or on none (this GPU's: {})", shown(want)),
            )?;
        }
        ensure(d.scale_up.is_none() || per >= 2, "topology.scale_up_rate", "a rate", "allowed: only with servers of 2 or more GPUs")?;
        let mut map = HostMap::new(gpus as u32, per as u32, d.scale_up);
        map.planes = k as u32;
        // GPU g's port p at p * gpus + g; left implicit where the hosts are listed so
        let node_of: Vec<u32> = (0..k).flat_map(|p| nics_of.iter().map(move |n| n[p])).collect();
        if node_of.iter().enumerate().any(|(v, &n)| v as u32 != n) {
            map.node_of = node_of;
            map.host_at = self.hosts.iter().map(|x| x.gpu.unwrap_or(0)).collect();
        }
        Ok(map)
    }
}
