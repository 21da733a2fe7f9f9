//! The `fabricsim._core` extension module: PyO3 glue only. Scenarios cross as JSON text,
//! results as columns of little-endian bytes (strings as lists), errors as `fabricsim.errors`'
//! `ScenarioError` and `InternalError` (plain `ValueError`/`RuntimeError` without the package).

use fabricsim_core::stats::columns::Ty;
use fabricsim_core::stats::Keep;
use fabricsim_core::{Scenario, ScenarioError as CoreError};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod ranks;
mod session;
mod tables;
use session::Session;
use tables::result_dict;

/// An exception of `fabricsim.errors` (the one hierarchy of the package, made in Python), built
/// with `args`; `fallback` where the package cannot be imported (the core used on its own).
fn package_error<A>(py: Python<'_>, class: &str, args: A, fallback: impl FnOnce() -> PyErr) -> PyErr
where
    A: for<'py> pyo3::call::PyCallArgs<'py>,
{
    match py.import("fabricsim.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1(args)) {
        Ok(value) => PyErr::from_value(value),
        Err(_) => fallback(),
    }
}

/// The one place core errors become Python exceptions: a bad scenario raises
/// `fabricsim.errors.ScenarioError` (a `ValueError`) with `field` and `message` attributes.
fn scenario_error(py: Python<'_>, e: CoreError) -> PyErr {
    let text = e.to_string();
    package_error(py, "ScenarioError", (text.clone(), e.field, e.message), || PyValueError::new_err(text))
}

fn parse(py: Python<'_>, json: &str) -> PyResult<Scenario> {
    Scenario::from_json(json).map_err(|e| scenario_error(py, e))
}

/// A scenario read from its JSON once, for its check, its survey and its build (a scenario of
/// 2 M flows takes seconds to read each time). Building a simulation from it uses it up.
#[pyclass(module = "fabricsim._core")]
struct Parsed {
    /// `None` once a simulation was built from it.
    scenario: Option<Scenario>,
}

impl Parsed {
    /// Runs `f` on the scenario as a caller that keeps the flows table's `columns` runs it.
    fn with<R>(&mut self, py: Python<'_>, columns: Option<Vec<String>>, f: impl FnOnce(&Scenario) -> Result<R, CoreError>) -> PyResult<R> {
        let keep = keep_of(py, columns)?;
        let scenario = self.scenario.take().ok_or_else(used)?.keeping(keep);
        let out = f(&scenario);
        self.scenario = Some(scenario);
        out.map_err(|e| scenario_error(py, e))
    }
}

fn used() -> PyErr {
    internal_error("this parsed scenario was used up by the simulation built from it (parse it again)")
}

/// `fabricsim.errors.InternalError` saying `text`: a call on an object past its use.
fn internal_error(text: &'static str) -> PyErr {
    Python::attach(|py| package_error(py, "InternalError", (text,), || PyRuntimeError::new_err(text)))
}

#[pymethods]
impl Parsed {
    #[new]
    fn new(py: Python<'_>, scenario_json: &str) -> PyResult<Self> {
        Ok(Parsed { scenario: Some(parse(py, scenario_json)?) })
    }

    /// [`validate`] of the scenario read once.
    fn validate(&mut self, py: Python<'_>) -> PyResult<String> {
        self.with(py, None, |s| fabricsim_core::check(s).map(|()| s.filled().to_json()))
    }

    /// [`survey`] of the scenario read once.
    #[pyo3(signature = (columns = None))]
    fn survey(&mut self, py: Python<'_>, columns: Option<Vec<String>>) -> PyResult<(Vec<String>, u64, u64)> {
        self.with(py, columns, fabricsim_core::survey)
    }
}

/// A simulation being run: build it from scenario JSON, `step` it, then take its `results`
/// (once: the run's state is freed as they are built).
#[pyclass(module = "fabricsim._core")]
struct Simulation {
    /// `None` once the results were taken.
    inner: Option<fabricsim_core::Simulation>,
}

impl Simulation {
    fn sim(&self) -> PyResult<&fabricsim_core::Simulation> {
        self.inner.as_ref().ok_or_else(taken)
    }
}

/// A core simulation built by `build` from `scenario`: its JSON text, or a [`Parsed`] one
/// (which the build uses up); `columns`: the flows table's columns the caller will take.
fn built(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    columns: Option<Vec<String>>,
    build: impl FnOnce(&Scenario) -> Result<fabricsim_core::Simulation, CoreError>,
) -> PyResult<fabricsim_core::Simulation> {
    match scenario.cast::<Parsed>() {
        Ok(parsed) => {
            let mut parsed = parsed.borrow_mut();
            let built = parsed.with(py, columns, build);
            parsed.scenario = None; // used up: the run holds what it needs of it
            built
        }
        Err(_) => {
            let text: &str = scenario.extract()?;
            build(&parse(py, text)?.keeping(keep_of(py, columns)?)).map_err(|e| scenario_error(py, e))
        }
    }
}

fn taken() -> PyErr {
    internal_error("this simulation's results were taken: it no longer exists (build a new one)")
}

#[pymethods]
impl Simulation {
    /// `threads`: the parallel engine's threads (the results do not depend on them); `None`:
    /// chosen by the engine from the work and the CPUs available (`threads = "auto"`).
    /// `columns`: the flows table's columns the caller will take ([`Simulation::results`]);
    /// the memory estimate counts those (all if None).
    /// `scenario`: its JSON, or a [`Parsed`] one (which the build uses up).
    #[new]
    #[pyo3(signature = (scenario, threads = 1, columns = None))]
    fn new(py: Python<'_>, scenario: &Bound<'_, PyAny>, threads: Option<usize>, columns: Option<Vec<String>>) -> PyResult<Self> {
        let build = |s: &Scenario| match threads {
            Some(n) => fabricsim_core::Simulation::with_threads(s, n),
            None => fabricsim_core::Simulation::auto(s),
        };
        Ok(Simulation { inner: Some(built(py, scenario, columns, build)?) })
    }

    /// `scenario` (as for `new`) as rank `rank` of a run across `ranks` processes
    /// (`fabricsim.mpi`; `fabricsim_core::sim::ranks`), each running its pieces on `threads`
    /// threads: cut into pieces, of which this rank runs its own. Raises ScenarioError where
    /// the scenario cannot run across ranks.
    #[staticmethod]
    #[pyo3(signature = (scenario, ranks, rank, threads = 1, columns = None))]
    fn ranked(
        py: Python<'_>,
        scenario: &Bound<'_, PyAny>,
        ranks: usize,
        rank: usize,
        threads: usize,
        columns: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let build = |s: &Scenario| fabricsim_core::Simulation::ranked(s, ranks, rank, threads);
        Ok(Simulation { inner: Some(built(py, scenario, columns, build)?) })
    }

    /// Runs a rank's part of a run across processes to its end with the other ranks', through
    /// `allgather(bytes) -> list[bytes]` and `alltoallv(bytes, counts) -> (buffer, counts)`
    /// (an MPI communicator's, called by every rank alike: `fabricsim._ranks.exchange`),
    /// without the GIL between their calls; then the ranks gather the results on rank 0.
    /// Returns whether this rank holds them (its `results` are the run's).
    fn run_ranked(&mut self, py: Python<'_>, allgather: Py<PyAny>, alltoallv: Py<PyAny>) -> PyResult<bool> {
        let inner = self.inner.as_mut().ok_or_else(taken)?;
        let (rank, ranks) = inner.rank().ok_or_else(|| internal_error("not a rank's run: build it with Simulation.ranked"))?;
        let ex = ranks::PyExchange { rank, ranks, allgather, alltoallv, failed: std::sync::Mutex::new(None) };
        let ran = py.detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                inner.run_ranked(&ex);
                inner.gather(&ex)
            }))
        });
        match (ran, ex.failed.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)) {
            (_, Some(e)) => Err(e),
            (Ok(holds), None) => Ok(holds),
            (Err(payload), None) => std::panic::resume_unwind(payload),
        }
    }

    /// The threads the run uses.
    #[getter]
    fn threads(&self) -> PyResult<usize> {
        Ok(self.sim()?.threads())
    }

    /// Windows run on every thread, and (an auto run) on one thread after a window with few
    /// events.
    #[getter]
    fn windows(&self) -> PyResult<(u64, u64)> {
        let sim = self.sim()?;
        Ok((sim.parallel_windows().0, sim.solo_windows()))
    }

    /// Where the parallel windows' wall went, in seconds: the driver's time in windows, and the
    /// worker threads' waits summed over them, between windows and within them (timings).
    #[getter]
    fn window_profile(&self) -> PyResult<(f64, f64, f64)> {
        let [inside, between, within] = self.sim()?.window_profile();
        Ok((inside.as_secs_f64(), between.as_secs_f64(), within.as_secs_f64()))
    }

    /// Why the run uses fewer threads than asked, if it does.
    #[getter]
    fn thread_note(&self) -> PyResult<Option<String>> {
        Ok(self.sim()?.thread_note().map(str::to_owned))
    }

    /// Processes at most `budget` events without the GIL; returns "running", "complete"
    /// or "incomplete".
    fn step(&mut self, py: Python<'_>, budget: u64) -> PyResult<&'static str> {
        let inner = self.inner.as_mut().ok_or_else(taken)?;
        Ok(py.detach(|| inner.step(budget)).label())
    }

    #[getter]
    fn now_ps(&self) -> PyResult<u64> {
        Ok(self.sim()?.now())
    }
    #[getter]
    fn events(&self) -> PyResult<u64> {
        Ok(self.sim()?.events())
    }
    #[getter]
    fn flows_done(&self) -> PyResult<u32> {
        Ok(self.sim()?.flows_done())
    }
    #[getter]
    fn flow_count(&self) -> PyResult<u32> {
        Ok(self.sim()?.flow_count())
    }
    #[getter]
    fn max_time_ps(&self) -> PyResult<u64> {
        Ok(self.sim()?.model().max_time)
    }
    /// The events the run is expected to make, roughly (`sim::threads::expected_events`).
    #[getter]
    fn expected_events(&self) -> PyResult<u64> {
        Ok(self.sim()?.expected_events())
    }
    /// The memory the run is estimated to need, bytes (what `stop.max_memory` is checked against).
    #[getter]
    fn memory_estimate(&self) -> PyResult<u64> {
        Ok(self.sim()?.model().need.total())
    }
    /// The fabric's bandwidth-delay product, bytes (what `"1bdp"` stands for).
    /// Legal but probably unintended settings of the scenario, found while building the run.
    #[getter]
    fn warnings(&self) -> PyResult<Vec<String>> {
        Ok(self.sim()?.warnings().to_vec())
    }

    #[getter]
    fn bdp_bytes(&self) -> PyResult<u64> {
        Ok(self.sim()?.model().bdp_bytes)
    }

    /// Each `[[jobs]]` entry's hosts, in rank order (a trace's last: the hosts it touches).
    #[getter]
    fn job_hosts(&self) -> PyResult<Vec<Vec<u32>>> {
        Ok(self.sim()?.model().jobs.iter().map(|j| j.hosts.clone()).collect())
    }
    #[getter]
    fn status(&self) -> PyResult<&'static str> {
        Ok(self.sim()?.status().label())
    }

    /// The scenario with every default filled in, as JSON text.
    fn scenario_json(&self) -> PyResult<String> {
        Ok(self.sim()?.scenario().to_json())
    }

    /// Takes the results, freeing the run's state as they are built (see
    /// `Simulation::into_results`); a second call raises RuntimeError. `columns`: the flows
    /// table's columns to make (all if None; an unknown name raises ScenarioError before the
    /// results are taken). Returns {"flows": {column: list}, "ports": {...}, "summary": json,
    /// "accounting": json, "scenario": json}.
    #[pyo3(signature = (columns = None))]
    fn results<'py>(&mut self, py: Python<'py>, columns: Option<Vec<String>>) -> PyResult<Bound<'py, PyDict>> {
        let keep = keep_of(py, columns)?;
        let sim = self.inner.take().ok_or_else(taken)?;
        let r = py.detach(|| sim.into_results_keeping(&keep));
        result_dict(py, r)
    }
}

