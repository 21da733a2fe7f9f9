"""fabricsim: a packet-level simulator of AI/ML datacenter fabrics.

Ask what a load balancer (ECMP, oblivious spraying, ...) does to flow completion times,
queues, trims and drops on a fat tree, from one command or a few lines of Python.

>>> import fabricsim
>>> s = fabricsim.Scenario({"topology": {"hosts": 16, "radix": 8}}).set("workload.size", "256KiB")
>>> r = fabricsim.run(s)
>>> r.summary["status"]
'complete'
"""

from . import _core
from .errors import ArgumentError, FabricsimError, InternalError, MissingDependency, ScenarioError, SpecError
from .results import Results
from .run import Prepared, Progress, prepare, run
from .scenario import Scenario

__version__ = _core.__version__

__all__ = [
    "ArgumentError",
    "FabricsimError",
    "InternalError",
    "MissingDependency",
    "Prepared",
    "Progress",
    "Results",
    "Scenario",
    "ScenarioError",
    "SpecError",
    "__version__",
    "load",
    "prepare",
    "registry",
    "run",
]


def load(path: str) -> Scenario:
    """Load a TOML scenario file."""
    return Scenario.load(path)


def registry() -> list[dict[str, str]]:
    """Every registered name: load balancers, workloads, routing, cc, transports, topologies."""
    return [dict(zip(("category", "name", "summary", "reference"), row, strict=True)) for row in _core.registry()]
