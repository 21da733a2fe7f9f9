"""`fabricsim reproduce`: the suite loads, every sweep validates, verdicts follow the rules, and
two quick experiments reproduce their papers' numbers (a regression guard on both)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from fabricsim.cli import app
from fabricsim.errors import ScenarioError
from fabricsim.reproduce import SOURCES, Claim, Experiment, evaluate, experiments, headline, load, run_experiment
from fabricsim.reproduce.verdicts import DIFFERS, DIRECTION, INCONCLUSIVE, MATCHES
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


WHY = "test"


def _exp(*claims: Claim, source: str = "arcane") -> Experiment:
    return Experiment("x", source, "", "", {}, {}, list(claims))


def test_verdicts():
    # two seeds per scheme: a is 2.5 and 3.5 (mean 3), b is 1 and 1
    points = pl.DataFrame({"lb.kind": ["a", "a", "b", "b"], "seed": [1, 2, 1, 2], "m": [2.5, 3.5, 1.0, 1.0]})

    def verdict(
        number: float, over: dict | None = None, baseline: float | None = None, tolerance: float = 0.1, scale: str = "relative"
    ) -> str:
        c = Claim(
            "c",
            "own",
            metric="m",
            of={"lb.kind": "a"},
            number=number,
            tolerance=tolerance,
            tolerance_why=WHY,
            over=over,
            baseline=baseline,
            scale=scale,
        )
        c.check("c")
        return evaluate(_exp(c), points)["verdict"][0]

    # seed by seed: a number matches when every seed is within the tolerance (or the mean is
    # and the seeds' spread fits in the band), differs when every seed is outside on one side
    assert verdict(3.0, tolerance=0.2) == MATCHES  # 2.5 and 3.5 both within 20 % of 3
    assert verdict(2.9, tolerance=0.18) == MATCHES  # 3.5 is 20.7 % off, but the mean is 3.4 % and the spread fits
    assert verdict(3.2) == INCONCLUSIVE  # 3.5 within 10 %, 2.5 not
    assert verdict(3.0, tolerance=0.15) == INCONCLUSIVE  # 2.5 below the band, 3.5 above it
    assert verdict(2.0) == DIFFERS  # every seed contradicts: above the band
    assert verdict(6.0, tolerance=0.05) == DIFFERS  # no pivot: every seed below
    assert verdict(3.4, tolerance=0.05) == INCONCLUSIVE  # 3.5 reached it, 2.5 did not
    assert verdict(9.0, over={"lb.kind": "b"}, scale="excess") == DIFFERS  # 2.5 and 3.5 vs 9: under half its effect (0.19, 0.31)
    assert verdict(4.0, over={"lb.kind": "b"}, scale="excess") == DIRECTION  # 2.5 and 3.5 vs 4: short, with half its effect or more
    assert verdict(0.5, over={"lb.kind": "b"}, scale="excess") == DIFFERS  # opposite sides of 1
    assert verdict(2.6, over={"lb.kind": "b"}, scale="excess", tolerance=0.3) == INCONCLUSIVE  # excess 1.5 in, 2.5 out of 1.6 +- 30 %
    assert verdict(2.0, over={"lb.kind": "b"}, scale="excess", tolerance=0.2) == DIRECTION  # excess 1.5 and 2.5 against 1: both over
    assert verdict(2.6, over={"lb.kind": "b"}, scale="absolute", tolerance=0.5) == MATCHES  # mean 0.4 off, spread 1 = the band
    assert verdict(4.0, baseline=1.0) == DIRECTION and verdict(0.5, baseline=1.0) == DIFFERS
    assert verdict(7.0, baseline=1.0) == DIFFERS  # every seed above 1 but with under half of 7's excess
    row = evaluate(_exp(Claim("c", "own", metric="m", of={"lb.kind": "a"}, over={"lb.kind": "b"}, expect="above")), points).row(
        0, named=True
    )
    assert (row["fabricsim"], row["min"], row["max"], row["seeds"]) == (3.0, 2.5, 3.5, 2)  # ratio of means; per-seed ratios' range


def test_directions_are_judged_seed_by_seed():
    def verdict(values: list[float], expect: str = "above", baseline: float = 1.0) -> str:
        points = pl.DataFrame({"seed": list(range(len(values))), "m": values})
        c = Claim("c", "own", metric="m", expect=expect, baseline=baseline)
        c.check("c")
        return evaluate(_exp(c), points)["verdict"][0]

    assert verdict([1.2, 1.3, 1.25]) == MATCHES  # every seed above, the mean 0.25 above: beyond the spread (0.1)
    assert verdict([1.001, 1.002]) == MATCHES  # however little: every seed says so, beyond their spread
    assert verdict([1.006, 1.167]) == INCONCLUSIVE  # every seed above, but the mean (1.087) within the spread (0.161)
    assert verdict([0.999, 1.01, 1.0]) == INCONCLUSIVE  # seeds on both sides
    assert verdict([0.5, 2.0]) == INCONCLUSIVE
    assert verdict([0.7, 0.8]) == DIFFERS  # every seed contradicts
    assert verdict([0.7, 0.8], expect="below") == MATCHES
    assert verdict([1.0, 1.0]) == DIFFERS  # identical contradicts "faster"


def test_a_direction_has_the_size_its_words_carry():
    def verdict(values: list[float], words: str) -> str:
        points = pl.DataFrame({"seed": list(range(len(values))), "m": values})
        c = Claim("c", "paper", quote=f"{words} better", at="a", metric="m", expect="below", baseline=1.0, words=words)
        c.check("c")
        return evaluate(_exp(c), points)["verdict"][0]

    assert verdict([0.95, 0.96], "much") == DIRECTION  # ahead beyond the spread, not by a tenth
    assert verdict([0.85, 0.88], "much") == MATCHES
    assert verdict([0.85, 0.88], "far") == DIRECTION  # "far" asks for half
    assert verdict([0.4, 0.45], "drastically") == MATCHES
    quote = "ARCANE is much better"
    with pytest.raises(ScenarioError, match=r"'much'.*words_why"):
        Claim("c", "paper", quote=quote, at="a", metric="m", expect="below", baseline=1.0).check("c")
    with pytest.raises(ScenarioError, match="words"):
        Claim("c", "paper", quote=quote, at="a", metric="m", expect="below", baseline=1.0, words="very").check("c")
    with pytest.raises(ScenarioError, match="not both"):
        Claim("c", "paper", quote=quote, at="a", metric="m", expect="below", baseline=1.0, words="much", words_why="w").check("c")
    with pytest.raises(ScenarioError, match="sizes a direction"):
        Claim("c", "paper", quote=quote, at="a", metric="m", number=2.0, tolerance_why=WHY, words="much").check("c")
    Claim("c", "paper", quote=quote, at="a", metric="m", expect="below", baseline=1.0, words_why="another clause").check("c")


def test_a_claim_that_cannot_fail_is_shown_not_counted():
    from fabricsim.reproduce import headline

    points = pl.DataFrame({"seed": [1, 2], "m": [1.2, 1.3]})
    kept = Claim("c", "paper", quote="q", at="a", metric="m", expect="above", baseline=1.0)
    shown = Claim("d", "paper", quote="q", at="a", metric="m", expect="above", baseline=1.0, counted=False, not_counted_why="arithmetic")
    for c in (kept, shown):
        c.check("c")
    rows = evaluate(_exp(kept, shown), points)
    assert headline(rows).startswith("1 paper claims that can fail: 1 matches (1 more that cannot fail are shown, not counted)")
    assert rows["note"][1].startswith("Not counted: arithmetic")
    unsaid = Claim("e", "own", metric="m", expect="above", baseline=1.0, counted=False)
    stray = Claim("f", "own", metric="m", expect="above", baseline=1.0, not_counted_why="x")
    for bad in (unsaid, stray):
        with pytest.raises(ScenarioError):
            bad.check("c")


def test_the_best_of_several_and_a_ratio_of_ratios():
    # per seed: a 4, 6; b 2, 2; c 1, 3 (the best of b and c: 1, 2); at the small size a 2, 2 and b 2, 1
    points = pl.DataFrame(
        {
            "lb.kind": ["a", "a", "b", "b", "c", "c", "a", "a", "b", "b"],
            "size": ["L"] * 6 + ["S"] * 4,
            "seed": [1, 2] * 5,
            "m": [4.0, 6.0, 2.0, 2.0, 1.0, 3.0, 2.0, 2.0, 2.0, 1.0],
        }
    )

    def row(c: Claim) -> dict:
        c.check("c")
        return evaluate(_exp(c), points).row(0, named=True)

    best = row(
        Claim(
            "c",
            "own",
            metric="m",
            of={"lb.kind": "a", "size": "L"},
            over=[{"lb.kind": "b", "size": "L"}, {"lb.kind": "c", "size": "L"}],
            expect="above",
        )
    )
    assert (best["fabricsim"], best["min"], best["max"]) == (round(5 / 1.5, 4), 3.0, 4.0)  # over the smaller of b and c, seed by seed
    # a/b at L: 2, 3; at S: 1, 2; their ratio per seed 2 and 1.5; the value is mean(2, 3) / mean(1, 2)
    gap = row(
        Claim(
            "c",
            "own",
            metric="m",
            of={"lb.kind": "a", "size": "L"},
            over={"lb.kind": "b", "size": "L"},
            than={"of": {"lb.kind": "a", "size": "S"}, "over": {"lb.kind": "b", "size": "S"}},
            expect="above",
        )
    )
    assert (gap["fabricsim"], gap["min"], gap["max"]) == (round(2.5 / 1.5, 4), 1.5, 2.0)
    with pytest.raises(ScenarioError, match="than"):
        Claim("c", "own", metric="m", than={"of": {}}, over={"a": 1}, expect="above").check("c")
    with pytest.raises(ScenarioError, match="needs metric and over"):
        Claim("c", "own", metric="m", than={"of": {}, "over": {}}, expect="above", baseline=1.0).check("c")
    with pytest.raises(ScenarioError, match="non-empty list"):
        Claim("c", "own", metric="m", over=[], expect="above").check("c")


def test_claims_are_refused_when_they_cannot_be_judged_honestly():
    def refused(match: str, **kw: object) -> None:
        with pytest.raises(ScenarioError, match=match):
            Claim("c", **kw).check("c")  # type: ignore[arg-type]

    refused("kind", metric="m", number=2.0, tolerance_why=WHY)
    refused("quotes the document", kind="paper", metric="m", number=2.0, tolerance_why=WHY)
    refused("setup and convention", kind="reference", metric="m", number=2.0, tolerance_why=WHY)
    refused("tolerance", kind="own", metric="m", number=2.0, tolerance=1e9, tolerance_why=WHY)  # the old suite's 1e9
    refused("tolerance", kind="own", metric="m", number=2.0, tolerance=0.6, tolerance_why=WHY)
    refused("tolerance_why", kind="own", metric="m", number=2.0)
    refused("excess over 1", kind="own", metric="max_slowdown", number=1.38, tolerance_why=WHY)  # a slowdown on the relative scale
    refused("excess over 1", kind="own", metric="m", over={"a": 1}, number=0.5, tolerance_why=WHY)
    refused("no excess", kind="own", metric="m", over={"a": 1}, number=1.0, scale="excess", tolerance_why=WHY)
    refused("exactly one of number, model and expect", kind="own", metric="m", number=1.0, expect="above")
    refused("exactly one of metric", kind="own", number=1.0)
    refused("aggregate 'median'", kind="own", metric="flows.fct_ps:median", number=1.0, tolerance_why=WHY)
    refused("flows has no column 'fct'", kind="own", metric="flows.fct:max", number=1.0, tolerance_why=WHY)
    Claim("c", "own", metric="m", number=2.0, tolerance=3.0, scale="absolute", tolerance_why=WHY).check("c")  # absolute: any size


def test_experiment_files_are_checked_before_any_run(tmp_path):
    good = """
