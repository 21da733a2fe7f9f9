"""`fabricsim bench`."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..errors import scenario_error
from .common import (
    EVENTS_PER_S,
    _force_progress,
    _guard,
    _threads_option,
    app,
    err,
    out,
)


@app.command()
@_guard
def bench(
    only: Annotated[str | None, typer.Option("--only", metavar="TEXT", help="Run only the benchmarks whose name contains this.")] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Also the large ones (8192 and 32768 hosts, the 1024-rank allreduce, WebSearch).")
    ] = False,
    threads: Annotated[
        str | None,
        typer.Option(
            "--threads", "-t", metavar="N,N,...", help="Thread counts to run each at, or auto (default 1; with --contended 1,2,auto)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the measurements as JSON.")] = False,
    contended: Annotated[
        bool,
        typer.Option(
            "--contended",
            help="Run while busy loops hold every CPU (the 128- and 1024-host permutations on 1, 2 and auto threads "
            "unless --only/--threads say otherwise), --rounds times interleaved: median wall and its ratio to 1 thread.",
        ),
    ] = False,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="With --contended: interleaved rounds (default 5).")] = 5,
) -> None:
    """Run the standard performance scenarios, each in a fresh process: events/s, packets/s, wall, memory."""
    from ..bench import BENCHMARKS, CONTENDED, measure

    given = threads if threads is not None else "1,2,auto" if contended else "1"
    counts = [_threads_option(t) for t in given.split(",")]
    if contended:
        picked = [b for b in BENCHMARKS if (only in b.name if only is not None else b.name in CONTENDED)]
        _bench_contended(picked, counts, rounds, as_json)
        return
    chosen = [(b, n) for b in BENCHMARKS if (only in b.name if only is not None else all_ or b.default) for n in counts]
    rows = []
    show = err.is_terminal or _force_progress()
    columns = (TextColumn("[bold]bench"), BarColumn(), TextColumn("{task.completed}/{task.total} {task.fields[name]}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=not show) as bar:
        task = bar.add_task("bench", total=len(chosen), name="")
        for b, n in chosen:
            bar.update(task, name=f"{b.name} on {n or 'auto'}")
            rows.append(measure(b, n))
            bar.advance(task)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    t = Table(title="fabricsim bench", caption="estimate s: what run says before it starts (its expected events at 5 to 15 M events/s)")
    for col in ("benchmark", "threads", "status", "events", "M events/s", "data pkts", "M data pkts/s", "wall s", "estimate s", "peak MB"):
        t.add_column(col, justify="right" if col != "benchmark" else "left")
    for r in rows:
        fast, slow = (r["expected_events"] / rate for rate in reversed(EVENTS_PER_S))
        t.add_row(
            r["name"],
            str(r["threads"]) + (" (auto)" if r.get("auto") else ""),
            r["status"],
            f"{r['events']:,}",
            f"{r['events'] / r['wall_s'] / 1e6:.2f}",
            f"{r['data_packets']:,}",
            f"{r['data_packets'] / r['wall_s'] / 1e6:.3f}",
            f"{r['wall_s']:.2f}",
            f"{fast:.2f}-{slow:.2f}",
            f"{r['peak_rss_mb']:.0f}",
        )
    out.print(t)


def _bench_contended(picked: list[Any], counts: list[int | None], rounds: int, as_json: bool) -> None:
    """`bench --contended`: the table (or JSON) of :func:`fabricsim.bench.contended`."""
    from ..bench import contended
    from ..run import cores

    if not picked:
        raise scenario_error("--only", "no benchmark's name contains it; `fabricsim bench --json` lists them")
    err.print(f"fabricsim bench --contended: {cores()} busy loops hold every CPU; {rounds} rounds", highlight=False)
    rows = contended(picked, counts, rounds)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    t = Table(title=f"fabricsim bench --contended ({cores()} busy loops, median of {rounds} rounds)")
    for col in ("benchmark", "threads", "used", "median wall s", "vs 1 thread", "walls s", "solo windows"):
        t.add_column(col, justify="left" if col == "benchmark" else "right")
    for r in rows:
        ratio = "" if r["vs_1_thread"] is None else f"{r['vs_1_thread']:.2f}x"
        solo = sum(w[1] for w in r["windows"]) / max(1, sum(w[0] + w[1] for w in r["windows"]))
        t.add_row(
            r["name"],
            str(r["asked"]),
            str(r["threads"]),
            f"{r['median_wall_s']:.2f}",
            ratio,
            " ".join(f"{w:.2f}" for w in r["walls_s"]),
            f"{solo:.0%}" if r["asked"] == "auto" else "",
        )
    out.print(t)
