"""How much a verdict owes to a default of fabricsim's choosing: ``fabricsim reproduce --sensitivity``.

Every verdict of the suite rests on its experiment's setup, and where a document does not state
a parameter fabricsim chose it. For each **named default** below the suite runs the points an
experiment's claims read again under each documented alternative and judges the claims again;
a claim whose verdict changes under one of them **depends on** that default, and its row says
so with the verdict and value under each.

The named defaults, their values (fabricsim's first) and why those values are :data:`NAMED`
(docs/reproduction.md, "Verdicts that depend on a default", shows them, and a test holds the two
alike): the freezing timeout, the DCTCP window cap, the ACK ratio, trimming and the latency split.

An alternative changes only the points it applies to (freezing_timeout: a point whose algorithm
has one; the window cap: a DCTCP point; the latency split: a fat tree without per-tier
latencies); a point it leaves alone keeps its scenario, its id and its results (it is not run
again). An experiment adds its own alternatives in ``[sensitivity]``::

    [sensitivity]
    stated = { "latency split" = "sec. 4.1 states 500 ns links and switches; run as stated" }
    [[sensitivity.setups]]
    name = "the paper's setup"
    why = "sec. 4.1: 500 ns links and switches; App. A: no trimming"
    set = { "topology.link_latency" = "500ns", "topology.switch_latency" = "500ns", "switch.overflow" = "drop" }

A named default is **not varied** for an experiment whose sweep varies it itself (an axis over
the field or over its table: the experiment shows the dependence in its own rows), one the
experiment's ``stated`` gives as the document's (with why), one left out of its ``only`` (with
``only_why``: an experiment whose every alternative costs hours varies the defaults its notes
blame), or one whose alternative a point refuses (the reason is kept). What was varied and what was not is listed per experiment
(:func:`plan`), so a verdict that depends on nothing says what it was checked against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from .. import _core
from ..errors import ScenarioError, spec_error
from ..scenario import Scenario, value_at
from ..sweep import Point, run_points
from ..sweep.spec import _point_id
from .claims import evaluate

if TYPE_CHECKING:
    from .experiment import Experiment

__all__ = ["NAMED", "Alternative", "Default", "Plan", "depends_on", "plan", "run_sensitivity"]

TABLE = "sensitivity.parquet"


@dataclass(frozen=True)
class Alternative:
    """One value of a named default (or an experiment's own setup): the fields it sets."""

    default: str
    label: str
    changes: dict[str, Any]

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9.]+", "-", f"{self.default}-{self.label}").strip("-")


@dataclass(frozen=True)
class Default:
    """A parameter fabricsim chose where documents are silent, and its documented values."""

    name: str
    fields: tuple[str, ...]
    #: (label, the fields' values), fabricsim's own default first.
    values: tuple[tuple[str, tuple[Any, ...]], ...]
    why: str
    #: Applies only where the filled scenario's field has one of these values.
    only: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    #: Applies only where the scenario as written does not set these fields.
    unless_set: tuple[str, ...] = ()

    def alternatives(self) -> list[Alternative]:
        return [Alternative(self.name, label, dict(zip(self.fields, vals, strict=True))) for label, vals in self.values]


NAMED: tuple[Default, ...] = (
    Default(
        "freezing_timeout",
        ("lb.freezing_timeout",),
        (("1 ms", ("1ms",)), ("100 us", ("100us",)), ("10 ms", ("10ms",))),
        "ARCANE states none: its App. D.3 figure leaves freezing within a run of a few ms (10 ms does not), near "
        "100 us a flow on links dead for good stalls, its Fig. 6 text reads shorter; the reference simulator's REPS "
        "freezes 10 ms",
    ),
    Default(
        "window cap",
        ("transport.max_cwnd",),
        (("1 BDP", ("1bdp",)), ("1.5 BDP", ("1.5bdp",)), ("2 BDP", ("2bdp",))),
        "ARCANE's DCTCP gives no cap; fabricsim stops at its initial window, the reference's NSCC at 1.5 BDP "
        "(the initial window stays 1 BDP: DCTCP grows to the cap one packet per round trip)",
        only=(("transport.cc", ("dctcp",)),),
    ),
    Default(
        "ack ratio",
        ("transport.ack_every",),
        (("1", (1,)), ("4", (4,)), ("16", (16,))),
        "PRIME's ratio is lost from its text; ARCANE was 'primarily evaluated ... without ACK coalescing' (sec. 4.5.1), "
        "so its experiments run an ACK per packet as stated; the reference ACKs 16 KiB",
    ),
    Default(
        "trimming",
        ("switch.overflow",),
        (("trim", ("trim",)), ("drop", ("drop",))),
        "ARCANE's runs had no trimming (App. A); PRIME's all had it (sec. IV)",
    ),
    Default(
        "latency split",
        ("topology.link_latency", "topology.switch_latency"),
        (("1 us links, 0 ns switches", ("1us", "0ns")), ("500 ns links, 500 ns switches", ("500ns", "500ns"))),
        "ARCANE sec. 4.1 states 500 + 500 ns; PRIME's link delay is lost from its text; the reference's runs use 1 us and 0 ns",
        only=(("topology.kind", ("fat_tree",)),),
        unless_set=("topology.tier_link_latencies",),
    ),
)
DEFAULT_NAMES = tuple(d.name for d in NAMED)


