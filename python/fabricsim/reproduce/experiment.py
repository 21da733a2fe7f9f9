"""The source papers' experiments, reproduced: ``fabricsim reproduce``.

Each experiment is one TOML file in ``fabricsim/experiments/`` (shipped with the package),
named after the figure, table or section it reproduces. It holds a sweep (the base scenario
inline, its axes and seeds), what ``--quick`` changes (a smaller fabric, fewer seeds), and its
claims, each saying what it is checked against (:mod:`fabricsim.reproduce.claims`: kinds, scales,
tolerances and verdicts)::

    name = "nvidia-256-flows"
    source = "nvidia"                     # arcane | prime | chinamobile | nvidia | juniper
    reference = "NVIDIA Spectrum adaptive routing blog, Figure 3"
    summary = "..."
    [sweep]                                # a sweep spec (docs/experiments.md), base inline
    base = { topology = { hosts = 128 } }
    seeds = [1, 2, 3]
    [sweep.grid]
    "switch.routing" = ["ecmp", "adaptive"]
    [quick]                                # --quick: seeds and set overrides
    seeds = [1]
    [plot]                                 # optional: the report's sweep plot (x, line, metric)
    x = "switch.routing"
    [[claims]]
    kind = "paper"                         # paper | reference | model | own
    claim = "ECMP's worst flow takes up to 2.5x the ideal"
    quote = "flows can take up to 2.5x longer to complete compared to the ideal"
    at = "Figure 3 and the text above it"
    metric = "max_slowdown"                # averaged over the seeds (see below)
    of = { "switch.routing" = "ecmp" }     # the points it is measured on
    over = { "switch.routing" = "adaptive" }   # optional: report of / over, a ratio (a list: the
                                           # smallest of them per seed); than = {of, over}: a
                                           # ratio of this ratio to a second one
    number = 2.5                           # the source's number (or expect = "above" | "below")
    scale = "excess"                       # relative | excess | absolute
    tolerance = 0.2
    tolerance_why = "the blog reads the number off a figure"
    note = "why fabricsim differs, with the evidence"
    [sensitivity]                          # optional (fabricsim.reproduce.sensitivity): named defaults
    stated = { "trimming" = "why: the document states it" }   # the document states: not varied
    [[tables]]                             # optional: means over seeds, for the docs
    title = "..."
    by = ["switch.routing"]
    columns = [["max FCT us", "max_fct_ns", 0.001], ["drops", "drops"]]   # label, metric[, scale[, where]]

A **metric** is a summary column (``max_slowdown``) or an aggregate of one of a point's tables,
``table.column:agg`` with ``agg`` one of sum, max, min, mean, p50, p90, p99, imbalance (max / mean
- 1) and switch_imbalance (ports: the largest imbalance among the ports of one node), rows
filtered by ``where = {column = value}`` (``flows.fct_ps:max`` with ``where = {class = 1}``;
``ports.data_packets:switch_imbalance`` with ``where = {tier = 1, up = true}``). :func:`load`
checks every metric, column, axis and axis value against the declared outputs and the sweep
before anything runs.

Instead of ``metric``, a claim can take its value from a model of :mod:`fabricsim.reproduce.theory`
(``theory = {model = "max_queue", policy = "ops", n = 16}``, with ``theory_over`` for a
ratio), and instead of ``number`` its reference can be a model (``model = {model =
"evs_imbalance", ...}``): theory checked against the paper, and simulation against theory.
An experiment whose claims are all theory needs no sweep. ``[[theory_figures]]`` adds the
models' plots (:data:`fabricsim.reproduce.theory.FIGURES`) to the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import spec_error
from ..io.files import read_toml
from ..plot.figures import Figure, is_sweep, sweep_figures
from ..sweep import Sweep, run_sweep
from . import theory
from .claims import (
    KINDS,
    VERDICTS,
    Claim,
    check_metric,
    evaluate,
    with_metric,
)
from .sensitivity import check_spec as check_sensitivity
from .sensitivity import depends_on, run_sensitivity

__all__ = [
    "Claim",
    "Experiment",
    "draw",
    "evaluate",
    "experiments",
    "fabricsim_cell",
    "figures",
    "headline",
    "load",
    "markdown_claims",
    "markdown_tables",
    "run_experiment",
    "tables",
]

SOURCES = {
    "arcane": "ARCANE (recycled entropies; REPS family)",
    "prime": "PRIME (pseudo-random round-robin MP-EV spraying)",
    "chinamobile": "China Mobile: load balancing challenges in AI fabrics",
    "nvidia": "NVIDIA Spectrum adaptive routing blog",
    "juniper": "Juniper: to spray or not to spray",
}


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
    #: ``[sensitivity]``: defaults the document states, and setups of its own to judge under
    #: (:mod:`fabricsim.reproduce.sensitivity`).
    sensitivity: dict[str, Any] = field(default_factory=dict)
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


KNOWN = {"name", "source", "reference", "summary", "sweep", "quick", "claims", "tables", "plot", "theory_figures", "sensitivity"}


def load(path: str | Path) -> Experiment:
    """An experiment file, every claim, metric, axis and table checked before anything runs."""
    path = Path(path)
    where = path.name
    raw = read_toml(path, "an experiment")
    unknown = set(raw) - KNOWN
    if unknown:
        raise spec_error(f"{where}: {sorted(unknown)[0]}", f"unknown key; allowed: {', '.join(sorted(KNOWN))}")
    if raw.get("name") != path.stem:
        raise spec_error(f"{where}: name", f"got {raw.get('name')!r}; allowed: the file's name, {path.stem!r}")
    if raw.get("source") not in SOURCES:
        raise spec_error(f"{where}: source", f"got {raw.get('source')!r}; allowed: {', '.join(SOURCES)}")
    claims = []
    for i, c in enumerate(raw.get("claims", [])):
        try:
            claim = Claim(**c)
        except TypeError as e:
            raise spec_error(f"{where}: claims[{i}]", str(e)) from None
        claim.check(f"{where}: claims[{i}]")
        claims.append(claim)
    if not claims:
        raise spec_error(f"{where}: claims", "missing; an experiment states at least one claim")
    quick = raw.get("quick", {})
    if not isinstance(quick, dict) or set(quick) - {"seeds", "set"}:
        raise spec_error(f"{where}: quick", "allowed keys: seeds, set (the changes --quick makes)")
    for i, t in enumerate(raw.get("tables", [])):
        if set(t) - {"title", "by", "columns", "of"} or "columns" not in t:
            raise spec_error(f"{where}: tables[{i}]", "allowed keys: title, by, columns (label, metric[, scale]), of")
    exp = Experiment(
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
        check_sensitivity(raw.get("sensitivity", {}), where),
        path.parent,
    )
    _check_against_sweep(exp, where)
    return exp


def _check_against_sweep(exp: Experiment, where: str) -> None:
    """Every claim's and table's metric, axes and axis values exist in the sweep."""
    spec = exp.spec()
    axes: dict[str, list[Any]] = {}
    if spec is not None:
        axes = {**spec.grid, **spec.zipped, **{k: [v] for k, v in spec.fixed.items()}, "seed": list(spec.seeds)}

    def axis(key: str, what: str) -> list[Any]:
        if key not in axes:
            raise spec_error(f"{what}: {key}", f"not an axis of the sweep; allowed: {', '.join(axes) or 'none (no sweep)'}")
        return axes[key]

    def pick(sel: dict[str, Any] | None, what: str) -> None:
        for key, value in (sel or {}).items():
            if value not in axis(key, what):
                raise spec_error(f"{what}: {key}", f"got {value!r}; allowed: {', '.join(map(repr, axes[key]))}")

    for i, c in enumerate(exp.claims):
        what = f"{where}: claims[{i}]"
        if c.metric is None:
            continue
        if spec is None:
            raise spec_error(what, "a simulation metric needs a [sweep]")
        check_metric(c.metric, c.where, what)
        for name, sel in c.selectors():
            pick(sel, f"{what}: {name}")
        if c.expect is not None and (len(spec.seeds) < 2 or any("seed" in sel for _, sel in c.selectors())):
            raise spec_error(f"{what}: expect", "a direction needs the spread across seeds; allowed: a sweep of at least two seeds")
    for i, t in enumerate(exp.tables):
        what = f"{where}: tables[{i}]"
        pick(t.get("of"), f"{what}: of")
        for key in t.get("by", []):
            axis(key, f"{what}: by")
        for col in t["columns"]:
            check_metric(col[1], col[3] if len(col) > 3 else {}, what)


# ---- the verdicts, as a headline and tables ------------------------------------------------------


def headline(claims: pl.DataFrame) -> str:
    """The paper claims by verdict, then the other kinds' counts: the suite's one-line summary."""
    counted = pl.col("counted") if "counted" in claims.columns else pl.lit(True)
    paper = claims.filter((pl.col("kind") == "paper") & counted)
    shown = claims.filter((pl.col("kind") == "paper") & ~counted).height
    counts = dict(paper["verdict"].value_counts().iter_rows())
    parts = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts.get(v))
    others = ", ".join(f"{claims.filter(pl.col('kind') == k).height} {k}" for k in KINDS if k != "paper")
    cannot = f" ({shown} more that cannot fail are shown, not counted)" if shown else ""
    depends = ""
    if "depends_on" in claims.columns:
        n = paper.filter(pl.col("depends_on").fill_null("") != "").height
        depends = f"; {n} of them depend on a named default (the verdict changes under one of its documented values)"
    besides = f"besides them {others} claims (not counted above)"
    return f"{paper.height} paper claims that can fail: {parts or 'none'}{cannot}{depends}; {besides}"


def _num(v: float) -> str:
    return f"{v:.4g}"


def fabricsim_cell(row: dict[str, Any]) -> str:
    """``mean [min, max] (n seeds)``, or the value alone for one seed or a spread of zero."""
    if row["seeds"] < 2:
        return _num(row["fabricsim"])
    if row["min"] == row["max"]:
        return f"{_num(row['fabricsim'])} (all {row['seeds']} seeds)"
    return f"{_num(row['fabricsim'])} [{_num(row['min'])}, {_num(row['max'])}] ({row['seeds']} seeds)"


def _esc(text: Any) -> str:
    return str(text).replace("|", "\\|")


def markdown_claims(claims: pl.DataFrame) -> str:
    """The verdicts as Markdown: the headline, then one table per kind (paper claims first)."""
    parts = [f"**{headline(claims)}.**"]
    for kind, meaning in KINDS.items():
        rows = claims.filter(pl.col("kind") == kind)
        if rows.height == 0:
            continue
        quoted = kind in ("paper", "reference")
        head = [
            "experiment",
            "claim",
            *(["the document says" if kind == "paper" else "the reference's setup"] if quoted else []),
            "source",
            "fabricsim",
            "verdict",
            *(["depends on"] if "depends_on" in rows.columns else []),
            "why",
        ]
        lines = [f"### {kind.capitalize()} claims ({rows.height}): {meaning}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in rows.iter_rows(named=True):
            said = [f'"{_esc(r["quote"])}" ({_esc(r["at"])})' if kind == "paper" else _esc(r["quote"])] if quoted else []
            verdict = r["verdict"] if r.get("counted", True) else f"({r['verdict']}, not counted)"
            depends = [_esc(r["depends_on"] or "-")] if "depends_on" in rows.columns else []
            cells = [r["experiment"], _esc(r["claim"]), *said, _esc(r["source"]), fabricsim_cell(r), verdict, *depends, _esc(r["note"])]
            lines.append("| " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    if "checked" in claims.columns:
        header = "| experiment | named defaults varied, and those not varied and why |"
        lines = ["### What each experiment's verdicts were checked against", "", header, "|---|---|"]
        for name, checked in claims.select("experiment", "checked").unique(maintain_order=True).iter_rows():
            lines.append(f"| {name} | {_esc(checked)} |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


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
    exp: Experiment,
    out_dir: str | Path,
    quick: bool = False,
    workers: int | None = None,
    plots: bool = True,
    allow_other_version: bool = False,
    sensitivity: bool = False,
) -> pl.DataFrame:
    """Run an experiment's sweep into ``out_dir/<name>``, judge its claims (``claims.parquet``)
    and draw its plots (``plots/``, PNG and SVG). A directory another build computed points in
    is refused unless ``allow_other_version`` (:func:`fabricsim.sweep.run_sweep`).
    ``sensitivity``: judge the claims again under each named default's alternatives
    (:mod:`fabricsim.reproduce.sensitivity`); the rows get ``depends_on`` and ``checked``."""
    out = Path(out_dir) / (exp.name + ("-quick" if quick else ""))
    out.mkdir(parents=True, exist_ok=True)
    spec = exp.spec(quick)
    points = run_sweep(spec, out, workers=workers, allow_other_version=allow_other_version) if spec is not None else None
    claims = evaluate(exp, points, out)
    if sensitivity:
        table, plan = run_sensitivity(exp, out, claims, quick, workers, allow_other_version)
        claims = claims.with_columns(
            depends_on=pl.Series(depends_on(claims, table, plan.current), dtype=pl.String), checked=pl.lit(plan.summary())
        )
    claims.write_parquet(out / "claims.parquet")
    if plots:
        draw(exp, out)
    return claims


def draw(exp: Experiment, d: Path) -> list[Figure]:
    """The experiment's figures, drawn into ``d/plots`` (PNG and SVG); returns them."""
    from ..plot import save_figures

    figs = figures(exp, d)
    save_figures(figs, d / "plots")
    return figs
