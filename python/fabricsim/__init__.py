"""fabricsim: a packet-level simulator of AI/ML datacenter fabrics.

Ask what a load balancer (ECMP, oblivious spraying, ...) does to flow completion times,
queues, trims and drops on a fat tree, from one command or a few lines of Python.

>>> import fabricsim
>>> s = fabricsim.Scenario({"topology": {"hosts": 16, "radix": 8}}).set("workload.size", "256KiB")
>>> r = fabricsim.run(s)
>>> r.summary["status"]
'complete'
"""

import sys as _sys
from itertools import pairwise as _pairwise


def _stopped_quietly(kind: type[BaseException], value: BaseException, tb: object) -> None:
    """The command line's answer to Ctrl-C before it can catch it (while Python imports the
    package, the first half second): the line it prints later, not a traceback (the
    interpreter then exits 130, as for SIGINT)."""
    if issubclass(kind, KeyboardInterrupt):
        _sys.stderr.write("stopped by SIGINT; nothing was written\n")
        return
    _sys.__excepthook__(kind, value, tb)  # type: ignore[arg-type]


def _is_command_line() -> bool:
    """Whether this process is the ``fabricsim`` command (its script, or ``python -m fabricsim``)."""
    argv = getattr(_sys, "orig_argv", _sys.argv)
    script = _sys.argv[0].replace("\\", "/").rsplit("/", 1)[-1] if _sys.argv else ""
    return script in ("fabricsim", "fabricsim.exe") or any(a == "-m" and b == "fabricsim" for a, b in _pairwise(argv))


if _is_command_line():
    _sys.excepthook = _stopped_quietly

import json as _json  # noqa: E402
from typing import Any as _Any  # noqa: E402

from . import _core  # noqa: E402
from .errors import ArgumentError, FabricsimError, InternalError, MissingDependency, ScenarioError, SpecError  # noqa: E402
from .results import Results  # noqa: E402
from .run import Prepared, Progress, prepare, run  # noqa: E402
from .scenario import Estimate, Scenario  # noqa: E402
from .session import Completion, Session  # noqa: E402
from .summary import Summary  # noqa: E402

__version__ = _core.__version__

__all__ = [
    "ArgumentError",
    "Completion",
    "Estimate",
    "FabricsimError",
    "InternalError",
    "MissingDependency",
    "Prepared",
    "Progress",
    "Results",
    "Scenario",
    "ScenarioError",
    "Session",
    "SpecError",
    "Summary",
    "__version__",
    "load",
    "prepare",
    "registry",
    "run",
    "schema",
]


def load(path: str) -> Scenario:
    """Load a TOML scenario file."""
    return Scenario.load(path)


def schema() -> dict[str, _Any]:
    """The JSON schema of a scenario (draft 2020-12), generated from the core's declarations of
    its options (their names, defaults, units and meanings): what an editor checks a scenario
    file against. ``fabricsim schema`` prints it; docs/scenario.schema.json is a copy."""
    return _json.loads(_core.schema())  # type: ignore[no-any-return]


def registry() -> list[dict[str, str]]:
    """Every registered name: load balancers, workloads, routing, cc, transports, topologies."""
    return [dict(zip(("category", "name", "summary", "reference"), row, strict=True)) for row in _core.registry()]
