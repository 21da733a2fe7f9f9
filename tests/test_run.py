from __future__ import annotations

import json
import os
import subprocess
import sys

import fabricsim
import polars as pl
import pytest
from conftest import fabric
from fabricsim.run import cores
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=25, deadline=None)
@given(
    # one packet, or whole packets: then one path is as fast as the idle fabric allows
    size=st.one_of(st.integers(min_value=1, max_value=4096), st.integers(min_value=1, max_value=768).map(lambda k: k * 4096)),
    pair=st.tuples(st.integers(0, 127), st.integers(0, 127)).filter(lambda p: p[0] != p[1]),
    rate=st.sampled_from(["100Gbps", "200Gbps", "400Gbps", "800Gbps"]),
    switch_latency=st.sampled_from(["0ns", "500ns", "1us"]),
    tiers=st.sampled_from([2, 3]),
)
def test_lone_flow_fct_is_exactly_ideal(size, pair, rate, switch_latency, tiers):
    src, dst = pair
    topo = {"tiers": tiers, "hosts": 128, "radix": 16 if tiers == 2 else 8, "link_rate": rate, "switch_latency": switch_latency}
    r = fabricsim.run(
        {"topology": topo, "lb": {"kind": "ecmp"}, "workload": {"kind": "flows", "flows": [{"src": src, "dst": dst, "size": f"{size}B"}]}}
    )
    row = r.flows.row(0, named=True)
    assert row["fct_ps"] == row["ideal_fct_ps"]
    assert row["slowdown"] == 1.0


def test_conservation_and_delivered_bytes_under_trimming():
    s = fabric(kind="incast", senders=24, size="512KiB")
    s["switch"] = {"buffer": "0.2bdp", "ecn": {"kmin": "0.05bdp", "kmax": "0.15bdp"}}
    r = fabricsim.run(s)
    a = r.accounting
    assert r.complete
    assert a["data_trimmed"] > 0
    assert a["data_sent"] == a["data_delivered"] + a["data_trimmed"] + a["data_dropped"] + a["data_in_flight"]
    assert (r.flows["delivered_bytes"] == r.flows["bytes"]).all()
    # the trims the ports saw are the trims the flows saw
    assert r.ports["trims"].sum() == r.flows["trims"].sum() == a["data_trimmed"]


def test_same_seed_identical_other_seed_differs():
    s = fabric(kind="permutation", size="256KiB")
    a, b = fabricsim.run(s), fabricsim.run(s)
    c = fabricsim.run(s | {"seed": 2})
    assert a.flows.equals(b.flows) and a.ports.equals(b.ports)
    assert not a.flows.equals(c.flows)


def test_ecmp_tail_is_heavier_than_spraying():
    s = fabricsim.Scenario(fabric(kind="permutation", size="2MiB"))
    ecmp = fabricsim.run(s.with_lb("ecmp")).summary
    ops = fabricsim.run(s.with_lb("ops")).summary
    assert ecmp["max_slowdown"] > 2.5 > 2.0 > ops["max_slowdown"]


def test_results_write_parquet_and_summary(tmp_path):
    r = fabricsim.run(fabric(kind="tornado", size="128KiB"))
    out = r.write(tmp_path / "out")
    flows = pl.read_parquet(out / "flows.parquet")
    assert flows.equals(r.flows)
    assert pl.read_parquet(out / "ports.parquet").height == r.ports.height
    saved = json.loads((out / "summary.json").read_text())
    keys = {
        "status",
        "flows",
        "completed",
        "max_fct_ns",
        "mean_fct_ns",
        "p99_fct_ns",
        "max_slowdown",
        "mean_slowdown",
        "data_packets",
        "retransmits",
        "trims",
        "drops",
        "ecn_marks",
        "max_queue_bytes",
        "events",
        "wall_s",
        "peak_rss_mb",
    }
    assert keys <= saved["summary"].keys()
    assert fabricsim.load(out / "scenario.toml").filled() == r.scenario, "the recorded scenario reruns as is"


