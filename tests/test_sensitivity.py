"""The reproduction suite's sensitivity to named defaults (fabricsim.reproduce.sensitivity)."""

from pathlib import Path

import polars as pl
import pytest
from fabricsim.errors import ScenarioError
from fabricsim.reproduce import headline, load, markdown_claims, run_experiment
from fabricsim.reproduce.sensitivity import plan

# An incast of 8 senders into one host: with trimming on its queue trims packets, with drop
# it trims none (it drops). The first claim's verdict therefore depends on trimming and on
# nothing else; the second (every flow completes) depends on nothing.
EXPERIMENT = """
name = "{name}"
source = "arcane"
[sweep]
seeds = [1, 2]
[sweep.base]
topology = {{ hosts = 16, radix = 8, link_latency = "1us", switch_latency = "0ns" }}
workload = {{ kind = "incast", senders = 8, size = "256KiB" }}
[sweep.grid]
"lb.kind" = {axis}
{extra}
[[claims]]
kind = "own"
claim = "the incast trims"
metric = "trims"
of = {{ "lb.kind" = "ops" }}
expect = "above"
baseline = 0
[[claims]]
kind = "own"
claim = "every flow completes"
metric = "completed"
of = {{ "lb.kind" = "ops" }}
number = 8
scale = "absolute"
tolerance = 0.1
tolerance_why = "a count"
[[claims]]
kind = "model"
claim = "theory alone"
theory = {{ model = "max_queue", policy = "ops", n = 4, rounds = 50 }}
expect = "above"
baseline = 0
"""


def write(tmp_path: Path, name: str = "sens", axis: str = '["ops", "arcane"]', extra: str = "") -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(EXPERIMENT.format(name=name, axis=axis, extra=extra))
    return p


def test_a_verdict_that_changes_under_a_default_says_so(tmp_path):
    exp = load(write(tmp_path))
    p = plan(exp)
    # the claims read only the ops points: freezing_timeout (ARCANE's) changes none of them
    assert "freezing_timeout" not in p.varied and "changes none of the points" in p.skipped["freezing_timeout"]
    assert p.varied["trimming"] == ["drop"] and p.varied["ack ratio"] == ["4", "16"]
    assert p.varied["latency split"] == ["500 ns links, 500 ns switches"]  # 1 us / 0 ns is as run
    assert p.varied["window cap"] == ["1.5 BDP", "2 BDP"]
    # a verdict is said under the value the points run, whichever of the named values it is
    assert p.current["ack ratio"] == "1" and p.current["latency split"] == "1 us links, 0 ns switches"
    assert plan(load(write(tmp_path, "a4", extra='[sweep.set]\n"transport.ack_every" = 4'))).current["ack ratio"] == "4"
    claims = run_experiment(exp, tmp_path / "out", workers=1, plots=False, sensitivity=True)
    trims, done, theory = claims["depends_on"].to_list()
    assert trims.startswith("trimming: trim matches") and "drop differs (0)" in trims, trims
    assert done == "" and theory == ""
    table = pl.read_parquet(tmp_path / "out" / "sens" / "sensitivity.parquet")
    drop = table.filter((pl.col("default") == "trimming") & (pl.col("index") == 0))
    assert drop["verdict"].to_list() == ["differs"] and drop["fabricsim"].to_list() == [0.0]
    # points the alternative leaves alone are reused, not run again: one directory per point
    points = [d for d in (tmp_path / "out" / "sens" / "points").iterdir() if not d.name.startswith(".")]
    base = 4  # ops and arcane, two seeds
    changed = 2 * (1 + 2 + 1 + 2)  # the ops points under drop, ACK 4 and 16, 500/500 ns, 1.5 and 2 BDP; two seeds
    assert len(points) == base + changed
    text = markdown_claims(claims.with_columns(kind=pl.lit("paper")))
    assert "| depends on |" in text and "What each experiment's verdicts were checked against" in text
    assert "1 of them depend on a named default" in headline(claims.with_columns(kind=pl.lit("paper")))


def test_a_default_the_experiment_varies_or_states_is_not_varied(tmp_path):
    varied = load(write(tmp_path, "v", extra='"switch.overflow" = ["trim", "drop"]'))
    assert plan(varied).skipped["trimming"] == "the experiment varies switch.overflow itself"
    stated = load(write(tmp_path, "s", extra='[sensitivity]\nstated = { "ack ratio" = "the paper ACKs every packet" }'))
    assert plan(stated).skipped["ack ratio"] == "stated: the paper ACKs every packet"
    setup = '[sensitivity]\n[[sensitivity.setups]]\nname = "the paper\'s"\nwhy = "sec. 4.1"\nset = { "switch.overflow" = "drop" }'
    assert plan(load(write(tmp_path, "u", extra=setup))).varied["the paper's"] == ["instead"]
    # a setup may name a list entry's field; one the points do not have changes none of them
    faults = '[sweep.base.faults]\nkind = "degrade"\nlink = "leaf0:up1"\nrate = "100Gbps"\n'
    indexed = setup.replace('"switch.overflow" = "drop"', '"faults[0].rate" = "200Gbps", "faults[1].rate" = "1Gbps"')
    assert plan(load(write(tmp_path, "w", extra=indexed))).skipped["the paper's"].startswith("changes none")
    one = setup.replace('"switch.overflow" = "drop"', '"faults[0].rate" = "200Gbps"')
    ran = plan(load(write(tmp_path, "x", extra=faults.replace("[sweep.base.faults]", "[[sweep.base.faults]]") + one)))
    assert ran.varied["the paper's"] == ["instead"], ran.summary()
    for extra, match in (
        ('[sensitivity]\nstated = { "window" = "x" }', "not a named default"),
        ("[sensitivity]\nnope = 1", "allowed keys: stated"),
        ('[sensitivity]\n[[sensitivity.setups]]\nname = "x"', "name, why and set"),
    ):
        with pytest.raises(ScenarioError, match=match):
            load(write(tmp_path, "bad", extra=extra))


def test_the_docs_list_every_named_default_with_its_values():
    from fabricsim.reproduce.sensitivity import NAMED

    text = (Path(__file__).parent.parent / "docs" / "reproduction.md").read_text()
    table = text[text.index("| named default |") : text.index("\n\n", text.index("| named default |"))]
    assert len(table.splitlines()) == 2 + len(NAMED)
    for d in NAMED:
        row = next(line for line in table.splitlines() if line.startswith(f"| {d.name}"))
        assert f"| {d.why} |" in row, (d.name, d.why)
        for label, _ in d.values:
            assert label.split(" ")[0] in row, (d.name, label)
