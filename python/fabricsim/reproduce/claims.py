"""The claims of the reproduction suite, and how each is judged (``fabricsim reproduce``).

A claim says what it is checked against (its **kind**), what fabricsim measures, and how the
two are compared. Kinds are counted apart; only ``paper`` claims make the headline:

- ``paper``: a statement of a source document, quoted (``quote``) with its location (``at``).
- ``reference``: a number of the reference simulator (htsim); ``quote`` gives its setup and the
  convention the number was measured in.
- ``model``: fabricsim's theory module checked against a document, or simulation against it.
- ``own``: fabricsim's own explanation of a result (an ablation, a cause); not a reproduction.

**Numbers.** ``number`` is the source's number; ``scale`` says how far fabricsim may be from it:
``relative`` (``|value / number - 1|``), ``excess`` (a slowdown or a ratio, whose 1 means "no
effect": ``|(value - 1) / (number - 1) - 1|``, so 15 % on 1.38 means 1.32 to 1.44, not 1.17 to
1.59) or ``absolute`` (``|value - number|``). A slowdown or a ratio cannot use ``relative``. The
``tolerance`` is at most 0.5 on the relative scales and every numeric claim says why it is what
it is (``tolerance_why``).

**Directions.** ``expect = "above" | "below"`` compares the value (a ratio against 1, or the value
against ``baseline``) with the pivot, seed by seed. A direction on a simulation needs at least two
seeds; models run three seeds unless the spec names one.

**Several points on one side.** ``over`` may list several selectors: the claim is then over
the smallest of them, seed by seed ("ARCANE against the best of the others", for a time or a
slowdown, where smaller is better). ``than = {of = {...}, over = {...}}`` divides the claim's
ratio by a second one, seed by seed ("the gap grows with the message size": ARCANE's ratio to
OPS at 32 MiB over the same ratio at 2 MiB).

**Seeds.** Every row reports the mean over seeds and the smallest and largest seed's value. A
ratio is the mean of ``of`` over the mean of ``over``; its spread is that of the per-seed
ratios (the same seed on both sides).

**Verdicts** follow one rule for every claim, seed by seed and beyond the seeds' spread, with
the size a claim's words carry (``words``, ``words_why``): :mod:`fabricsim.reproduce.verdicts`.

A claim that cannot fail (true by construction in fabricsim, or the source's arithmetic) has
``counted = false`` and says why (``not_counted_why``): its row is shown, marked, and left out of
the headline's counts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ..errors import spec_error
from ..results import COLUMNS
from . import theory
from .verdicts import VERDICTS, WORDS, judge

if TYPE_CHECKING:
    from .experiment import Experiment

__all__ = [
    "KINDS",
    "VERDICTS",
    "WORDS",
    "Claim",
    "check_metric",
    "evaluate",
    "judge",
    "model_per_seed",
    "model_value",
    "parse_metric",
    "per_seed",
    "per_seed_ratio",
    "summarize",
    "with_metric",
]

KINDS = {
    "paper": "statements of the source documents, quoted with their location",
    "reference": "numbers of the reference simulator (htsim), with its setup and convention",
    "model": "fabricsim's theory module, against a document or against simulation",
    "own": "fabricsim's own explanations (ablations, causes): not reproductions",
}
SCALES = ("relative", "excess", "absolute")
MAX_TOLERANCE = 0.5
AGGREGATES = ("sum", "max", "min", "mean", "p50", "p90", "p99", "imbalance", "switch_imbalance")
#: Seeds a model runs with when its spec names none.
MODEL_SEEDS = (1, 2, 3)
#: Point columns besides the summary's (the sweep adds them).
POINT_COLUMNS = {"peak_rss_mb"}


@dataclass
class Claim:
    claim: str
    kind: str = ""
    quote: str = ""
    at: str = ""
    metric: str | None = None
    of: dict[str, Any] = field(default_factory=dict)
    number: float | None = None
    scale: str = "relative"
    tolerance: float = 0.1
    tolerance_why: str = ""
    over: dict[str, Any] | list[dict[str, Any]] | None = None
    than: dict[str, dict[str, Any]] | None = None
    expect: str | None = None
    baseline: float | None = None
    note: str = ""
    where: dict[str, Any] = field(default_factory=dict)
    theory: dict[str, Any] | None = None
    theory_over: dict[str, Any] | None = None
    model: dict[str, Any] | None = None
    #: The word of the quote that sizes a direction (a key of :data:`WORDS`), or why none does.
    words: str = ""
    words_why: str = ""
    #: false for a claim that cannot fail (``not_counted_why`` says why): shown, not counted.
    counted: bool = True
    not_counted_why: str = ""

    @property
    def ratio(self) -> bool:
        return self.over is not None or self.theory_over is not None

    def check(self, what: str) -> None:
        """Refuse a claim that cannot be judged as its kind requires."""
        if self.kind not in KINDS:
            raise spec_error(f"{what}: kind", f"got {self.kind!r}; allowed: {', '.join(KINDS)}")
        if not isinstance(self.counted, bool):
            raise spec_error(f"{what}: counted", f"got {self.counted!r}; allowed: true or false")
        if self.counted == bool(self.not_counted_why.strip()):
            raise spec_error(what, "a claim that cannot fail has counted = false and says why (not_counted_why); only such a claim")
        if self.kind == "paper" and not (self.quote.strip() and self.at.strip()):
            raise spec_error(what, "a paper claim quotes the document (quote) and says where (at)")
        if self.kind == "reference" and not self.quote.strip():
            raise spec_error(what, "a reference claim gives the reference's setup and convention (quote)")
        if (self.metric is None) == (self.theory is None):
            raise spec_error(what, "give exactly one of metric (simulation) and theory (a model)")
        refs = [k for k, v in (("number", self.number), ("model", self.model), ("expect", self.expect)) if v is not None]
        if len(refs) != 1:
            raise spec_error(what, f"give exactly one of number, model and expect; got {', '.join(refs) or 'none'}")
        self._check_words(what)
        if self.expect is not None:
            if self.expect not in ("above", "below"):
                raise spec_error(f"{what}: expect", f'got {self.expect!r}; allowed: "above", "below"')
            if self.baseline is None and not self.ratio:
                raise spec_error(what, "a claim with expect needs a ratio (over, theory_over) or a baseline")
        else:
            self._check_number(what)
        if self.metric is not None and ":" in self.metric:
            parse_metric(self.metric, what)
        if isinstance(self.over, list) and not (self.over and all(isinstance(o, dict) for o in self.over)):
            raise spec_error(f"{what}: over", "a list of over is a non-empty list of point selectors (tables)")
        if self.than is not None:
            if self.over is None or self.metric is None:
                raise spec_error(f"{what}: than", "divides a simulated ratio by another; the claim needs metric and over")
            if not isinstance(self.than, dict) or set(self.than) != {"of", "over"}:
                raise spec_error(f"{what}: than", "allowed: {of = {...}, over = {...}}, the second ratio's two sides")

    def _check_words(self, what: str) -> None:
        if self.words and self.words not in WORDS:
            raise spec_error(f"{what}: words", f"got {self.words!r}; allowed: {', '.join(WORDS)}")
        if self.words and self.expect is None:
            raise spec_error(f"{what}: words", "sizes a direction (expect); a number carries its own size")
        if self.words and self.words_why.strip():
            raise spec_error(what, "give words (the word that sizes the claim) or words_why (why none does), not both")
        said = self.quote_words()
        if self.kind == "paper" and self.expect is not None and said and not (self.words or self.words_why.strip()):
            raise spec_error(
                what,
                f"the quote says {', '.join(repr(w) for w in said)}: name the word that sizes the claim (words) "
                "or say why none does (words_why)",
            )

    def quote_words(self) -> list[str]:
        """The words of :data:`WORDS` in the quote, in order."""
        found = re.findall(r"[a-z]+", self.quote.lower())
        return list(dict.fromkeys(w for w in found if w in WORDS))

    @property
    def margin(self) -> float:
        """The size the claim's words carry, as a share of the pivot (0 without words)."""
        return WORDS[self.words] if self.words else 0.0

    def selectors(self) -> list[tuple[str, dict[str, Any]]]:
        """Every point selector of the claim, named for messages."""
        sels = [("of", self.of)]
        overs = self.over if isinstance(self.over, list) else [self.over] if self.over is not None else []
        sels += [(f"over[{i}]" if isinstance(self.over, list) else "over", o) for i, o in enumerate(overs)]
        if self.than is not None:
            sels += [("than.of", self.than["of"]), ("than.over", self.than["over"])]
        return sels

    def _check_number(self, what: str) -> None:
        if self.scale not in SCALES:
            raise spec_error(f"{what}: scale", f"got {self.scale!r}; allowed: {', '.join(SCALES)}")
        if not self.tolerance > 0 or (self.scale != "absolute" and self.tolerance > MAX_TOLERANCE):
            bound = "> 0" if self.scale == "absolute" else f"> 0 and at most {MAX_TOLERANCE}"
            raise spec_error(f"{what}: tolerance", f"got {self.tolerance!r}; allowed: {bound} on the {self.scale} scale")
        if not self.tolerance_why.strip():
            raise spec_error(what, "a numeric claim says why its tolerance is what it is (tolerance_why)")
        slowdown = self.ratio or (self.metric is not None and "slowdown" in self.metric)
        if slowdown and self.scale == "relative":
            raise spec_error(
                f"{what}: scale", 'a slowdown or a ratio is judged on its excess over 1 (scale = "excess") or in absolute terms'
            )
        if self.number is not None:
            if self.scale == "relative" and self.number == 0:
                raise spec_error(f"{what}: number", 'got 0 on the relative scale; allowed: scale = "absolute"')
            if self.scale == "excess" and self.number == 1:
                raise spec_error(f"{what}: number", 'got 1 on the excess scale (no excess); allowed: scale = "absolute"')

    def error(self, value: float, ref: float) -> float:
        """How far ``value`` is from ``ref`` on the claim's scale."""
        if self.scale == "absolute":
            return value - ref
        if self.scale == "excess":
            return (value - 1.0) / (ref - 1.0) - 1.0
        return value / ref - 1.0

    def pivot(self) -> float | None:
        if self.baseline is not None:
            return self.baseline
        return 1.0 if self.ratio or self.scale == "excess" else None


