"""Running a scenario."""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import _core
from .errors import argument_error, scenario_error
from .results import Results
from .scenario import Scenario

__all__ = ["Progress", "cores", "peak_rss_mb", "run"]

#: Events per native call between progress updates (~20-50 ms of simulation).
STEP_EVENTS = 200_000
#: The most threads a run may ask for (a run uses at most one per leaf of its fabric).
MAX_THREADS = 4096


@dataclass(frozen=True)
class Progress:
    """Where a run stands, passed to a progress callback."""

    now_ps: int
    max_time_ps: int
    flows_done: int
    flow_count: int
    events: int


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB (Linux reports KiB, macOS bytes)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def cores() -> int:
    """The cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def run(
    scenario: Scenario | dict[str, Any] | str | os.PathLike[str],
    progress: Callable[[Progress], None] | None = None,
    threads: int | None = None,
) -> Results:
    """Run a scenario to completion (or its stop guard) and return the results.

    Parameters
    ----------
    scenario
        A :class:`Scenario`, a dict in the TOML layout, or a TOML file's path. Anything else
        raises :class:`fabricsim.ArgumentError` (a ``TypeError``); a scenario that cannot run,
        :class:`fabricsim.ScenarioError` (a ``ValueError``).
    progress
        Called between chunks of events with a :class:`Progress`.
    threads
        Threads of the parallel engine (default: every core, :func:`cores`). The results
        are the same for any number; ``summary["threads"]`` says how many ran, and
        ``summary["thread_note"]`` why fewer than asked, where that happened.

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
    if threads is None:
        threads = cores()
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise scenario_error("threads", f"got {threads!r}; expected a count of threads from 1 to {MAX_THREADS}")
    if progress is not None and not callable(progress):
        raise argument_error("progress", progress, "a callable taking a Progress, or None")
    if isinstance(scenario, str | os.PathLike):
        scenario = Scenario.load(scenario)
    elif isinstance(scenario, dict):
        scenario = Scenario(scenario)
    elif not isinstance(scenario, Scenario):
        raise argument_error("scenario", scenario, "a Scenario, a dict in the TOML layout, or a TOML file's path")
    sim = _core.Simulation(scenario.to_json(), threads)
    extra: dict[str, Any] = {"threads": sim.threads}
    if sim.thread_note is not None:
        extra["thread_note"] = sim.thread_note
    while sim.step(STEP_EVENTS) == "running":
        if progress is not None:
            progress(Progress(sim.now_ps, sim.max_time_ps, sim.flows_done, sim.flow_count, sim.events))
    if progress is not None:
        progress(Progress(sim.now_ps, sim.max_time_ps, sim.flows_done, sim.flow_count, sim.events))
    return Results.from_native(sim.results(), extra | {"peak_rss_mb": round(peak_rss_mb(), 1)})