/// A quantity as a scenario writes it, read by the core's own rules (`fabricsim_core::units`):
/// `kind` "size" (bytes), "duration" (picoseconds) or "rate" (bit/s). Raises ValueError with
/// the core's words for text that is not one, or an unknown kind.
#[pyfunction]
fn quantity(kind: &str, text: &str) -> PyResult<u64> {
    use fabricsim_core::units::{Duration, Rate, Size};
    let read = match kind {
        "size" => Size::parse(text).map(|v| v.0),
        "duration" => Duration::parse(text).map(|v| v.0),
        "rate" => Rate::parse(text).map(|v| v.0),
        _ => Err(format!("got kind {kind:?}; allowed: \"size\", \"duration\" or \"rate\"")),
    };
    read.map_err(pyo3::exceptions::PyValueError::new_err)
}

/// Checks a scenario without running it; returns it with every default filled in (JSON).
#[pyfunction]
fn validate(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    Parsed::new(py, scenario_json)?.validate(py)
}

/// A scenario's warnings, expected events and memory estimate from one survey (its jobs' messages
/// counted, never held: `Scenario::survey`), or a resolve where only that tells; raises
/// `ScenarioError` where it is not valid.
/// `columns`: the flows table's columns the caller will take (all if None), which the memory
/// estimate counts.
#[pyfunction]
#[pyo3(signature = (scenario_json, columns = None))]
fn survey(py: Python<'_>, scenario_json: &str, columns: Option<Vec<String>>) -> PyResult<(Vec<String>, u64, u64)> {
    Parsed::new(py, scenario_json)?.survey(py, columns)
}

