"""What the plots of a run or a sweep show, independent of how they are drawn.

:func:`run_figures` and :func:`sweep_figures` read a directory into :class:`Figure` specs;
``plot.py`` draws them with matplotlib (PNG, SVG) and ``report.py`` with plotly (HTML).

A run directory (``fabricsim run --out DIR``) gives: the FCT CDF (and the JCT CDF with jobs),
the reorder-distance histogram, and with ``[samples]`` the queue depth over time of the
busiest ports and a port-utilization heatmap. A sweep directory (``fabricsim sweep --out
DIR``) gives: the FCT CDF per value of an axis (every point's flows pooled), the max slowdown
per value with the spread over seeds, and a summary metric against one axis, one line per
value of another, the band spanning the seeds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from .errors import scenario_error

__all__ = ["Figure", "Series", "check_result_dir", "is_run", "is_sweep", "run_figures", "sweep_axes", "sweep_figures"]

Kind = Literal["cdf", "bar", "lines", "scatter", "heatmap"]


@dataclass
class Series:
    """One line, set of bars or dots. ``lo``/``hi``: a band around ``y`` (lines)."""

    label: str
    x: list[Any]
    y: list[float]
    lo: list[float] | None = None
    hi: list[float] | None = None


@dataclass
class Figure:
    """A plot: its file name, kind, titles and data. A heatmap's data is ``z`` (rows x
    columns) with ``rows`` labels and ``x`` column positions."""

    name: str
    kind: Kind
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    xlog: bool = False
    ylog: bool = False
    z: list[list[float]] | None = None
    rows: list[str] | None = None
    x: list[float] | None = None


def cdf_points(values: Sequence[float]) -> tuple[list[float], list[float]]:
    xs = sorted(values)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


def _cdf_series(label: str, values: Sequence[float]) -> Series:
    xs, ys = cdf_points(values)
    return Series(label, xs, ys)


def is_run(d: Path) -> bool:
    """A finished run: ``summary.json`` is written last, so a run cut short has none."""
    return (d / "summary.json").exists() and (d / "flows.parquet").exists()


def is_sweep(d: Path) -> bool:
    return (d / "points.parquet").exists()


def check_result_dir(d: Path) -> str:
    """``"sweep"`` or ``"run"``; anything else (nothing there, a run or sweep cut short) is refused
    with what to do."""
    if is_sweep(d):
        return "sweep"
    if is_run(d):
        return "run"
    if (d / "sweep.toml").exists():
        raise scenario_error(
            str(d), "a sweep that has not finished (no points.parquet); run the same `fabricsim sweep ... --out` again to resume it"
        )
    if (d / "flows.parquet").exists() or (d / "scenario.toml").exists():
        raise scenario_error(str(d), "a run that did not finish (no summary.json): its tables are not whole; run it again")
    raise scenario_error(str(d), "neither a run directory (flows.parquet) nor a sweep directory (points.parquet)")


def run_figures(d: Path) -> list[Figure]:
    """The figures of one run directory."""
    flows = pl.read_parquet(d / "flows.parquet")
    done = flows.filter(pl.col("completed"))
    figs = [
        Figure(
            "fct_cdf",
            "cdf",
            f"FCT CDF ({done.height} of {flows.height} flows)",
            "flow completion time (us)",
            "fraction of flows",
            [_cdf_series("FCT", (done["fct_ps"] / 1e6).to_list())],
        )
    ]
    if (d / "jobs.parquet").exists():
        jobs = pl.read_parquet(d / "jobs.parquet").drop_nulls("jct_ps")
        series = [_cdf_series(str(name), (g["jct_ps"] / 1e6).to_list()) for (name,), g in jobs.group_by("name", maintain_order=True)]
        figs.append(Figure("jct_cdf", "cdf", "JCT CDF", "job iteration completion time (us)", "fraction of iterations", series))
    if (d / "reorder.parquet").exists():
        reorder = pl.read_parquet(d / "reorder.parquet").group_by("distance").agg(pl.col("arrivals").sum()).sort("distance")
        if reorder.height:
            total = reorder["arrivals"].sum()
            series = [Series("arrivals", reorder["distance"].to_list(), (reorder["arrivals"] / total).to_list())]
            figs.append(
                Figure(
                    "reorder",
                    "bar",
                    "Reorder distance",
                    "reorder distance (packets; 63 = 63 or more)",
                    "fraction of arrivals",
                    series,
                    ylog=True,
                )
            )
    if (d / "samples.parquet").exists():
        figs += _sample_figures(d)
    return figs


def _sample_figures(d: Path) -> list[Figure]:
    samples = pl.read_parquet(d / "samples.parquet")
    ports = pl.read_parquet(d / "ports.parquet").select("port", "name")
    named = samples.join(ports, on="port", how="left")
    busiest = named.group_by("name").agg(pl.col("queue_bytes").max()).sort(["queue_bytes", "name"], descending=[True, False]).head(8)
    series = []
    for name in busiest["name"]:
        s = named.filter(pl.col("name") == name).sort("time_ps")
        series.append(Series(str(name), (s["time_ps"] / 1e6).to_list(), (s["queue_bytes"] / 1e3).to_list()))
    queues = Figure("queues", "lines", "Queue depth of the busiest ports", "time (us)", "queue (KB)", series)
    wide = samples.pivot(on="time_ps", index="port", values="utilization", aggregate_function="first").sort("port")
    times = [int(c) / 1e6 for c in wide.columns[1:]]
    rows = wide.join(ports, on="port", how="left")["name"].to_list()
    heat = Figure(
        "utilization",
        "heatmap",
        f"Port utilization ({len(times)} samples, {wide.height} ports)",
        "time (us)",
        "port",
        z=wide.drop("port").to_numpy().tolist(),
        rows=rows,
        x=times,
    )
    return [queues, heat]


def sweep_axes(points: pl.DataFrame, d: Path) -> list[str]:
    """The sweep's axis columns (those between ``point`` and the summary), in order."""
    first = d / "points" / points["point"][0] / "summary.json"
    summary = set(json.loads(first.read_text())["summary"])
    return [c for c in points.columns if c != "point" and c not in summary]


