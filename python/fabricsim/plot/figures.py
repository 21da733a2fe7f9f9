"""What the plots of a run or a sweep show, independent of how they are drawn.

:func:`run_figures` and :func:`sweep_figures` read a directory into :class:`Figure` specs;
``plot.py`` draws them with matplotlib (PNG, SVG) and ``report.py`` with plotly (HTML).

A run directory (``fabricsim run --out DIR``) gives: the FCT CDF (by message-size bucket),
with jobs each job's JCT beside its ideal (and the JCT CDF with 5 iterations or more), the
reorder-distance histogram, and with ``[samples]`` the queue depth over time of the busiest
ports and a port-utilization heatmap. A sweep directory (``fabricsim sweep --out DIR``) gives:
the message slowdown CDF per value of an axis (every point's messages pooled, one figure per
size bucket), the worst slowdown per value with the spread over seeds, and a metric against
one axis, one series per value of another, min-max over seeds. Times and sizes are scaled to a
readable unit and every CDF is thinned to :data:`CDF_POINTS`, so a report stays small.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from ..errors import spec_error

__all__ = ["Figure", "Series", "check_result_dir", "is_run", "is_sweep", "run_figures", "sweep_axes", "sweep_figures"]

Kind = Literal["cdf", "bar", "lines", "points", "scatter", "heatmap"]

#: At most this many points per CDF (evenly spaced ranks, the first and last kept): a report of
#: a sweep of many points stays small, and the curve is the same to the eye.
CDF_POINTS = 400
#: At most this many points per time series, and time columns per heatmap.
LINE_POINTS = 1000
HEAT_COLUMNS = 300
#: The message-size buckets of ``buckets.parquet`` (lower bound in bytes, name).
BUCKETS = ((0, "<100KB"), (100_000, "100KB-1MB"), (1_000_000, "1-10MB"), (10_000_000, ">10MB"))


@dataclass
class Series:
    """One line, set of bars or dots. ``lo``/``hi``: a band (lines) or error bars (points)
    around ``y``."""

    label: str
    x: list[Any]
    y: list[float]
    lo: list[float] | None = None
    hi: list[float] | None = None

    def spread(self) -> tuple[list[float], list[float]] | None:
        """Error bars: how far ``lo`` lies below and ``hi`` above each ``y``; None without them."""
        if self.lo is None or self.hi is None:
            return None
        return [y - lo for y, lo in zip(self.y, self.lo, strict=True)], [hi - y for y, hi in zip(self.y, self.hi, strict=True)]


@dataclass
class Figure:
    """A plot: its file name, kind, titles and data. A heatmap's data is ``z`` (rows x
    columns) with ``rows`` labels and ``x`` column positions. ``xticks``: labels of numeric x
    positions (a size axis drawn to scale, labelled as the sweep wrote it). ``points``: one dot
    per category and series with error bars, never joined (a categorical axis)."""

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
    xticks: list[str] | None = None


def cdf_points(values: Sequence[float], limit: int = CDF_POINTS) -> tuple[list[float], list[float]]:
    """The empirical CDF as (value, fraction) steps from (smallest, 0), thinned to at most
    ``limit`` points: one value, or many equal ones, still draw a step."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        return [], []
    ranks = range(n) if n <= limit else sorted({round(k * (n - 1) / (limit - 1)) for k in range(limit)})
    return [xs[0], *(xs[i] for i in ranks)], [0.0, *((i + 1) / n for i in ranks)]


def _cdf_series(label: str, values: Sequence[float]) -> Series:
    xs, ys = cdf_points(values)
    return Series(label, xs, ys)


