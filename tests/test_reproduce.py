"""`fabricsim reproduce`: the suite loads, every sweep validates, verdicts follow the rules, and
two quick experiments reproduce their papers' numbers (a regression guard on both)."""

from __future__ import annotations

import polars as pl
import pytest
from fabricsim.cli import app
from fabricsim.errors import ScenarioError
from fabricsim.reproduce import DIFFERS, DIRECTION, MATCHES, SOURCES, Claim, Experiment, evaluate, experiments, run_experiment
from typer.testing import CliRunner


def test_every_experiment_loads_and_validates_full_and_quick():
    suite = experiments()
    assert len(suite) >= 20
    assert {e.source for e in suite} == set(SOURCES), "every source document has an experiment"
    for e in suite:
        for quick in (False, True):
            spec = e.spec(quick)
            assert spec is None or spec.validate(), e.name
        assert e.spec() is not None or all(c.theory is not None for c in e.claims), e.name


def test_verdicts():
    points = pl.DataFrame({"lb.kind": ["a", "a", "b"], "m": [2.0, 4.0, 1.0]})

    def verdict(paper: float, over: dict | None = None, baseline: float | None = None, tolerance: float = 0.1) -> str:
        c = Claim("c", "m", {"lb.kind": "a"}, paper, tolerance, over=over, baseline=baseline)
        c.check("c")
        e = Experiment("x", "arcane", "", "", {}, {}, [c])
        return evaluate(e, points)["verdict"][0]

    assert verdict(3.0) == MATCHES  # mean of a's points
    assert verdict(3.2, tolerance=0.05) == DIFFERS  # no pivot: only matches or differs
    assert verdict(2.0, over={"lb.kind": "b"}) == DIRECTION  # 3.0 vs 2.0, both above 1
    assert verdict(0.5, over={"lb.kind": "b"}) == DIFFERS  # 3.0 vs 0.5: opposite sides of 1
    assert verdict(5.0, baseline=4.0) == DIFFERS and verdict(2.0, baseline=1.0) == DIRECTION
    # direction-only claims
    c = Claim("c", "m", {"lb.kind": "a"}, over={"lb.kind": "b"}, expect="above")
    assert evaluate(Experiment("x", "prime", "", "", {}, {}, [c]), points)["verdict"][0] == MATCHES
    c.expect = "below"
    assert evaluate(Experiment("x", "prime", "", "", {}, {}, [c]), points)["verdict"][0] == DIFFERS
    c.baseline = 4.0  # a ratio against a baseline of its own: 3.0 is below 4
    assert evaluate(Experiment("x", "prime", "", "", {}, {}, [c]), points)["verdict"][0] == MATCHES
    # equal is no direction
    c = Claim("c", "m", {"lb.kind": "b"}, over={"lb.kind": "b"}, expect="below")
    assert evaluate(Experiment("x", "prime", "", "", {}, {}, [c]), points)["verdict"][0] == DIFFERS
    with pytest.raises(ScenarioError):
        evaluate(Experiment("x", "arcane", "", "", {}, {}, [Claim("c", "m", {"topology.hosts": 1}, 1.0)]), points)


@pytest.mark.parametrize("name", ["juniper-goodput", "arcane-4.3.2-asymmetric"])
def test_quick_experiments_reproduce_their_papers(name, tmp_path):
    exp = {e.name: e for e in experiments()}[name]
    claims = run_experiment(exp, tmp_path, quick=True, workers=2)
    assert claims["verdict"].to_list() == [MATCHES] * len(exp.claims), claims
    assert (tmp_path / f"{name}-quick" / "claims.parquet").exists()


def test_the_cli_lists_and_refuses_unknown_names():
    runner = CliRunner()
    r = runner.invoke(app, ["reproduce", "--list"])
    assert r.exit_code == 0 and "nvidia-256-flows" in r.output
    r = runner.invoke(app, ["reproduce", "nope"])
    assert r.exit_code == 2 and "nvidia-256-flows" in r.output


def test_claims_must_say_what_they_measure_and_against_what():
    with pytest.raises(ScenarioError, match="exactly one of metric"):
        Claim("c", paper=1.0).check("c")
    with pytest.raises(ScenarioError, match="exactly one of paper, model and expect"):
        Claim("c", "m", paper=1.0, expect="above").check("c")
    with pytest.raises(ScenarioError, match="aggregate 'median'"):
        Claim("c", "flows.fct_ps:median", paper=1.0).check("c")


def test_theory_claims_and_table_metrics(tmp_path):
    from fabricsim.reproduce import markdown_tables, tables
    from fabricsim.sweep import Sweep, run_sweep

    base = {"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "permutation", "size": "256KiB"}}
    sweep = {"base": base, "grid": {"lb.kind": ["ecmp", "ops"]}}
    points = run_sweep(Sweep.from_dict(sweep), tmp_path, workers=1)
    claims = [
        # a table metric: the worst flow from the flows table is the summary's max FCT
        Claim("c", "flows.fct_ps:max", {"lb.kind": "ops"}, paper=float(points.filter(pl.col("lb.kind") == "ops")["max_fct_ns"][0] * 1000)),
        # rows filtered: leaf uplinks only; under ECMP one uplink may carry several flows
        Claim("c", "ports.data_packets:switch_imbalance", {"lb.kind": "ecmp"}, where={"tier": 1, "up": True}, expect="above", baseline=0.0),
        # a model against the paper, and simulation against a model
        Claim("c", theory={"model": "evs_imbalance", "flows": 32, "evs": 65536, "ports": 32}, expect="below", baseline=0.01),
        Claim("c", "max_slowdown", {"lb.kind": "ops"}, model={"model": "max_queue", "policy": "ops", "n": 4, "rounds": 10}, tolerance=1e9),
    ]
    exp = Experiment(
        "x", "arcane", "", "", sweep, {}, claims, tables=[{"by": ["lb.kind"], "columns": [["p99 us", "flows.fct_ps:p99", 1e-6]]}]
    )
    got = evaluate(exp, points, tmp_path)
    assert got["verdict"].to_list() == [MATCHES] * 4, got
    assert got["paper"][3].startswith("model ")
    ((_, frame),) = tables(exp, points, tmp_path)
    assert frame.columns == ["lb.kind", "p99 us"] and frame.height == 2
    assert markdown_tables([("T", frame)]).startswith("**T**\n\n| lb.kind | p99 us |")
    with pytest.raises(ScenarioError, match="flows has no column 'nope'"):
        evaluate(Experiment("x", "arcane", "", "", sweep, {}, [Claim("c", "flows.nope:max", paper=1.0)]), points, tmp_path)
