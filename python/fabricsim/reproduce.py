"""The source papers' experiments, reproduced: ``fabricsim reproduce``.

Each experiment is one TOML file in ``fabricsim/experiments/`` (shipped with the package),
named after the figure, table or section it reproduces. It holds a sweep (the base scenario
inline, its axes and seeds), what ``--quick`` changes (a smaller fabric, fewer seeds), and the
paper's claims, each with the paper's number beside the summary metric fabricsim compares it
with::

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
    [[claims]]
    claim = "ECMP's worst flow takes about 2.5x the ideal"
    metric = "max_slowdown"                # a summary column, averaged over the seeds
    of = { "switch.routing" = "ecmp" }     # the points it is measured on
    over = { "switch.routing" = "adaptive" }   # optional: report of / over, a ratio
    paper = 2.5
    tolerance = 0.2                        # matches: within 20 % of the paper
    note = "why fabricsim differs, with the evidence"

A claim's verdict: **matches** (within its tolerance of the paper's number), **same
direction, different size** (a ratio on the same side of 1 as the paper's, or a value on the
same side of ``baseline``), or **differs**. Where the paper gives only a direction (its
numbers were lost, or it never gave them), the claim has ``expect = "below"`` or ``"above"``
(the ratio against 1, or the value against ``baseline``) instead of ``paper``, and matches
when fabricsim goes that way.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from .errors import scenario_error
from .sweep import Sweep, run_sweep

__all__ = ["Claim", "Experiment", "evaluate", "experiments", "load", "run_experiment"]

SOURCES = {
    "arcane": "ARCANE (recycled entropies; REPS family)",
    "prime": "PRIME (pseudo-random round-robin MP-EV spraying)",
    "chinamobile": "China Mobile: load balancing challenges in AI fabrics",
    "nvidia": "NVIDIA Spectrum adaptive routing blog",
    "juniper": "Juniper: to spray or not to spray",
}
MATCHES, DIRECTION, DIFFERS = "matches", "same direction, different size", "differs"


@dataclass
class Claim:
    claim: str
    metric: str
    of: dict[str, Any]
    paper: float | None = None
    tolerance: float = 0.1
    over: dict[str, Any] | None = None
    expect: str | None = None
    baseline: float | None = None
    note: str = ""


@dataclass
class Experiment:
    name: str
    source: str
    reference: str
    summary: str
    sweep: dict[str, Any]
    quick: dict[str, Any]
    claims: list[Claim]

    def spec(self, quick: bool = False) -> Sweep:
        spec = dict(self.sweep)
        if quick:
            if "seeds" in self.quick:
                spec["seeds"] = self.quick["seeds"]
            spec["set"] = dict(spec.get("set", {})) | dict(self.quick.get("set", {}))
        return Sweep.from_dict(spec)


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
    known = {"name", "source", "reference", "summary", "sweep", "quick", "claims"}
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
            claims.append(Claim(**c))
        except TypeError as e:
            raise scenario_error(f"{where}: claims[{i}]", str(e)) from None
    if not claims:
        raise scenario_error(f"{where}: claims", "missing; an experiment states at least one claim")
    return Experiment(
        raw["name"], raw["source"], raw.get("reference", ""), raw.get("summary", ""), raw["sweep"], raw.get("quick", {}), claims
    )


def _mean(points: pl.DataFrame, metric: str, where: dict[str, Any], what: str) -> float:
    sel = points
    for key, value in where.items():
        if key not in sel.columns:
            raise scenario_error(what, f"{key!r} is not an axis of the sweep")
        sel = sel.filter(pl.col(key) == value)
    values = sel[metric].drop_nulls()
    if values.len() == 0:
        raise scenario_error(what, f"no point with {where} has a {metric}")
    return float(values.mean())  # type: ignore[arg-type]


def evaluate(exp: Experiment, points: pl.DataFrame) -> pl.DataFrame:
    """One row per claim: the paper's number, fabricsim's, the verdict and the note."""
    rows = []
    for i, c in enumerate(exp.claims):
        what = f"{exp.name}: claims[{i}]"
        value = _mean(points, c.metric, c.of, what)
        if c.over is not None:
            value /= _mean(points, c.metric, c.over, what)
        pivot = 1.0 if c.over is not None else c.baseline
        if c.paper is None:
            if pivot is None or c.expect not in ("above", "below"):
                raise scenario_error(what, 'a claim without paper needs expect = "above" or "below" and a ratio (over) or baseline')
            verdict = MATCHES if (value > pivot) == (c.expect == "above") else DIFFERS
        elif abs(value / c.paper - 1) <= c.tolerance:
            verdict = MATCHES
        elif pivot is not None and (value - pivot) * (c.paper - pivot) > 0:
            verdict = DIRECTION
        else:
            verdict = DIFFERS
        rows.append(
            {
                "experiment": exp.name,
                "claim": c.claim,
                "paper": f"{c.paper:g}" if c.paper is not None else f"{c.expect} {pivot:g}",
                "fabricsim": round(value, 4),
                "verdict": verdict,
                "note": c.note,
            }
        )
    return pl.DataFrame(rows)


def run_experiment(exp: Experiment, out_dir: str | Path, quick: bool = False, workers: int | None = None) -> pl.DataFrame:
    """Run an experiment's sweep into ``out_dir/<name>`` and judge its claims (``claims.parquet``)."""
    out = Path(out_dir) / (exp.name + ("-quick" if quick else ""))
    points = run_sweep(exp.spec(quick), out, workers=workers)
    claims = evaluate(exp, points)
    claims.write_parquet(out / "claims.parquet")
    return claims
