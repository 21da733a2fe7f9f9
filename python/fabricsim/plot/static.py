"""Static plots (matplotlib; PNG and SVG) of a run or a sweep directory: the figures of
:mod:`fabricsim.plot.figures`, one file pair each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._pyplot import _pyplot
from .figures import Figure, check_result_dir, run_figures, sweep_figures

__all__ = ["draw", "plot_dir", "save_figures"]

FORMATS = ("png", "svg")


#: Each series its own marker and dash: a line drawn over another still shows.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DASHES = ("-", "--", "-.", ":")


def _log_axis(axis: Any) -> None:
    """A log axis labelled in plain numbers ("0.001", not TeX that is never parsed here): at
    1, 2 and 5 times each power of ten where it spans two decades or less (a sweep's 1 to 30),
    else at its decades only (more labels would overlap)."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    lo, hi = sorted(axis.get_view_interval())
    decades = math.log10(hi / lo) if lo > 0 and hi > 0 else 99.0
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 2 else (1.0,)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _x_labels(ax: Any, positions: Any, labels: list[str]) -> None:
    """Labels at x ``positions``, turned where they would run into one another (16 powers of
    two: more than 40 characters in all)."""
    crowded = sum(map(len, labels)) > 40
    ax.set_xticks(positions, labels, rotation=45 if crowded else 0, ha="right" if crowded else "center")


def draw(fig: Figure) -> Any:
    """A matplotlib figure of ``fig``."""
    plt = _pyplot()
    if fig.kind == "heatmap":
        z = fig.z or []
        rows = fig.rows or []
        xs = fig.x or [0.0]
        f, ax = plt.subplots(figsize=(8, max(3, min(12, len(rows) * 0.12))))
        extent = (xs[0], xs[-1] if xs[-1] > xs[0] else xs[0] + 1, len(rows) - 0.5, -0.5)
        image = ax.imshow(z, aspect="auto", vmin=0, vmax=1, cmap="viridis", interpolation="nearest", extent=extent)
        if len(rows) <= 40:
            ax.set_yticks(range(len(rows)), rows, fontsize="x-small")
        f.colorbar(image, ax=ax, label="utilization")
    else:
        f, ax = plt.subplots(figsize=(6.4, 4.2))
        n = len(fig.series)
        categories = list(dict.fromkeys(x for s in fig.series for x in s.x)) if fig.kind in ("points", "bar") else []
        for i, s in enumerate(fig.series):
            # a dash and a marker each, the markers smaller series by series: a line drawn over
            # another (OPS under ARCANE) still shows
            style = {"marker": MARKERS[i % len(MARKERS)], "linestyle": DASHES[i % len(DASHES)]}
            size = max(3.5, 8.0 - 1.2 * i)
            if fig.kind == "cdf":
                ax.step(s.x, s.y, where="post", label=s.label, linestyle=DASHES[i % len(DASHES)], linewidth=1.6)
            elif fig.kind == "bar" and all(isinstance(x, str) for x in s.x):
                width = 0.8 / n
                pos = [categories.index(x) - 0.4 + width * (i + 0.5) for x in s.x]
                ax.bar(pos, s.y, width, label=s.label)
            elif fig.kind == "bar":
                ax.bar(s.x, s.y, label=s.label)
            elif fig.kind == "points":
                # one dot per category, shifted per series so none hides another; never joined
                shift = (i - (n - 1) / 2) * min(0.12, 0.8 / max(n, 1))
                pos = [categories.index(x) + shift for x in s.x]
                bars = s.spread()
                ax.errorbar(pos, s.y, yerr=list(bars) if bars else None, fmt=style["marker"], capsize=3, label=s.label)
            elif fig.kind == "scatter":
                ax.scatter([i] * len(s.y), s.y, alpha=0.6, label=s.label)
                if s.y:
                    ax.hlines(sum(s.y) / len(s.y), i - 0.25, i + 0.25, color="black")
            else:
                marker = style["marker"] if len(s.x) <= 50 else None
                ax.plot(s.x, s.y, marker=marker, markersize=size, linestyle=style["linestyle"], label=s.label)
                if s.lo is not None and s.hi is not None:
                    ax.fill_between(s.x, s.lo, s.hi, alpha=0.15)
        # a line over named x values: their labels turned where they would run together
        named = list(dict.fromkeys(x for s in fig.series for x in s.x if isinstance(x, str))) if fig.kind == "lines" else []
        if named:
            _x_labels(ax, range(len(named)), named)
        if fig.kind == "scatter":
            ax.set_xticks(range(n), [s.label for s in fig.series])
        elif categories:
            ax.set_xticks(range(len(categories)), categories, rotation=30 if max(map(len, map(str, categories))) > 8 else 0, ha="right")
        if fig.kind not in ("scatter",) and n > 1:
            ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        if fig.xlog:
            ax.set_xscale("log")
            _log_axis(ax.xaxis)
        if fig.ylog:
            ax.set_yscale("log")
            _log_axis(ax.yaxis)
        if fig.xticks is not None and fig.x is not None:
            from matplotlib.ticker import NullFormatter

            _x_labels(ax, fig.x, fig.xticks)
            ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set(xlabel=fig.xlabel, ylabel=fig.ylabel)
    ax.set_title(fig.title, fontsize="medium")
    return f


def _save(fig: Figure, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    f = draw(fig)
    paths = []
    for fmt in FORMATS:
        path = out / f"{fig.name}.{fmt}"
        f.savefig(path, dpi=120, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
        paths.append(path)
    _pyplot().close(f)
    return paths


def save_figures(figs: list[Figure], out: str | Path) -> list[Path]:
    """Draw each figure into ``out`` as PNG and SVG; returns the files written."""
    return [p for fig in figs for p in _save(fig, Path(out))]


def plot_dir(path: str | Path, out: str | Path | None = None, partial: bool = False, **sweep_options: Any) -> list[Path]:
    """Plot a run directory (into itself) or a sweep directory (into ``DIR/plots``), or into
    ``out``; returns the files written. ``sweep_options``: ``x``, ``line``, ``metric``;
    ``partial``: plot a sweep that was stopped before all its points (each title says so)."""
    d = Path(path)
    if check_result_dir(d, partial) == "sweep":
        figs, where = sweep_figures(d, **sweep_options), d / "plots"
    else:
        figs, where = run_figures(d), d
    target = Path(out) if out is not None else where
    return [p for fig in figs for p in _save(fig, target)]
