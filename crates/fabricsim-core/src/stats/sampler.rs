//! Port time series (`[samples]`): every `every`, each selected port's data queue and its
//! utilization since the previous sample. Sampling only reads the ports.

use serde::{Deserialize, Serialize};

use crate::error::{ensure, ScenarioError};
use crate::switch::EgressPort;
use crate::time::Time;
use crate::topology::Topology;
use crate::units::Duration;

/// `[samples]`: every `every`, record each selected port's data queue and utilization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SamplesConfig {
    /// Sampling interval, from time 0.
    pub every: Duration,
    /// Port names (`"leaf0:up3"`) or prefixes ending in `*` (`"leaf0:up*"`, `"spine*"`).
    #[serde(default)]
    #[schemars(extend("x-type" = "list of names", "x-default" = "every port"))]
    pub ports: Vec<String>,
}

/// Rows beyond which a port time series is probably not what was meant.
pub const MANY_ROWS: u64 = 10_000_000;

impl SamplesConfig {
    /// Checks `[samples]` against the topology: the sampler of the run.
    pub fn resolve(&self, topo: &Topology) -> Result<Sampler, ScenarioError> {
        ensure(self.every.0 > 0, "samples.every", self.every, "allowed: a positive duration")?;
        let mut ports = Vec::new();
        for (i, pattern) in self.ports.iter().enumerate() {
            let matched: Vec<u32> = (0..topo.ports.len() as u32)
                .filter(|&p| match pattern.strip_suffix('*') {
                    Some(prefix) => topo.ports[p as usize].name.starts_with(prefix),
                    None => topo.ports[p as usize].name == *pattern,
                })
                .collect();
            ensure(
                !matched.is_empty(),
                &format!("samples.ports[{i}]"),
                format!("{pattern:?}"),
                "allowed: a port name (\"leaf0:up3\") or a prefix ending in * (\"leaf0:up*\") that matches a port",
            )?;
            ports.extend(matched);
        }
        if self.ports.is_empty() {
            ports = (0..topo.ports.len() as u32).collect();
        }
        ports.sort_unstable();
        ports.dedup();
        Ok(Sampler::new(self.every.0, ports))
    }
}

/// Columns of the port time series.
#[derive(Debug, Clone, Default)]
pub struct SampleRows {
    pub time: Vec<Time>,
    pub port: Vec<u64>,
    pub queue: Vec<u64>,
    pub util: Vec<f64>,
}

/// The sampler of a run.
#[derive(Debug, Clone)]
pub struct Sampler {
    pub every: Time,
    ports: Vec<u32>,
    /// Each sampled port's busy time at the previous sample.
    last_busy: Vec<Time>,
    pub rows: SampleRows,
}

impl Sampler {
    /// Samples `ports` (sorted, distinct) every `every` ps.
    pub fn new(every: Time, ports: Vec<u32>) -> Sampler {
        Sampler { every, last_busy: vec![0; ports.len()], ports, rows: SampleRows::default() }
    }

    /// Rows it makes if the run lasts until `max_time` (its guard: a run that ends sooner
    /// samples less).
    pub fn rows_until(&self, max_time: Time) -> u64 {
        (max_time / self.every.max(1)).saturating_add(1).saturating_mul(self.ports.len() as u64)
    }

    /// A warning if it may make more than [`MANY_ROWS`] rows by `max_time`.
    pub fn warning(&self, max_time: Time) -> Option<String> {
        let rows = self.rows_until(max_time);
        (rows > MANY_ROWS).then(|| {
            format!(
                "samples: every {} on {} ports up to stop.max_time makes up to {rows} rows (more than {MANY_ROWS}); a larger samples.every or fewer ports keep it readable",
                Duration(self.every),
                self.ports.len()
            )
        })
    }

    /// Records each sampled port's data queue and its utilization since the last sample: the
    /// share of the interval its link spent sending (a packet that straddles a sample counts
    /// in each interval for the part sent in it, so the share never exceeds 1).
    pub fn sample<'a>(&mut self, now: Time, port_of: impl Fn(u32) -> &'a EgressPort) {
        self.sample_values(now, |_, port| {
            let p = port_of(port);
            (p.busy_time(now), p.data_bytes)
        });
    }

    /// The sampled ports (their global ids), in the order of their rows at each sample.
    pub fn ports(&self) -> &[u32] {
        &self.ports
    }

    /// [`Sampler::sample`] from each sampled port's busy time up to `now` and data queue, as
    /// `value(k, port)` gives them for the `k`-th sampled port (a run across processes gathers
    /// them from the processes that hold the ports).
    pub fn sample_values(&mut self, now: Time, value: impl Fn(usize, u32) -> (Time, u64)) {
        let interval = now.min(self.every);
        for (k, &port) in self.ports.iter().enumerate() {
            let (busy, queue) = value(k, port);
            let sent = busy - self.last_busy[k];
            self.last_busy[k] = busy;
            self.rows.time.push(now);
            self.rows.port.push(port as u64);
            self.rows.queue.push(queue);
            self.rows.util.push(if interval == 0 { 0.0 } else { sent as f64 / interval as f64 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_count_to_the_time_guard() {
        assert_eq!(Sampler::new(1_000, (0..10).collect()).rows_until(1_000_000), 1_001 * 10);
        let huge = Sampler { every: 1, ports: vec![0; 2], last_busy: Vec::new(), rows: SampleRows::default() };
        assert_eq!(huge.rows_until(u64::MAX), u64::MAX, "saturates");
        assert!(Sampler::new(1_000, vec![0]).warning(1_000_000_000).is_none(), "a million rows is fine");
        assert!(Sampler::new(1_000, vec![0]).warning(100_000_000_000).is_some_and(|w| w.contains("100000001 rows")));
    }
}
