from __future__ import annotations

import json

import fabricsim
from fabricsim.cli import app
from typer.testing import CliRunner

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_run_json_prints_scenario_and_summary(demo_path):
    r = invoke("run", str(demo_path), "--set", "workload.size=256KiB", "--set", "lb.kind=ecmp", "--json", "-q")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["scenario"]["lb"]["kind"] == "ecmp"
    assert doc["scenario"]["workload"]["size"] == "256KiB"
    assert doc["summary"]["status"] == "complete" and doc["summary"]["flows"] == 128


def test_run_out_writes_files(demo_path, tmp_path):
    r = invoke("run", str(demo_path), "--set", "workload.size=64KiB", "--out", str(tmp_path), "-q")
    assert r.exit_code == 0, r.output
    assert {p.name for p in tmp_path.iterdir()} == {
        "flows.parquet",
        "ports.parquet",
        "reorder.parquet",
        "buckets.parquet",
        "summary.json",
        "scenario.toml",
    }


def test_bad_input_exits_2_with_the_field(demo_path):
    r = invoke("run", str(demo_path), "--set", "lb.kind=magic", "-q")
    assert r.exit_code == 2
    assert "lb.kind" in r.output and "magic" in r.output
    r = invoke("run", str(demo_path), "--set", "switch.ecn.kmin=0.9bdp", "--set", "switch.ecn.kmax=0.5bdp", "-q")
    assert r.exit_code == 2 and "switch.ecn.kmin" in r.output
    r = invoke("run", "no-such-file.toml")
    assert r.exit_code == 2 and "no such file" in r.output
    r = invoke("compare", str(demo_path), "--lb", "ecmp,nope")
    assert r.exit_code == 2 and "nope" in r.output


def test_incomplete_run_exits_3(demo_path):
    r = invoke("run", str(demo_path), "--set", "stop.max_time=20us", "-q")
    assert r.exit_code == 3
    assert "incomplete" in r.output


def test_compare_tabulates_each_lb(demo_path):
    r = invoke("compare", str(demo_path), "--lb", "ecmp,ops", "--set", "workload.size=512KiB", "--json", "-q")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) == {"ecmp", "ops"}
    assert doc["ecmp"]["max_slowdown"] > doc["ops"]["max_slowdown"]
    r = invoke("compare", str(demo_path), "--lb", "ecmp,ops", "--set", "workload.size=128KiB", "-q")
    assert r.exit_code == 0, r.output
    header = next(line for line in r.stdout.splitlines() if "max slowdown" in line)
    columns = [c.strip() for c in header.split("┃")[1:-1]]
    rows = {cells[0]: dict(zip(columns, cells, strict=True)) for cells in _table_rows(_first_table(r.stdout))}
    assert set(rows) == {"ecmp", "ops"}, "one row per load balancer, named in the first column"
    assert rows["ecmp"]["status"] == rows["ops"]["status"] == "complete"
    assert float(rows["ecmp"]["max slowdown"]) > float(rows["ops"]["max slowdown"])


def _first_table(text: str) -> str:
    """The text up to the end of the first printed table (compare prints more after it)."""
    return text.split("└", 1)[0]


def _table_rows(text: str) -> list[list[str]]:
    """The body rows of a printed table, as cells."""
    return [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]


def test_bench_runs_a_standard_scenario():
    """The benchmark measures the simulation it names: the same events and packets as that
    scenario run here (the count is deterministic), with the same results."""
    from fabricsim.bench import BENCHMARKS

    r = invoke("bench", "--only", "perm-128", "--json")
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)
    (b,) = [b for b in BENCHMARKS if b.name == row["name"]]
    same = fabricsim.run(b.scenario, threads=1).summary
    assert row["status"] == "complete" and (row["events"], row["data_packets"]) == (same["events"], same["data_packets"])
    assert row["threads"] == 1 and row["wall_s"] > 0
    assert (row["max_slowdown"], row["mean_slowdown"]) == (same["max_slowdown"], same["mean_slowdown"])
    assert row["peak_rss_mb"] > 0


