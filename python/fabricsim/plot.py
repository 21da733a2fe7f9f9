"""Plots of a run or a sweep directory (matplotlib; PNG and SVG).

A run directory (``fabricsim run --out DIR``) gives: the FCT CDF (and the JCT CDF with jobs),
the reorder-distance histogram, and with ``[samples]`` the queue depth over time of the
busiest ports and a port-utilization heatmap. A sweep directory (``fabricsim sweep --out
DIR``) gives: the FCT CDF per value of an axis (every point's flows pooled), the max slowdown
per value with the spread over seeds, and a line plot of a summary metric against one axis,
one line per value of another, the band spanning the seeds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from .errors import scenario_error

__all__ = ["plot_dir", "plot_run", "plot_sweep"]

FORMATS = ("png", "svg")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, name: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in FORMATS:
        path = out / f"{name}.{fmt}"
        fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
        paths.append(path)
    _pyplot().close(fig)
    return paths


def _cdf(ax: Any, values: Iterable[float], label: str) -> None:
    xs = sorted(values)
    if not xs:
        return
    n = len(xs)
    ax.step(xs, [(i + 1) / n for i in range(n)], where="post", label=label)


def plot_run(run_dir: str | Path, out: str | Path | None = None) -> list[Path]:
    """The plots of one run directory; returns the files written (into ``out``, default the run's)."""
    d = Path(run_dir)
    o = Path(out) if out is not None else d
    plt = _pyplot()
    files: list[Path] = []
    flows = pl.read_parquet(d / "flows.parquet")
    done = flows.filter(pl.col("completed"))
    fig, ax = plt.subplots(figsize=(6, 4))
    _cdf(ax, (done["fct_ps"] / 1e6).to_list(), "FCT")
    ax.set(xlabel="flow completion time (us)", ylabel="fraction of flows", title=f"FCT CDF ({done.height} of {flows.height} flows)")
    ax.grid(alpha=0.3)
    files += _save(fig, o, "fct_cdf")
    if (d / "jobs.parquet").exists():
        jobs = pl.read_parquet(d / "jobs.parquet").drop_nulls("jct_ps")
        fig, ax = plt.subplots(figsize=(6, 4))
        for (name,), g in jobs.group_by("name", maintain_order=True):
            _cdf(ax, (g["jct_ps"] / 1e6).to_list(), str(name))
        ax.set(xlabel="job iteration completion time (us)", ylabel="fraction of iterations", title="JCT CDF")
        ax.legend()
        ax.grid(alpha=0.3)
        files += _save(fig, o, "jct_cdf")
    if (d / "reorder.parquet").exists():
        reorder = pl.read_parquet(d / "reorder.parquet").group_by("distance").agg(pl.col("arrivals").sum()).sort("distance")
        if reorder.height:
            fig, ax = plt.subplots(figsize=(6, 4))
            total = reorder["arrivals"].sum()
            ax.bar(reorder["distance"].to_list(), (reorder["arrivals"] / total).to_list())
            ax.set(
                xlabel="reorder distance (packets; 63 = 63 or more)", ylabel="fraction of arrivals", title="Reorder distance", yscale="log"
            )
            files += _save(fig, o, "reorder")
    if (d / "samples.parquet").exists():
        files += _samples(d, o)
    return files


def _samples(d: Path, o: Path) -> list[Path]:
    plt = _pyplot()
    samples = pl.read_parquet(d / "samples.parquet")
    ports = pl.read_parquet(d / "ports.parquet").select("port", "name")
    samples = samples.join(ports, on="port", how="left")
    files: list[Path] = []
    busiest = samples.group_by("name").agg(pl.col("queue_bytes").max()).sort(["queue_bytes", "name"], descending=[True, False]).head(8)
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in busiest["name"]:
        s = samples.filter(pl.col("name") == name).sort("time_ps")
        ax.plot((s["time_ps"] / 1e6).to_list(), (s["queue_bytes"] / 1e3).to_list(), label=str(name))
    ax.set(xlabel="time (us)", ylabel="queue (KB)", title="Queue depth of the busiest ports")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    files += _save(fig, o, "queues")
    wide = samples.pivot(on="time_ps", index="port", values="utilization", aggregate_function="first").sort("port")
    times = [int(c) for c in wide.columns[1:]]
    names = wide.join(ports, on="port", how="left")["name"].to_list()
    fig, ax = plt.subplots(figsize=(8, max(3, min(12, wide.height * 0.12))))
    extent = (times[0] / 1e6, times[-1] / 1e6, wide.height - 0.5, -0.5)
    image = ax.imshow(wide.drop("port").to_numpy(), aspect="auto", vmin=0, vmax=1, cmap="viridis", interpolation="nearest", extent=extent)
    ax.set(xlabel="time (us)", ylabel="port (ports table order)", title=f"Port utilization ({len(times)} samples, {wide.height} ports)")
    if wide.height <= 40:
        ax.set_yticks(range(wide.height), names, fontsize="x-small")
    fig.colorbar(image, ax=ax, label="utilization")
    files += _save(fig, o, "utilization")
    return files


def _axes(points: pl.DataFrame, sweep_dir: Path) -> list[str]:
    """The sweep's axis columns (those between ``point`` and the summary), in order."""
    first = sweep_dir / "points" / points["point"][0] / "summary.json"
    summary = set(json.loads(first.read_text())["summary"])
    return [c for c in points.columns if c != "point" and c not in summary]


def plot_sweep(
    sweep_dir: str | Path, out: str | Path | None = None, x: str | None = None, line: str | None = None, metric: str = "max_fct_ns"
) -> list[Path]:
    """The plots of a sweep directory. ``x``: the axis of the line plot (default: the last
    varied axis other than seed); ``line``: one line per value of this axis (default: the
    first); ``metric``: a summary column."""
    d = Path(sweep_dir)
    o = Path(out) if out is not None else d / "plots"
    plt = _pyplot()
    points = pl.read_parquet(d / "points.parquet")
    if points.height == 0:
        raise scenario_error(str(d), "the sweep has no finished points")
    axes = [a for a in _axes(points, d) if a != "seed"]
    varied = [a for a in axes if points[a].n_unique() > 1]
    if metric not in points.columns:
        raise scenario_error("--metric", f"got {metric!r}; allowed: a summary column such as max_fct_ns, p99_fct_ns, max_jct_ns")
    for name, value in (("--x", x), ("--line", line)):
        if value is not None and value not in axes:
            raise scenario_error(name, f"got {value!r}; allowed: an axis of the sweep ({', '.join(axes) or 'none'})")
    group = line or (varied[0] if varied else None)
    x = x or next((a for a in reversed(varied) if a != group), None)
    files: list[Path] = []
    # FCT CDF per value of the line axis, every point's flows pooled
    if group is not None:
        fig, ax = plt.subplots(figsize=(6, 4))
        for (value,), g in points.group_by(group, maintain_order=True):
            fcts: list[float] = []
            for p in g["point"]:
                f = pl.read_parquet(d / "points" / p / "flows.parquet", columns=["fct_ps"]).drop_nulls()
                fcts += (f["fct_ps"] / 1e6).to_list()
            _cdf(ax, fcts, f"{group}={value}")
        ax.set(xlabel="flow completion time (us)", ylabel="fraction of flows", title="FCT CDF, all points pooled", xscale="log")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        files += _save(fig, o, "fct_cdf")
        # max slowdown per value, one dot per point (the seeds' spread)
        fig, ax = plt.subplots(figsize=(6, 4))
        values = points[group].unique(maintain_order=True).to_list()
        for i, v in enumerate(values):
            ys = points.filter(pl.col(group) == v)["max_slowdown"].drop_nulls().to_list()
            ax.scatter([i] * len(ys), ys, alpha=0.6)
            if ys:
                ax.hlines(sum(ys) / len(ys), i - 0.25, i + 0.25, color="black")
        ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set(xlabel=group, ylabel="max FCT slowdown", title="Max slowdown per point (bar: mean)")
        ax.grid(alpha=0.3)
        files += _save(fig, o, "slowdown")
    if x is not None:
        fig, ax = plt.subplots(figsize=(6, 4))
        lines = points.group_by(group, maintain_order=True) if group is not None else [((None,), points)]
        for (value,), g in lines:
            agg = g.group_by(x, maintain_order=True).agg(
                pl.col(metric).mean().alias("mean"), pl.col(metric).min().alias("lo"), pl.col(metric).max().alias("hi")
            )
            xs = [str(v) for v in agg[x].to_list()]
            ax.plot(xs, agg["mean"].to_list(), marker="o", label=f"{group}={value}" if group else metric)
            ax.fill_between(xs, agg["lo"].to_list(), agg["hi"].to_list(), alpha=0.2)
        ax.set(xlabel=x, ylabel=metric, title=f"{metric} (mean; band: min-max over seeds)")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        files += _save(fig, o, f"sweep_{metric}")
    return files


def plot_dir(path: str | Path, out: str | Path | None = None, **sweep_options: Any) -> list[Path]:
    """Plot a run directory or a sweep directory, whichever ``path`` is."""
    d = Path(path)
    if (d / "points.parquet").exists():
        return plot_sweep(d, out, **sweep_options)
    if (d / "flows.parquet").exists():
        return plot_run(d, out)
    raise scenario_error(str(d), "neither a run directory (flows.parquet) nor a sweep directory (points.parquet)")
