"""Wall time and peak memory of one run in one process (threads) or across the processes of an
MPI launch (docs/scale.md, "Across processes").

    python tools/mpi_bench.py HOSTS RADIX SIZE THREADS             # one process, THREADS threads
    mpiexec -n 2 python tools/mpi_bench.py HOSTS RADIX SIZE mpi [THREADS]   # THREADS a process

The run is `fabricsim.bench`'s OPS permutation of SIZE per host on HOSTS hosts of radix RADIX;
rank 0 prints one JSON line: the wall of the run, its events and each process's peak memory.
"""

from __future__ import annotations

import json
import resource
import sys
import time

import fabricsim
from fabricsim.bench import _perm


def main() -> None:
    hosts, radix, size, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    sc = fabricsim.Scenario(_perm(hosts, radix, "ops", size=size))
    started = time.perf_counter()
    if mode == "mpi":
        from fabricsim.mpi import run_mpi
        from mpi4py import MPI

        threads = int(sys.argv[5]) if len(sys.argv) > 5 else 1
        res = run_mpi(sc, threads=threads)
        wall = time.perf_counter() - started
        peaks = MPI.COMM_WORLD.gather(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        label = f"{MPI.COMM_WORLD.Get_size()} processes x {threads} threads"
    else:
        res = fabricsim.run(sc, threads=int(mode))
        wall = time.perf_counter() - started
        peaks = [resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]
        label = f"1 process, {mode} threads"
    if res is not None:
        out = {"run": label, "wall_s": round(wall, 2), "events": res.summary["events"], "peak_mb": [round(p) for p in peaks]}
        print(json.dumps(out))


if __name__ == "__main__":
    main()
