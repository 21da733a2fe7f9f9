"""Sweeps: one base scenario run over a grid of field values and seeds, on every CPU.

A sweep spec is a TOML file::

    base = "permutation_128.toml"      # relative to the spec
    seeds = [1, 2, 3]                  # default: the base's seed
    [grid]                             # every combination
    "lb.kind" = ["ecmp", "ops", "arcane", "prime"]
    "workload.size" = ["2MiB", "8MiB"]
    [zip]                              # paired lists, all the same length
    "faults[0].fraction" = [0.01, 0.05]
    "faults[0].start" = ["10us", "20us"]
    [grid."switch.buffer"]             # named values: the names go in the results
    shallow = "256KiB"
    deep = "4MiB"
    [set]                              # fixed overrides of the base
    "stop.max_time" = "10ms"

Points are the product of the grid's axes, the zip's rows and the seeds, in that order. Every
point is validated before any runs. Each runs in its own process; its tables go to
``DIR/points/<id>/`` (written to a temporary directory, then renamed: a point is there whole
or not at all), and ``DIR/points.parquet`` has one row per point: its id, its axis values, and
its summary, rewritten as each point finishes and marked partial in its Parquet metadata
(``fabricsim_sweep``) until the sweep ends; a running point says where it stands every
:data:`PROGRESS_EVERY_S` seconds (:func:`running`). A rerun skips the points already there. A point's id is a hash of its whole scenario
(base, ``set``, axis values, seed): points keep their results when the spec gains or loses
others, and run again when the base or an override changes. ``points.parquet``
leaves out what depends on the machine (``wall_s``, ``peak_rss_mb``), so a sweep gives the
same file on any number of workers or on a Ray cluster; each point's ``summary.json`` keeps
them.

**Stopping.** SIGINT (Ctrl-C) or SIGTERM stops a sweep within seconds: nothing more is
dispatched, running points are cancelled (their workers terminated; a point is written whole or
not at all), ``points.parquet`` gets the points done, and :class:`Interrupted` is raised (the CLI
exits 130 or 143 and says how to resume). Workers ignore SIGINT (the parent decides) and exit
on their own if the parent dies (``kill -9``), so none is left behind. A directory is run by one
sweep at a time (a lock), and a rerun with a changed spec removes the old ``points.parquet``
before it writes the new ``sweep.toml``, so the two always agree.
"""

from .runner import Interrupted, collect, local_workers, run_points, run_sweep, running
from .spec import MACHINE_COLUMNS, POINTS_FILE, Point, Sweep

__all__ = [
    "MACHINE_COLUMNS",
    "POINTS_FILE",
    "Interrupted",
    "Point",
    "Sweep",
    "collect",
    "local_workers",
    "run_points",
    "run_sweep",
    "running",
]
