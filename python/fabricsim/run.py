"""Running a scenario."""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import _core
from .results import Results
from .scenario import Scenario

__all__ = ["Progress", "peak_rss_mb", "run"]

#: Events per native call between progress updates (~20-50 ms of simulation).
STEP_EVENTS = 200_000


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


def run(scenario: Scenario | dict[str, Any], progress: Callable[[Progress], None] | None = None) -> Results:
    """Run a scenario to completion (or its stop guard) and return the results.

    Parameters
    ----------
    scenario
        A :class:`Scenario` or a dict in the TOML layout.
    progress
        Called between chunks of events with a :class:`Progress`.

    Raises
    ------
    ScenarioError
        Before anything runs, if the scenario is invalid.

    Examples
    --------
    >>> import fabricsim
    >>> r = fabricsim.run({"topology": {"hosts": 16, "radix": 8},
    ...                    "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 9, "size": "64KiB"}]}})
    >>> r.summary["status"], r.flows["slowdown"][0]
    ('complete', 1.0)
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario(scenario)
    sim = _core.Simulation(scenario.to_json())
    while sim.step(STEP_EVENTS) == "running":
        if progress is not None:
            progress(Progress(sim.now_ps, sim.max_time_ps, sim.flows_done, sim.flow_count, sim.events))
    if progress is not None:
        progress(Progress(sim.now_ps, sim.max_time_ps, sim.flows_done, sim.flow_count, sim.events))
    return Results.from_native(sim.results(), {"peak_rss_mb": round(peak_rss_mb(), 1)})
