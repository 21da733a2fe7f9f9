"""The source papers' experiments, reproduced: ``fabricsim reproduce``.

Each experiment is one TOML file in ``fabricsim/experiments/`` (shipped with the package),
named after the figure, table or section it reproduces. It holds a sweep (the base scenario
inline, its axes and seeds), what ``--quick`` changes (a smaller fabric, fewer seeds), and the
paper's claims, each with the paper's number beside the metric fabricsim compares it with::

    name = "nvidia-256-flows"
    source = "nvidia"                     # arcane | prime | chinamobile | nvidia | juniper
    reference = "NVIDIA Spectrum adaptive routing blog, Figure 3"
    summary = "..."
    [sweep]                                # a sweep spec (docs/experiments.md), base inline
    base = { topology = { hosts = 128 } }
    [sweep.grid]
    "switch.routing" = ["ecmp", "adaptive"]
    [quick]                                # --quick: seeds and set overrides
    seeds = [1]
    [plot]                                 # optional: the report's sweep plot (x, line, metric)
    x = "switch.routing"
    [[claims]]
    claim = "ECMP's worst flow takes about 2.5x the ideal"
    metric = "max_slowdown"                # averaged over the seeds (see below)
    of = { "switch.routing" = "ecmp" }     # the points it is measured on
    over = { "switch.routing" = "adaptive" }   # optional: report of / over, a ratio
    paper = 2.5
    tolerance = 0.2                        # matches: within 20 % of the paper
    note = "why fabricsim differs, with the evidence"
    [[tables]]                             # optional: means over seeds, for the docs
    title = "..."
    by = ["switch.routing"]
    columns = [["max FCT us", "max_fct_ns", 0.001], ["drops", "drops"]]   # label, metric[, scale[, where]]

A **metric** is a summary column (``max_slowdown``) or an aggregate of one of a point's tables,
``table.column:agg`` with ``agg`` one of sum, max, min, mean, p50, p99, imbalance (max / mean
- 1) and switch_imbalance (ports: the largest imbalance among the ports of one node), rows
filtered by ``where = {column = value}`` (``flows.fct_ps:max`` with ``where = {class = 1}``;
``ports.data_packets:switch_imbalance`` with ``where = {tier = 1, up = true}``).

Instead of ``metric``, a claim can take its value from a model of :mod:`fabricsim.theory`
(``theory = {model = "max_queue", policy = "ops", n = 16}``, with ``theory_over`` for a
ratio), and instead of ``paper`` its reference can be a model (``model = {model =
"evs_imbalance", ...}``): theory checked against the paper, and simulation against theory.
An experiment whose claims are all theory needs no sweep. ``[[theory_figures]]`` adds the
models' plots (:data:`fabricsim.theory.FIGURES`) to the report.

A claim's verdict: **matches** (within its tolerance of the reference), **same direction,
different size** (on the same side of ``baseline`` as the reference; a ratio's baseline is 1
unless given), or **differs**. Where the paper gives only a direction (its numbers were
lost, or it never gave them), the claim has ``expect = "below"`` or ``"above"`` (the ratio
against 1, or the value against ``baseline``) instead of ``paper``, and matches when
fabricsim goes strictly that way (equal is not a direction).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from . import theory
from .errors import scenario_error
from .figures import Figure, is_sweep, sweep_figures
from .sweep import Sweep, run_sweep

__all__ = ["Claim", "Experiment", "draw", "evaluate", "experiments", "figures", "load", "markdown_tables", "run_experiment", "tables"]

SOURCES = {
    "arcane": "ARCANE (recycled entropies; REPS family)",
    "prime": "PRIME (pseudo-random round-robin MP-EV spraying)",
    "chinamobile": "China Mobile: load balancing challenges in AI fabrics",
    "nvidia": "NVIDIA Spectrum adaptive routing blog",
    "juniper": "Juniper: to spray or not to spray",
}
MATCHES, DIRECTION, DIFFERS = "matches", "same direction, different size", "differs"
AGGREGATES = ("sum", "max", "min", "mean", "p50", "p99", "imbalance", "switch_imbalance")


@dataclass
class Claim:
    claim: str
    metric: str | None = None
    of: dict[str, Any] = field(default_factory=dict)
    paper: float | None = None
    tolerance: float = 0.1
    over: dict[str, Any] | None = None
    expect: str | None = None
    baseline: float | None = None
    note: str = ""
    where: dict[str, Any] = field(default_factory=dict)
    theory: dict[str, Any] | None = None
    theory_over: dict[str, Any] | None = None
    model: dict[str, Any] | None = None

    def check(self, what: str) -> None:
        if (self.metric is None) == (self.theory is None):
            raise scenario_error(what, "give exactly one of metric (simulation) and theory (a model)")
        refs = [k for k, v in (("paper", self.paper), ("model", self.model), ("expect", self.expect)) if v is not None]
        if len(refs) != 1:
            raise scenario_error(what, f"give exactly one of paper, model and expect; got {', '.join(refs) or 'none'}")
        if self.expect is not None and self.expect not in ("above", "below"):
            raise scenario_error(f"{what}: expect", f'got {self.expect!r}; allowed: "above", "below"')
        if self.paper == 0 or self.tolerance < 0:
            raise scenario_error(what, "paper must be non-zero and tolerance >= 0")
        if self.metric is not None and ":" in self.metric:
            _parse_metric(self.metric, what)


@dataclass
class Experiment:
    name: str
    source: str
    reference: str
    summary: str
    sweep: dict[str, Any]
    quick: dict[str, Any]
    claims: list[Claim]
    tables: list[dict[str, Any]] = field(default_factory=list)
    plot: dict[str, Any] = field(default_factory=dict)
    theory_figures: list[dict[str, Any]] = field(default_factory=list)
    #: Where the files it reads (a flow list, a CDF) are found: its own folder.
    folder: Path | None = None

    def spec(self, quick: bool = False) -> Sweep | None:
        """The sweep (with ``--quick``'s changes); None for an experiment of theory alone."""
        if not self.sweep:
            return None
        spec = dict(self.sweep)
        if quick:
            if "seeds" in self.quick:
                spec["seeds"] = self.quick["seeds"]
            spec["set"] = dict(spec.get("set", {})) | dict(self.quick.get("set", {}))
        return Sweep.from_dict(spec, base_dir=self.folder or _folder())


def _folder() -> Path:
    return Path(str(resources.files("fabricsim") / "experiments"))


def experiments() -> list[Experiment]:
    """Every experiment of the suite, by name."""
    return [load(p) for p in sorted(_folder().glob("*.toml"))]


def load(path: str | Path) -> Experiment:
    path = Path(path)
    where = path.name
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise scenario_error(where, f"not a readable experiment: {e}") from None
    known = {"name", "source", "reference", "summary", "sweep", "quick", "claims", "tables", "plot", "theory_figures"}
    unknown = set(raw) - known
    if unknown:
        raise scenario_error(f"{where}: {sorted(unknown)[0]}", f"unknown key; allowed: {', '.join(sorted(known))}")
    if raw.get("name") != path.stem:
        raise scenario_error(f"{where}: name", f"got {raw.get('name')!r}; allowed: the file's name, {path.stem!r}")
    if raw.get("source") not in SOURCES:
        raise scenario_error(f"{where}: source", f"got {raw.get('source')!r}; allowed: {', '.join(SOURCES)}")
    claims = []
    for i, c in enumerate(raw.get("claims", [])):
        try:
            claim = Claim(**c)
        except TypeError as e:
            raise scenario_error(f"{where}: claims[{i}]", str(e)) from None
        claim.check(f"{where}: claims[{i}]")
        if claim.metric is not None and not raw.get("sweep"):
            raise scenario_error(f"{where}: claims[{i}]", "a simulation metric needs a [sweep]")
        claims.append(claim)
    if not claims:
        raise scenario_error(f"{where}: claims", "missing; an experiment states at least one claim")
    for i, t in enumerate(raw.get("tables", [])):
        if set(t) - {"title", "by", "columns", "of"} or "columns" not in t:
            raise scenario_error(f"{where}: tables[{i}]", "allowed keys: title, by, columns (label, metric[, scale]), of")
    return Experiment(
        raw["name"],
        raw["source"],
        raw.get("reference", ""),
        raw.get("summary", ""),
        raw.get("sweep", {}),
        raw.get("quick", {}),
        claims,
        raw.get("tables", []),
        raw.get("plot", {}),
        raw.get("theory_figures", []),
        path.parent,
    )


# ---- metrics ---------------------------------------------------------------------------------


def _parse_metric(metric: str, what: str) -> tuple[str, str, str]:
    try:
        path, agg = metric.split(":")
        table, column = path.split(".")
    except ValueError:
        raise scenario_error(f"{what}: metric", f"got {metric!r}; allowed: a summary column or table.column:agg") from None
    if agg not in AGGREGATES:
        raise scenario_error(f"{what}: metric", f"got aggregate {agg!r}; allowed: {', '.join(AGGREGATES)}")
    return table, column, agg


def _aggregate(frame: pl.DataFrame, column: str, agg: str) -> float | None:
    if agg == "switch_imbalance":
        if "from" not in frame.columns:
            raise scenario_error("metric", "switch_imbalance is for the ports table (grouped by its from column)")
        per = [_aggregate(g, column, "imbalance") for _, g in frame.group_by("from")]
        return max((v for v in per if v is not None), default=None)
    values = frame[column].drop_nulls().cast(pl.Float64)
    if values.len() == 0:
        return None
    if agg == "p50":
        return values.quantile(0.5, "linear")
    if agg == "p99":
        return values.quantile(0.99, "linear")
    if agg == "imbalance":
        mean = values.mean()
        return None if not mean else float(values.max()) / float(mean) - 1.0  # type: ignore[arg-type]
    return float(getattr(values, agg)())


def with_metric(points: pl.DataFrame, metric: str, where: dict[str, Any], sweep_dir: Path | None, what: str) -> tuple[pl.DataFrame, str]:
    """``points`` with a column holding ``metric`` per point (a summary column as it is)."""
    if ":" not in metric:
        if metric not in points.columns:
            raise scenario_error(f"{what}: metric", f"got {metric!r}; allowed: a summary column or table.column:agg")
        return points, metric
    table, column, agg = _parse_metric(metric, what)
    name = metric + (str(sorted(where.items())) if where else "")
    if name in points.columns:
        return points, name
    if sweep_dir is None:
        raise scenario_error(f"{what}: metric", "a table metric needs the sweep's directory")
    values: list[float | None] = []
    for p in points["point"]:
        path = sweep_dir / "points" / p / f"{table}.parquet"
        if not path.exists():
            values.append(None)
            continue
        frame = pl.read_parquet(path)
        for key, value in {column: None, **where}.items():
            if key not in frame.columns:
                raise scenario_error(f"{what}: metric", f"{table} has no column {key!r}; it has {', '.join(frame.columns)}")
            if value is not None:
                frame = frame.filter(pl.col(key) == value)
        values.append(_aggregate(frame, column, agg))
    return points.with_columns(pl.Series(name, values, dtype=pl.Float64)), name


def _mean(points: pl.DataFrame, column: str, where: dict[str, Any], what: str) -> float:
    sel = points
    for key, value in where.items():
        if key not in sel.columns:
            raise scenario_error(what, f"{key!r} is not an axis of the sweep")
        sel = sel.filter(pl.col(key) == value)
    values = sel[column].drop_nulls()
    if values.len() == 0:
        raise scenario_error(what, f"no point with {where} has a {column}")
    return float(values.mean())  # type: ignore[arg-type]


#: Each model spec's number, computed once per process (the models are seeded).
_MODEL_CACHE: dict[str, float] = {}


def _model(spec: dict[str, Any], what: str) -> float:
    """A model's number (cached: several claims compare with the same model run)."""
    key = json.dumps(spec, sort_keys=True)
    if key not in _MODEL_CACHE:
        _MODEL_CACHE[key] = theory.evaluate(spec, what)
    return _MODEL_CACHE[key]


def _value(c: Claim, points: pl.DataFrame | None, sweep_dir: Path | None, what: str) -> tuple[float, pl.DataFrame | None]:
    """The claim's number, and ``points`` with the claim's table metric added (so a later
    claim on the same metric reads no table again)."""
    if c.theory is not None:
        value = _model(c.theory, f"{what}: theory")
        if c.theory_over is not None:
            value /= _model(c.theory_over, f"{what}: theory_over")
        return value, points
    assert c.metric is not None and points is not None
    points, column = with_metric(points, c.metric, c.where, sweep_dir, what)
    value = _mean(points, column, c.of, what)
    if c.over is not None:
        value /= _mean(points, column, c.over, what)
    return value, points


def evaluate(exp: Experiment, points: pl.DataFrame | None, sweep_dir: Path | None = None) -> pl.DataFrame:
    """One row per claim: the reference (paper or model), fabricsim's number, the verdict, the note."""
    rows = []
    for i, c in enumerate(exp.claims):
        what = f"{exp.name}: claims[{i}]"
        value, points = _value(c, points, sweep_dir, what)
        ratio = c.over is not None or c.theory_over is not None
        pivot = c.baseline if c.baseline is not None else 1.0 if ratio else None
        if c.model is not None:
            ref: float | None = _model(c.model, f"{what}: model")
            shown = f"model {ref:.4g}"
        else:
            ref = c.paper
            shown = f"{ref:g}" if ref is not None else ""
        if ref is None:
            if pivot is None:
                raise scenario_error(what, "a claim with expect needs a ratio (over, theory_over) or a baseline")
            verdict = MATCHES if (value > pivot if c.expect == "above" else value < pivot) else DIFFERS
            shown = f"{c.expect} {pivot:g}"
        elif abs(value / ref - 1) <= c.tolerance:
            verdict = MATCHES
        elif pivot is not None and (value - pivot) * (ref - pivot) > 0:
            verdict = DIRECTION
        else:
            verdict = DIFFERS
        rows.append(
            {"experiment": exp.name, "claim": c.claim, "paper": shown, "fabricsim": round(value, 4), "verdict": verdict, "note": c.note}
        )
    return pl.DataFrame(rows)


def tables(exp: Experiment, points: pl.DataFrame, sweep_dir: Path | None) -> list[tuple[str, pl.DataFrame]]:
    """The experiment's ``[[tables]]``: each a title and its rows (means over seeds)."""
    out = []
    for i, t in enumerate(exp.tables):
        what = f"{exp.name}: tables[{i}]"
        sel = points
        for key, value in t.get("of", {}).items():
            sel = sel.filter(pl.col(key) == value)
        by = list(t.get("by", []))
        aggs = []
        for col in t["columns"]:
            label, metric = col[0], col[1]
            scale = col[2] if len(col) > 2 else 1.0
            sel, name = with_metric(sel, metric, col[3] if len(col) > 3 else {}, sweep_dir, what)
            aggs.append((pl.col(name).cast(pl.Float64).mean() * scale).alias(label))
        frame = sel.group_by(by, maintain_order=True).agg(aggs) if by else sel.select(aggs)
        out.append((t.get("title", ""), frame))
    return out


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}" if abs(v) < 10 else f"{v:,.1f}"
    return "-" if v is None else str(v)


