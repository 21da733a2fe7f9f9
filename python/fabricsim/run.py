"""Running a scenario."""

from __future__ import annotations

import ctypes
import os
import resource
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from . import _core
from . import reference as reference_module
from .errors import argument_error, scenario_error
from .results import Results, schema
from .scenario import Scenario

__all__ = ["Prepared", "Progress", "cores", "parse_threads", "peak_rss_mb", "prepare", "run"]

#: Events per native call between progress updates (~20-50 ms of simulation).
STEP_EVENTS = 200_000
#: The most threads a run may ask for (a run uses at most one per leaf of its fabric).
MAX_THREADS = 4096


@dataclass(frozen=True)
class Progress:
    """Where a run stands, passed to a progress callback: once before the first event, then
    every few hundred thousand events, and once at the end."""

    now_ps: int
    max_time_ps: int
    flows_done: int
    flow_count: int
    events: int
    #: The events the run is expected to make, roughly (they made 0.76 to 0.97 of it on the
    #: shipped scenarios; docs/performance.md, "How long a run takes").
    expected_events: int = 0
    #: The memory the run is estimated to need, bytes (what ``stop.max_memory`` is checked against).
    memory_estimate: int = 0


class Prepared:
    """A scenario checked and built, not yet run (:func:`prepare`): what a front end shows
    before the run (its warnings, its jobs' hosts) from the one build the run then uses.
    :func:`run` takes it in place of a scenario, once."""

    def __init__(self, scenario: Scenario, sim: Any, threads: int | None, flow_columns: list[str] | None = None) -> None:
        self.scenario = scenario
        self.threads = threads
        #: The flows table's columns its run makes (all if None), which its memory estimate counted.
        self.flow_columns = flow_columns
        self._sim: Any = sim

    def _built(self) -> Any:
        if self._sim is None:
            raise argument_error("scenario", self, "a Prepared not yet run (prepare the scenario again)")
        return self._sim

    @property
    def warnings(self) -> list[str]:
        """Legal but probably unintended settings (what :meth:`Scenario.warnings` says)."""
        return list(self._built().warnings)

    def reference(self) -> Scenario:
        """The non-blocking reference of this run (:mod:`fabricsim.reference`), read from its
        build: its filled scenario, its jobs' hosts, its BDP."""
        return reference_module.reference_scenario(self._built(), self.scenario.base_dir)

    def take(self) -> Any:
        """The built run, once: a second run of the same preparation is refused."""
        sim, self._sim = self._built(), None
        return sim

    def __repr__(self) -> str:
        return f"Prepared({self.scenario!r})"


def _scenario(scenario: Scenario | dict[str, Any] | str | os.PathLike[str]) -> Scenario:
    if isinstance(scenario, str | os.PathLike):
        return Scenario.load(scenario)
    if isinstance(scenario, dict):
        return Scenario(scenario)
    if not isinstance(scenario, Scenario):
        raise argument_error("scenario", scenario, "a Scenario, a dict in the TOML layout, or a TOML file's path")
    return scenario


def prepare(
    scenario: Scenario | dict[str, Any] | str | os.PathLike[str],
    threads: int | Literal["auto"] | None = "auto",
    flow_columns: Sequence[str] | None = None,
) -> Prepared:
    """Checks and builds ``scenario``'s run on ``threads`` without running it: raises
    ``ScenarioError`` where :func:`run` would, and resolves the scenario once for both (a
    large fabric's tables or a trace of millions of messages are built once). ``flow_columns``:
    the flows table's columns its run will make (:func:`run`'s), which the memory estimate
    counts (all if None)."""
    asked = parse_threads(threads)
    sc = _scenario(scenario)
    keep = _columns(flow_columns)
    with sc.naming_files():
        return Prepared(sc, _core.Simulation(sc._take_parsed(sc.to_json()), asked, keep), asked, keep)


def _columns(flow_columns: Sequence[str] | None) -> list[str] | None:
    """``flow_columns`` checked: None (every column) or names of the flows table's columns."""
    if flow_columns is not None and (isinstance(flow_columns, str) or not all(isinstance(c, str) for c in flow_columns)):
        raise argument_error("flow_columns", flow_columns, "a list of the flows table's column names, or None")
    keep = None if flow_columns is None else list(flow_columns)
    unknown = [c for c in keep or () if c not in schema("flows")]
    if unknown:
        raise scenario_error("flow_columns", f"got {unknown[0]!r}; allowed: the flows table's columns ({', '.join(schema('flows'))})")
    return keep


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB (Linux reports KiB, macOS bytes)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def give_back_freed() -> None:
    """Returns to the system what the run's state freed: glibc keeps freed pages for the process,
    and the tables made next (by polars, with its own allocator) would not reuse them (the
    1 024-rank ring: 167 MB given back, the summary's peak 579 -> 513 MB). Linux with glibc
    only (``malloc_trim``); elsewhere it does nothing."""
    if sys.platform != "linux":
        return
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def cores() -> int:
    """The CPUs this process may run on: its affinity mask and its cgroup's CPU quota, at
    least 1, as the core reads them for ``threads="auto"`` (one count for both). A sweep keeps
    its workers x threads per point within it."""
    return _core.available_cpus()


