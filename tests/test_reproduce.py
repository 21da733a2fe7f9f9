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
    assert len(suite) >= 5
    assert {e.source for e in suite} == set(SOURCES), "every source document has an experiment"
    for e in suite:
        for quick in (False, True):
            points = e.spec(quick).validate()
            assert points, e.name
        assert all((c.paper is None) == (c.expect is not None) and c.paper != 0 and c.tolerance >= 0 for c in e.claims), e.name


def test_verdicts():
    points = pl.DataFrame({"lb.kind": ["a", "a", "b"], "m": [2.0, 4.0, 1.0]})

    def verdict(paper: float, over: dict | None = None, baseline: float | None = None, tolerance: float = 0.1) -> str:
        c = Claim("c", "m", {"lb.kind": "a"}, paper, tolerance, over=over, baseline=baseline)
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