_UNITS = {
    "ns": ((1e9, "s"), (1e6, "ms"), (1e3, "us"), (1.0, "ns")),
    "bytes": ((1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B")),
}
_WORDS = {"fct": "FCT", "jct": "JCT", "busbw": "bus bandwidth", "algbw": "algorithm bandwidth", "ecn": "ECN"}


def unit(column: str, values: Sequence[float | None]) -> tuple[float, str]:
    """(divisor, axis label) for a column: times in ns and sizes in bytes scaled to the unit
    their largest value reads best in (``max_fct_ns`` of 800 000 -> ``max FCT (us)``)."""
    base, _, suffix = column.rpartition("_")
    words = " ".join(_WORDS.get(w, w) for w in base.replace(".", " ").split("_")) if base else column
    top = max((abs(v) for v in values if v is not None), default=0.0)
    if suffix == "ps":
        suffix, top = "ns", top / 1e3
    if suffix in _UNITS:
        scale, name = next(((f, n) for f, n in _UNITS[suffix] if top >= f), _UNITS[suffix][-1])
        return scale * (1e3 if column.endswith("_ps") else 1.0), f"{words} ({name})"
    if suffix == "gbps":
        return 1.0, f"{words} (Gb/s)"
    return 1.0, column.replace("_", " ")


_QUANTITY = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]*)\s*")
_FACTORS = {
    "": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
    "ps": 1e-3, "ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9,
    "bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12, "bdp": 1,
}  # fmt: skip