def _norm(value: Any) -> Any:
    """A field's value in one spelling: durations in ps ("0.1ms" is "100us", read by the core's
    rules), "auto" windows as the BDP they are with an ACK per packet, other text in lower case."""
    if isinstance(value, str):
        try:
            return _core.quantity("duration", value)
        except ValueError:
            pass
        text = value.strip().lower().replace(" ", "")
        return "1bdp" if text == "auto" else text
    return value


def _get(data: dict[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` (``"faults[0].rate"``: list entries by index), or None."""
    try:
        return value_at(data, dotted)
    except KeyError:
        return None


def _changed(default: Default | None, alt: Alternative, scenario: Scenario, filled: dict[str, Any]) -> Scenario | None:
    """The point's scenario under ``alt``, or None where it does not apply or changes nothing."""
    if default is not None:
        if any(_norm(_get(filled, f)) not in tuple(map(_norm, allowed)) for f, allowed in default.only):
            return None
        if any(_get(scenario.data, f) is not None for f in default.unless_set):
            return None
    if any(_get(filled, f) is None for f in alt.changes):
        return None
    if all(_norm(_get(filled, f)) == _norm(v) for f, v in alt.changes.items()):
        return None
    out = scenario
    for f, v in alt.changes.items():
        out = out.set(f, v)
    return out


@dataclass
class Plan:
    """What :func:`run_sensitivity` runs for one experiment: per alternative the points it
    changes (the claims' points it leaves alone are reused), and why each named default it
    does not vary is left alone."""

    experiment: str
    runs: list[tuple[Alternative, list[Point]]] = field(default_factory=list)
    #: The named defaults (and setups) varied, with their values.
    varied: dict[str, list[str]] = field(default_factory=dict)
    #: Named default -> why it is not varied here.
    skipped: dict[str, str] = field(default_factory=dict)
    #: Named default -> the label of the value the claims' points run ("as run" where they run
    #: several, or one of no label).
    current: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        """One line: what was varied, and what was not and why."""
        parts = [f"{name} ({', '.join(v)})" for name, v in self.varied.items()]
        reasons: dict[str, list[str]] = {}
        for name, why in self.skipped.items():
            reasons.setdefault(why, []).append(name)
        left = [f"{', '.join(names)}: {why}" for why, names in reasons.items()]
        text = "varied: " + ("; ".join(parts) or "nothing")
        return text + (". Not varied: " + "; ".join(left) if left else "")


def _selected(points: list[Point], selectors: list[dict[str, Any]]) -> list[Point]:
    """The points some claim reads (its of/over/than selectors), in sweep order."""
    return [p for p in points if any(all(p.values.get(k) == v for k, v in sel.items()) for sel in selectors)]


def plan(exp: Experiment, quick: bool = False) -> Plan:
    """The runs that judge ``exp``'s claims under each alternative (checked before any runs)."""
    out = Plan(exp.name)
    spec = exp.spec(quick)
    selectors = [sel for c in exp.claims if c.metric is not None for _, sel in c.selectors()]
    if spec is None or not selectors:
        out.skipped = dict.fromkeys(DEFAULT_NAMES, "no simulated claim (theory only)")
        return out
    base = _selected(spec.validate(), selectors)
    filled = [p.scenario.filled() for p in base]
    axes = [*spec.grid, *spec.zipped]  # not set: a value the experiment fixes is its setup, varied here
    conf = exp.sensitivity
    stated: dict[str, str] = conf.get("stated", {})
    only: list[str] | None = conf.get("only")
    candidates: list[tuple[Default | None, Alternative]] = []
    for d in NAMED:
        if d.name in stated:
            out.skipped[d.name] = f"stated: {stated[d.name]}"
            continue
        if only is not None and d.name not in only:
            out.skipped[d.name] = f"not run: {conf['only_why']}"
            continue
        axis = next((a for a in axes if any(f == a or f.startswith(a + ".") for f in d.fields)), None)
        if axis is not None:
            out.skipped[d.name] = f"the experiment varies {axis} itself"
            continue
        candidates += [(d, a) for a in d.alternatives()]
        runs_now = {
            next((a.label for a in d.alternatives() if _changed(d, a, p.scenario, f) is None), "as run")
            for p, f in zip(base, filled, strict=True)
        }
        out.current[d.name] = runs_now.pop() if len(runs_now) == 1 else "as run"
    for s in conf.get("setups", []):
        candidates.append((None, Alternative(s["name"], "instead", dict(s["set"]))))
    for named, alt in candidates:
        name = alt.default
        runs: list[Point] = []
        moved = False
        for p, f in zip(base, filled, strict=True):
            try:
                sc = _changed(named, alt, p.scenario, f)
                if sc is not None:
                    sc.validate()
            except ScenarioError as e:
                out.skipped[name] = f"{alt.label} refused by the point {p.label()}: {e}"
                break
            if sc is None:
                runs.append(p)  # left alone: the same id, its results reused
            else:
                moved = True
                runs.append(Point(_point_id({"of": p.id, "with": alt.changes}, sc), p.values, sc))
        if name in out.skipped:
            out.runs = [(a, ps) for a, ps in out.runs if a.default != name]
            out.varied.pop(name, None)
            continue
        out.varied.setdefault(name, [])
        if moved:
            out.runs.append((alt, runs))
            out.varied[name].append(alt.label)
    for name, labels in list(out.varied.items()):
        if not labels:
            out.varied.pop(name)
            out.skipped.setdefault(name, "changes none of the points its claims read (none has the field)")
    return out


def run_sensitivity(
    exp: Experiment,
    out_dir: Path,
    base_claims: pl.DataFrame,
    quick: bool = False,
    workers: int | None = None,
    allow_other_version: bool = False,
) -> tuple[pl.DataFrame, Plan]:
    """Run ``exp``'s claims' points under each alternative of :func:`plan` into ``out_dir``
    (the experiment's directory: the points share its ``points/``), judge the claims again,
    and write one row per claim and alternative to ``out_dir/sensitivity.parquet``."""
    p = plan(exp, quick)
    rows: list[pl.DataFrame] = []
    for alt, points in p.runs:
        frame = run_points(points, out_dir, workers, allow_other_version=allow_other_version, table=f"sensitivity/{alt.slug}.parquet")
        judged = evaluate(exp, frame, out_dir, only_simulated=True)
        rows.append(
            judged.select("claim", "fabricsim", "min", "max", "seeds", "verdict")
            .with_row_index("index")
            .join(base_claims.with_row_index("index").select("index", pl.col("verdict").alias("base_verdict")), on="index")
            .with_columns(experiment=pl.lit(exp.name), default=pl.lit(alt.default), alternative=pl.lit(alt.label))
        )
    table = pl.concat(rows) if rows else pl.DataFrame(schema={"index": pl.UInt32, "experiment": pl.String, "default": pl.String})
    table.write_parquet(out_dir / TABLE)
    return table, p


def depends_on(claims: pl.DataFrame, table: pl.DataFrame, current: dict[str, str] | None = None) -> list[str]:
    """Per claim row: "" where no alternative moves its verdict, else each default that does,
    with the verdict and value under the value the experiment runs (``current``: its label per
    named default, :attr:`Plan.current`) and under each alternative that moves it
    ("freezing_timeout: 1 ms matches (1.02); 10 ms differs (2.31)")."""
    if table.is_empty():
        return [""] * claims.height
    labels = current or {}
    out = []
    for i, row in enumerate(claims.iter_rows(named=True)):
        mine = table.filter(pl.col("index") == i)
        parts = []
        for name in dict.fromkeys(mine["default"].to_list()):
            alts = mine.filter((pl.col("default") == name) & (pl.col("verdict") != row["verdict"]))
            if alts.is_empty():
                continue
            here = f"{labels.get(name, 'as run')} {row['verdict']} ({row['fabricsim']:.5g})"
            there = "; ".join(f"{a['alternative']} {a['verdict']} ({a['fabricsim']:.5g})" for a in alts.iter_rows(named=True))
            parts.append(f"{name}: {here}; {there}")
        out.append(" / ".join(parts))
    return out


def check_spec(raw: Any, where: str) -> dict[str, Any]:
    """An experiment's ``[sensitivity]`` table, checked: ``stated`` names known defaults,
    ``setups`` have a name, why and set."""
    if not isinstance(raw, dict) or set(raw) - {"stated", "setups", "only", "only_why"}:
        allowed = "stated (named default = why), setups ([{name, why, set}]), only ([named default]) with only_why"
        raise spec_error(f"{where}: sensitivity", f"allowed keys: {allowed}")
    only = raw.get("only")
    if only is not None:
        if not isinstance(only, list) or any(k not in DEFAULT_NAMES for k in only):
            raise spec_error(f"{where}: sensitivity.only", f"got {only!r}; allowed: a list of named defaults: {', '.join(DEFAULT_NAMES)}")
        if not isinstance(raw.get("only_why"), str) or not raw["only_why"]:
            raise spec_error(f"{where}: sensitivity.only_why", "missing; say why the other named defaults are not varied")
    stated = raw.get("stated", {})
    if not isinstance(stated, dict):
        raise spec_error(f"{where}: sensitivity.stated", "allowed: a table of named default = why")
    for k, v in stated.items():
        if k not in DEFAULT_NAMES:
            raise spec_error(f"{where}: sensitivity.stated.{k}", f"not a named default; allowed: {', '.join(DEFAULT_NAMES)}")
        if not isinstance(v, str) or not v:
            raise spec_error(f"{where}: sensitivity.stated.{k}", "allowed: why, in words (where the document states it)")
    for i, s in enumerate(raw.get("setups", [])):
        if not isinstance(s, dict) or set(s) != {"name", "why", "set"} or not isinstance(s["set"], dict) or not s["set"]:
            raise spec_error(f"{where}: sensitivity.setups[{i}]", "allowed: a table of name, why and set (field = value)")
    return raw