# ---- metrics ---------------------------------------------------------------------------------


def parse_metric(metric: str, what: str) -> tuple[str, str, str]:
    """``table.column:agg``, each part checked against the declared columns."""
    try:
        path, agg = metric.split(":")
        table, column = path.split(".")
    except ValueError:
        raise spec_error(f"{what}: metric", f"got {metric!r}; allowed: a summary column or table.column:agg") from None
    if agg not in AGGREGATES:
        raise spec_error(f"{what}: metric", f"got aggregate {agg!r}; allowed: {', '.join(AGGREGATES)}")
    tables = [t for t in COLUMNS if t != "summary"]
    if table not in tables:
        raise spec_error(f"{what}: metric", f"got table {table!r}; allowed: {', '.join(tables)}")
    if column not in {c[0] for c in COLUMNS[table]}:
        raise spec_error(f"{what}: metric", f"{table} has no column {column!r}; it has {', '.join(c[0] for c in COLUMNS[table])}")
    return table, column, agg


def check_metric(metric: str, where: dict[str, Any], what: str) -> None:
    """Refuse a metric (and its row filter) that no point could have, before any run."""
    if ":" in metric:
        table, column, _ = parse_metric(metric, what)
        names = {c[0] for c in COLUMNS[table]}
        for key in where:
            if key not in names:
                raise spec_error(f"{what}: where", f"{table} has no column {key!r}; it has {', '.join(sorted(names))}")
        kinds = {c[0]: c[1] for c in COLUMNS[table]}
    elif metric not in {c[0] for c in COLUMNS["summary"]} | POINT_COLUMNS:
        raise spec_error(
            f"{what}: metric",
            f"got {metric!r}; allowed: a summary column ({', '.join(c[0] for c in COLUMNS['summary'])}) or table.column:agg",
        )
    else:
        column, kinds = metric, {c[0]: c[1] for c in COLUMNS["summary"]}
    if kinds.get(column) == "str":
        raise spec_error(f"{what}: metric", f"{column!r} is text; allowed: a numeric column (a claim or table averages it over seeds)")


