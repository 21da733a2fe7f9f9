"""Static plots (matplotlib; PNG and SVG) of a run or a sweep directory: the figures of
:mod:`fabricsim.figures`, one file pair each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .figures import Figure, check_result_dir, run_figures, sweep_figures

__all__ = ["draw", "plot_dir", "save_figures"]

FORMATS = ("png", "svg")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw(fig: Figure) -> Any:
    """A matplotlib figure of ``fig``."""
    plt = _pyplot()
    if fig.kind == "heatmap":
        z = fig.z or []
        rows = fig.rows or []
        xs = fig.x or [0.0]
        f, ax = plt.subplots(figsize=(8, max(3, min(12, len(rows) * 0.12))))
        extent = (xs[0], xs[-1], len(rows) - 0.5, -0.5)
        image = ax.imshow(z, aspect="auto", vmin=0, vmax=1, cmap="viridis", interpolation="nearest", extent=extent)
        if len(rows) <= 40:
            ax.set_yticks(range(len(rows)), rows, fontsize="x-small")
        f.colorbar(image, ax=ax, label="utilization")
    else:
        f, ax = plt.subplots(figsize=(6, 4))
        for i, s in enumerate(fig.series):
            if fig.kind == "cdf":
                ax.step(s.x, s.y, where="post", label=s.label)
            elif fig.kind == "bar":
                ax.bar(s.x, s.y, label=s.label)
            elif fig.kind == "scatter":
                ax.scatter([i] * len(s.y), s.y, alpha=0.6, label=s.label)
                if s.y:
                    ax.hlines(sum(s.y) / len(s.y), i - 0.25, i + 0.25, color="black")
            else:
                ax.plot(s.x, s.y, marker="o" if len(s.x) < 20 else None, label=s.label)
                if s.lo is not None and s.hi is not None:
                    ax.fill_between(s.x, s.lo, s.hi, alpha=0.2)
        if fig.kind == "scatter":
            ax.set_xticks(range(len(fig.series)), [s.label for s in fig.series])
        elif len(fig.series) > 1:
            ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        if fig.xlog:
            ax.set_xscale("log")
        if fig.ylog:
            ax.set_yscale("log")
    ax.set(xlabel=fig.xlabel, ylabel=fig.ylabel)
    ax.set_title(fig.title)
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


def plot_dir(path: str | Path, out: str | Path | None = None, **sweep_options: Any) -> list[Path]:
    """Plot a run directory (into itself) or a sweep directory (into ``DIR/plots``), or into
    ``out``; returns the files written. ``sweep_options``: ``x``, ``line``, ``metric``."""
    d = Path(path)
    if check_result_dir(d) == "sweep":
        figs, where = sweep_figures(d, **sweep_options), d / "plots"
    else:
        figs, where = run_figures(d), d
    target = Path(out) if out is not None else where
    return [p for fig in figs for p in _save(fig, target)]
