"""A sweep's spec: its base scenario, seeds, grid, zipped axes and fixed changes, and the
points they make (:class:`Sweep`, :class:`Point`)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from ..errors import ScenarioError, spec_error
from ..io.files import read_toml
from ..results import PROVENANCE
from ..scenario import Scenario

#: Summary keys that depend on the machine, not the scenario: kept in each point's summary.json,
#: left out of points.parquet.
MACHINE_COLUMNS = ("wall_s", "peak_rss_mb", "threads", "thread_note", "solo_windows")
POINTS_FILE = "points.parquet"
SPEC_KEYS = {"base", "seeds", "grid", "zip", "set"}


@dataclass(frozen=True)
class Point:
    """One run of a sweep: its id, its axis values (``seed`` included) and its scenario."""

    id: str
    values: dict[str, Any]
    scenario: Scenario = field(compare=False)

    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values.items())


LABEL = "label"
"""An axis that names its rows in the results and sets nothing in the scenario."""


def _apply(scenario: Scenario, key: str, value: Any, where: str) -> Scenario:
    if key == LABEL:
        if not isinstance(value, str):
            raise spec_error(where, f"got {value!r}; allowed: a string naming the row")
        return scenario
    try:
        # switching kind keeps only the [lb] or [topology] fields the new one accepts, as --set
        return scenario.switched(key, value)
    except ScenarioError as e:
        raise spec_error(where, e.message) from None


def _inline(v: Any) -> str:
    """A value as inline TOML (valid TOML: a sweep.toml written with it loads back as it was)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(map(_inline, v)) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_inline(x)}" for k, x in v.items()) + "}"
    return str(v)


def _key(k: str) -> str:
    return k if k and all(c.isascii() and (c.isalnum() or c in "_-") for c in k) else json.dumps(k, ensure_ascii=False)


def show(value: Any) -> Any:
    """An axis value as the results show it: a scalar as itself, a list or a table as inline
    TOML text (``[{kind = "link_down", link = "leaf0:up1"}]``), never a Python repr."""
    return _inline(value) if isinstance(value, list | dict) else value


def _point_id(values: dict[str, Any], scenario: Scenario) -> str:
    """A hash of the point's whole scenario as run (base, set, axis values, seed), its axis
    values and the fabricsim version: a changed base or override, or another release, runs the
    point again rather than reuse stale results."""
    doc = {"values": values, "scenario": scenario.data, "fabricsim": PROVENANCE["fabricsim"]}
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