def _aggregate(frame: pl.DataFrame, column: str, agg: str) -> float | None:
    if agg == "switch_imbalance":
        if "from" not in frame.columns:
            raise spec_error("metric", "switch_imbalance is for the ports table (grouped by its from column)")
        per = [_aggregate(g, column, "imbalance") for _, g in frame.group_by("from")]
        return max((v for v in per if v is not None), default=None)
    values = frame[column].drop_nulls().cast(pl.Float64)
    if values.len() == 0:
        return None
    if agg in ("p50", "p90", "p99"):
        return values.quantile(int(agg[1:]) / 100, "linear")
    if agg == "imbalance":
        mean = values.mean()
        return None if not mean else float(values.max()) / float(mean) - 1.0  # type: ignore[arg-type]
    return float(getattr(values, agg)())


def with_metric(points: pl.DataFrame, metric: str, where: dict[str, Any], sweep_dir: Path | None, what: str) -> tuple[pl.DataFrame, str]:
    """``points`` with a column holding ``metric`` per point (a summary column as it is)."""
    if ":" not in metric:
        if metric not in points.columns:
            raise spec_error(f"{what}: metric", f"got {metric!r}; allowed: a summary column or table.column:agg")
        return points, metric
    table, column, agg = parse_metric(metric, what)
    name = metric + (str(sorted(where.items())) if where else "")
    if name in points.columns:
        return points, name
    if sweep_dir is None:
        raise spec_error(f"{what}: metric", "a table metric needs the sweep's directory")
    values: list[float | None] = []
    for p in points["point"]:
        path = sweep_dir / "points" / p / f"{table}.parquet"
        if not path.exists():
            values.append(None)
            continue
        frame = pl.read_parquet(path)
        for key, value in {column: None, **where}.items():
            if key not in frame.columns:
                raise spec_error(f"{what}: metric", f"{table} has no column {key!r}; it has {', '.join(frame.columns)}")
            if value is not None:
                frame = frame.filter(pl.col(key) == value)
        values.append(_aggregate(frame, column, agg))
    return points.with_columns(pl.Series(name, values, dtype=pl.Float64)), name


