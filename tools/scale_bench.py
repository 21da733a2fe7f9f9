"""Wall time, events and peak memory of scenarios on 1..N threads and across MPI processes, each
run in a fresh process, for the many-core figures of docs/performance.md ("On many cores").

    python tools/scale_bench.py prepare DIR                 # writes the scenarios' JSON into DIR
    python tools/scale_bench.py run F.json THREADS          # one run in this process: one JSON line
    mpiexec -n P python tools/scale_bench.py run F.json THREADS --mpi
    python tools/scale_bench.py sweep DIR OUT.jsonl --threads 1,2,4,8,16 --mpi 2x8 [--only A,B] [--deadline S]

`run` and `sweep` need only the extension (`fabricsim._core`) and, for `--mpi`, mpi4py: where
the package's Python dependencies (polars, ...) are not installed, the extension is loaded alone,
so a machine without network access needs only the built extension and MPI's wheels. Each line
says the scenario, processes x threads, the build's and the run's wall, the events, the
simulated end time, the parallel windows and where their wall went (`window_profile`: the
driver's time in windows, the worker threads' waits between and within them, summed over the
threads), each process's peak RSS and a digest of the flows table: equal digests are results
equal to the picosecond.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def core() -> Any:
    """The extension, with or without the package's Python dependencies."""
    try:
        from fabricsim import _core

        return _core
    except ImportError:
        bare = types.ModuleType("fabricsim")
        bare.__path__ = [str(ROOT / "python" / "fabricsim")]
        sys.modules["fabricsim"] = bare
        from fabricsim import _core

        return _core


def prepare(out: Path) -> None:
    """The scenarios: the 8 MiB OPS permutations of 128, 1 024 and 8 192 hosts (`perm-*-8MiB-ops`:
    an event's cost as the fabric grows, on one thread), the 8 192-host one at 1 MiB (`perm8192_1m`:
    docs/scale.md's two-core table across processes), the 256-GPU GPT-3 XL step
    (`scenarios/training_dense_256.toml`) and the same step on 1 024 GPUs (DP 32, 4 micro-batches:
    docs/scale.md)."""
    import fabricsim
    from fabricsim.bench import _perm

    out.mkdir(parents=True, exist_ok=True)
    step = fabricsim.Scenario.load(ROOT / "scenarios" / "training_dense_256.toml")
    big = step.set("topology.hosts", 1024).set("jobs[0].ranks", 1024)
    big = big.set("jobs[0].parallel.dp", 32).set("jobs[0].parallel.micro_batches", 4)
    perms = {f"perm{n}": fabricsim.Scenario(_perm(n, radix, "ops")) for n, radix in ((128, 16), (1024, 64), (8192, 128))}
    perms["perm8192_1m"] = fabricsim.Scenario(_perm(8192, 128, "ops", size="1MiB"))
    runs = {**perms, "step256": step, "step1024": big}
    for name, sc in runs.items():
        (out / f"{name}.json").write_text(sc.to_json())


def digest(flows: dict[str, list[Any]]) -> str:
    h = hashlib.sha256()
    for name in sorted(flows):
        h.update(name.encode())
        h.update(repr(flows[name]).encode())
    return h.hexdigest()[:16]