def as_number(value: Any) -> float | None:
    """An axis value as a number (``2MiB`` -> 2097152, ``10us`` -> 10000, ``0.5`` -> 0.5), or
    None when it is a category (``ecmp``): sizes and times are drawn to scale."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    m = _QUANTITY.fullmatch(str(value))
    if m is None or m.group(2).lower() not in _FACTORS:
        return None
    return float(m.group(1)) * _FACTORS[m.group(2).lower()]


def is_run(d: Path) -> bool:
    """A finished run: ``summary.json`` is written last, so a run cut short has none."""
    return (d / "summary.json").exists() and (d / "flows.parquet").exists()


def is_sweep(d: Path) -> bool:
    return (d / "points.parquet").exists()


def check_result_dir(d: Path, partial: bool = False) -> str:
    """``"sweep"`` or ``"run"``; anything else (nothing there, a run or sweep cut short) is refused
    with what to do; a sweep with points missing too, unless ``partial``."""
    if is_sweep(d):
        _check_whole(d, partial)
        return "sweep"
    if is_run(d):
        return "run"
    if (d / "sweep.toml").exists():
        raise spec_error(
            str(d), "a sweep that has not finished (no points.parquet); run the same `fabricsim sweep ... --out` again to resume it"
        )
    if (d / "flows.parquet").exists() or (d / "scenario.toml").exists():
        raise spec_error(str(d), "a run that did not finish (no summary.json): its tables are not whole; run it again")
    raise spec_error(str(d), "neither a run directory (flows.parquet) nor a sweep directory (points.parquet)")


def _check_whole(d: Path, partial: bool = False) -> None:
    """Refuses a sweep directory whose ``points.parquet`` lacks points of its ``sweep.toml``: a
    sweep that was interrupted keeps the points it finished (so that a rerun resumes it), and a
    figure of them would pool fewer seeds or leave out values without a word. With ``partial``
    it is let through, and :func:`partial_note` says so on every figure and page."""
    note = partial_note(d)
    if note and not partial:
        raise spec_error(
            str(d),
            f"a sweep with {note} done (it was stopped before the rest); "
            "run the same `fabricsim sweep ... --out` again to finish it, or plot what is there with --partial",
        )


def partial_note(d: Path) -> str | None:
    """ "4 of its 12 points" where a sweep directory's ``points.parquet`` lacks points of its
    ``sweep.toml``; None for a whole one (or one without its spec)."""
    from ..sweep import POINTS_FILE, Sweep

    spec = d / "sweep.toml"
    if not spec.exists():
        return None
    expected = {p.id for p in Sweep.load(spec).points()}
    done = set(pl.read_parquet(d / POINTS_FILE, columns=["point"])["point"].to_list())
    missing = expected - done
    return f"{len(expected) - len(missing)} of its {len(expected)} points" if missing else None


def _by_bucket(flows: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """The flows of each message-size bucket that has any, smallest first."""
    out = []
    for i, (low, name) in enumerate(BUCKETS):
        high = BUCKETS[i + 1][0] if i + 1 < len(BUCKETS) else None
        sel = flows.filter((pl.col("bytes") >= low) & (pl.col("bytes") < high) if high else pl.col("bytes") >= low)
        if sel.height:
            out.append((name, sel))
    return out


def _spans_decades(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > 20


def run_figures(d: Path) -> list[Figure]:
    """The figures of one run directory."""
    flows = pl.read_parquet(d / "flows.parquet", columns=["bytes", "completed", "fct_ps"])
    done = flows.filter(pl.col("completed"))
    scale, xlabel = unit("fct_ps", done["fct_ps"].to_list())
    buckets = _by_bucket(done)
    if len(buckets) > 1:
        series = [_cdf_series(f"{name} ({g.height})", (g["fct_ps"] / scale).to_list()) for name, g in buckets]
    else:
        series = [_cdf_series("FCT", (done["fct_ps"] / scale).to_list())]
    figs = [
        Figure(
            "fct_cdf",
            "cdf",
            f"FCT CDF ({done.height} of {flows.height} flows{', by message size' if len(buckets) > 1 else ''})",
            f"flow completion time: {xlabel}",
            "fraction of flows",
            series,
            xlog=_spans_decades((done["fct_ps"] / scale).to_list()),
        )
    ]
    if (d / "jobs.parquet").exists():
        figs += _job_figures(pl.read_parquet(d / "jobs.parquet"))
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


def _job_figures(jobs: pl.DataFrame) -> list[Figure]:
    """Each job's JCT beside its ideal (a bar pair: one iteration is enough to see it), and the
    CDF of iteration times when a job ran enough iterations for one to mean something."""
    from ..results import job_table

    table = job_table(jobs)
    if table.height == 0:
        return []
    scale, label = unit("jct_ns", table["jct_ns"].to_list() + table["ideal_jct_ns"].to_list())
    names = [str(n) for n in table["name"]]

    def ys(col: str) -> list[float]:
        return [float("nan") if v is None else v / scale for v in table[col]]

    iterations = max(jobs.group_by("job").len()["len"].to_list(), default=0)
    figs = [
        Figure(
            "jct",
            "bar",
            f"Job completion time (mean over {iterations} iteration{'s' * (iterations != 1)})" if iterations else "Job completion time",
            "job",
            label,
            [Series("JCT", names, ys("jct_ns")), Series("ideal (idle fabric)", names, ys("ideal_jct_ns"))],
        )
    ]
    done = jobs.drop_nulls("jct_ps")
    if max(done.group_by("job").len()["len"].to_list(), default=0) >= 5:
        scale, label = unit("jct_ps", done["jct_ps"].to_list())
        series = [_cdf_series(str(name), (g["jct_ps"] / scale).to_list()) for (name,), g in done.group_by("name", maintain_order=True)]
        figs.append(Figure("jct_cdf", "cdf", "JCT CDF", f"job iteration time: {label}", "fraction of iterations", series))
    return figs


def _thin(xs: list[float], ys: list[float], limit: int = LINE_POINTS) -> tuple[list[float], list[float]]:
    """At most about ``limit`` points, each the largest of its span (a peak is never lost)."""
    step = max(1, -(-len(xs) // limit))
    if step == 1:
        return xs, ys
    return xs[::step], [max(ys[i : i + step]) for i in range(0, len(ys), step)]


def _sample_figures(d: Path) -> list[Figure]:
    samples = pl.read_parquet(d / "samples.parquet")
    ports = pl.read_parquet(d / "ports.parquet").select("port", "name")
    named = samples.join(ports, on="port", how="left")
    busiest = named.group_by("name").agg(pl.col("queue_bytes").max()).sort(["queue_bytes", "name"], descending=[True, False]).head(8)
    tscale, tlabel = unit("time_ps", samples["time_ps"].to_list())
    qscale, qlabel = unit("queue_bytes", busiest["queue_bytes"].to_list())
    series = []
    for name in busiest["name"]:
        s = named.filter(pl.col("name") == name).sort("time_ps")
        series.append(Series(str(name), *_thin((s["time_ps"] / tscale).to_list(), (s["queue_bytes"] / qscale).to_list())))
    queues = Figure("queues", "lines", "Queue depth of the busiest ports", tlabel, qlabel, series)
    # at most HEAT_COLUMNS time columns: each the mean of a span of samples
    times = samples["time_ps"].unique().sort()
    step = max(1, -(-times.len() // HEAT_COLUMNS))
    spans = pl.DataFrame({"time_ps": times, "span": pl.int_range(times.len(), eager=True) // step})
    binned = (
        samples.join(spans, on="time_ps").group_by("port", "span").agg(pl.col("time_ps").min(), pl.col("utilization").mean()).sort("span")
    )
    wide = binned.pivot(on="span", index="port", values="utilization", aggregate_function="first").sort("port")
    starts = binned.group_by("span").agg(pl.col("time_ps").min()).sort("span")["time_ps"]
    rows = wide.join(ports, on="port", how="left")["name"].to_list()
    heat = Figure(
        "utilization",
        "heatmap",
        f"Port utilization ({times.len()} samples{f', means of {step}' if step > 1 else ''}; {wide.height} ports)",
        tlabel,
        "port",
        z=wide.drop("port").to_numpy().tolist(),
        rows=rows,
        x=(starts / tscale).to_list(),
    )
    return [queues, heat]


def sweep_axes(points: pl.DataFrame, d: Path) -> list[str]:
    """The sweep's axis columns (its grid and zip fields, then ``seed``), in order."""
    try:
        spec = tomllib.loads((d / "sweep.toml").read_text())
        return [a for a in [*spec.get("grid", {}), *spec.get("zip", {}), "seed"] if a in points.columns]
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        # no spec kept: the columns between ``point`` and the summary's
        first = d / "points" / points["point"][0] / "summary.json"
        summary = set(json.loads(first.read_text())["summary"])
        return [c for c in points.columns if c != "point" and c not in summary and not c.startswith("job.")]


