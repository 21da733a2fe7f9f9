"""What a results change did to the reproduction suite's verdicts: two ``fabricsim reproduce``
output directories (each experiment's ``NAME/claims.parquet``) side by side.

    python3 tools/claims_diff.py out/reproduce-before out/reproduce [--all-moves]

Prints, in Markdown, every claim whose verdict changed, then (``--all-moves``) every claim whose
value moved by more than ``--rel`` (default 1 %) with the same verdict; each row says whether
its note quotes a number (a note written from the old runs that has to be read again), and the
claims only one side has. A commit that moves results (issue 67: "each in its own commit,
docs re-run") reviews this list before it lands.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import polars as pl

KEY = ["experiment", "kind", "claim"]


def load(directory: Path) -> pl.DataFrame:
    """Every experiment's verdicts in ``directory`` (``NAME/claims.parquet``: the top-level
    ``claims.parquet`` holds only the last invocation's experiments)."""
    paths = sorted(directory.glob("*/claims.parquet"))
    if not paths:
        raise SystemExit(f"{directory}: no NAME/claims.parquet; run `fabricsim reproduce ... -o {directory}` first")
    columns = [*KEY, "fabricsim", "min", "max", "seeds", "verdict", "note"]
    return pl.concat([pl.read_parquet(p).select(columns) for p in paths], how="vertical_relaxed")


def _shown(value: float | None, lo: float | None, hi: float | None, verdict: str | None) -> str:
    if value is None:
        return f"- {verdict or ''}".strip()
    return f"{value:.4g} [{lo:.4g}, {hi:.4g}] {verdict}"


def diff(before: pl.DataFrame, after: pl.DataFrame, rel: float = 0.01, all_moves: bool = False) -> str:
    """The Markdown report (see the module)."""
    joined = before.join(after, on=KEY, how="full", suffix="_new", coalesce=True)
    lines = ["| experiment | kind | claim | before | after | note quotes a number |", "|---|---|---|---|---|---|"]
    only: list[str] = []
    moved = 0
    for r in joined.iter_rows(named=True):
        if r["verdict"] is None or r["verdict_new"] is None:
            side = "after" if r["verdict"] is None else "before"
            only.append(f"- only {side}: {r['experiment']}: {r['claim']}")
            continue
        changed = r["verdict"] != r["verdict_new"]
        old, new = r["fabricsim"], r["fabricsim_new"]
        shift = old is not None and new is not None and abs(new - old) > rel * max(abs(old), 1e-12)
        if not (changed or (all_moves and shift)):
            continue
        moved += 1
        numbers = "yes" if re.search(r"\d", r["note_new"] or "") else ""
        lines.append(
            f"| {r['experiment']} | {r['kind']} | {r['claim']} | {_shown(old, r['min'], r['max'], r['verdict'])} "
            f"| {_shown(new, r['min_new'], r['max_new'], r['verdict_new'])} | {numbers} |"
        )
    head = f"{moved} claims {'moved' if all_moves else 'changed verdict'}"
    return "\n".join([head, "", *lines, "", *only]).rstrip() + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--all-moves", action="store_true", help="also every claim whose value moved, same verdict")
    parser.add_argument("--rel", type=float, default=0.01, help="a move smaller than this share of the value is not listed")
    args = parser.parse_args(argv)
    sys.stdout.write(diff(load(args.before), load(args.after), args.rel, args.all_moves))


if __name__ == "__main__":
    main()