def per_seed(points: pl.DataFrame, column: str, sel: dict[str, Any], what: str) -> dict[int, float]:
    """The metric's mean per seed over the points ``sel`` picks."""
    frame = points
    for key, value in sel.items():
        if key not in frame.columns:
            raise spec_error(what, f"{key!r} is not an axis of the sweep")
        frame = frame.filter(pl.col(key) == value)
    frame = frame.filter(pl.col(column).is_not_null())
    if frame.height == 0:
        raise spec_error(what, f"no point with {sel} has a {column}")
    if "seed" not in frame.columns:
        return {0: float(frame[column].cast(pl.Float64).mean())}  # type: ignore[arg-type]
    means = frame.group_by("seed").agg(pl.col(column).cast(pl.Float64).mean()).sort("seed")
    return dict(zip(means["seed"].to_list(), means[column].to_list(), strict=True))


#: Each model spec's number, computed once per process (the models are seeded).
_MODEL_CACHE: dict[str, float] = {}


def model_value(spec: dict[str, Any], what: str) -> float:
    """A model's number (cached: several claims compare with the same model run)."""
    key = json.dumps(spec, sort_keys=True)
    if key not in _MODEL_CACHE:
        _MODEL_CACHE[key] = theory.evaluate(spec, what)
    return _MODEL_CACHE[key]


def model_per_seed(spec: dict[str, Any], what: str) -> dict[int, float]:
    """A model at its own seed, or at :data:`MODEL_SEEDS`."""
    if "seed" in spec:
        return {int(spec["seed"]): model_value(spec, what)}
    return {s: model_value(spec | {"seed": s}, what) for s in MODEL_SEEDS}


def summarize(of: dict[int, float], over: dict[int, float] | None, what: str) -> tuple[float, float, float, int]:
    """(value, smallest seed's, largest seed's, seeds): a mean, or a ratio of means with the
    spread of the per-seed ratios."""
    if over is None:
        vals = list(of.values())
        return sum(vals) / len(vals), min(vals), max(vals), len(vals)
    per = per_seed_ratio(of, over, what)
    seeds = list(per)
    value = (sum(of[s] for s in seeds) / len(seeds)) / (sum(over[s] for s in seeds) / len(seeds))
    return value, min(per.values()), max(per.values()), len(seeds)