def _default_metric(points: pl.DataFrame) -> str:
    """The job's answer when the sweep has jobs, the worst FCT otherwise."""
    return "max_jct_ns" if _has_values(points, "max_jct_ns") else "max_fct_ns"


def sweep_figures(d: Path, x: str | None = None, line: str | None = None, metric: str | None = None) -> list[Figure]:
    """The figures of a sweep directory. ``x``: the metric plot's axis (default: the last varied
    axis other than seed and ``line``); ``line``: one line per value of this axis (default:
    the first varied axis); ``metric``: a column of points.parquet (default: ``max_jct_ns``
    with jobs, else ``max_fct_ns``)."""
    points = pl.read_parquet(d / "points.parquet")
    if points.height == 0:
        raise spec_error(str(d), "the sweep has no finished points")
    axes = [a for a in sweep_axes(points, d) if a != "seed"]
    varied = [a for a in axes if points[a].n_unique() > 1]
    metric = metric or _default_metric(points)
    if metric not in points.columns or metric == "point":
        raise spec_error(
            "--metric", f"got {metric!r}; allowed: a column of points.parquet such as max_fct_ns, p99_fct_ns, max_jct_ns, job.NAME.slowdown"
        )
    for name, value in (("--x", x), ("--line", line)):
        if value is not None and (value == "point" or value not in points.columns):
            raise spec_error(
                name, f"got {value!r}; allowed: an axis of the sweep ({', '.join([*axes, 'seed'])}) or any other column of points.parquet"
            )
    # a sweep that varies nothing (one value per axis, or seeds alone) still gets its CDF and
    # its spread over seeds
    first = line or (varied[0] if varied else axes[0] if axes else None)
    seeds = "seed" in points.columns and points["seed"].n_unique() > 1
    x = x or next((a for a in reversed(varied) if a != first), "seed" if seeds else None)
    # every other varied axis colours the series too: no axis is pooled silently (a sweep of
    # load balancers with and without a fault gets one line per load balancer and fault)
    series_axes = list(dict.fromkeys(a for a in [first, *varied] if a is not None and a != x))
    points, group = _series_column(points, series_axes)
    figs: list[Figure] = []
    if group is not None:
        figs += _slowdown_cdfs(d, points, group)
        jobs = _has_values(points, "max_jct_slowdown")
        worst = "max_jct_slowdown" if jobs else "max_slowdown"
        dots = []
        for (value,), g in points.group_by(group, maintain_order=True):
            ys = g[worst].drop_nulls().to_list()
            dots.append(Series(str(value), [str(value)] * len(ys), ys))
        title = "Worst job slowdown (JCT / ideal) per point" if jobs else "Worst message slowdown per point"
        figs.append(Figure("slowdown", "scatter", title, ", ".join(series_axes), "JCT slowdown" if jobs else "FCT slowdown", dots))
    if x is not None:
        figs.append(_metric_figure(points, x, group, metric))
    note = partial_note(d)
    if note:
        for fig in figs:
            fig.title += f" [partial sweep: {note}]"
    return figs


#: The column :func:`_series_column` adds where several axes make a series.
SERIES = "_series"


