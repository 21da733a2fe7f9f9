"""The standard performance scenarios (``fabricsim bench``).

Each benchmark runs in a fresh Python process that imports only the native module, so its
peak memory is the simulation's and not that of whatever ran before. The large ones (marked
``default=False``) run only when named (``--only``) or with ``--all``; each runs on the thread
counts asked (``--threads 1,2,4``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from .errors import InternalError


@dataclass(frozen=True)
class Benchmark:
    name: str
    scenario: dict[str, Any]
    #: Runs without being named (the large ones take minutes and GBs).
    default: bool = True


def _perm(hosts: int, radix: int, lb: str, size: str = "8MiB", tiers: int = 2) -> dict[str, Any]:
    return {
        "seed": 1,
        "topology": {
            "tiers": tiers,
            "hosts": hosts,
            "radix": radix,
            "link_rate": "400Gbps",
            "link_latency": "1us",
            "switch_latency": "0ns",
        },
        "switch": {"buffer": "1bdp", "ecn": {"kmin": "0.2bdp", "kmax": "0.8bdp"}},
        "transport": {"mtu": "4160B"},
        "lb": {"kind": lb},
        "workload": {"kind": "permutation", "size": size},
    }


def _fabric1024() -> dict[str, Any]:
    return {"tiers": 2, "hosts": 1024, "radix": 64, "link_rate": "400Gbps", "link_latency": "1us", "switch_latency": "0ns"}


BENCHMARKS = [
    # The core issue's target: 1024 hosts (32 leaves x 32 hosts, 32 spines), 8 MiB, ops: < 10 s, < 200 MB.
    Benchmark("perm-1024-8MiB-ops", _perm(1024, 64, "ops")),
    Benchmark("perm-1024-8MiB-ecmp", _perm(1024, 64, "ecmp")),
    Benchmark("perm-1024-8MiB-arcane", _perm(1024, 64, "arcane")),
    Benchmark("perm-1024-8MiB-prime", _perm(1024, 64, "prime")),
    Benchmark("perm-128-8MiB-ops", _perm(128, 16, "ops")),
    # At scale (issue 22): the PRIME paper's largest fabric, 8192 hosts (128 leaves x 64 hosts,
    # 64 spines), and a 32768-host 3-tier fat tree (32 pods of 32 leaves x 32 hosts).
    Benchmark("perm-8192-8MiB-ops", _perm(8192, 128, "ops"), default=False),
    Benchmark("perm-32768-3tier-1MiB-ops", _perm(32768, 64, "ops", size="1MiB", tiers=3), default=False),
    # AI workloads (docs/workloads.md): a 1024-rank ring allreduce of 64 MiB per rank, and
    # WebSearch at 60 % of every host link for 5 ms on the same fabric. The jobs run on the
    # fabric alone (costs = "none", protocol = "simple", as before jobs counted NCCL's costs by
    # default), so that the engine's figures stay comparable with docs/performance.md's history.
    Benchmark(
        "allreduce-1024-64MiB-ring-ops",
        {
            "seed": 1,
            "topology": _fabric1024(),
            "lb": {"kind": "ops"},
            "jobs": [{"collective": "allreduce", "size": "64MiB", "ranks": 1024, "costs": "none", "protocol": "simple"}],
        },
        default=False,
    ),
    # A training iteration (scenarios/training_dense_256.toml): GPT-3 XL on 32 servers of 8
    # GPUs with a scale-up network, tp = 8, pp = 4, dp = 8, 8 micro-batches, rail-optimized.
    Benchmark(
        "training-256-gpt3-1.3b-prime",
        {
            "seed": 1,
            "topology": {
                "hosts": 256,
                "radix": 64,
                "nics_per_server": 8,
                "rails": True,
                "link_latency": "500ns",
                "switch_latency": "500ns",
                "scale_up_rate": "7200Gbps",
            },
            "lb": {"kind": "prime"},
            "jobs": [
                {
                    "ranks": 256,
                    "costs": "none",
                    "protocol": "simple",
                    "model": {"preset": "gpt3-1.3b"},
                    "parallel": {"tp": 8, "pp": 4, "dp": 8, "micro_batches": 8, "gpu_tflops": 400},
                }
            ],
            "stop": {"max_time": "2s"},
        },
        default=False,
    ),
    Benchmark(
        "websearch-1024-60pct-5ms-ops",
        {
            "seed": 1,
            "topology": _fabric1024(),
            "lb": {"kind": "ops"},
            "workload": {"kind": "trace", "cdf": "websearch", "load": 0.6, "duration": "5ms"},
        },
        default=False,
    ),
]

_WORKER = """
import importlib.util, json, pathlib, resource, sys, time
# Load the extension alone: the package's __init__ would import polars (~50 MB).
pkg = importlib.util.find_spec("fabricsim").submodule_search_locations
path = next(p for d in pkg for p in pathlib.Path(d).glob("_core*.so"))
spec = importlib.util.spec_from_file_location("fabricsim._core", path)
_core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(_core)
sim = _core.Simulation(sys.argv[1], None if sys.argv[2] == "auto" else int(sys.argv[2]))
threads, expected = sim.threads, sim.expected_events
t = time.perf_counter()
while sim.step(1_000_000_000) == "running":
    pass
