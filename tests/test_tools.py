"""The scripts of tools/ that are not page generators (those are tested with their pages)."""

from __future__ import annotations

import polars as pl
import pytest
from test_docs import _tool


def test_claims_diff_lists_what_a_results_change_moved(tmp_path):
    diff = _tool("claims_diff")
    row = {"experiment": "x", "kind": "paper", "seeds": 2}

    def frame(rows: list[dict]) -> pl.DataFrame:
        return pl.DataFrame([row | r for r in rows])

    before = frame(
        [
            {"claim": "a", "fabricsim": 0.9, "min": 0.88, "max": 0.92, "verdict": "matches", "note": "at 0.9"},
            {"claim": "b", "fabricsim": 2.0, "min": 1.9, "max": 2.1, "verdict": "matches", "note": "why"},
            {"claim": "c", "fabricsim": 1.0, "min": 1.0, "max": 1.0, "verdict": "differs", "note": ""},
        ]
    )
    after = frame(
        [
            {"claim": "a", "fabricsim": 1.1, "min": 1.05, "max": 1.15, "verdict": "differs", "note": "at 0.9"},
            {"claim": "b", "fabricsim": 2.2, "min": 2.1, "max": 2.3, "verdict": "matches", "note": "why"},
            {"claim": "d", "fabricsim": 1.0, "min": 1.0, "max": 1.0, "verdict": "matches", "note": ""},
        ]
    )
    for name, f in (("before", before), ("after", after)):
        (tmp_path / name / "x").mkdir(parents=True)
        f.write_parquet(tmp_path / name / "x" / "claims.parquet")
    verdicts = diff.diff(diff.load(tmp_path / "before"), diff.load(tmp_path / "after"))
    assert verdicts.startswith("1 claims changed verdict")
    assert "| x | paper | a | 0.9 [0.88, 0.92] matches | 1.1 [1.05, 1.15] differs | yes |" in verdicts
    assert "| b |" not in verdicts and "only before: x: c" in verdicts and "only after: x: d" in verdicts
    moves = diff.diff(diff.load(tmp_path / "before"), diff.load(tmp_path / "after"), all_moves=True)
    assert moves.startswith("2 claims moved") and "| x | paper | b | 2 [1.9, 2.1] matches | 2.2 [2.1, 2.3] matches |  |" in moves
    with pytest.raises(SystemExit, match=r"no NAME/claims\.parquet"):
        diff.load(tmp_path / "nowhere")


def test_refresh_doc_blocks_can_leave_the_compare_blocks_and_pass_flags_to_reproduce(monkeypatch):
    refresh = _tool("refresh_doc_blocks")
    ran: list[str] = []
    monkeypatch.setattr(refresh, "run", lambda command: ran.append(command) or "NEW")
    compare = ["```", "$ fabricsim compare x.toml", "old output", "```"]
    page = "\n".join([*compare, "<!-- fabricsim reproduce e --tables -->", "old", "<!-- end -->"])
    out = refresh.refresh(page, reproduce_only=True, reproduce_flags=" --allow-other-version")
    assert ran == ["fabricsim reproduce e --tables --no-report --allow-other-version"]
    assert "old output" in out and out.count("NEW") == 1 and "\nold\n" not in out
    ran.clear()
    assert refresh.refresh(page).count("NEW") == 2 and ran[0] == "fabricsim compare x.toml"