@dataclass
class Sweep:
    """A parsed sweep spec."""

    base: Scenario
    seeds: list[int]
    grid: dict[str, list[Any]]
    zipped: dict[str, list[Any]]
    fixed: dict[str, Any]
    #: The names of an axis given as a table of name = value (``[grid."switch.buffer"]``).
    names: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> Sweep:
        path = Path(path)
        spec = read_toml(path, "a sweep")
        return cls.from_dict(spec, path.parent)

    @classmethod
    def from_dict(cls, spec: dict[str, Any], base_dir: Path | None = None) -> Sweep:
        unknown = set(spec) - SPEC_KEYS
        if unknown:
            raise spec_error(sorted(unknown)[0], f"unknown sweep key; allowed: {', '.join(sorted(SPEC_KEYS))}")
        base_dir = base_dir or Path.cwd()
        if "base" not in spec:
            raise spec_error("base", "missing; the scenario file the sweep varies (relative to the spec), or a table")
        raw = spec["base"]
        if isinstance(raw, Scenario):
            base = raw
        elif isinstance(raw, (str, os.PathLike)):
            base = Scenario.load(base_dir / raw)
        elif isinstance(raw, dict):
            base = Scenario(raw, base_dir)
        else:
            raise spec_error("base", f"got {raw!r}; allowed: a scenario file name, a table or a fabricsim.Scenario")
        names: dict[str, list[str]] = {}
        grid = _axes(spec.get("grid", {}), "grid", names)
        zipped = _axes(spec.get("zip", {}), "zip", names)
        lengths = {len(v) for v in zipped.values()}
        if len(lengths) > 1:
            sizes = ", ".join(f"{k}: {len(v)}" for k, v in zipped.items())
            raise spec_error("zip", f"lists of different lengths ({sizes}); allowed: all the same length")
        fixed = spec.get("set", {})
        if not isinstance(fixed, dict):
            raise spec_error("set", f"got {fixed!r}; allowed: a table of field = value")
        seeds = spec.get("seeds", [base.data.get("seed", 1)])
        if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
            raise spec_error("seeds", f"got {seeds!r}; allowed: a non-empty list of non-negative integers")
        if len(set(seeds)) != len(seeds):
            raise spec_error("seeds", f"got {seeds!r}; allowed: each seed once")
        named = [*grid, *zipped, *fixed, "seed"]
        twice = sorted({k for k in named if named.count(k) > 1})
        if twice:
            raise spec_error(twice[0], "given twice; allowed: a field on one axis (grid, zip, set or seeds) only")
        return cls(base, seeds, grid, zipped, fixed, names)

    def to_toml(self) -> str:
        """The spec with its base inline: a sweep directory keeps it as ``sweep.toml`` (it loads
        back to the same points, in the same order: the axes are written in order, inline)."""
        text = tomli_w.dumps({"base": self.base.data, "seeds": self.seeds})
        for key, table in (("grid", self.grid), ("zip", self.zipped)):
            if table:
                text += f"\n[{key}]\n"
                for k, values in table.items():
                    value = dict(zip(self.names[k], values, strict=True)) if k in self.names else values
                    text += f"{_key(k)} = {_inline(value)}\n"
        if self.fixed:
            text += "\n" + tomli_w.dumps({"set": self.fixed})
        return text

    def points(self) -> list[Point]:
        """Every point, in order: grid combinations, then zip rows, then seeds."""
        base = self.base
        for key, value in self.fixed.items():
            base = _apply(base, key, value, f"set.{key}")
        # points pick an index on each axis: the value runs, its name (or its text) is shown
        axes = self.grid | self.zipped
        rows = range(len(next(iter(self.zipped.values())))) if self.zipped else range(1)
        out = []
        for combo in itertools.product(*(range(len(v)) for v in self.grid.values())):
            for row in rows:
                picks = dict(zip(self.grid, combo, strict=True)) | dict.fromkeys(self.zipped, row)
                for seed in self.seeds:
                    values = {k: axes[k][i] for k, i in picks.items()} | {"seed": seed}
                    sc = base
                    for key, value in values.items():
                        sc = _apply(sc, key, value, key)
                    shown = {k: self.names[k][i] if k in self.names else show(axes[k][i]) for k, i in picks.items()}
                    out.append(Point(_point_id(values, sc), shown | {"seed": seed}, sc))
        ids = [p.id for p in out]
        if len(set(ids)) != len(ids):
            raise spec_error("grid", "two points have the same values; allowed: each value once per axis")
        return out

    def validate(self) -> list[Point]:
        """The points, each checked by the core; the first bad one is refused naming its values."""
        points = self.points()
        for p in points:
            try:
                p.scenario.validate()
            except ScenarioError as e:
                raise spec_error(f"point {p.label()}: {e.field}", e.message) from None
        return points


def _axes(table: Any, name: str, names: dict[str, list[str]]) -> dict[str, list[Any]]:
    """An axis is a list of values, or a table of name = value whose names the results show."""
    if not isinstance(table, dict):
        raise spec_error(name, f'got {table!r}; allowed: a table of "field" = [values] or "field" = {{name = value, ..}}')
    axes = {}
    for key, values in table.items():
        if isinstance(values, dict) and values:
            names[key] = list(values)
            values = list(values.values())
        elif not isinstance(values, list) or not values:
            raise spec_error(f"{name}.{key}", f"got {values!r}; allowed: a non-empty list of values, or a table of name = value")
        if key in ("seed", "seeds"):
            raise spec_error(f"{name}.{key}", "seeds are their own axis; allowed: a top-level seeds = [..]")
        axes[key] = values
    return axes