def test_incomplete_run_reports_unfinished_flows_as_null():
    s = fabric(kind="permutation", size="8MiB")
    s["stop"] = {"max_time": "30us"}
    r = fabricsim.run(s)
    assert r.summary["status"] == "incomplete"
    assert r.flows["fct_ps"].null_count() == 128
    assert not r.flows["completed"].any()


def test_progress_callback_sees_time_advance():
    seen = []
    fabricsim.run(fabric(kind="permutation", size="1MiB"), progress=seen.append)
    assert seen[-1].flows_done == seen[-1].flow_count == 128
    assert [p.now_ps for p in seen] == sorted(p.now_ps for p in seen)


def test_the_native_results_are_taken_once_and_free_the_run():
    from fabricsim import _core

    sim = _core.Simulation(json.dumps(fabric(kind="permutation", size="64KiB")))
    while sim.step(1_000_000) == "running":
        pass
    flows = sim.results()["flows"]
    assert isinstance(flows, dict) and "fct_ps" in flows
    with pytest.raises(RuntimeError, match="results were taken"):
        sim.results()
    with pytest.raises(RuntimeError, match="results were taken"):
        sim.step(1)


def test_a_run_keeping_some_flow_columns_has_them_as_the_whole_table_and_the_same_summary():
    """`flow_columns` keeps those columns of the flows table, in their declared order, equal to
    the whole table's; every other table and the summary are the same, and what the CLI's
    summary reads (`traffic_table`, `buckets_by_source`) works from its six columns. A name the
    table does not declare is refused before anything runs."""
    from fabricsim.cli import SUMMARY_FLOW_COLUMNS

    s = fabric(kind="permutation", size="1MiB") | {
        "lb": {"kind": "ecmp"},
        "jobs": [{"name": "ar", "collective": "allreduce", "size": "1MiB", "ranks": 16}],
    }
    whole = fabricsim.run(s)
    part = fabricsim.run(s, flow_columns=["slowdown", "traffic", "bytes"])
    assert part.flows.columns == ["bytes", "traffic", "slowdown"]
    assert part.flows.equals(whole.flows.select("bytes", "traffic", "slowdown"))
    assert set(part.flows["traffic"]) == {"background", "allreduce"}
    skip = {"wall_s", "peak_rss_mb"}
    assert {k: v for k, v in part.summary.items() if k not in skip} == {k: v for k, v in whole.summary.items() if k not in skip}
    for table in ("ports", "jobs", "steps", "buckets", "reorder"):
        assert getattr(part, table).equals(getattr(whole, table)), table
    printed = fabricsim.run(s, flow_columns=SUMMARY_FLOW_COLUMNS)
    assert printed.traffic_table().equals(whole.traffic_table())
    assert printed.buckets_by_source().equals(whole.buckets_by_source())
    with pytest.raises(fabricsim.ScenarioError, match=r"flow_columns: got 'traffik'; allowed: the flows table's columns \(.*traffic"):
        fabricsim.run(s | {"stop": {"max_time": "1s"}}, flow_columns=["traffik"])
    with pytest.raises(fabricsim.ArgumentError, match="flow_columns"):
        fabricsim.run(s, flow_columns="bytes")


def test_registry_lists_load_balancers_and_workloads():
    names = {(r["category"], r["name"]) for r in fabricsim.registry()}
    assert {("lb", "ecmp"), ("lb", "ops"), ("workload", "permutation"), ("workload", "flows")} <= names


def test_every_table_has_its_declared_columns_and_missing_values_are_null():
    from fabricsim.results import COLUMNS, schema

    BACKGROUND = "background: a message of the `[workload]`, not of a job"

    r = fabricsim.run({"topology": {"hosts": 16, "radix": 8}, "workload": {"size": "4MiB"}, "stop": {"max_time": "5us"}})
    assert not r.complete
    for table in ("flows", "ports", "reorder", "samples"):
        assert getattr(r, table).schema == schema(table), table
    assert {name for name, *_ in COLUMNS["summary"]} == set(r.summary) - {"peak_rss_mb", "threads", "thread_note", "solo_windows"}
    for name, _, _, null_when, _ in COLUMNS["flows"]:
        # every message started sending at 0 and none completed; none is a job's
        expected = r.flows.height if null_when in ("the message did not complete", BACKGROUND) else 0
        assert r.flows[name].null_count() == expected, f"{name}: null when {null_when or 'never'}"
    assert r.summary["max_slowdown"] is None and r.summary["completed"] == 0


