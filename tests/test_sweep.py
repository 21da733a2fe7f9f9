"""`fabricsim sweep`: points validated first, run on a pool or Ray, resumable, identical results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT
from fabricsim.cli import app
from fabricsim.errors import ScenarioError
from fabricsim.sweep import Sweep, run_sweep
from typer.testing import CliRunner

SPEC = """
base = "{base}"
seeds = [1, 2]
[grid]
"lb.kind" = ["ecmp", "ops"]
"workload.size" = ["{size}"]
"""


def spec(tmp_path: Path, size: str = "256KiB") -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(SPEC.format(base=ROOT / "scenarios" / "permutation_128.toml", size=size))
    return path


def test_a_sweep_gives_the_same_parquet_on_one_worker_and_two(tmp_path):
    sw = Sweep.load(spec(tmp_path))
    one = run_sweep(sw, tmp_path / "one", workers=1)
    two = run_sweep(sw, tmp_path / "two", workers=2)
    # and with each point on two threads of the parallel engine
    threaded = run_sweep(sw, tmp_path / "threaded", workers=1, threads_per_point=2)
    assert one.height == 4 and one["status"].to_list() == ["complete"] * 4
    assert one.equals(two) and one.equals(threaded)
    assert (tmp_path / "one" / "points.parquet").read_bytes() == (tmp_path / "two" / "points.parquet").read_bytes()
    assert json.loads((tmp_path / "threaded" / "points" / one["point"][0] / "summary.json").read_text())["summary"]["threads"] == 2
    # the axes are columns, the machine-dependent keys are not
    assert {"point", "lb.kind", "workload.size", "seed", "max_fct_ns"} <= set(one.columns)
    assert not {"wall_s", "peak_rss_mb", "threads", "thread_note"} & set(one.columns)
    # ECMP's collisions, OPS's spraying: the sweep is the comparison
    by_lb = one.group_by("lb.kind").agg(pl.col("max_fct_ns").max())
    fct = dict(by_lb.iter_rows())
    assert fct["ecmp"] > 1.5 * fct["ops"]
    # each point's own tables
    for p in one["point"]:
        assert (tmp_path / "one" / "points" / p / "flows.parquet").exists()


def test_a_sweep_on_ray_gives_the_same_parquet_as_one_worker(tmp_path):
    # apart from the local check above, so that a machine without Ray reports only this as
    # skipped (the test extras install Ray: `make test` runs it)
    pytest.importorskip("ray")
    sw = Sweep.load(spec(tmp_path))
    one = run_sweep(sw, tmp_path / "one", workers=1)
    ray = run_sweep(sw, tmp_path / "ray", ray_address="local")
    assert one.equals(ray)
    assert (tmp_path / "one" / "points.parquet").read_bytes() == (tmp_path / "ray" / "points.parquet").read_bytes()


def test_a_killed_sweep_resumes_without_redoing_done_points(tmp_path):
    path = spec(tmp_path, size="8MiB")  # about a second a point
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "fabricsim", "sweep", str(path), "--out", str(out), "-j", "1", "-q"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120

    def written() -> list[Path]:
        # a point is done once renamed into place; pathlib's * also matches the hidden
        # temporary directory a point is written to first
        return [p for p in out.glob("points/*/summary.json") if not p.parent.name.startswith(".")]

    while time.time() < deadline and len(written()) < 1:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = {p.parent.name: p.stat().st_mtime_ns for p in written()}
    assert 1 <= len(done) < 4, done
    # the table, where it was written before the kill, holds points done, marked partial
    if (out / "points.parquet").exists():
        assert pl.read_parquet_metadata(out / "points.parquet")["fabricsim_sweep"] == "partial"
        assert set(pl.read_parquet(out / "points.parquet")["point"]) <= set(done)
    r = subprocess.run([*cmd[:-3], "-j", "2", "-q"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"({len(done)} were already there)" in r.stderr
    for point, mtime in done.items():
        assert (out / "points" / point / "summary.json").stat().st_mtime_ns == mtime, "a done point was run again"
    assert not list(out.glob("points/.*"))
    resumed = pl.read_parquet(out / "points.parquet")
    assert pl.read_parquet_metadata(out / "points.parquet")["fabricsim_sweep"] == "complete"
    fresh = run_sweep(Sweep.load(path), tmp_path / "fresh", workers=2)
    assert resumed.equals(fresh)


def _group_gone(pgid: int, within: float) -> bool:
    """Whether every process of the group has exited within ``within`` seconds."""
    deadline = time.time() + within
    while time.time() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize(("sig", "whom"), [(signal.SIGINT, "group"), (signal.SIGTERM, "parent")])
def test_a_signal_stops_a_sweep_in_seconds_leaves_no_worker_and_resumes_to_the_same_table(tmp_path, sig, whom):
    path = tmp_path / "sweep.toml"
    base = ROOT / "scenarios" / "permutation_128.toml"
    path.write_text(f'base = "{base}"\nseeds = [1, 2, 3, 4, 5, 6]\n[grid]\n"lb.kind" = ["ecmp", "ops"]\n"workload.size" = ["8MiB"]\n')
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "fabricsim", "sweep", str(path), "--out", str(out), "-j", "2"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not [p for p in out.glob("points/*/summary.json") if not p.parent.name.startswith(".")]:
        time.sleep(0.05)
    sent = time.time()
    # Ctrl-C reaches the whole foreground group; a batch scheduler's SIGTERM often the parent only
    os.killpg(proc.pid, sig) if whom == "group" else os.kill(proc.pid, sig)
    _, stderr = proc.communicate(timeout=30)
    assert time.time() - sent < 10, "the sweep took more than 10 s to stop"
    assert proc.returncode == 128 + sig, stderr
    assert "stopped" in stderr and "the same command resumes it" in stderr, stderr
    assert _group_gone(proc.pid, 5), "a worker outlived its sweep"
    partial = pl.read_parquet(out / "points.parquet")  # what was done, whole
    assert 1 <= partial.height < 12
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    resumed = pl.read_parquet(out / "points.parquet")
    assert pl.read_parquet_metadata(out / "points.parquet")["fabricsim_sweep"] == "complete"
    fresh = run_sweep(Sweep.load(path), tmp_path / "fresh", workers=2)
    assert resumed.equals(fresh)
    assert not list(out.glob("points/.*"))


def test_a_changed_spec_never_leaves_the_old_table_and_a_cut_run_is_refused(tmp_path):
    path = spec(tmp_path)
    run_sweep(Sweep.load(path), tmp_path / "out", workers=1)
    assert (tmp_path / "out" / "points.parquet").exists()
    # a rerun with a changed spec, killed before it finished: its new sweep.toml must not sit
    # beside the old points.parquet
    changed = Sweep.load(spec(tmp_path, size="128KiB"))
    import fabricsim.sweep.runner as sweep_mod

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    original = sweep_mod.run_local
    sweep_mod.run_local = killed  # type: ignore[assignment]
    try:
        with pytest.raises(KeyboardInterrupt):
            run_sweep(changed, tmp_path / "out", workers=1)
    finally:
        sweep_mod.run_local = original
    assert not (tmp_path / "out" / "points.parquet").exists()
    runner = CliRunner()
    for cmd in (["plot", str(tmp_path / "out")], ["report", str(tmp_path / "out"), "-o", str(tmp_path / "r.html")]):
        r = runner.invoke(app, cmd)
        assert r.exit_code == 2 and "has not finished" in r.output and "resume" in r.output, r.output
    # a run directory whose summary.json never came (a run cut while writing)
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "flows.parquet").write_bytes(b"")
    r = runner.invoke(app, ["plot", str(cut)])
    assert r.exit_code == 2 and "did not finish" in r.output, r.output


def test_a_bad_point_is_refused_before_any_runs_naming_its_values(tmp_path):
    base = ROOT / "scenarios" / "permutation_128.toml"
    sw = Sweep.from_dict({"base": str(base), "grid": {"lb.kind": ["ecmp", "ops"], "workload.size": ["64KiB", "0B"]}})
    with pytest.raises(ScenarioError) as e:
        run_sweep(sw, tmp_path / "out")
    assert "workload.size=0B" in e.value.field and "workload.size" in e.value.field
    assert not (tmp_path / "out").exists()
    cases = [
        ({"grid": {"lb.kind": "ecmp"}}, "grid.lb.kind"),
        ({"zip": {"a.b": [1, 2], "c.d": [1]}}, "zip"),
        ({"seeds": []}, "seeds"),
        ({"seeds": [1, 1]}, "seeds"),
        ({"grid": {"lb.kind": ["ecmp"]}, "set": {"lb.kind": "ops"}}, "lb.kind"),
        ({"grids": {}}, "grids"),
        ({"grid": {"seed": [1, 2]}}, "grid.seed"),
    ]
    for extra, field in cases:
        with pytest.raises(ScenarioError) as e:
            Sweep.from_dict({"base": str(base)} | extra).validate()
        assert e.value.field == field, (extra, e.value)


def test_zip_pairs_values_and_set_fixes_them(tmp_path):
    base = ROOT / "scenarios" / "permutation_128.toml"
    sw = Sweep.from_dict(
        {
            "base": str(base),
            "seeds": [3],
            "zip": {"workload.size": ["64KiB", "128KiB"], "lb.kind": ["ecmp", "prime"]},
            "set": {"topology.link_latency": "2us"},
        }
    )
    points = sw.validate()
    assert [p.values for p in points] == [
        {"workload.size": "64KiB", "lb.kind": "ecmp", "seed": 3},
        {"workload.size": "128KiB", "lb.kind": "prime", "seed": 3},
    ]
    assert all(p.scenario["topology.link_latency"] == "2us" and p.scenario["seed"] == 3 for p in points)
    # a point's id depends on its values only: a grown spec keeps the old points' results
    grown = Sweep.from_dict({"base": str(base), "seeds": [3, 4], "zip": sw.zipped, "set": sw.fixed})
    assert {p.id for p in points} < {p.id for p in grown.validate()}


def test_a_topology_kind_axis_keeps_each_kinds_own_fields():
    """Issue 61: a sweep axis ``topology.kind`` was refused ("topology.tiers: unknown field")
    where ``--set topology.kind=...`` accepted it: both switch kinds as ``with_topology`` does."""
    base = ROOT / "scenarios" / "permutation_128.toml"
    sw = Sweep.from_dict({"base": str(base), "grid": {"topology.kind": ["fat_tree", "dragonfly"]}, "set": {"workload.size": "4KiB"}})
    points = sw.validate()
    fly = points[1].scenario.data["topology"]
    assert fly["kind"] == "dragonfly" and "tiers" not in fly and "radix" not in fly
    assert points[0].scenario.data["topology"]["hosts"] == 128


def test_a_sweep_takes_its_base_as_a_scenario_a_path_or_a_table():
    import fabricsim

    path = ROOT / "scenarios" / "permutation_128.toml"
    axes = {"grid": {"lb.kind": ["ecmp", "ops"]}, "seeds": [1, 2]}
    ids = [[p.id for p in Sweep.from_dict({"base": base} | axes).validate()] for base in (fabricsim.Scenario.load(path), path, str(path))]
    assert ids[0] == ids[1] == ids[2] and len(ids[0]) == 4
    with pytest.raises(ScenarioError) as e:
        Sweep.from_dict({"base": 3} | axes)
    assert e.value.field == "base" and "fabricsim.Scenario" in e.value.message


def test_a_label_axis_names_rows_and_sets_nothing():
    base = ROOT / "scenarios" / "permutation_128.toml"
    sw = Sweep.from_dict({"base": str(base), "zip": {"label": ["small", "big"], "workload.size": ["64KiB", "1MiB"]}})
    points = sw.validate()
    assert [p.values["label"] for p in points] == ["small", "big"]
    assert "label" not in points[0].scenario.data
    with pytest.raises(ScenarioError) as e:
        Sweep.from_dict({"base": str(base), "grid": {"label": [3]}}).validate()
    assert e.value.field == "label" and "a string" in e.value.message


def test_the_cli_reports_points_and_refuses_a_bad_spec(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["sweep", str(spec(tmp_path)), "--out", str(tmp_path / "o"), "-j", "1", "-q"])
    assert r.exit_code == 0, r.output
    assert "4 points" in r.output and "M events" not in r.output, "quiet: no estimate"
    # not quiet: what the points left will take, said first (none left on a second run)
    r = runner.invoke(app, ["sweep", str(spec(tmp_path)), "--out", str(tmp_path / "o3"), "-j", "1"])
    assert r.exit_code == 0, r.output
    said = r.output.splitlines()[0]
    assert said.startswith("sweep: 4 points to run, about ") and "on 1 worker;" in said and "of memory at once" in said, said
    events = sum(p.scenario.estimate()[0] for p in Sweep.load(spec(tmp_path)).validate())
    assert f"{events / 1e6:,.1f} M events" in said
    # a line as each point starts and as it ends, the latter with the time the rest will take
    lines = r.output.splitlines()
    starts = [line for line in lines if line.startswith("sweep: started ")]
    ends = [line for line in lines if line.startswith("sweep: ") and " done: " in line]
    assert len(starts) == 4 and len(ends) == 4 and "seed=" in starts[0] and "M events" in starts[0], lines
    assert ends[0].startswith("sweep: 1/4 done: ") and " left" in ends[0] and " left" not in ends[-1], ends
    assert lines.index(starts[1]) > lines.index(ends[0]), "one worker: the second point starts once the first is done"
    r = runner.invoke(app, ["sweep", str(spec(tmp_path)), "--out", str(tmp_path / "o3"), "-j", "1"])
    assert r.exit_code == 0 and "to run" not in r.output, r.output
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "nope.toml"\n')
    r = runner.invoke(app, ["sweep", str(bad), "--out", str(tmp_path / "o2")])
    assert r.exit_code == 2 and "nope.toml" in r.output


def test_a_changed_base_runs_its_points_again(tmp_path):
    from conftest import fabric

    spec = {"base": fabric(kind="permutation", size="64KiB"), "grid": {"lb.kind": ["ecmp", "ops"]}}
    first = run_sweep(Sweep.from_dict(spec), tmp_path, workers=1)
    spec["base"] = fabric(kind="permutation", size="128KiB")
    second = run_sweep(Sweep.from_dict(spec), tmp_path, workers=1)
    # same axis values, another scenario: new ids, new results, the old points left alone
    assert set(first["point"]).isdisjoint(second["point"])
    assert (second["max_fct_ns"] > first["max_fct_ns"]).all()
    assert len(list((tmp_path / "points").iterdir())) == 4


def test_named_values_and_list_values_read_as_text_in_the_results(tmp_path):
    from conftest import fabric

    base = fabric(kind="permutation", size="64KiB") | {"topology": {"hosts": 32, "radix": 8}}
    dead = [{"kind": "link_down", "link": "leaf0:up1", "start": "2us"}]
    sw = Sweep.from_dict(
        {
            "base": base,
            "grid": {"faults": {"none": [], "up1 dead": dead}, "switch.buffer": ["1MiB", "2MiB"]},
            "set": {"lb.kind": "ecmp"},
        }
    )
    points = sw.validate()
    # the names show, the values run
    assert [p.values["faults"] for p in points] == ["none", "none", "up1 dead", "up1 dead"]
    assert points[2].scenario.data["faults"] == dead and points[0].scenario.data["faults"] == []
    table = run_sweep(sw, tmp_path / "o", workers=1)
    assert table["faults"].dtype == pl.String and table["faults"].to_list() == ["none", "none", "up1 dead", "up1 dead"]
    # the directory keeps the names: a resume (and report) reads the same spec back
    again = Sweep.load(tmp_path / "o" / "sweep.toml")
    assert again.names == {"faults": ["none", "up1 dead"]} and [p.id for p in again.validate()] == [p.id for p in points]
    # unnamed list values: inline TOML, no Python repr, no None
    plain = Sweep.from_dict({"base": base, "grid": {"faults": [[], dead]}})
    shown = [p.values["faults"] for p in plain.validate()]
    assert shown == ["[]", '[{kind = "link_down", link = "leaf0:up1", start = "2us"}]']
    with pytest.raises(ScenarioError) as e:
        Sweep.from_dict({"base": base, "grid": {"faults": {}}})
    assert e.value.field == "grid.faults" and "name = value" in e.value.message


def test_each_job_has_its_columns_in_the_points(tmp_path):
    base = {
        "topology": {"hosts": 16, "radix": 8},
        "jobs": [
            {"name": "big", "collective": "allreduce", "size": "1MiB", "ranks": 8, "iterations": 2},
            {"name": "small", "collective": "alltoall", "size": "64KiB", "ranks": 8, "placement": "spread"},
        ],
    }
    table = run_sweep(Sweep.from_dict({"base": base, "grid": {"lb.kind": ["ecmp", "ops"]}}), tmp_path, workers=1)
    cols = [f"job.{j}.{m}" for j in ("big", "small") for m in ("jct_ns", "ideal_jct_ns", "slowdown", "busbw_gbps")]
    assert set(cols) <= set(table.columns)
    # the slowdown is the JCT over the ideal beside it
    for jct, ideal, slowdown in table.select("job.big.jct_ns", "job.big.ideal_jct_ns", "job.big.slowdown").iter_rows():
        assert slowdown == pytest.approx(jct / ideal, rel=0.05)
    for point, big, slow in table.select("point", "job.big.jct_ns", "job.small.slowdown").iter_rows():
        jobs = pl.read_parquet(tmp_path / "points" / point / "jobs.parquet")
        # the mean over the job's iterations, from its own rows
        assert big == pytest.approx(jobs.filter(pl.col("name") == "big")["jct_ps"].mean() / 1e3)
        assert slow == pytest.approx(jobs.filter(pl.col("name") == "small")["slowdown"][0]) and slow >= 1.0
    # the summary's worst JCT is the worse job's
    assert (table["max_jct_ns"] >= table["job.big.jct_ns"]).all()


def test_results_say_which_build_computed_them_and_a_sweep_never_mixes_builds_silently(tmp_path, monkeypatch):
    import json

    import fabricsim
    from conftest import fabric
    from fabricsim import results
    from fabricsim.sweep import runner
    from fabricsim.sweep import spec as sweep_spec

    spec = {"base": fabric(kind="permutation", size="64KiB"), "grid": {"lb.kind": ["ecmp", "ops"]}}
    first = run_sweep(Sweep.from_dict(spec), tmp_path, workers=1)
    # every point's summary, every Parquet file and the points table name the build
    assert first["fabricsim"].to_list() == [fabricsim.__version__] * 2
    point = tmp_path / "points" / first["point"][0]
    assert json.loads((point / "summary.json").read_text())["provenance"]["fabricsim"] == fabricsim.__version__
    for name in ("flows.parquet", "ports.parquet"):
        assert pl.read_parquet_metadata(point / name)["fabricsim"] == fabricsim.__version__
    assert pl.read_parquet_metadata(tmp_path / "points.parquet")["fabricsim"] == fabricsim.__version__
    # another build finds the directory: refused, naming both, before anything runs
    other = {"fabricsim": "9.9.9", "commit": "0123456789abcdef"}
    for module in (results, runner, sweep_spec):
        monkeypatch.setattr(module, "PROVENANCE", other)
    with pytest.raises(ScenarioError, match=r"--out: .*fabricsim 0\.1\.0.*this is fabricsim 9\.9\.9 \(commit 0123456789ab\)"):
        run_sweep(Sweep.from_dict(spec), tmp_path, workers=1)
    # told to go on: another version's points get new ids (none is reused), and each row says who made it
    second = run_sweep(Sweep.from_dict(spec), tmp_path, workers=1, allow_other_version=True)
    assert set(first["point"]).isdisjoint(second["point"])
    assert second["fabricsim"].to_list() == ["9.9.9"] * 2 and second["fabricsim_commit"].to_list() == ["0123456789abcdef"] * 2


def test_a_script_without_a_main_guard_sweeps_on_several_workers(tmp_path):
    # spawned workers used to import the script again and start a second sweep each
    # ("another sweep is running in this directory", then BrokenProcessPool)
    import subprocess
    import sys

    script = tmp_path / "sweep_script.py"
    script.write_text(
        "from fabricsim.sweep import Sweep, run_sweep\n"
        "spec = {'base': {'topology': {'hosts': 16, 'radix': 8}, 'workload': {'kind': 'permutation', 'size': '16KiB'}},\n"
        "        'grid': {'lb.kind': ['ecmp', 'ops']}, 'seeds': [1, 2]}\n"
        f"print('points', run_sweep(Sweep.from_dict(spec), {str(tmp_path / 'out')!r}, workers=2).height)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0 and "points 4" in done.stdout, done.stderr[-2000:]


def test_a_long_sweep_says_where_its_running_points_stand_and_keeps_its_table_as_points_finish(tmp_path, monkeypatch):
    import fabricsim.cli.common as cli
    import fabricsim.sweep.runner as sweep_module

    # every report a running point makes is written, and read every few hundredths of a second
    monkeypatch.setattr(sweep_module, "PROGRESS_EVERY_S", 0.0)
    monkeypatch.setattr(cli, "LINE_EVERY_S", 0.02)
    seen: list[tuple[int, str | None]] = []
    real = sweep_module.collect

    def collect(out_dir, points, table=sweep_module.POINTS_FILE, partial=False, read=None):  # type: ignore[no-untyped-def]
        frame = real(out_dir, points, table, partial, read)
        seen.append((frame.height, pl.read_parquet_metadata(out_dir / table).get("fabricsim_sweep")))
        return frame

    monkeypatch.setattr(sweep_module, "collect", collect)
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["sweep", str(spec(tmp_path, "2MiB")), "--out", str(out), "-j", "1"])
    assert r.exit_code == 0, r.output
    running = [line for line in r.output.splitlines() if line.startswith("sweep: running ")]
    assert running and "seed=" in running[0] and "%: " in running[0] and "M events/s" in running[0], r.output
    # the table after each point, marked partial, then the whole one
    assert seen == [(1, "partial"), (2, "partial"), (3, "partial"), (4, "partial"), (4, "complete")], seen
    assert not list((out / "points").glob(".*.progress")), "a point's report goes once its tables are written"
