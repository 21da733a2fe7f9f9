"""One run across the processes of an MPI launch (``fabricsim run --mpi``, :mod:`fabricsim.mpi`):
two processes under MPICH's ``mpiexec`` write the tables one process writes, byte for byte; the
Python API runs on any communicator; a missing MPI and options that do not go with it are said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fabricsim
import pytest
from fabricsim.mpi import run_mpi

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

PERMUTATION = '[topology]\nhosts = 128\nradix = 16\n[workload]\nkind = "permutation"\nsize = "256KiB"\n'


def _summary(out: Path) -> dict[str, Any]:
    """A run's summary and accounting without what depends on the machine or the launch."""
    written = json.loads((out / "summary.json").read_text())
    summary: dict[str, Any] = written["summary"]
    for key in ("wall_s", "peak_rss_mb", "processes", "threads"):
        summary.pop(key, None)
    return {"summary": summary, "accounting": written["accounting"]}


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(PERMUTATION, id="permutation"),
        # a training job: scale-up messages, dependencies across hosts, steps
        pytest.param((ROOT / "crates/fabricsim-core/tests/golden/19_jobs_rails_steps.toml").read_text(), id="jobs"),
        # GPUs of two NICs on rails, a job of two channels: a GPU's NICs on leaves of two processes
        pytest.param(
            "[topology]\nhosts = 16\nradix = 8\nnics_per_server = 4\nnics_per_gpu = 2\nrails = true\n"
            '[[jobs]]\nname = "ar"\ncollective = "allreduce"\nsize = "1MiB"\nranks = 16\nchannels = 2\n',
            id="nics",
        ),
    ],
)
def test_two_processes_write_the_tables_of_one(tmp_path: Path, scenario: str) -> None:
    path = tmp_path / "scenario.toml"
    path.write_text(scenario)
    one, two = tmp_path / "one", tmp_path / "two"
    fabricsim_cli = [str(BIN / "fabricsim"), "run", str(path), "--quiet"]
    subprocess.run([*fabricsim_cli, "--threads", "1", "--out", str(one)], check=True, capture_output=True)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    # two processes of two threads each
    launch = [str(BIN / "mpiexec"), "-n", "2", *fabricsim_cli, "--mpi", "--threads", "2", "--out", str(two)]
    proc = subprocess.run(launch, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((two / "summary.json").read_text())["summary"]["processes"] == 2
    for table in ("flows", "ports", "reorder", "buckets"):
        assert (one / f"{table}.parquet").read_bytes() == (two / f"{table}.parquet").read_bytes(), table
    assert _summary(one) == _summary(two)


GOLDEN_UNDER_MPI = """
import json, sys
from pathlib import Path
import fabricsim
from fabricsim.mpi import run_mpi
from mpi4py import MPI

MACHINE = ("wall_s", "peak_rss_mb", "processes", "threads", "thread_note", "solo_windows")
verdicts = {}
for path in sorted(Path(sys.argv[1]).glob("*.toml")):
    try:
        res = run_mpi(fabricsim.load(str(path)), threads=int(sys.argv[2]))
    except fabricsim.ScenarioError as e:
        verdicts[path.name] = "refused: " + e.field
        continue
    if res is None:
        continue
    one = fabricsim.run(fabricsim.load(str(path)), threads=1)
    same = all(getattr(res, t).equals(getattr(one, t)) for t in ("flows", "ports", "reorder", "jobs", "steps", "buckets"))
    summary = lambda r: {k: v for k, v in r.summary.items() if k not in MACHINE}
    verdicts[path.name] = "same" if same and summary(res) == summary(one) else "differs"
if MPI.COMM_WORLD.Get_rank() == 0:
    print(json.dumps(verdicts))
"""


def test_every_golden_scenario_across_two_processes(tmp_path: Path) -> None:
    # one launch of two processes of two threads runs every golden scenario and a 1 024-host
    # permutation, each against one process's run of it
    script = tmp_path / "golden.py"
    script.write_text(GOLDEN_UNDER_MPI)
    golden = tmp_path / "scenarios"
    golden.mkdir()
    for path in (ROOT / "crates/fabricsim-core/tests/golden").glob("*.toml"):
        (golden / path.name).write_text(path.read_text())
    # and a 1 024-host permutation (3.8 M events)
    perm = '[topology]\nhosts = 1024\nradix = 64\nlink_latency = "1us"\n[workload]\nkind = "permutation"\nsize = "1MiB"\n'
    (golden / "zz_permutation_1024.toml").write_text(perm)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    launch = [str(BIN / "mpiexec"), "-n", "2", sys.executable, str(script), str(golden), "2"]
    proc = subprocess.run(launch, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    verdicts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(verdicts) == len(list(golden.glob("*.toml")))
    # every one runs across processes (PFC too, since 2026-11-30), and gives one process's tables
    assert all(v == "same" for v in verdicts.values()), verdicts


class OneRank:
    """A communicator of one process, as mpi4py's ``COMM_WORLD`` is under ``mpiexec -n 1``."""

    def Get_rank(self) -> int:
        return 0

    def Get_size(self) -> int:
        return 1

    def allgather(self, mine: bytes) -> list[bytes]:
        return [mine]

    def alltoall(self, out: list[bytes]) -> list[bytes]:
        return list(out)


def test_run_mpi_on_any_communicator_gives_the_run() -> None:
    scenario = {"topology": {"hosts": 32, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}}
    res = run_mpi(scenario, OneRank())
    assert res is not None
    one = fabricsim.run(scenario, threads=1)
    assert res.flows.equals(one.flows) and res.ports.equals(one.ports)
    assert res.summary["processes"] == 1


class Reversed(OneRank):
    """A stand-in that hands rank r what rank (size - 1 - r) sent, of three ranks."""

    def Get_size(self) -> int:
        return 3

    def alltoall(self, out: list[bytes]) -> list[bytes]:
        return list(reversed(out))


def test_the_all_to_all_of_one_buffer_splits_and_joins_by_counts() -> None:
    from fabricsim._ranks import exchange

    _, alltoallv = exchange(Reversed())
    got, counts = alltoallv(b"aabbbbc", [2, 4, 1])
    assert (bytes(got), counts) == (b"cbbbbaa", [1, 4, 2])
    assert alltoallv(b"", [0, 0, 0]) == (b"", [0, 0, 0])


class BadCounts(OneRank):
    def alltoall(self, out: list[bytes]) -> list[bytes]:
        return [*out, b"x"]


def test_a_collective_that_gives_other_than_its_ranks_is_said() -> None:
    scenario = {"topology": {"hosts": 32, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}}
    with pytest.raises(RuntimeError, match="an MPI collective gave 2 counts for 1 ranks"):
        run_mpi(scenario, BadCounts())


def test_an_all_to_all_whose_buffer_does_not_match_its_counts_is_said() -> None:
    from fabricsim._ranks import exchange

    allgather, alltoallv = exchange(OneRank())
    sim = fabricsim._core.Simulation.ranked(
        fabricsim.Scenario({"topology": {"hosts": 32, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}}).to_json(), 1, 0
    )

    def lying(send: bytes, counts: list[int]) -> tuple[bytes | bytearray, list[int]]:
        got, back = alltoallv(send, counts)
        return got, [n + 1 for n in back]

    with pytest.raises(RuntimeError, match=r"an MPI all-to-all gave \d+ bytes for counts that add up to \d+"):
        sim.run_ranked(allgather, lying)


class ManyRanks(OneRank):
    """Rank 0 of a communicator of 64 processes (refused before any collective call)."""

    def Get_size(self) -> int:
        return 64


def test_what_cannot_run_across_processes_is_said() -> None:
    # 32 hosts of radix 8 cut into 8 pieces: at most 8 processes
    with pytest.raises(fabricsim.ScenarioError, match=r"ranks: got 64; at most 8 ranks"):
        run_mpi({"topology": {"hosts": 32, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}}, ManyRanks())


def test_without_mpi4py_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(fabricsim.MissingDependency, match=r"fabricsim\[mpi\]"):
        run_mpi({"topology": {"hosts": 32, "radix": 8}})


def test_threads_of_each_process_are_a_positive_count() -> None:
    with pytest.raises(fabricsim.ArgumentError, match="threads"):
        run_mpi({"topology": {"hosts": 32, "radix": 8}}, OneRank(), threads=0)


def test_mpi_runs_the_reference_on_rank_0(tmp_path: Path) -> None:
    path = tmp_path / "scenario.toml"
    path.write_text((ROOT / "crates/fabricsim-core/tests/golden/19_jobs_rails_steps.toml").read_text())
    one, two = tmp_path / "one", tmp_path / "two"
    cli = [str(BIN / "fabricsim"), "run", str(path), "--quiet", "--reference", "nonblocking"]
    subprocess.run([*cli, "--threads", "1", "--out", str(one)], check=True, capture_output=True)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([str(BIN / "mpiexec"), "-n", "2", *cli, "--mpi", "--out", str(two)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (one / "jobs.parquet").read_bytes() == (two / "jobs.parquet").read_bytes()
    assert _summary(one) == _summary(two) and _summary(two)["summary"]["max_fabric_cost"] > 1


def test_an_unwritable_out_stops_every_process(tmp_path: Path) -> None:
    # rank 0 checks --out and tells the others: they would otherwise wait for it in the run
    path = tmp_path / "scenario.toml"
    path.write_text(PERMUTATION)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    launch = [str(BIN / "mpiexec"), "-n", "2", str(BIN / "fabricsim"), "run", str(path), "--mpi", "-q", "--out", str(blocker / "out")]
    proc = subprocess.run(launch, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("--out: cannot write") == 2, proc.stderr


def test_processes_that_each_see_a_world_of_one_are_stopped(tmp_path: Path) -> None:
    # what a launcher of another MPI than mpi4py's gives: every process told it is one of two
    # (PMI_SIZE) while MPI sees it alone; each would run the whole scenario into the same --out
    path = tmp_path / "scenario.toml"
    path.write_text(PERMUTATION)
    env = {**os.environ, "PMI_SIZE": "2", "PMI_RANK": "0"}
    env.pop("PMI_FD", None)
    cli = [str(BIN / "fabricsim"), "run", str(path), "--mpi", "-q", "--out", str(tmp_path / "out")]
    proc = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 4, proc.stderr
    assert "started 2 processes (PMI_SIZE=2)" in proc.stderr and "MPI4PY_LIBMPI" in proc.stderr
    assert not (tmp_path / "out").exists()
    # a launch of one is a run of one
    env["PMI_SIZE"] = "1"
    proc = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_scale_bench_runs_give_one_result_on_threads_and_processes(tmp_path: Path) -> None:
    """tools/scale_bench.py (the many-core figures of docs/performance.md): each run in a fresh
    process, on threads and across processes, the same flows to the picosecond and the same
    events; a run that cannot start is recorded with its error, not dropped."""
    (tmp_path / "s").mkdir()
    (tmp_path / "p.toml").write_text(PERMUTATION)
    (tmp_path / "s" / "perm.json").write_text(fabricsim.Scenario.load(tmp_path / "p.toml").to_json())
    (tmp_path / "s" / "bad.json").write_text('{"topology": {"hosts": 0}}')
    out = tmp_path / "out.jsonl"
    env = os.environ | {"MPIEXEC": str(BIN / "mpiexec")}
    cmd = [sys.executable, str(ROOT / "tools" / "scale_bench.py"), "sweep", str(tmp_path / "s"), str(out)]
    subprocess.run([*cmd, "--threads", "1,2", "--mpi", "2x1", "--only", "perm,bad"], check=True, env=env, capture_output=True, timeout=300)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["cpus"] >= 1 and "machine" in lines[0]
    lines = lines[1:]
    runs = {x["run"]: x for x in lines if x["scenario"] == "perm"}
    assert set(runs) == {"1x1", "1x2", "2x1"}
    assert runs["2x1"]["processes"] == 2 and len(runs["2x1"]["peak_mb"]) == 2 and runs["1x2"]["threads_used"] == 2
    # where the windows' wall went: the driver's time in them, counted wherever windows ran
    assert runs["1x2"]["windows"][0] > 0 and runs["1x2"]["window_profile"][0] > 0
    assert runs["1x1"]["window_profile"] == [0, 0, 0]
    assert len({(r["flows_digest"], r["events"], r["sim_time_ns"]) for r in runs.values()}) == 1
    assert runs["1x1"]["events"] > 50_000 and runs["1x1"]["status"] == "complete"
    bad = [x for x in lines if x["scenario"] == "bad"]
    assert len(bad) == 3 and all(x["rc"] != 0 and "hosts" in x["err"] for x in bad)


def test_scale_bench_marks_a_launch_whose_processes_each_ran_alone(tmp_path: Path) -> None:
    """Where mpi4py loads another MPI than the launcher's, each process is a world of one and
    runs the whole scenario: the sweep's line says so instead of passing for a 2-process run."""
    (tmp_path / "s").mkdir()
    (tmp_path / "p.toml").write_text(PERMUTATION)
    (tmp_path / "s" / "perm.json").write_text(fabricsim.Scenario.load(tmp_path / "p.toml").to_json())
    alone = tmp_path / "alone"
    alone.write_text('#!/bin/sh\nshift 2\nexec "$@"\n')  # `alone -n 2 CMD`: CMD once, no launcher
    alone.chmod(0o755)
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, str(ROOT / "tools" / "scale_bench.py"), "sweep", str(tmp_path / "s"), str(out)]
    env = os.environ | {"MPIEXEC": str(alone)}
    subprocess.run([*cmd, "--threads", "1", "--mpi", "2x1"], check=True, env=env, capture_output=True, timeout=300)
    runs = {x["run"]: x for x in map(json.loads, out.read_text().splitlines()[1:])}
    assert "error" not in runs["1x1"]
    assert runs["2x1"]["processes"] == 1 and "not 2" in runs["2x1"]["error"]
