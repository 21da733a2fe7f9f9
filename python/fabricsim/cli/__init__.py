"""The ``fabricsim`` command: one module a command (``run``, ``compare``, ``topology`` and
``list``, ``schema``, ``bench``, ``sweep``, ``plot`` and ``report``, ``reproduce``), what they share in
:mod:`.common` and what they print in :mod:`.printer`.

Exit codes: 0 success, 1 internal error, 2 bad input (a scenario the core rejects, a
missing file, a bad option, a sweep or experiment file), 3 a run that ended incomplete (stop
guard hit), 4 a missing optional dependency; each from the exception's class
(:mod:`fabricsim.errors`).
"""

from __future__ import annotations

# the commands register in the order `fabricsim --help` lists them
# isort: off
from . import run, compare, topology, schema, bench, sweep, plot, reproduce

# isort: on
from .common import SUMMARY_FLOW_COLUMNS, app, main

__all__ = ["SUMMARY_FLOW_COLUMNS", "app", "bench", "compare", "main", "plot", "reproduce", "run", "schema", "sweep", "topology"]

if __name__ == "__main__":
    main()
