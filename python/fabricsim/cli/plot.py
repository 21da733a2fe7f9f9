"""`fabricsim plot` and `fabricsim report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import (
    LineOpt,
    MetricOpt,
    PartialOpt,
    ResultDirArg,
    XOpt,
    _guard,
    _sweep_options,
    app,
    out,
)


@app.command()
@_guard
def plot(
    path: ResultDirArg,
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", metavar="DIR", help="Where the PNG and SVG files go.")] = None,
    x: XOpt = None,
    line: LineOpt = None,
    metric: MetricOpt = None,
    partial: PartialOpt = False,
) -> None:
    """Plot a run (FCT CDF, JCT, reorder, queues, utilization) or a sweep (slowdown CDF, slowdown, metric vs axis)."""
    from ..plot import plot_dir

    for f in plot_dir(path, out_dir, partial=partial, **_sweep_options(path, x, line, metric)):
        out.print(str(f), highlight=False)


@app.command()
@_guard
def report(
    path: ResultDirArg,
    out_file: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="The HTML file to write.")] = Path("report.html"),
    x: XOpt = None,
    line: LineOpt = None,
    metric: MetricOpt = None,
    partial: PartialOpt = False,
) -> None:
    """One self-contained HTML page (plotly inlined, no network): inputs, tables and interactive plots."""
    from ..plot.report import report as write_report

    out.print(str(write_report(path, out_file, partial=partial, **_sweep_options(path, x, line, metric))), highlight=False)