def parse_threads(value: object, field: str = "threads") -> int | None:
    """A thread count as the front ends take it: a positive count, or ``"auto"`` (returned as
    ``None``: the engine chooses). Anything else raises :class:`fabricsim.ScenarioError`
    naming ``field``."""
    if value is None or value == "auto":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise scenario_error(field, f'got {value!r}; expected "auto" or a count of threads from 1 to {MAX_THREADS}')
    return value


def run(
    scenario: Scenario | dict[str, Any] | str | os.PathLike[str] | Prepared,
    progress: Callable[[Progress], None] | None = None,
    threads: int | Literal["auto"] | None = "auto",
    reference: Literal["nonblocking"] | None = None,
    flow_columns: Sequence[str] | None = None,
) -> Results:
    """Run a scenario to completion (or its stop guard) and return the results.

    Parameters
    ----------
    scenario
        A :class:`Scenario`, a dict in the TOML layout, or a TOML file's path; or a
        :class:`Prepared` run (:func:`prepare`, which fixed its ``threads``). Anything else
        raises :class:`fabricsim.ArgumentError` (a ``TypeError``); a scenario that cannot run,
        :class:`fabricsim.ScenarioError` (a ``ValueError``).
    progress
        Called between chunks of events with a :class:`Progress`.
    threads
        Threads of the parallel engine, or ``"auto"`` (the default; ``None`` means the same):
        one thread for a small run (fewer than about 2 M events expected), else one per CPU
        available to the process (its affinity and cgroup quota) and at most one per leaf;
        a window after one with few events runs on one thread (docs/performance.md, "Threads
        on a busy machine"). The results are the same for any number; ``summary["threads"]``
        says how many ran, ``summary["solo_windows"]`` how many windows an auto run ran on
        one thread, and ``summary["thread_note"]`` why fewer than asked, where that happened.
    reference
        ``"nonblocking"``: run the scenario again on one non-blocking switch (the same hosts,
        NICs, transport and job placement, no faults: :mod:`fabricsim.reference`) and add each
        job iteration's ``nonblocking_jct_ps`` and ``fabric_cost`` (JCT over it) to ``jobs``,
        and ``max_fabric_cost`` to the summary. Needs ``[[jobs]]`` or a trace.
    flow_columns
        The columns of the flows table to keep (their declared order; ``None``, the default:
        every one). The others are never made: a run of millions of messages whose caller reads a
        few columns holds only those (``fabricsim run`` without ``--out`` keeps the six its
        summary reads). The summary and the other tables do not change. A name the table does
        not declare raises :class:`fabricsim.ScenarioError` naming it.

    Raises
    ------
    ScenarioError
        Before anything runs, if the scenario is invalid (or ``threads`` is not a positive
        count).

    Examples
    --------
    >>> import fabricsim
    >>> r = fabricsim.run({"topology": {"hosts": 16, "radix": 8},
    ...                    "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 9, "size": "64KiB"}]}})
    >>> r.summary["status"], r.flows["slowdown"][0]
    ('complete', 1.0)
    """
    wanted = reference_module.check(reference)
    keep = _columns(flow_columns)
    if progress is not None and not callable(progress):
        raise argument_error("progress", progress, "a callable taking a Progress, or None")
    if isinstance(scenario, Prepared):
        keep = scenario.flow_columns if flow_columns is None else keep
        asked, sim, scenario = scenario.threads, scenario.take(), scenario.scenario
    else:
        asked = parse_threads(threads)
        scenario = _scenario(scenario)
        with scenario.naming_files():
            sim = _core.Simulation(scenario._take_parsed(scenario.to_json()), asked, keep)
    ref = None if wanted is None else reference_module.reference_scenario(sim, scenario.base_dir)
    extra: dict[str, Any] = {"threads": sim.threads}
    if sim.thread_note is not None:
        extra["thread_note"] = sim.thread_note

    def report() -> None:
        if progress is not None:
            progress(
                Progress(sim.now_ps, sim.max_time_ps, sim.flows_done, sim.flow_count, sim.events, sim.expected_events, sim.memory_estimate)
            )

    report()
    while sim.step(STEP_EVENTS) == "running":
        report()
    report()
    if asked is None:
        extra["solo_windows"] = sim.windows[1]
    res = Results.from_native(sim.results(keep), extra | {"peak_rss_mb": round(peak_rss_mb(), 1)})
    give_back_freed()
    if ref is not None:
        # its jobs table is all the reference gives
        reference_module.attach(res, run(ref, threads=threads, flow_columns=()))
        res.summary["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return res