/// The flows table's columns `columns` names (all if None); an unknown name raises
/// ScenarioError naming it and the columns there are.
fn keep_of(py: Python<'_>, columns: Option<Vec<String>>) -> PyResult<Keep> {
    match columns {
        Some(names) => Keep::only(&names).map_err(|e| scenario_error(py, e)),
        None => Ok(Keep::all()),
    }
}

/// The declared output columns: {table: [(name, type, unit, null_when, meaning)]}.
#[pyfunction]
fn columns<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (table, spec) in fabricsim_core::stats::columns::TABLES {
        let ty = |t: Ty| match t {
            Ty::U64 => "u64",
            Ty::F64 => "f64",
            Ty::Bool => "bool",
            Ty::Str => "str",
            Ty::StrList => "list[str]",
        };
        let rows: Vec<(&str, &str, &str, &str, &str)> = spec.iter().map(|c| (c.name, ty(c.ty), c.unit, c.null_when, c.meaning)).collect();
        out.set_item(*table, rows)?;
    }
    Ok(out)
}

/// The fabric of a scenario's `[topology]`, built once (refused where its graph alone would not
/// fit `stop.max_memory`): its summary read as a graph (`fabricsim topology`), and with `graph`
/// the fabric written as one (`topology.graph`: hosts, switches, links; what `--export` writes),
/// both as JSON.
#[pyfunction]
fn topology(py: Python<'_>, scenario_json: &str, graph: bool) -> PyResult<(String, Option<String>)> {
    let scenario = parse(py, scenario_json)?;
    let memory = scenario.stop.max_memory.or(fabricsim_core::units::Size(fabricsim_core::scenario::DEFAULT_MAX_MEMORY)).0;
    let topo = fabricsim_core::scenario::build_topology(&scenario.topology, memory).map_err(|e| scenario_error(py, e))?;
    let summary = serde_json::to_string(&fabricsim_core::topology::graph::summary(&topo)).unwrap_or_default();
    let written = graph.then(|| {
        let g = fabricsim_core::topology::file::GraphConfig::of(&topo, scenario.topology.shared().switch_latency.0);
        serde_json::to_string(&g).unwrap_or_default()
    });
    Ok((summary, written))
}

