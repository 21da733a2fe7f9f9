"""An nccl-tests-style allreduce sweep: sizes from 8 B up, on 16, 128 and 1024 ranks, each under
ring, tree and ``auto`` (NCCL's tuner's pick), with the time and bus bandwidth nccl-tests prints
(``all_reduce_perf``: ``time`` in us, ``busbw`` = algbw x 2(n-1)/n). Prints a markdown table
for docs/workloads.md ("Collectives as NCCL runs them"); the figures there are its output.

    python3 tools/nccl_tests_sweep.py            # the documented sweep (about 10 minutes)
    python3 tools/nccl_tests_sweep.py --quick    # 16 ranks only
    python3 tools/nccl_tests_sweep.py --costs    # the ring without and with NCCL's costs
    python3 tools/nccl_tests_sweep.py --costs --server    # only the 8-GPU NVSwitch table

``--costs`` prints, per size (to 8 GiB), on the 16 ranks and on one server of 8 GPUs joined
by NVSwitch, the ring's time and bus bandwidth as fabricsim runs it by default
and with ``costs = "nccl"`` and ``protocol = "auto"`` (NCCL's latencies and the protocol its
tuner picks; docs/workloads.md, "NCCL's protocols and latencies"), and the protocol that ran;
on the server also NVLS (``algorithm = "nvls"``, with NCCL's costs) and what ``algorithm =
"auto"`` with ``protocol = "auto"`` runs there (docs/workloads.md, "NVLink SHARP").

One rank per host on a 2-tier fabric of exactly the ranks (16 hosts: radix 8; 128: radix 16;
1024: radix 64), 400 Gb/s links, the default transport, OPS spraying (so that ECMP's
collisions do not enter the latency and bandwidth regimes), two channels and 512 KiB slices
(NCCL's Simple protocol over one NIC). Sizes stop where a point would take minutes on two
cores: the largest per rank count is given in ``LARGEST``.
"""

from __future__ import annotations

import argparse
import sys
import time

import fabricsim

SIZES = [8, 64, 1 << 10, 8 << 10, 64 << 10, 512 << 10, 4 << 20, 32 << 20, 256 << 20, 1 << 30, 4 << 30, 8 << 30]
RADIX = {8: 8, 16: 8, 128: 16, 1024: 64}
LARGEST = {16: 4 << 30, 128: 256 << 20, 1024: 4 << 20}
#: The largest size of the ``--costs`` tables (nccl-tests' ``-e 8G``).
COSTS_LARGEST = 8 << 30


def point(ranks: int, size: int, algorithm: str, costs: bool = False, server: bool = False) -> tuple[float, float, str]:
    """(time us, busbw GB/s, the algorithm that ran; with ``costs``, the protocol) of one
    allreduce; with ``server``, on one server of ``ranks`` GPUs joined by NVSwitch (450 GB/s a
    GPU each way: NVLink 4's 900 GB/s counts both directions) instead of one rank a host of the
    fabric."""
    job = {"collective": "allreduce", "size": f"{size}B", "ranks": ranks, "algorithm": algorithm, "channels": 2}
    if algorithm in ("ring", "auto"):
        job["slice"] = "512KiB"
    if algorithm == "nvls":
        job["channels"] = 1
    if costs:
        job |= {"costs": "nccl", "protocol": "auto"}
    else:
        # the fabric alone: a job's defaults are NCCL's costs and its tuner's protocol
        job |= {"costs": "none", "protocol": "simple"}
    topology: dict[str, object] = {"hosts": ranks, "radix": RADIX[ranks]}
    if server:
        topology |= {"nics_per_server": ranks, "scale_up_rate": "3600Gbps"}
    s = {"seed": 1, "topology": topology, "lb": {"kind": "ops"}, "jobs": [job], "stop": {"max_time": "10s"}}
    r = fabricsim.run(s)
    if not r.complete:
        raise SystemExit(f"{ranks} ranks, {size} B, {algorithm}: {r.summary['stop_reason']}")
    jct_us = r.jobs["jct_ps"][0] / 1e6
    busbw = r.jobs["busbw_gbps"][0] / 8  # GB/s, as nccl-tests prints it
    ran = algorithm
    if costs and r.steps.height == 4:
        # NVLS's four legs (parts in, sum out, store in, copies out), Simple
        ran = "nvls" if algorithm == "auto" else "simple"
    elif costs:
        # the bytes sent say which protocol: LL doubles them, LL128 adds a 16th
        sent = sum(r.steps["bytes"])
        data = 2 * (ranks - 1) * size
        ran = "ll" if sent >= 1.9 * data else "ll128" if sent > 1.05 * data else "simple"
        if algorithm == "auto":
            ran = ("ring " if r.steps.height == 2 * (ranks - 1) else "tree ") + ran
    elif algorithm == "auto":
        # the messages made say which: a ring's 2(n-1) steps of n messages per channel
        ran = "ring" if r.steps.height == 2 * (ranks - 1) else "tree"
    return jct_us, busbw, ran