def _series_column(points: pl.DataFrame, axes: list[str]) -> tuple[pl.DataFrame, str | None]:
    """The column whose values name the series: the one axis, or where several axes vary
    together, a column :data:`SERIES` of "a=1, b=x" labels (``axes`` distinct, in order)."""
    if len(axes) <= 1:
        return points, axes[0] if axes else None
    label = pl.concat_str([pl.lit(f"{a}=") + pl.col(a).cast(pl.Utf8) for a in axes], separator=", ")
    return points.with_columns(label.alias(SERIES)), SERIES


def _label(group: str, value: Any) -> str:
    """A series' legend: ``axis=value``, or the combined label as it is."""
    return str(value) if group == SERIES else f"{group}={value}"


def _has_values(points: pl.DataFrame, column: str) -> bool:
    """Whether ``column`` exists and some point has a value in it (a sweep with jobs)."""
    return column in points.columns and points[column].null_count() < points.height


def _slowdown_cdfs(d: Path, points: pl.DataFrame, group: str) -> list[Figure]:
    """Message slowdown CDFs, one line per value of ``group`` (its points' messages pooled: a
    slowdown, unlike an FCT, means the same at every size), one figure per size bucket."""
    frames = []
    for (value,), g in points.group_by(group, maintain_order=True):
        for p in g["point"]:
            f = pl.read_parquet(d / "points" / p / "flows.parquet", columns=["bytes", "slowdown"]).drop_nulls()
            frames.append(f.with_columns(pl.lit(str(value)).alias("_group")))
    flows = pl.concat(frames)
    buckets = _by_bucket(flows)
    figs = []
    for name, b in buckets:
        series = [_cdf_series(_label(group, value), g["slowdown"].to_list()) for (value,), g in b.group_by("_group", maintain_order=True)]
        slug = {"<100KB": "lt100KB", ">10MB": "gt10MB"}.get(name, name)
        split = len(buckets) > 1
        figs.append(
            Figure(
                f"slowdown_cdf_{slug}" if split else "slowdown_cdf",
                "cdf",
                f"Message slowdown CDF{f', messages {name}' if split else ''} ({b.height} messages, points pooled)",
                "FCT / ideal FCT",
                "fraction of messages",
                series,
                xlog=_spans_decades(b["slowdown"].to_list()),
            )
        )
    return figs


def _metric_figure(points: pl.DataFrame, x: str, group: str | None, metric: str) -> Figure:
    """The metric against ``x``, one series per value of ``group``: lines over a numeric axis
    (sizes and times drawn to scale), unjoined dots with error bars over categories."""
    values = points[x].unique(maintain_order=True).to_list()
    numbers = [as_number(v) for v in values]
    numeric = len(values) > 1 and all(n is not None for n in numbers)
    scale, ylabel = unit(metric, points[metric].cast(pl.Float64, strict=False).to_list())
    series = []
    groups = points.group_by(group, maintain_order=True) if group is not None else [((None,), points)]
    for (value,), g in groups:
        agg = g.group_by(x, maintain_order=True).agg(
            (pl.col(metric).cast(pl.Float64).mean() / scale).alias("mean"),
            (pl.col(metric).cast(pl.Float64).min() / scale).alias("lo"),
            (pl.col(metric).cast(pl.Float64).max() / scale).alias("hi"),
        )
        rows = list(zip(agg[x].to_list(), agg["mean"], agg["lo"], agg["hi"], strict=True))
        if numeric:
            rows.sort(key=lambda r: as_number(r[0]) or 0.0)
        xs = [as_number(r[0]) if numeric else str(r[0]) for r in rows]
        label = _label(group, value) if group is not None else ylabel
        series.append(Series(label, xs, [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]))
    order = sorted(zip(numbers, values, strict=True), key=lambda p: p[0] or 0.0) if numeric else []
    ticks = [str(v) for _, v in order] if numeric and any(isinstance(v, str) for v in values) else None
    nums = [n for n, _ in order if n is not None]
    return Figure(
        f"sweep_{metric}",
        "lines" if numeric else "points",
        f"{ylabel} (mean; {'band' if numeric else 'bars'}: min-max over seeds)",
        x,
        ylabel,
        series,
        xlog=numeric and min(nums) > 0 and max(nums) / min(nums) >= 8,
        x=nums if ticks else None,
        xticks=ticks,
    )