/// The CPUs this process may run on (its affinity mask and cgroup CPU quota): what
/// `threads = "auto"` uses at most.
#[pyfunction]
fn available_cpus() -> usize {
    fabricsim_core::sim::threads::available_cpus()
}

/// (category, name, summary, reference) of everything a scenario can name.
#[pyfunction]
fn registry() -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    fabricsim_core::registry().into_iter().map(|a| (a.category, a.name, a.summary, a.reference)).collect()
}

/// (table, kind, name, meaning, example or None) of every parameter of every kind of the
/// `lb`, `workload`, `faults` and `topology` tables, read from each kind's declaration: what
/// docs/scenario.md's tables are generated from.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn parameters() -> Vec<(&'static str, &'static str, String, String, Option<String>)> {
    fabricsim_core::parameters().into_iter().map(|(table, kind, p)| (table, kind, p.name, p.doc, p.example)).collect()
}

/// The JSON schema of a scenario (draft 2020-12), generated from the core's declarations: what
/// an editor checks a scenario file against (`fabricsim schema`).
#[pyfunction]
fn schema() -> String {
    serde_json::to_string_pretty(&fabricsim_core::registry::options::scenario_schema()).expect("a schema is JSON")
}

/// One collective expanded by fabricsim's algorithms, for a trace importer: `op` of `size`
/// bytes per rank on ranks at `hosts`; returns the messages (src, dst, bytes), what each waits
/// for (a message's index, or `-1 - r` for what rank r waits for before the collective) and,
/// per rank, the messages that end its part. Raises `ValueError` with the reason otherwise.
#[pyfunction]
#[pyo3(signature = (op, algorithm, hosts, per_server, size, max_connections, max_messages))]
#[allow(clippy::type_complexity)]
fn collective_messages(
    op: &str,
    algorithm: Option<&str>,
    hosts: Vec<u32>,
    per_server: u32,
    size: u64,
    max_connections: Option<usize>,
    max_messages: u64,
) -> PyResult<(Vec<(u32, u32, u64)>, Vec<Vec<i64>>, Vec<Vec<u32>>)> {
    use fabricsim_core::workload::collective::{expand, AlgorithmKind, Op};
    let op: Op = serde_json::from_value(serde_json::Value::String(op.into()))
        .map_err(|e| PyValueError::new_err(format!("collective {op:?}: {e}")))?;
    let algorithm = match algorithm {
        None => None,
        Some(name) => Some(AlgorithmKind::from_name(name).ok_or_else(|| PyValueError::new_err(format!("unknown algorithm {name:?}")))?),
    };
    let e = expand::expand(op, algorithm, &hosts, per_server, size, max_connections, max_messages).map_err(PyValueError::new_err)?;
    let after = e
        .after
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|d| match d {
                    expand::Dep::Message(j) => i64::from(j),
                    expand::Dep::Entry(r) => -1 - i64::from(r),
                })
                .collect()
        })
        .collect();
    Ok((e.messages, after, e.done))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_class::<Parsed>()?;
    m.add_class::<Session>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(registry, m)?)?;
    m.add_function(wrap_pyfunction!(available_cpus, m)?)?;
    m.add_function(wrap_pyfunction!(topology, m)?)?;
    m.add_function(wrap_pyfunction!(survey, m)?)?;
    m.add_function(wrap_pyfunction!(parameters, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    m.add_function(wrap_pyfunction!(collective_messages, m)?)?;
    m.add("__version__", fabricsim_core::VERSION)?;
    // the git commit of the checkout it was built from (build.rs), None otherwise
    m.add("__commit__", option_env!("FABRICSIM_COMMIT"))?;
    Ok(())
}