def _size(v: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= scale:
            return f"{v // scale} {unit}"
    return f"{v} B"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="16 ranks only")
    p.add_argument("--costs", action="store_true", help="16 ranks, ring, without and with NCCL's costs")
    p.add_argument("--server", action="store_true", help="with --costs: only the 8-GPU NVSwitch table")
    args = p.parse_args()
    if args.costs:
        costs_table(server_only=args.server)
        return
    head = "| ranks | size | ring time us | ring busbw GB/s | tree time us | tree busbw GB/s | auto picks |"
    rows = [head, "|---|---|---|---|---|---|---|"]
    started = time.perf_counter()
    for ranks in [16] if args.quick else [16, 128, 1024]:
        for size in (s for s in SIZES if s <= LARGEST[ranks]):
            cells = []
            for algorithm in ("ring", "tree"):
                t, bw, _ = point(ranks, size, algorithm)
                cells += [f"{t:,.1f}", f"{bw:.2f}"]
            _, _, picked = point(ranks, size, "auto")
            rows.append(f"| {ranks} | {_size(size)} | " + " | ".join(cells) + f" | {picked} |")
            sys.stderr.write(f"{ranks} ranks {_size(size)}: {time.perf_counter() - started:.0f} s\n")
    sys.stdout.write("\n".join(rows) + "\n")


def costs_table(server_only: bool = False) -> None:
    """The 16-rank ring over the fabric and the 8-GPU ring over NVSwitch, without and with
    NCCL's latencies and protocols; on the server also NVLS and what ``auto`` runs."""
    tables = ((16, False, "16 servers, 400 Gb/s"), (8, True, "8 GPUs on one NVSwitch, 450 GB/s each way"))
    for ranks, server, title in tables[1:] if server_only else tables:
        head = "| size | time us | busbw GB/s | with NCCL's costs: time us | busbw GB/s | protocol |"
        rule = "|---|---|---|---|---|---|"
        if server:
            head += " nvls: time us | busbw GB/s | auto runs |"
            rule += "---|---|---|"
        rows = [f"{title}:", "", head, rule]
        for size in (s for s in SIZES if s <= COSTS_LARGEST):
            t0, bw0, _ = point(ranks, size, "ring", server=server)
            t1, bw1, proto = point(ranks, size, "ring", costs=True, server=server)
            row = f"| {_size(size)} | {t0:,.1f} | {bw0:.2f} | {t1:,.1f} | {bw1:.2f} | {proto} |"
            if server:
                t2, bw2, _ = point(ranks, size, "nvls", costs=True, server=True)
                _, _, picked = point(ranks, size, "auto", costs=True, server=True)
                row += f" {t2:,.1f} | {bw2:.2f} | {picked} |"
            rows.append(row)
            sys.stderr.write(f"{ranks} ranks {_size(size)}\n")
        sys.stdout.write("\n".join(rows) + "\n\n")


if __name__ == "__main__":
    main()