def run(path: str, threads: int, mpi: bool) -> None:
    c = core()
    text = Path(path).read_text()
    started = time.perf_counter()
    if mpi:
        from mpi4py import MPI

        comm = MPI.COMM_WORLD
        sim = c.Simulation.ranked(text, comm.Get_size(), comm.Get_rank(), threads)
        built = time.perf_counter()
        from fabricsim._ranks import exchange

        holds = sim.run_ranked(*exchange(comm))
        ran = time.perf_counter()
        peaks = comm.gather(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        procs = comm.Get_size()
    else:
        sim = c.Simulation(text, threads)
        built = time.perf_counter()
        sim.step(2**64 - 1)
        ran, holds, procs = time.perf_counter(), True, 1
        peaks = [resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]
    if not holds:
        return
    used, windows, profile = sim.threads, sim.windows, sim.window_profile
    r = sim.results()
    summary = json.loads(r["summary"])
    line = {
        "scenario": Path(path).stem,
        "processes": procs,
        "threads": threads,
        "threads_used": used,
        "build_s": round(built - started, 3),
        "run_s": round(ran - built, 3),
        "events": summary["events"],
        "sim_time_ns": summary["sim_time_ns"],
        "status": summary["status"],
        "windows": windows,
        # the driver's time in windows, and the workers' waits between and within them (s)
        "window_profile": [round(x, 3) for x in profile],
        "peak_mb": [round(p, 1) for p in peaks],
        "flows_digest": digest(r["flows"]),
    }
    print(json.dumps(line), flush=True)


def machine() -> dict[str, Any]:
    """What the figures were measured on: the CPUs, the processor's name, the commit."""
    import platform

    model = next((x.split(":", 1)[1].strip() for x in _lines("/proc/cpuinfo") if x.startswith("model name")), platform.processor())
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    return {"machine": model, "cpus": os.cpu_count(), "python": platform.python_version(), "commit": commit}


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def sweep(folder: Path, out: Path, threads: list[int], mpis: list[tuple[int, int]], deadline: float, names: list[str]) -> None:
    """Every scenario of `folder` (or `names`, in that order) on each thread count, then across
    processes; each run's line appended to `out` as it ends. A run still going at `deadline`
    seconds from the start is stopped and recorded as such."""
    end = time.monotonic() + deadline
    mpiexec = os.environ.get("MPIEXEC", "mpiexec")
    with out.open("a") as fh:
        fh.write(json.dumps(machine()) + "\n")
    for name in names or sorted(p.stem for p in folder.glob("*.json")):
        f = str(folder / f"{name}.json")
        plans = [([sys.executable, __file__, "run", f, str(t)], f"1x{t}", 1) for t in threads]
        plans += [([mpiexec, "-n", str(p), sys.executable, __file__, "run", f, str(t), "--mpi"], f"{p}x{t}", p) for p, t in mpis]
        for cmd, label, procs in plans:
            left = end - time.monotonic()
            if left < 5:
                line = {"scenario": name, "run": label, "skipped": "deadline"}
            else:
                try:
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=left - 2)
                    got = [x for x in p.stdout.splitlines() if x.startswith("{")]
                    line = json.loads(got[-1]) if got else {"scenario": name, "run": label, "rc": p.returncode, "err": p.stderr[-2000:]}
                except subprocess.TimeoutExpired:
                    line = {"scenario": name, "run": label, "stopped": "deadline"}
            line["run"] = label
            if line.get("processes", procs) != procs:
                # mpiexec started singletons: mpi4py loaded another MPI than mpiexec's (MPI4PY_LIBMPI)
                line["error"] = f"{line['processes']} process(es) a run, not {procs}: mpiexec and mpi4py's MPI library differ"
            print(json.dumps(line), flush=True)
            with out.open("a") as fh:
                fh.write(json.dumps(line) + "\n")


def main() -> None:
    a = sys.argv[1:]
    if a[0] == "prepare":
        prepare(Path(a[1]))
    elif a[0] == "run":
        run(a[1], int(a[2]), "--mpi" in a[3:])
    elif a[0] == "sweep":
        opt = {a[i]: a[i + 1] for i in range(3, len(a) - 1, 2)}
        threads = [int(t) for t in opt.get("--threads", "1,2").split(",")]
        mpis = [(int(x.split("x")[0]), int(x.split("x")[1])) for x in opt.get("--mpi", "").split(",") if x]
        names = [n for n in opt.get("--only", "").split(",") if n]
        sweep(Path(a[1]), Path(a[2]), threads, mpis, float(opt.get("--deadline", "86400")), names)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
