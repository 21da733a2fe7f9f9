"""[[jobs]] from Python and the CLI: tables, files, the compare table's JCT columns."""

from __future__ import annotations

from pathlib import Path

import fabricsim
import polars as pl
import pytest
from fabricsim.cli import app
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
SMALL = {
    "topology": {"hosts": 32, "radix": 8, "link_latency": "1us", "switch_latency": "0ns"},
    "jobs": [{"name": "dp", "collective": "allreduce", "size": "1MiB", "ranks": 8, "iterations": 2, "compute": "3us"}],
}


def test_jobs_tables_and_files(tmp_path):
    r = fabricsim.run(SMALL)
    assert r.complete
    assert r.jobs is not None and r.jobs.height == 2
    assert r.jobs["name"].to_list() == ["dp", "dp"]
    assert (r.jobs["jct_ps"] >= r.jobs["ideal_jct_ps"]).all()
    assert r.steps is not None and r.steps.height == 2 * 14
    assert r.summary["max_jct_ns"] == pytest.approx(r.jobs["jct_ps"].max() / 1e3)
    # only the job's messages: no default permutation
    assert r.flows.height == 2 * 14 * 8
    r.write(tmp_path)
    assert pl.read_parquet(tmp_path / "jobs.parquet").equals(r.jobs)
    assert pl.read_parquet(tmp_path / "steps.parquet").height == 28
    # a run without jobs writes no jobs file
    plain = fabricsim.run({"topology": SMALL["topology"], "workload": {"kind": "permutation", "size": "64KiB"}})
    assert plain.jobs is not None and plain.jobs.height == 0 and plain.summary["max_jct_ns"] is None
    plain.write(tmp_path)
    assert not (tmp_path / "jobs.parquet").exists()


def test_compare_shows_jct_columns_only_with_jobs(tmp_path):
    runner = CliRunner()
    path = tmp_path / "s.toml"
    path.write_text(fabricsim.Scenario(SMALL).to_toml())
    r = runner.invoke(app, ["compare", str(path), "--lb", "ecmp,ops", "-q"])
    assert r.exit_code == 0, r.output
    assert "max JCT" in r.stdout and "dp: allreduce 1MiB" in r.stdout
    r = runner.invoke(app, ["compare", str(ROOT / "scenarios" / "permutation_128.toml"), "--set", "workload.size=64KiB", "-q"])
    assert r.exit_code == 0 and "JCT" not in r.stdout


@pytest.mark.parametrize("name", ["allreduce_ring_128", "alltoall_128", "jobs_and_background"])
def test_shipped_job_scenarios_are_valid(name):
    s = fabricsim.load(ROOT / "scenarios" / f"{name}.toml")
    filled = s.filled()
    assert filled["jobs"], name