def test_a_go_back_n_reorder_window_absorbs_the_skew_it_covers():
    # one sprayed flow, one of 8 paths 5 us late: about 60 packets overtake each late one
    base = {
        "topology": {"hosts": 16, "radix": 8, "link_latency": "1us", "switch_latency": "0ns"},
        "transport": {"kind": "gbn", "cc": "none", "init_cwnd": "16bdp", "max_cwnd": "16bdp", "rto": "1ms"},
        "switch": {"buffer": "16bdp", "ecn": {"enabled": False}},
        "lb": {"kind": "ops"},
        "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 12, "size": "4MiB"}]},
        "faults": [{"kind": "delay", "link": "leaf0:up0", "extra": "5us"}],
    }
    runs = {
        rb: fabricsim.run(fabricsim.Scenario(base).set("transport.reorder_buffer", rb)).flows.row(0, named=True)
        for rb in ("0B", "64KiB", "1MiB")
    }
    ooo = fabricsim.run(fabricsim.Scenario(base).set("transport.kind", "ooo")).flows.row(0, named=True)
    assert runs["0B"]["discarded"] > 0 and runs["0B"]["retransmits"] > 0
    # 1 MiB = 256 packets: nothing discarded, nothing resent, the out-of-order transport's FCT
    assert runs["1MiB"]["discarded"] == runs["1MiB"]["retransmits"] == 0
    assert runs["1MiB"]["fct_ps"] == ooo["fct_ps"]
    # 64 KiB = 16 packets: in between
    assert runs["1MiB"]["fct_ps"] < runs["64KiB"]["fct_ps"] < runs["0B"]["fct_ps"]
    assert all(r["completed"] and r["delivered_bytes"] == 4 * 2**20 for r in runs.values())


def test_two_random_paths_of_unequal_delay_reorder_the_slow_paths_arrivals():
    # Sprayed at random over two paths, one 5 us (15 packets) longer: every slow-path arrival
    # trails a fast-path packet sent after it, half the arrivals (the Juniper post's test bed
    # measured 25.03 %: docs/nic.md)
    s = {
        "topology": {"hosts": 4, "radix": 4, "link_rate": "100Gbps", "link_latency": "1us", "switch_latency": "0ns"},
        "transport": {"cc": "none", "init_cwnd": "16bdp", "max_cwnd": "16bdp", "rto": "1ms"},
        "switch": {"buffer": "16bdp", "ecn": {"enabled": False}},
        "lb": {"kind": "ops"},
        "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 2, "size": "8MiB"}]},
        "faults": [{"kind": "delay", "link": "leaf0:up1", "extra": "5us"}],
    }
    r = fabricsim.run(s)
    f = r.flows.row(0, named=True)
    late = r.reorder.filter(pl.col("distance") > 0)["arrivals"].sum()
    assert f["out_of_order"] == late and f["retransmits"] == 0
    assert 0.45 < f["out_of_order"] / f["packets"] < 0.55, f
    # a slow-path packet trails the fast path's newest by about 15 packets
    assert 10 <= f["max_reorder"] <= 25
    # one path only (no delay seen): nothing out of order
    assert fabricsim.run(fabricsim.Scenario(s).set("lb.kind", "ecmp")).flows["out_of_order"].to_list() == [0]