# from the registry: a new load balancer is covered without editing this file
LOAD_BALANCERS = [r["name"] for r in fabricsim.registry() if r["category"] == "lb"]


def test_compare_accepts_every_registered_load_balancer(demo_path):
    assert {"ecmp", "ops", "arcane", "prime"} <= set(LOAD_BALANCERS)
    r = invoke("compare", str(demo_path), "--lb", ",".join(LOAD_BALANCERS), "--set", "workload.size=64KiB", "--json", "-q")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) == set(LOAD_BALANCERS)
    assert all(s["status"] == "complete" for s in doc.values())


def test_list_shows_every_algorithm_with_its_paper_reference():
    r = invoke("list")
    assert r.exit_code == 0, r.output
    rows = {(cells[0], cells[1]) for cells in _table_rows(r.stdout)}
    for row in fabricsim.registry():
        assert (row["category"], row["name"]) in rows, row
    assert "ARCANE sec. 3" in r.stdout and "PRIME sec. III" in r.stdout


def test_set_lb_kind_switches_algorithm_and_warns_on_hashed_mp_ev(demo_path):
    r = invoke("run", str(demo_path), "--set", "lb.kind=prime", "--set", "workload.size=64KiB", "--json", "-q")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["scenario"]["lb"]["kind"] == "prime"
    r = invoke("run", str(demo_path), "--set", "lb.kind=prime", "--set", "switch.routing=ecmp", "--set", "workload.size=64KiB", "-q")
    assert r.exit_code == 0, r.output
    assert "warning" in r.output and "mp_ev" in r.output


def test_unknown_lb_parameter_is_exit_2(demo_path):
    r = invoke("run", str(demo_path), "--set", "lb.kind=arcane", "--set", "lb.bufer_size=4", "-q")
    assert r.exit_code == 2 and "lb.bufer_size" in r.output and "buffer_size" in r.output


def test_run_out_writes_samples_when_asked(demo_path, tmp_path):
    r = invoke(
        "run",
        str(demo_path),
        "--set",
        "workload.size=64KiB",
        "--set",
        'samples={every = "2us", ports = ["leaf0:up*"]}',
        "--out",
        str(tmp_path),
        "-q",
    )
    assert r.exit_code == 0, r.output
    import polars as pl

    s = pl.read_parquet(tmp_path / "samples.parquet")
    assert s["port"].n_unique() == 8 and (s["time_ps"] % 2_000_000 == 0).all()


def test_compare_of_incomplete_runs_prints_no_fake_numbers_and_exits_3(demo_path):
    r = invoke("compare", str(demo_path), "--lb", "ecmp,ops", "--set", "stop.max_time=20us", "-q")
    assert r.exit_code == 3, r.output
    rows = {cells[0]: cells for cells in _table_rows(_first_table(r.stdout))}
    assert set(rows) == {"ecmp", "ops"}
    for cells in rows.values():
        assert cells[1] == "incomplete"
        assert cells[2:7] == ["-"] * 5, "no FCT or slowdown exists when no flow completed: " + str(cells)
    r = invoke("compare", str(demo_path), "--lb", "ecmp", "--set", "stop.max_time=20us", "--json", "-q")
    assert r.exit_code == 3
    assert json.loads(r.stdout)["ecmp"]["max_fct_ns"] is None


