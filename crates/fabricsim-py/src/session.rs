//! The session class of the binding: a run driven from outside (`fabricsim.Session` wraps it).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{parse, result_dict, scenario_error};

/// A session: a run driven from outside (`fabricsim_core::sim::session`). Times are
/// picoseconds; statuses as `Simulation.step`'s.
#[pyclass(module = "fabricsim._core")]
pub(crate) struct Session {
    inner: fabricsim_core::sim::session::Session,
}

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (scenario_json, threads = 1))]
    fn new(py: Python<'_>, scenario_json: &str, threads: Option<usize>) -> PyResult<Self> {
        let scenario = parse(py, scenario_json)?;
        let inner = fabricsim_core::sim::session::Session::new(&scenario, threads).map_err(|e| scenario_error(py, e))?;
        Ok(Session { inner })
    }

    /// Sends `bytes` from `src` to `dst` at `at` (None: now), once the messages `after` are
    /// heard of; returns the message's id.
    #[pyo3(signature = (src, dst, bytes, at = None, after = Vec::new()))]
    fn send(&mut self, py: Python<'_>, src: u32, dst: u32, bytes: u64, at: Option<u64>, after: Vec<u32>) -> PyResult<u32> {
        self.inner.send_after(src, dst, bytes, at, &after).map_err(|e| scenario_error(py, e))
    }

    /// Runs every event at `t` or before, without the GIL.
    fn run_until(&mut self, py: Python<'_>, t: u64) -> PyResult<&'static str> {
        let inner = &mut self.inner;
        py.detach(|| inner.run_until(t)).map(|s| s.label()).map_err(|e| scenario_error(py, e))
    }

    /// Runs until a message completes, or every event at `limit` or before.
    fn run_until_completion(&mut self, py: Python<'_>, limit: u64) -> PyResult<&'static str> {
        let inner = &mut self.inner;
        py.detach(|| inner.run_until_completion(limit)).map(|s| s.label()).map_err(|e| scenario_error(py, e))
    }

    fn next_event_time(&mut self) -> Option<u64> {
        self.inner.next_event_time()
    }

    #[getter]
    fn now_ps(&self) -> u64 {
        self.inner.now()
    }

    #[getter]
    fn status(&self) -> &'static str {
        self.inner.status().label()
    }

    #[getter]
    fn stop_reason(&self) -> &'static str {
        self.inner.status().reason()
    }

    #[getter]
    fn threads(&self) -> usize {
        self.inner.simulation().threads()
    }

    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.simulation().warnings().to_vec()
    }

    #[getter]
    fn max_time_ps(&self) -> u64 {
        self.inner.simulation().model().max_time
    }

    /// (id, start, end, fct) of each message completed since the last call.
    fn completions(&mut self) -> Vec<(u32, u64, u64, u64)> {
        self.inner.completions().into_iter().map(|c| (c.id, c.start, c.end, c.fct)).collect()
    }

    /// The results so far (the session goes on).
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &self.inner;
        let r = py.detach(|| inner.results());
        result_dict(py, r)
    }
}
