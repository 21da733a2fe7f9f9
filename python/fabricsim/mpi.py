"""One run across the processes of an MPI launch: ``mpiexec -n N fabricsim run SCENARIO --mpi``,
or :func:`run_mpi` from a script that every process runs.

The run is cut into pieces as for threads (a leaf with its hosts each), and each process runs
its own consecutive pieces; the processes move in lockstep through two collective operations of
an MPI communicator (an ``allgather`` of a few bytes, and mpi4py's buffer ``Alltoallv`` of the
packets that cross processes: :mod:`fabricsim._ranks`), a window at a time where the
threads' engine would run one and a turn at a time where it would run in turns, and at the end
rank 0 gathers what the others' pieces hold for the results. The results are those of one
process, bit for bit, on any number of processes (docs/scale.md, "Across processes").

MPI is optional: ``pip install 'fabricsim[mpi]'`` installs mpi4py and MPICH's wheel (its
``mpiexec``); mpi4py built against the system's MPI (Open MPI, MPICH) works as well.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from . import _core
from ._ranks import exchange
from .errors import MissingDependency, argument_error
from .results import Results
from .run import _columns, _scenario, peak_rss_mb
from .scenario import Scenario

#: What to install for a run across processes.
INSTALL = "pip install 'fabricsim[mpi]' (mpi4py and MPICH's wheel), or mpi4py built against your system's MPI"


#: What a launcher tells each process it starts of how many it started: MPICH's and Intel
#: MPI's Hydra (``PMI_SIZE``), Open MPI's ``mpirun`` (``OMPI_COMM_WORLD_SIZE``).
LAUNCHED = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


def launched() -> tuple[str, int] | None:
    """The variable by which this process's launcher says it started more than one, and how
    many, or ``None``."""
    for name in LAUNCHED:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 1:
            return name, int(value)
    return None


def communicator(comm: Any = None) -> Any:
    """``comm``, or MPI's world communicator; raises :class:`fabricsim.MissingDependency`
    saying what to install where mpi4py is not, and where the launcher started several
    processes but MPI sees each alone (mpi4py loaded another MPI library than the launcher's:
    every process would run the whole scenario and write the same files)."""
    if comm is not None:
        return comm
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise MissingDependency(f"a run across processes needs MPI for Python: {INSTALL} ({e})") from None
    world = MPI.COMM_WORLD
    started = launched()
    if started is not None and world.Get_size() == 1:
        name, n = started
        library = MPI.Get_library_version().splitlines()[0].strip()
        raise MissingDependency(
            f"the launcher started {n} processes ({name}={n}) but MPI for Python sees each alone: mpi4py loaded "
            f"another MPI than the launcher's ({library}); launch with that MPI's mpiexec, or point mpi4py at the "
            "launcher's library (MPI4PY_LIBMPI=/path/to/libmpi.so)"
        )
    return world


def run_mpi(
    scenario: Scenario | dict[str, Any] | str | os.PathLike[str],
    comm: Any = None,
    flow_columns: Sequence[str] | None = None,
    threads: int = 1,
) -> Results | None:
    """Run ``scenario`` across the processes of ``comm`` (MPI's world communicator if
    ``None``), each running its share on ``threads`` threads: every process calls it alike.
    Returns the results on rank 0, and ``None`` on the others.

    ``comm`` is mpi4py's communicator, or anything with its ``Get_rank``, ``Get_size``,
    ``allgather`` and ``alltoall`` (the all-to-all then goes through pickled lists rather than
    ``Alltoallv``'s buffers). ``flow_columns`` as :func:`fabricsim.run`'s. The results do not depend on
    the processes or the threads. A scenario that cannot run
    across processes raises :class:`fabricsim.ScenarioError` on every rank alike, naming its
    field: more processes than the fabric's pieces.
    """
    comm = communicator(comm)
    ranks, rank = int(comm.Get_size()), int(comm.Get_rank())
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise argument_error("threads", threads, "a positive count of threads for each process")
    keep = _columns(flow_columns)
    sc = _scenario(scenario)
    with sc.naming_files():
        sim = _core.Simulation.ranked(sc.to_json(), ranks, rank, threads, keep)
    used = sim.threads
    if not sim.run_ranked(*exchange(comm)):
        return None
    return Results.from_native(sim.results(keep), {"threads": used, "processes": ranks, "peak_rss_mb": round(peak_rss_mb(), 1)})