name = "{name}"
source = "arcane"
[sweep]
seeds = {seeds}
base = {{ topology = {{ hosts = 16, radix = 8 }} }}
[sweep.grid]
"lb.kind" = ["ecmp", "ops"]
[[claims]]
kind = "own"
claim = "c"
metric = "{metric}"
of = {{ "lb.kind" = "{lb}"{pin} }}
over = {{ "lb.kind" = "ecmp" }}
expect = "below"
"""

    def write(**kw: object) -> Path:
        args = {"name": "x", "seeds": "[1, 2]", "metric": "max_fct_ns", "lb": "ops", "pin": ""} | kw
        p = tmp_path / f"{args['name']}.toml"
        p.write_text(good.format(**args))
        return p

    assert load(write()).claims[0].kind == "own"
    for kw, match in (
        ({"metric": "max_fct"}, "summary column"),  # a typo'd metric
        ({"metric": "flows.fct_ps:p42"}, "aggregate 'p42'"),
        ({"metric": "ports.nope:max"}, "ports has no column 'nope'"),
        ({"metric": "status"}, "'status' is text"),  # nothing to average
        ({"metric": "ports.name:max"}, "'name' is text"),
        ({"lb": "opss"}, "got 'opss'; allowed: 'ecmp', 'ops'"),  # a value no point has
        ({"seeds": "[1]"}, "at least two seeds"),  # a direction with no spread to judge it by
        ({"pin": ", seed = 1"}, "at least two seeds"),  # nor one pinned to a seed
        ({"name": "y", "seeds": '[1, 2]\n[quick.grid]\n"lb.kind" = ["ops"]\n[sweep.x]'}, "quick"),
    ):
        with pytest.raises(ScenarioError, match=match):
            load(write(**kw))


def test_the_headline_counts_paper_claims_only():
    claims = pl.DataFrame({"kind": ["paper", "paper", "own", "reference"], "verdict": [MATCHES, INCONCLUSIVE, MATCHES, MATCHES]})
    line = headline(claims)
    assert line.startswith("2 paper claims that can fail: 1 matches, 1 inconclusive;") and "1 own" in line and "1 reference" in line


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


def test_theory_claims_and_table_metrics(tmp_path):
    from fabricsim.reproduce import markdown_tables, tables
    from fabricsim.sweep import Sweep, run_sweep

    base = {"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "permutation", "size": "256KiB"}}
    sweep = {"base": base, "grid": {"lb.kind": ["ecmp", "ops"]}, "seeds": [1, 2]}
    points = run_sweep(Sweep.from_dict(sweep), tmp_path, workers=1)
    ops = points.filter(pl.col("lb.kind") == "ops")["max_fct_ns"].to_list()
    claims = [
        # a table metric: the worst flow from the flows table is the summary's max FCT (its seeds
        # all within a band just wide enough for the summary's own seeds round their mean)
        Claim(
            "c",
            "own",
            metric="flows.fct_ps:max",
            of={"lb.kind": "ops"},
            number=sum(ops) / len(ops) * 1000,
            tolerance=(max(ops) - min(ops)) / 2 / (sum(ops) / len(ops)) + 1e-9,
            tolerance_why=WHY,
        ),
        # rows filtered: leaf uplinks only; OPS spreads each flow's packets over every uplink, ECMP pins a flow to one
        Claim(
            "c",
            "own",
            metric="ports.data_packets:switch_imbalance",
            of={"lb.kind": "ecmp"},
            over={"lb.kind": "ops"},
            where={"tier": 1, "up": True},
            expect="above",
        ),
        # a model against the document (three model seeds)
        Claim("c", "model", theory={"model": "evs_imbalance", "flows": 32, "evs": 65536, "ports": 32}, expect="below", baseline=0.01),
        # simulation against a model: a slowdown near 1 is far from a queue of several balls
        Claim(
            "c",
            "model",
            metric="max_slowdown",
            of={"lb.kind": "ops"},
            model={"model": "max_queue", "policy": "ops", "n": 4, "rounds": 10},
            tolerance_why=WHY,
        ),
    ]
    exp = Experiment(
        "x", "arcane", "", "", sweep, {}, claims, tables=[{"by": ["lb.kind"], "columns": [["p99 us", "flows.fct_ps:p99", 1e-6]]}]
    )
    got = evaluate(exp, points, tmp_path)
    assert got["verdict"].to_list() == [MATCHES, MATCHES, MATCHES, DIFFERS], got
    assert got["seeds"].to_list() == [2, 2, 3, 2]
    assert got["source"][3].startswith("model ")
    ((_, frame),) = tables(exp, points, tmp_path)
    assert frame.columns == ["lb.kind", "p99 us"] and frame.height == 2
    assert markdown_tables([("T", frame)]).startswith("**T**\n\n| lb.kind | p99 us |")


def test_the_arcane_experiments_run_their_jobs_on_the_fabric_alone():
    # ARCANE was evaluated in htsim ("We implement ARCANE by extending the htsim packet-level
    # network simulator", sec. 4.2), where a message costs its bytes and hops: its experiments'
    # jobs say costs = "none" and protocol = "simple", since a job's defaults add NCCL's costs
    def jobs(node: object) -> list[dict[str, object]]:
        if isinstance(node, dict):
            here = [node] if "collective" in node or "model" in node else []
            return here + [j for v in node.values() for j in jobs(v)]
        if isinstance(node, list):
            return [j for v in node for j in jobs(v)]
        return []

    found = 0
    for e in experiments():
        if e.source != "arcane":
            continue
        for job in jobs(e.sweep):
            found += 1
            assert (job.get("costs"), job.get("protocol")) == ("none", "simple"), (e.name, job)
    assert found >= 5, "the ARCANE collective experiments have jobs"