def test_a_switch_down_takes_every_link_of_the_switch_and_names_a_bad_switch():
    import pytest
    from fabricsim.errors import ScenarioError

    base = fabricsim.Scenario(fabric(kind="permutation", size="256KiB")).set("lb.kind", "ops")
    # routing already around it (steady phase): nothing crosses spine 1, every flow completes
    steady = base.set("faults", [{"kind": "switch_down", "switch": "spine1", "detection": "0ns", "reconvergence": "0ns"}])
    r = fabricsim.run(steady)
    assert r.complete
    ports = r.ports.filter(
        pl.col("name").str.starts_with("spine1:") | pl.col("name").str.ends_with(":up1") & pl.col("name").str.starts_with("leaf")
    )
    assert ports.height > 0 and ports["bytes"].sum() == 0, ports
    # transient phase (routing not yet aware): the sprayed packets into it are lost
    lossy = fabricsim.run(base.set("faults", [{"kind": "switch_down", "switch": "spine1"}]))
    assert lossy.summary["drops"] > 0
    for bad in ("host3", "spine99"):
        with pytest.raises(ScenarioError, match=r"faults\[0\]\.switch"):
            base.set("faults", [{"kind": "switch_down", "switch": bad}]).validate()


def test_arcane_freezing_parameters_decide_a_persistent_failure_and_bad_values_are_refused():
    # one 8 MiB flow, two or three of its leaf's four uplinks dead for good (routing never notices)
    def run(dead=3, max_time="1s", **lb):
        s = fabricsim.Scenario(
            {
                "topology": {"hosts": 32, "radix": 8},
                "lb": {"kind": "arcane", **lb},
                "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 31, "size": "8MiB"}]},
                "faults": [{"kind": "link_down", "link": f"leaf0:up{i}", "detection": "1s"} for i in range(1, dead + 1)],
                "stop": {"max_time": max_time},
            }
        )
        r = fabricsim.run(s)
        return r.summary["max_slowdown"] if r.complete else float("inf")

    for dead in (2, 3):
        # the default transport and freezing (1 ms): ARCANE and REPS within 5x their ideal, as
        # the reference simulator's REPS (2.3-3.7x and 3.2-3.6x here); oblivious spraying keeps
        # losing a share of its packets and is at least 5x slower or not done in 20 ms
        arcane, reps = run(dead), run(dead, kind="reps")
        assert arcane < 5 and reps < 5, (dead, arcane, reps)
        assert run(dead, max_time="20ms", kind="ops") > 5 * arcane, dead
    default, short_freeze = run(), run(freezing_timeout="100us")
    short_freeze_short_explore = run(freezing_timeout="100us", exit_explore=4)
    # leaving a 100 us freeze explores a BDP into the dead links, during which no timeout
    # re-freezes: the flow stalls; a short exploration keeps it on the EVs that came back
    assert short_freeze > 10 * default, (default, short_freeze)
    assert short_freeze_short_explore < short_freeze / 10, (short_freeze, short_freeze_short_explore)
    for lb, match in (
        ({"kind": "arcane", "exit_explore": 0}, "lb.exit_explore"),
        ({"kind": "ops", "order": "cycle", "evs_size": 48}, "power of two"),
        ({"kind": "ops", "order": "sometimes"}, "order"),
    ):
        with pytest.raises(fabricsim.ScenarioError, match=match):
            fabricsim.Scenario({"lb": lb}).validate()


MACHINE = {"wall_s", "peak_rss_mb", "threads", "thread_note", "solo_windows"}


def test_threads_change_nothing_but_the_machines_figures():
    # a job and a link failure with routing convergence: duties between windows, jobs, notices
    s = fabric(kind="permutation", size="2MiB")
    s["faults"] = [{"kind": "link_down", "link": "leaf0:up1", "start": "5us", "detection": "2us", "reconvergence": "5us"}]
    one, two = fabricsim.run(s, threads=1), fabricsim.run(s, threads=2)
    assert (one.summary["threads"], two.summary["threads"]) == (1, 2)
    for table in ("flows", "ports", "reorder", "samples"):
        assert getattr(one, table).equals(getattr(two, table)), table
    assert {k: v for k, v in one.summary.items() if k not in MACHINE} == {k: v for k, v in two.summary.items() if k not in MACHINE}
    assert one.accounting == two.accounting


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2", True, 2**70])
def test_threads_must_be_a_positive_count(threads):
    with pytest.raises(fabricsim.ScenarioError, match="threads"):
        fabricsim.run(fabric(kind="permutation", size="64KiB"), threads=threads)


