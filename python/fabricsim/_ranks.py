"""The two collective operations a run across processes moves by (``_core.Simulation.run_ranked``),
made of an MPI communicator's: an ``allgather`` of a few bytes a step, and an all-to-all of one
buffer a window (the packets that cross processes).

With mpi4py's communicator the all-to-all is its buffer ``Alltoallv`` of bytes: the window's
bytes are not pickled (a pickled list of bytes held about four copies of them at once, about
20 MB a process on the 8 192-host permutation of docs/scale.md). Any other object with
``allgather`` and ``alltoall`` of Python objects (a test's stand-in) is used through those.
This module imports nothing heavy, so a process that runs only the extension
(``tools/scale_bench.py``) can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

AllToAllV = Callable[[bytes, list[int]], tuple[bytes | bytearray, list[int]]]


def exchange(comm: Any) -> tuple[Callable[[bytes], list[bytes]], AllToAllV]:
    """``(allgather, alltoallv)`` over ``comm``: ``alltoallv(send, counts)`` sends
    ``counts[r]`` bytes of ``send``, in rank order, to rank ``r`` and returns what every rank
    sent this one, as one buffer and its counts."""
    if hasattr(comm, "Alltoallv"):
        from mpi4py import MPI

        def alltoallv(send: bytes, counts: list[int]) -> tuple[bytes | bytearray, list[int]]:
            got = comm.alltoall(counts)
            recv = bytearray(sum(got))
            comm.Alltoallv([send, counts, MPI.BYTE], [recv, got, MPI.BYTE])
            return recv, got

    else:

        def alltoallv(send: bytes, counts: list[int]) -> tuple[bytes | bytearray, list[int]]:
            parts, at = [], 0
            for n in counts:
                parts.append(send[at : at + n])
                at += n
            got = comm.alltoall(parts)
            return b"".join(got), [len(b) for b in got]

    return comm.allgather, alltoallv