wall = time.perf_counter() - t
windows = sim.windows
s = json.loads(sim.results()["summary"])
print(json.dumps({"status": s["status"], "events": s["events"], "expected_events": expected, "data_packets": s["data_packets"],
                  "wall_s": wall, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "threads": threads,
                  "auto": sys.argv[2] == "auto", "windows": windows,
                  "max_slowdown": s["max_slowdown"], "mean_slowdown": s["mean_slowdown"]}))
"""


def measure(b: Benchmark, threads: int | None = 1) -> dict[str, Any]:
    """Runs ``b`` on ``threads`` threads (``None``: auto) in a fresh process: events, packets,
    wall time (the run alone, not the build nor the results), peak memory, and the threads it
    used."""
    argv = [sys.executable, "-c", _WORKER, json.dumps(b.scenario), "auto" if threads is None else str(threads)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InternalError(f"benchmark {b.name} failed: {proc.stderr.strip()}")
    measured: dict[str, Any] = json.loads(proc.stdout)
    return {"name": b.name, **measured}


#: What ``fabricsim bench --contended`` runs by default: a small fabric and the 1024-host one.
CONTENDED = ("perm-128-8MiB-ops", "perm-1024-8MiB-ops")


def contended(benchmarks: list[Benchmark], counts: list[int | None], rounds: int = 5) -> list[dict[str, Any]]:
    """Runs each benchmark on each thread count (``None``: auto) while busy loops hold every
    CPU this process may use (one ``while True: pass`` process per CPU, as another job, a
    notebook or a sweep's other points would; each ends with this process), ``rounds`` times interleaved (round after
    round, each benchmark on each count in turn), so that a change of the machine's load
    falls on every count alike. Returns one row per (benchmark, count): the median wall time,
    its ratio to the median on one thread (where one thread was measured), each round's wall
    time, and the windows run on all threads and (auto) on one."""
    from statistics import median

    from .run import cores

    # a busy loop that ends with this process, even if it is killed
    hog = f"import os\nwhile os.getppid() == {os.getpid()}: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(cores())]
    try:
        runs: dict[tuple[str, int | None], list[dict[str, Any]]] = {}
        for _ in range(rounds):
            for b in benchmarks:
                for n in counts:
                    runs.setdefault((b.name, n), []).append(measure(b, n))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    rows = []
    for (name, n), got in runs.items():
        walls = [g["wall_s"] for g in got]
        one = runs.get((name, 1))
        base = median(g["wall_s"] for g in one) if one else None
        rows.append(
            {
                "name": name,
                "asked": "auto" if n is None else n,
                "threads": got[0]["threads"],
                "median_wall_s": median(walls),
                "vs_1_thread": median(walls) / base if base else None,
                "walls_s": walls,
                "windows": [g["windows"] for g in got],
                "events": got[0]["events"],
            }
        )
    return rows