def markdown_tables(named: list[tuple[str, pl.DataFrame]]) -> str:
    """Markdown for :func:`tables`."""
    parts = []
    for title, frame in named:
        lines = [f"**{title}**", ""] if title else []
        lines.append("| " + " | ".join(frame.columns) + " |")
        lines.append("|" + "---|" * len(frame.columns))
        lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.iter_rows()]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def figures(exp: Experiment, d: Path) -> list[Figure]:
    """The experiment's plots: its sweep's (``[plot]`` picks the line plot) and its models'."""
    figs = sweep_figures(d, **exp.plot) if is_sweep(d) else []
    return figs + [theory.figure(f, f"{exp.name}: theory_figures") for f in exp.theory_figures]


def run_experiment(
    exp: Experiment, out_dir: str | Path, quick: bool = False, workers: int | None = None, plots: bool = True
) -> pl.DataFrame:
    """Run an experiment's sweep into ``out_dir/<name>``, judge its claims (``claims.parquet``)
    and draw its plots (``plots/``, PNG and SVG)."""
    out = Path(out_dir) / (exp.name + ("-quick" if quick else ""))
    out.mkdir(parents=True, exist_ok=True)
    spec = exp.spec(quick)
    points = run_sweep(spec, out, workers=workers) if spec is not None else None
    claims = evaluate(exp, points, out)
    claims.write_parquet(out / "claims.parquet")
    if plots:
        draw(exp, out)
    return claims


def draw(exp: Experiment, d: Path) -> list[Figure]:
    """The experiment's figures, drawn into ``d/plots`` (PNG and SVG); returns them."""
    from .plot import save_figures

    figs = figures(exp, d)
    save_figures(figs, d / "plots")
    return figs