def test_cli_conventions_version_short_help_and_json_registry():
    r = invoke("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"fabricsim {fabricsim.__version__}"
    r = invoke("run", "-h")
    assert r.exit_code == 0 and "--set KEY=VALUE" in r.stdout and "-o, --out DIR" in r.stdout
    assert "<list[str]>" not in r.stdout and "{scenario}" not in r.stdout, "no internal metavars"
    r = invoke("list", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout) == fabricsim.registry()


def test_an_interrupted_run_writes_nothing_and_says_so(tmp_path):
    import signal
    import subprocess
    import sys

    from conftest import ROOT

    out = tmp_path / "new" / "run"
    # prime's multi-part EV under ECMP switches draws a warning, printed (after the estimate,
    # said before the run is built) just before the run starts: the sign that the command is
    # under way (a sleep raced the interpreter's start)
    extra = ["--set", "workload.size=1GiB", "--set", "lb.kind=prime", "--set", "switch.routing=ecmp"]
    cmd = [sys.executable, "-m", "fabricsim", "run", str(ROOT / "scenarios" / "permutation_128.toml"), *extra]
    proc = subprocess.Popen([*cmd, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    estimate, first = proc.stderr.readline(), proc.stderr.readline()
    assert "M events" in estimate and "multi-part EV" in first, (estimate, first)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "stopped by SIGINT; nothing was written" in stderr and "Traceback" not in stderr, stderr
    assert not (tmp_path / "new").exists(), "an interrupted run left a directory behind"


def test_ctrl_c_while_the_command_starts_says_so_without_a_traceback():
    """Issue 61: a SIGINT in the first half second (Python importing the package, before any
    command can catch it) printed a traceback; one while typer reads the arguments exited 130
    without a word."""
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT

    cmd = [sys.executable, "-m", "fabricsim", "run", str(ROOT / "scenarios" / "permutation_128.toml"), "-q"]
    for delay in (0.02, 0.1, 0.25, 0.3, 0.35, 0.4):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        if proc.returncode == 0:
            continue  # the run was done before the signal (a fast machine)
        if proc.returncode == 1 and stderr.startswith("Could not import runpy module"):
            # CPython's own start (a loaded machine): `-m` had not reached the package yet,
            # and the interpreter, not fabricsim, reports it
            continue
        frames = [line for line in stderr.splitlines() if line.strip().startswith("File ")]
        if frames and all('File "<frozen ' in f for f in frames):
            # the same a little later: runpy still finding the package, none of its code run
            # (every frame is the interpreter's own)
            continue
        # 130 where the command caught it, killed by SIGINT (a shell's 130) where Python did,
        # or before the interpreter set its own handler (nothing printed then: killed, as any
        # program that has not started); never a traceback
        assert proc.returncode in (130, -signal.SIGINT), (delay, proc.returncode, stderr)
        assert "Traceback" not in stderr, (delay, stderr)
        assert "stopped by SIGINT" in stderr or (not stderr.strip() and proc.returncode == -signal.SIGINT), (delay, stderr)


def test_a_signal_while_results_move_in_waits_until_they_are_whole(demo_path, tmp_path, monkeypatch):
    import os
    import signal

    import pytest
    from fabricsim.errors import InterruptedAfterWrite

    s = fabricsim.Scenario.load(demo_path).set("workload.size", "64KiB")
    old, new = fabricsim.run(s.set("seed", 2)), fabricsim.run(s)
    out = old.write(tmp_path / "run")
    real, moved = os.replace, []

    def replace(a: str, b: str) -> None:
        if not moved:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C as the first file moves in
        moved.append(b)
        real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(InterruptedAfterWrite) as e:
        new.write(out)
    assert e.value.exit_code == 130 and str(out) in str(e.value)
    assert len(moved) == len(list(out.iterdir())), "every file moved in before the signal acted"
    assert json.loads((out / "summary.json").read_text())["summary"] == json.loads(json.dumps(new.summary))
    # the CLI says where the whole results are
    moved.clear()
    r = invoke("run", str(demo_path), "--set", "workload.size=64KiB", "--out", str(tmp_path / "cli"), "-q")
    assert r.exit_code == 130, r.output
    assert "stopped by SIGINT after the results were written to" in r.output and (tmp_path / "cli" / "summary.json").exists()


def test_compare_puts_switch_adaptive_routing_beside_host_schemes(tmp_path):
    from conftest import ROOT

    r = CliRunner().invoke(app, ["compare", str(ROOT / "scenarios" / "permutation_128.toml"), "--lb", "ecmp,switch-ar", "--json", "-q"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    # the same ECMP hosts; the switches' adaptive choice removes ECMP's collision tail
    assert set(got) == {"ecmp", "switch-ar"}
    assert got["switch-ar"]["max_slowdown"] < 0.5 * got["ecmp"]["max_slowdown"]
    s = fabricsim.Scenario.load(ROOT / "scenarios" / "permutation_128.toml").with_lb("switch-ar")
    assert s.data["lb"]["kind"] == "ecmp" and s.data["switch"]["routing"] == "adaptive"


def test_compare_writes_each_run_as_it_finishes_and_a_stop_keeps_those_done(demo_path, tmp_path, monkeypatch):
    """Issue 68: Ctrl-C during `compare --out` after ECMP had finished lost it ("nothing was
    written"). Each load balancer's run is now written as it finishes (with its fabric cost:
    the reference runs first), and a stop says which are whole."""
    from fabricsim.cli import compare as cli

    real, started = cli._run_with_bar, []

    def stop_at_the_third(*args, **kwargs):
        started.append(args[1])
        if len(started) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "_run_with_bar", stop_at_the_third)
    out = tmp_path / "cmp"
    r = invoke("compare", str(demo_path), "--set", "workload.size=64KiB", "--lb", "ecmp,ops,prime", "--out", str(out), "-q")
    assert r.exit_code == 130, r.output
    assert f"stopped by SIGINT after the results were written to {out / 'ecmp'}, {out / 'ops'}" in " ".join(r.output.split())
    assert started == ["ecmp", "ops", "prime"] and sorted(p.name for p in out.iterdir()) == ["ecmp", "ops"]
    whole = fabricsim.Results.read(out / "ops")
    assert whole.flows.columns == list(fabricsim.results.schema("flows")) and whole.summary["status"] == "complete"
    assert "the same command resumes it" in " ".join(r.output.split())
    # the same command runs only what is missing, and prints what a whole compare prints
    monkeypatch.setattr(cli, "_run_with_bar", real)
    ran: list[str] = []
    monkeypatch.setattr(cli, "_run_with_bar", lambda *a, **k: ran.append(a[1]) or real(*a, **k))
    r = invoke("compare", str(demo_path), "--set", "workload.size=64KiB", "--lb", "ecmp,ops,prime", "--out", str(out))
    assert r.exit_code == 0 and ran == ["prime"], (ran, r.output)
    assert f"ecmp: kept {out / 'ecmp'}" in " ".join(r.output.split())
    fresh = invoke("compare", str(demo_path), "--set", "workload.size=64KiB", "--lb", "ecmp,ops,prime", "--json")
    resumed = invoke("compare", str(demo_path), "--set", "workload.size=64KiB", "--lb", "ecmp,ops,prime", "--out", str(out), "--json", "-q")
    machine = {"wall_s", "peak_rss_mb", "threads", "thread_note", "solo_windows"}
    same = [{n: {k: v for k, v in s.items() if k not in machine} for n, s in json.loads(x.stdout).items()} for x in (fresh, resumed)]
    assert same[0] == same[1]
    # another scenario in the same directory is run again, not kept
    ran.clear()
    r = invoke("compare", str(demo_path), "--set", "workload.size=128KiB", "--lb", "ecmp", "--out", str(out), "-q")
    assert r.exit_code == 0 and ran == ["ecmp"], r.output


def test_set_topology_kind_keeps_the_fields_the_new_kind_takes():
    from conftest import ROOT

    path = ROOT / "scenarios" / "alltoall_rails_64.toml"
    s = fabricsim.Scenario.load(path).with_topology("rail_only")
    # a rail-optimized tree's rails go; its hosts, radix, NICs and scale-up network stay
    assert "rails" not in s.data["topology"] and s.data["topology"]["kind"] == "rail_only"
    assert (s.data["topology"]["hosts"], s.data["topology"]["nics_per_server"], s.data["topology"]["scale_up_rate"]) == (64, 8, "7200Gbps")
    r = CliRunner().invoke(app, ["compare", str(path), "--lb", "ops", "--json", "-q", "-s", "topology.kind=rail_only"])
    assert r.exit_code == 0, r.output
    # every cross-rail message relayed through NVLink: one scale-up row more for each
    direct = fabricsim.run(fabricsim.Scenario.load(path)).flows
    relayed = fabricsim.run(s).flows
    assert relayed.height == direct.height + 8 * 7 * 7 * 8
    assert json.loads(r.stdout)["ops"]["status"] == "complete"


def test_with_jobs_compare_and_run_lead_with_each_jobs_answer(tmp_path):
    path = tmp_path / "jobs.toml"
    path.write_text(
        """
[topology]
hosts = 16
radix = 8
[[jobs]]
name = "train"
collective = "allreduce"
size = "1MiB"
ranks = 8
[[jobs]]
name = "moe"
collective = "alltoall"
size = "256KiB"
ranks = 8
placement = "spread"
"""
    )
    r = CliRunner().invoke(app, ["compare", str(path), "--lb", "ecmp,ops", "-q"])
    assert r.exit_code == 0, r.output
    # the job's answer first; the per-message columns say they are per message
    assert r.output.index("JCT") < r.output.index("msg")
    assert "max slowdown" not in r.output.replace("msg slowdown", "")
    assert "job slowdown" in r.output
    rows = {line.split("│")[1].strip(): line for line in r.output.splitlines() if line.startswith("│ train") or line.startswith("│ moe")}
    assert set(rows) == {"train", "moe"}
    r = CliRunner().invoke(app, ["run", str(path), "-q"])
    assert r.exit_code == 0, r.output
    assert r.output.index("jobs (mean over completed iterations)") < r.output.index("summary")
    assert r.output.index("max_jct_slowdown") < r.output.index("max_slowdown ")
    res = fabricsim.run(fabricsim.Scenario.load(path))
    jt = res.job_table()
    assert jt["name"].to_list() == ["train", "moe"] and jt["iterations"].to_list() == ["1 / 1", "1 / 1"]
    assert jt["slowdown"].to_list() == res.jobs["slowdown"].to_list()


def test_the_users_text_is_echoed_as_written_never_read_as_markup(tmp_path):
    for value in ("[/x]", "[bold]x", "[red"):
        path = tmp_path / "s.toml"
        path.write_text(f'[lb]\nkind = "{value}"\n')
        r = CliRunner().invoke(app, ["run", str(path), "-q"])
        assert r.exit_code == 2, r.output
        assert f'unknown "{value}"' in r.output, r.output
    # a job named like markup, in a table title and its rows
    path = tmp_path / "j.toml"
    path.write_text('[topology]\nhosts = 16\nradix = 8\n[[jobs]]\nname = "[/a]"\ncollective = "allreduce"\nsize = "64KiB"\nranks = 4\n')
    for cmd in (["run", str(path), "-q"], ["compare", str(path), "--lb", "ecmp,ops", "-q"]):
        r = CliRunner().invoke(app, cmd)
        assert r.exit_code == 0 and "[/a]" in r.output, r.output


def test_run_and_bench_take_a_thread_count(demo_path):
    r = invoke("run", str(demo_path), "--set", "workload.size=64KiB", "--threads", "2", "--json", "-q")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["summary"]["threads"] == 2
    assert invoke("run", str(demo_path), "--threads", "0", "-q").exit_code == 2
    r = invoke("bench", "--only", "perm-128", "--threads", "1,2", "--json")
    assert r.exit_code == 0, r.output
    one, two = json.loads(r.stdout)
    assert (one["threads"], two["threads"]) == (1, 2) and one["events"] == two["events"]
    assert invoke("bench", "--only", "perm-128", "--threads", "1,x").exit_code == 2
    # auto, the default: one thread for a small run
    for args in (["--threads", "auto"], []):
        r = invoke("run", str(demo_path), "--set", "workload.size=64KiB", *args, "--json", "-q")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["summary"]["threads"] == 1
    # the contended benchmark: busy loops started and stopped around the runs, ratios to 1 thread
    r = invoke("bench", "--contended", "--only", "perm-128", "--threads", "1,auto", "--rounds", "1", "--json")
    assert r.exit_code == 0, r.output
    rows = {row["asked"]: row for row in json.loads(r.stdout)}
    assert rows[1]["vs_1_thread"] == 1.0 and rows["auto"]["vs_1_thread"] > 0
    assert rows[1]["events"] == rows["auto"]["events"]
    r = invoke("run", str(demo_path), "--threads", "some", "-q")
    assert r.exit_code == 2 and '"auto" or a count' in r.output


def test_topology_prints_the_fabric_as_a_graph(demo_path):
    # the 128-host fabric: 16 leaves of 8 hosts, 8 spines, 400 Gb/s; half the hosts reach the
    # other half at their full 25.6 Tb/s, 4 links apart at most
    r = invoke("topology", str(demo_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["hosts"] == 128 and s["switches"] == [["leaf", 16], ["spine", 8]] and s["links"] == [128, 128]
    assert s["diameter"] == 4 and s["bisection_bps"] == s["injection_bps"] == 64 * 400 * 10**9
    # 3:1 oversubscribed leaves keep a third of it
    r = invoke("topology", str(demo_path), "--set", "topology.hosts=96", "--set", "topology.oversubscription=3", "--json")
    s = json.loads(r.stdout)
    assert s["bisection_bps"] * 3 == s["injection_bps"]
    assert "bisection" in invoke("topology", str(demo_path)).output
    r = invoke("topology", str(demo_path), "--set", "topology.tiers=4")
    assert r.exit_code == 2 and "topology.tiers" in r.output


def test_every_shipped_scenarios_header_command_names_load_balancers_compare_takes():
    # the training scenarios' headers once named "adaptive", which compare refused
    import re
    from pathlib import Path

    from fabricsim import Scenario

    root = Path(__file__).resolve().parent.parent / "scenarios"
    seen = 0
    for path in sorted(root.glob("*.toml")):
        for m in re.finditer(r"^# fabricsim compare \S+ --lb (\S+)", path.read_text(), re.M):
            for name in m.group(1).split(","):
                Scenario.load(path).with_lb(name).validate()
                seen += 1
    assert seen > 0
    r = invoke("compare", str(root / "permutation_128.toml"), "--lb", "ecmp,foo")
    assert r.exit_code == 2 and "switch-ar" in r.output


def test_a_run_says_what_it_will_take_before_it_starts_and_where_it_is_meanwhile(demo_path, monkeypatch):
    import fabricsim.cli.common as cli
    from fabricsim.run import Progress

    # a small run: the estimate line first, then (stderr is no terminal here) a line per report
    monkeypatch.setattr(cli, "LINE_EVERY_S", 0.0)
    r = invoke("run", str(demo_path), "--set", "workload.size=1MiB")
    assert r.exit_code == 0, r.output
    first = next(line for line in r.output.splitlines() if line.startswith("permutation_128:"))
    assert "M events" in first and "on one thread" in first and "of memory" in first and "max_wall" not in first, first
    lines = [line for line in r.output.splitlines() if line.startswith("permutation_128:") and "us simulated" in line]
    assert lines and lines[-1].startswith("permutation_128: 100%:"), lines[-3:]
    # how far it is goes by its events, not its flows: a training step ends most of its small
    # scale-up messages early (issue 51: a bar at 80 % with 2 % of the events made)
    early = Progress(10**9, 10**12, 2_000_000, 2_500_000, 150_000_000, expected_events=7_700_000_000, memory_estimate=0)
    assert 0.019 < cli._where(early, 30.0)[0] < 0.02
    assert cli._where(Progress(0, 1, 64, 128, 9, expected_events=0, memory_estimate=0), 1.0)[0] == 0.5
    # a long one is told of stop.max_wall, unless it set one
    assert "stop.max_wall" in cli._estimate("big", 20_000_000_000, 1 << 30, max_wall=False)
    said = cli._estimate("big", 20_000_000_000, 1 << 30, max_wall=True)
    assert "stop.max_wall" not in said and "1.0 GiB" in said


def test_the_expected_events_are_close_to_what_a_run_makes(demo_path):
    """The estimate the progress and the time estimate read: within 0.7 to 1.0 of the events
    made, on a permutation and on a training step (scale-up and rail-local traffic count less)."""
    from conftest import ROOT

    seen = []
    train = fabricsim.load(ROOT / "scenarios" / "training_dense_256.toml").set("jobs[0].parallel.micro_batches", 1)
    for s in (fabricsim.load(demo_path).set("workload.size", "1MiB"), train.set("jobs[0].model.layers", 4)):
        fabricsim.run(s, progress=seen.append, threads=1)
        first, last = seen[0], seen[-1]
        assert first.events == 0 and first.expected_events == last.expected_events > 0 and first.memory_estimate > 0
        assert 0.7 <= last.events / last.expected_events <= 1.0, (last.events, last.expected_events)
        seen.clear()


def test_compare_out_writes_each_load_balancers_run(demo_path, tmp_path):
    r = invoke(
        "compare", str(demo_path), "--lb", "ecmp,ops", "--set", "workload.size=64KiB", "--out", str(tmp_path / "cmp"), "-q", "--json"
    )
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    for lb in ("ecmp", "ops"):
        written = fabricsim.Results.read(tmp_path / "cmp" / lb)
        assert written.summary == got[lb] and written.scenario["lb"]["kind"] == lb


def test_compare_prints_slowdown_by_size_and_with_jobs_by_source():
    """compare's extra tables (issue 51 item 2): the p99 slowdown of each size bucket with
    messages, a row per load balancer; with jobs, each source's share of bytes above the leaf
    and its p99 slowdown under each load balancer, the background apart from the jobs."""
    from conftest import ROOT

    r = invoke("compare", str(ROOT / "scenarios" / "jobs_and_background.toml"), "--lb", "ecmp,ops")
    assert r.exit_code == 0, r.output
    text = r.output
    assert "p99 message slowdown by size" in text and "100KB-1MB" in text and "1-10MB" in text and ">10MB" not in text
    sources = text.split("p99 message slowdown by source", 1)[1]
    assert "background" in sources and "allreduce" in sources and "alltoall" in sources and "93.8%" in sources
    ops = fabricsim.run(fabricsim.load(ROOT / "scenarios" / "jobs_and_background.toml").with_lb("ops")).traffic_table()
    p99 = ops.filter(ops["traffic"] == "alltoall")["p99_slowdown"][0]
    assert f"{p99:.3f}" in sources


def test_compare_resolves_each_load_balancers_scenario_once(demo_path, monkeypatch):
    """Issue 63: compare resolved each scenario three times per load balancer (validate, the
    estimate, the build). Now the core reads each load balancer's scenario once (a Parsed),
    surveys it once (its messages counted, never held: issue 62) and builds its run from that
    same reading."""
    from fabricsim import _core

    calls: dict[str, int] = {"parse": 0, "build": 0}
    real_parse, real_sim = _core.Parsed, _core.Simulation

    def parse(text: str):  # type: ignore[no-untyped-def]
        calls["parse"] += 1
        return real_parse(text)

    def build(scenario, threads, columns=None):  # type: ignore[no-untyped-def]
        assert isinstance(scenario, real_parse), "a build reads the survey's reading, not the text again"
        calls["build"] += 1
        return real_sim(scenario, threads, columns)

    import fabricsim.readings as readings

    monkeypatch.setattr(_core, "Parsed", parse)
    monkeypatch.setattr(_core, "Simulation", build)
    # surveys are kept per scenario text: none kept from the tests before
    monkeypatch.setattr(readings, "_SURVEYS", {})
    monkeypatch.setattr(readings, "_PARSED", {})
    r = invoke("compare", str(demo_path), "--set", "workload.size=64KiB", "--lb", "ecmp,ops,prime")
    assert r.exit_code == 0, r.output
    assert calls == {"parse": 3, "build": 3} and len(readings._SURVEYS) == 3, calls