def sweep_figures(d: Path, x: str | None = None, line: str | None = None, metric: str = "max_fct_ns") -> list[Figure]:
    """The figures of a sweep directory. ``x``: the line plot's axis (default: the last varied
    axis other than seed and ``line``); ``line``: one line per value of this axis (default:
    the first varied axis); ``metric``: a summary column."""
    points = pl.read_parquet(d / "points.parquet")
    if points.height == 0:
        raise scenario_error(str(d), "the sweep has no finished points")
    axes = [a for a in sweep_axes(points, d) if a != "seed"]
    varied = [a for a in axes if points[a].n_unique() > 1]
    if metric not in points.columns:
        raise scenario_error("--metric", f"got {metric!r}; allowed: a summary column such as max_fct_ns, p99_fct_ns, max_jct_ns")
    for name, value in (("--x", x), ("--line", line)):
        if value is not None and (value == "point" or value not in points.columns):
            raise scenario_error(
                name, f"got {value!r}; allowed: an axis of the sweep ({', '.join([*axes, 'seed'])}) or any other column of points.parquet"
            )
    group = line or (varied[0] if varied else None)
    x = x or next((a for a in reversed(varied) if a != group), None)
    figs: list[Figure] = []
    if group is not None:
        cdfs, dots = [], []
        for (value,), g in points.group_by(group, maintain_order=True):
            fcts: list[float] = []
            for p in g["point"]:
                f = pl.read_parquet(d / "points" / p / "flows.parquet", columns=["fct_ps"]).drop_nulls()
                fcts += (f["fct_ps"] / 1e6).to_list()
            cdfs.append(_cdf_series(f"{group}={value}", fcts))
            ys = g["max_slowdown"].drop_nulls().to_list()
            dots.append(Series(str(value), [str(value)] * len(ys), ys))
        figs.append(
            Figure("fct_cdf", "cdf", "FCT CDF, all points pooled", "flow completion time (us)", "fraction of flows", cdfs, xlog=True)
        )
        figs.append(Figure("slowdown", "scatter", "Max slowdown per point", group, "max FCT slowdown", dots))
    if x is not None:
        lines = []
        groups = points.group_by(group, maintain_order=True) if group is not None else [((None,), points)]
        for (value,), g in groups:
            agg = g.group_by(x, maintain_order=True).agg(
                pl.col(metric).mean().alias("mean"), pl.col(metric).min().alias("lo"), pl.col(metric).max().alias("hi")
            )
            label = f"{group}={value}" if group is not None else metric
            xs = [str(v) for v in agg[x].to_list()]
            lines.append(Series(label, xs, agg["mean"].to_list(), agg["lo"].to_list(), agg["hi"].to_list()))
        figs.append(Figure(f"sweep_{metric}", "lines", f"{metric} (mean; band: min-max over seeds)", x, metric, lines))
    return figs