@pytest.mark.parametrize("threads", ["auto", None])
def test_auto_runs_a_small_run_on_one_thread(threads):
    r = fabricsim.run(fabric(kind="permutation", size="64KiB"), threads=threads)
    assert r.summary["threads"] == 1 and "thread_note" not in r.summary


_AFFINITY_CHILD = """
import json, os, sys
import fabricsim
from fabricsim.run import cores
if sys.argv[1] == "one":
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
s = json.loads(sys.argv[2])
print(json.dumps([cores(), fabricsim.run(s).summary["threads"]]))
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity (Linux)")
def test_auto_uses_the_cpus_the_process_may_run_on_not_the_machines():
    # 128 flows of 8 MiB (about 3.9 M events, above auto's threshold); the event guard keeps it short
    s = fabric(kind="permutation", size="8MiB")
    s["stop"] = {"max_events": 200_000}
    got = {}
    for how in ("one", "all"):
        proc = subprocess.run([sys.executable, "-c", _AFFINITY_CHILD, how, json.dumps(s)], capture_output=True, text=True, check=True)
        got[how] = json.loads(proc.stdout)
    assert got["one"] == [1, 1], "affinity set to one CPU: auto chooses one thread"
    assert got["all"][0] == cores()
    assert got["all"][1] == min(cores(), 16), "every CPU available (16 leaves at most)"


@pytest.mark.parametrize("threads", ["2", "Auto", "", 1.0, [2]])
def test_threads_is_a_count_or_auto(threads):
    with pytest.raises(fabricsim.ScenarioError, match='"auto" or a count'):
        fabricsim.run(fabric(kind="permutation", size="64KiB"), threads=threads)


def test_a_sweep_keeps_workers_times_threads_within_the_cpus(monkeypatch):
    import importlib

    from fabricsim.sweep import local_workers

    monkeypatch.setattr(importlib.import_module("fabricsim.run"), "cores", lambda: 8)
    assert local_workers(None, 1, 100) == 8
    assert local_workers(None, 2, 100) == 4
    assert local_workers(None, 16, 100) == 1
    assert local_workers(None, 1, 3) == 3, "one per point at most"
    assert local_workers(3, 2, 100) == 3
    with pytest.warns(UserWarning, match="6 workers x 2 threads per point asked with 8 CPUs available: 4 workers run"):
        assert local_workers(6, 2, 100) == 4


def test_a_prepared_run_is_built_once_and_runs_once_as_the_scenario_does():
    s = fabricsim.Scenario(
        {
            "topology": {"hosts": 16, "radix": 8},
            "workload": {"kind": "permutation", "size": "64KiB"},
            "lb": {"kind": "prime"},
            "switch": {"routing": "ecmp"},
        }
    )
    prepared = fabricsim.prepare(s, threads=1)
    # PRIME on ECMP-hashing switches: the warning Scenario.warnings gives, from the same build
    assert prepared.warnings == s.warnings() and prepared.warnings
    assert fabricsim.run(prepared).flows.equals(fabricsim.run(s, threads=1).flows)
    with pytest.raises(fabricsim.ArgumentError):
        fabricsim.run(prepared)
    with pytest.raises(fabricsim.ScenarioError):
        fabricsim.prepare(s.set("topology.hosts", 17))


def test_a_table_as_pandas_names_the_extra_that_installs_what_it_lacks(monkeypatch):
    """Issue 68: polars' own to_pandas() without pyarrow names only the module; Results.to_pandas
    says which extra installs it."""
    import builtins

    from fabricsim.errors import ArgumentError, MissingDependency

    r = fabricsim.run({"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "permutation", "size": "4KiB"}})
    real = builtins.__import__

    def without(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name in ("pandas", "pyarrow"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without)
    with pytest.raises(MissingDependency) as e:
        r.to_pandas("flows")
    assert "needs pandas" in str(e.value) and "fabricsim[pandas]" in str(e.value)
    monkeypatch.setattr(builtins, "__import__", real)
    with pytest.raises(ArgumentError):
        r.to_pandas("flow")
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        return
    assert len(r.to_pandas("flows")) == r.flows.height
