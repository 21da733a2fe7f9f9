"""`fabricsim sweep`."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from . import common
from .common import (
    AllowOtherVersionOpt,
    QuietOpt,
    _check_writable,
    _force_progress,
    _guard,
    _say_sweep_estimate,
    _SweepLines,
    app,
    err,
)


@app.command()
@_guard
def sweep(
    spec: Annotated[Path, typer.Argument(metavar="SPEC.toml", help="Sweep spec: base, grid/zip axes, seeds (docs/experiments.md).")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Write points.parquet and points/<id>/ here.")],
    workers: Annotated[
        int | None, typer.Option("--workers", "-j", min=1, help="Processes (default: CPUs available / threads per point).")
    ] = None,
    ray_address: Annotated[
        str | None, typer.Option("--ray", metavar="ADDRESS", help="Run on a Ray cluster: auto, ray://host:10001, or local.")
    ] = None,
    allow_other_version: AllowOtherVersionOpt = False,
    quiet: QuietOpt = False,
    threads_per_point: Annotated[
        int,
        typer.Option("--threads-per-point", min=1, metavar="N", help="Threads of the parallel engine for each point (default 1)."),
    ] = 1,
) -> None:
    """Run a scenario over a grid of field values and seeds, on every CPU; resumable."""
    import warnings

    from rich.progress import MofNCompleteColumn, TimeRemainingColumn

    from ..sweep import Point, Sweep, local_workers, run_sweep

    sw = Sweep.load(spec)
    points = sw.validate()
    _check_writable(out_dir)
    show = not quiet and (err.is_terminal or _force_progress())
    columns = (TextColumn("[bold]sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True, disable=not show) as bar:
        todo = [p for p in points if not (out_dir / "points" / p.id / "summary.json").exists()]
        done_before = len(points) - len(todo)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the sweep itself warns of workers beyond the CPUs
            local = local_workers(workers, threads_per_point, max(1, len(todo)))
        expected = _say_sweep_estimate(todo, local) if not quiet else {}
        task = bar.add_task("sweep", total=len(points), completed=done_before)
        lines = _SweepLines(len(points), done_before, expected, 1 if ray_address is not None else local, enabled=not quiet)

        def finished(p: Point) -> None:
            bar.advance(task)
            lines.finished(p)

        # every common.LINE_EVERY_S (read each time: a test shortens it), where each running point stands (its worker writes it)
        labels = {p.id: p.label() for p in points}
        stop = threading.Event()

        def report() -> None:
            while not stop.wait(common.LINE_EVERY_S):
                lines.running(out_dir, labels)

        reporter = threading.Thread(target=report, daemon=True)
        if not quiet:
            reporter.start()
        try:
            table = run_sweep(
                sw,
                out_dir,
                workers=workers,
                ray_address=ray_address,
                finished=finished,
                allow_other_version=allow_other_version,
                threads_per_point=threads_per_point,
                started=lines.started,
            )
        finally:
            stop.set()
    incomplete = table.filter(table["status"] != "complete").height if table.height else 0
    err.print(escape(f"{table.height} points in {out_dir / 'points.parquet'} ({done_before} were already there); {incomplete} incomplete"))