def per_seed_ratio(of: dict[int, float], over: dict[int, float], what: str) -> dict[int, float]:
    """Seed by seed, of / over, on the seeds both sides have."""
    seeds = sorted(set(of) & set(over))
    if not seeds:
        raise spec_error(what, "of and over share no seed")
    if any(over[s] == 0 for s in seeds):
        raise spec_error(what, "the over side is 0 for a seed; a ratio needs a non-zero denominator")
    return {s: of[s] / over[s] for s in seeds}


# ---- judging an experiment's claims ----------------------------------------------------------


def _value(
    c: Claim, points: pl.DataFrame | None, sweep_dir: Path | None, what: str
) -> tuple[tuple[float, float, float, int], pl.DataFrame | None]:
    """The claim's (value, lo, hi, seeds), and ``points`` with the claim's table metric added
    (so a later claim on the same metric reads no table again)."""
    if c.theory is not None:
        of = model_per_seed(c.theory, f"{what}: theory")
        over = model_per_seed(c.theory_over, f"{what}: theory_over") if c.theory_over is not None else None
        return summarize(of, over, what), points
    assert c.metric is not None and points is not None
    points, column = with_metric(points, c.metric, c.where, sweep_dir, what)
    of = per_seed(points, column, c.of, what)
    over = _over(points, column, c.over, what)
    if c.than is not None:
        assert over is not None
        than_over = _over(points, column, c.than["over"], f"{what}: than")
        assert than_over is not None
        first = per_seed_ratio(of, over, what)
        second = per_seed_ratio(per_seed(points, column, c.than["of"], f"{what}: than"), than_over, f"{what}: than")
        return summarize(first, second, what), points
    return summarize(of, over, what), points


def _over(points: pl.DataFrame, column: str, over: dict[str, Any] | list[dict[str, Any]] | None, what: str) -> dict[int, float] | None:
    """The over side per seed: one selector's, or the smallest of several (the best of them)."""
    if over is None:
        return None
    if isinstance(over, dict):
        return per_seed(points, column, over, what)
    sides = [per_seed(points, column, o, f"{what}: over[{i}]") for i, o in enumerate(over)]
    seeds = set.intersection(*(set(s) for s in sides))
    return {s: min(side[s] for side in sides) for s in sorted(seeds)}


def _shown(c: Claim, ref: float | None) -> str:
    if c.model is not None:
        return f"model {ref:.4g}"
    if ref is None:
        pivot = c.pivot()
        return f"{c.expect} {pivot:g}"
    return f"{ref:g}"


def evaluate(exp: Experiment, points: pl.DataFrame | None, sweep_dir: Path | None = None, only_simulated: bool = False) -> pl.DataFrame:
    """One row per claim: its kind, the source's number, fabricsim's (mean, seeds' range), the
    verdict, the quote and the note (``only_simulated``: a claim of theory alone gets a row of
    nulls, as under another default it cannot change)."""
    rows: list[dict[str, Any]] = []
    for i, c in enumerate(exp.claims):
        what = f"{exp.name}: claims[{i}]"
        if only_simulated and c.metric is None:
            nothing = dict.fromkeys(("fabricsim", "min", "max", "seeds", "verdict"))
            rows.append({"experiment": exp.name, "kind": c.kind, "claim": c.claim} | nothing)
            continue
        (value, lo, hi, n), points = _value(c, points, sweep_dir, what)
        ref = model_value(c.model, f"{what}: model") if c.model is not None else c.number
        rows.append(
            {
                "experiment": exp.name,
                "kind": c.kind,
                "claim": c.claim,
                "source": _shown(c, ref),
                "fabricsim": round(value, 4),
                "min": round(lo, 4),
                "max": round(hi, 4),
                "seeds": n,
                "verdict": judge(c, value, lo, hi, ref),
                "counted": c.counted,
                "at": c.at,
                "quote": c.quote,
                "note": c.note if c.counted else f"Not counted: {c.not_counted_why} {c.note}".strip(),
            }
        )
    return pl.DataFrame(rows, infer_schema_length=None)
