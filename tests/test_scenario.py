from __future__ import annotations

import json
import re

import fabricsim
import pytest
from fabricsim import Scenario, ScenarioError
from fabricsim.scenario import parse_value


def test_load_set_and_fill_defaults(demo_path):
    s = fabricsim.load(demo_path)
    assert s["topology.hosts"] == 128
    t = s.set("lb.kind", "ecmp").set("workload.size", "1MiB")
    assert t["lb.kind"] == "ecmp" and s["lb.kind"] == "ops", "set returns a copy"
    filled = Scenario({}).filled()
    # DESIGN.md defaults, all written out
    assert filled["topology"]["link_rate"] == "400Gbps"
    assert filled["topology"]["link_latency"] == "500ns"
    assert filled["topology"]["switch_latency"] == "500ns"
    assert filled["topology"]["tier_link_rates"] == ["400Gbps", "400Gbps"]
    assert filled["transport"] == {
        "kind": "ooo",
        "mtu": "4160B",
        "header": "64B",
        "ack_every": 1,
        "ack_evs": "trigger",
        "ack_on_ecn": False,
        "ack_request": False,
        "rto": "70us",
        "rto_min": "70us",
        "reorder_buffer": "0B",
        "loss_detection": "rto",
        "cc": "dctcp",
        "init_cwnd": "auto",
        "max_cwnd": "auto",
        "message_overhead": "0ps",
        "message_gap": "0ps",
        "connections": "per_message",
    }
    assert filled["switch"]["ecn"] == {"enabled": True, "kmin": "0.2bdp", "kmax": "0.8bdp", "mark": "dequeue"}
    assert filled["lb"] == {"kind": "ops", "evs_size": 65536, "order": "random"}


@pytest.mark.parametrize(
    ("text", "value"),
    [("3", 3), ("true", True), ("ecmp", "ecmp"), ("2MiB", "2MiB"), ('"x y"', "x y"), ("[1, 2]", [1, 2])],
)
def test_parse_value(text, value):
    assert parse_value(text) == value


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"lb": {"kind": "magic"}}, "lb.kind", ["magic", "ecmp", "ops"]),
        ({"workload": {"kind": "permutation", "size": "-2MiB"}}, "workload.size", ["-2MiB", "MiB"]),
        ({"workload": {"kind": "permutation", "size": 4096}}, "workload.size", ["4096", "unit"]),
        ({"topology": {"hosts": 100}}, "topology.hosts", ["100", "multiple of 8"]),
        ({"switch": {"ecn": {"kmin": "0.9bdp", "kmax": "0.1bdp"}}}, "switch.ecn.kmin", ["0.9bdp", "kmax"]),
        ({"workload": {"kind": "flows", "flows": [{"src": 0, "dst": 300, "size": "1MiB"}]}}, "workload.flows[0].dst", ["300", "0 to 127"]),
        ({"transport": {"mtu": "4160B", "colour": "red"}}, "transport.colour", ["colour", "mtu"]),
        ({"lb": {"kind": "ops", "evs": 8}}, "lb.evs", ["evs", "evs_size"]),
        # a misspelled field of a kind-tagged table lists kind among the allowed ones
        ({"lb": {"kidn": "ops"}}, "lb.kidn", ["unknown field", "allowed: kind, evs_size, order"]),
        ({"faults": [{"kin": "link_down"}]}, "faults[0].kind", ["missing", "link_down"]),
        # the scenario's words, never Rust's types or range notation
        ({"topology": {"hosts": 1.5}}, "topology.hosts", ["got 1.5", "a whole number from 0 to 4294967295"]),
        ({"jobs": [{"collective": "allreduce", "size": "1MiB", "ranks": "x"}]}, "jobs[0].ranks", ['got "x"', "whole number"]),
        ({"topology": {"radix": True}}, "topology.radix", ["got true", "whole number"]),
        ({"lb": {"kind": "arcane", "exit_explore": 2.5}}, "lb.exit_explore", ["got 2.5", "whole number", '"auto"']),
        # a fixed RTO under the base RTT (here a link latency in ms, not us) is refused, not run
        ({"topology": {"link_latency": "1ms"}}, "transport.rto", ["got 70us", "base RTT (8003.338us)", "link_latency (1ms"]),
    ],
)
def test_bad_input_names_field_value_and_allowed(change, field, words):
    with pytest.raises(ScenarioError) as info:
        Scenario(change).validate()
    e = info.value
    assert isinstance(e, ValueError)
    assert e.field == field, str(e)
    for w in words:
        assert w in str(e), (w, str(e))
    assert not re.search(r"\b[ui](8|16|32|64)\b|\d\.\.=?\d|`", str(e)), str(e)


def test_flows_from_csv(tmp_path):
    (tmp_path / "flows.csv").write_text("src,dst,size,start\n0,9,1MiB,0us\n3,100,64KiB,5us\n")
    (tmp_path / "s.toml").write_text('[workload]\nkind = "flows"\nfile = "flows.csv"\n')
    r = fabricsim.run(fabricsim.load(tmp_path / "s.toml"))
    assert r.flows["bytes"].to_list() == [1 << 20, 64 << 10]
    assert r.flows["start_ps"].to_list() == [0, 5_000_000]
    assert r.complete


def test_a_trace_with_dependencies_from_csv_and_json(tmp_path):
    # message 2 waits for 0 and 1 plus 3 us of compute; the same trace as JSON runs the same
    (tmp_path / "t.csv").write_text("id,src,dst,size,after,delay\n0,0,9,64KiB,,\n1,20,9,64KiB,,\n2,9,40,1MiB,0;1,3us\n")
    rows = [{"id": 0, "src": 0, "dst": 9, "size": "64KiB"}, {"id": 1, "src": 20, "dst": 9, "size": "64KiB"}]
    rows.append({"id": 2, "src": 9, "dst": 40, "size": "1MiB", "after": [0, 1], "delay": "3us"})
    (tmp_path / "t.json").write_text(json.dumps(rows))
    results = []
    for name in ("t.csv", "t.json"):
        (tmp_path / "s.toml").write_text(f'[workload]\nkind = "flows"\nfile = "{name}"\n')
        r = fabricsim.run(fabricsim.load(tmp_path / "s.toml"))
        assert r.complete
        f = r.flows
        assert f["ready_ps"][2] == max(f["end_ps"][0], f["end_ps"][1]) + 3_000_000
        results.append(f)
    assert results[0].equals(results[1])


@pytest.mark.parametrize(
    ("csv", "field"),
    [
        ("id,src,dst,size,after\n0,0,9,1KiB,\n1,1,9,1KiB,5\n", "workload.file[1].after[0]"),
        ("src,dst,size,after\n0,9,1KiB,x\n", "workload.file[0].after"),
        ("src,dst,size,colour\n0,9,1KiB,red\n", "workload.file"),
    ],
)
def test_a_bad_trace_names_row_and_column(tmp_path, csv, field):
    (tmp_path / "t.csv").write_text(csv)
    (tmp_path / "s.toml").write_text('[workload]\nkind = "flows"\nfile = "t.csv"\n')
    with pytest.raises(ScenarioError) as e:
        fabricsim.load(tmp_path / "s.toml").validate()
    assert e.value.field == field


def test_a_csv_reads_as_its_json_and_once_per_scenario(tmp_path, monkeypatch):
    """The CSV reader builds the core's JSON column by column (no Python object per row): the
    same flows as the JSON file, padded cells, every optional column, a quote escaped; and a
    scenario reads its file once for its check, its warnings and its run."""
    from fabricsim.io import flows as flow_files

    (tmp_path / "t.csv").write_text("src,dst,size,start,class,id,after,delay\n 0 , 9 ,64KiB,,, 7,,\n20,9,1MiB,2us,0,8, 7; 7 ,1us\n")
    rows = [
        {"src": 0, "dst": 9, "size": "64KiB", "id": 7},
        {"src": 20, "dst": 9, "size": "1MiB", "start": "2us", "class": 0, "id": 8, "after": [7, 7], "delay": "1us"},
    ]
    assert json.loads(flow_files.flow_csv_json(tmp_path / "t.csv")) == rows
    (tmp_path / "q.csv").write_text('src,dst,size\n0,9,"1""MiB"\n')
    assert json.loads(flow_files.flow_csv_json(tmp_path / "q.csv")) == [{"src": 0, "dst": 9, "size": '1"MiB'}]

    reads = []
    real = flow_files.flow_csv_json
    monkeypatch.setattr(flow_files, "flow_csv_json", lambda path: reads.append(path) or real(path))
    (tmp_path / "s.toml").write_text('[workload]\nkind = "flows"\nfile = "t.csv"\n')
    s = fabricsim.load(tmp_path / "s.toml")
    assert s.validate() == [] and s.warnings() == []
    r = fabricsim.run(s)
    assert r.complete and len(reads) == 1
    assert r.scenario["workload"]["flows"][1]["after"] == [7, 7]


def test_csv_with_a_bad_row_is_a_scenario_error(tmp_path):
    (tmp_path / "flows.csv").write_text("src,dst\n0,9\n")
    (tmp_path / "s.toml").write_text('[workload]\nkind = "flows"\nfile = "flows.csv"\n')
    with pytest.raises(ScenarioError, match="size"):
        fabricsim.load(tmp_path / "s.toml").validate()


def test_a_scenario_is_resolved_once_for_its_warnings_its_estimate_and_its_checks(monkeypatch):
    import fabricsim.readings as readings
    from fabricsim import _core

    # the core reads a scenario's text once (a Parsed) for its survey and its build; the
    # surveys are kept by text and columns
    calls = []
    real = _core.Parsed

    def counted(text: str):  # type: ignore[no-untyped-def]
        calls.append(text)
        return real(text)

    monkeypatch.setattr(_core, "Parsed", counted)
    monkeypatch.setattr(readings, "_SURVEYS", {})
    monkeypatch.setattr(readings, "_PARSED", {})
    surveys = readings._SURVEYS
    s = Scenario({"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}})
    s.validate()
    s.copy().warnings()
    events, memory = s.estimate()
    assert len(calls) == 1 and len(surveys) == 1 and events > 0 and memory > 0
    # issue 68: the estimate says what its numbers are
    assert s.estimate() == fabricsim.Estimate(events=events, memory_bytes=memory) and s.estimate().memory_bytes == memory
    # another scenario is resolved for itself
    s.set("workload.size", "128KiB").estimate()
    assert len(calls) == 2 and len(surveys) == 2
    # a run that keeps a few of the flows table's columns needs less, and the run's own build
    # (which stop.max_memory checks) counts what the survey counts
    few = s.estimate(["bytes", "slowdown"])
    # (another survey, of the reading kept)
    assert len(calls) == 2 and len(surveys) == 3 and few.events == events and few.memory_bytes < memory
    # the build takes the reading the surveys made, and uses it up
    assert fabricsim.prepare(s, 1, ["bytes", "slowdown"])._built().memory_estimate == few.memory_bytes
    assert len(calls) == 2
    assert fabricsim.prepare(s, 1)._built().memory_estimate == memory
    assert len(calls) == 3


def test_what_files_put_in_is_checked_and_the_scenario_keeps_its_own_tables(tmp_path):
    """The resolve copies the tables it reads files into, not what they hold: reading a scenario
    changes none of its own values, what it returns is its own, and a value a file put in is
    checked as the scenario's own are (a NaN from a JSON flows file is refused naming it)."""
    import json as _json

    (tmp_path / "f.json").write_text('[{"src": 0, "dst": 1, "size": "1KiB", "start": NaN}]')
    s = Scenario({"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "flows", "file": "f.json"}}, base_dir=tmp_path)
    before = _json.dumps(s.data, sort_keys=True)
    with pytest.raises(ScenarioError) as e:
        s.to_json()
    assert e.value.field.startswith("workload.flows[0].start") and "finite" in str(e.value), e.value
    assert _json.dumps(s.data, sort_keys=True) == before
    (tmp_path / "f.json").write_text('[{"src": 0, "dst": 1, "size": "1KiB"}]')
    flows = [{"src": 1, "dst": 2, "size": "2KiB"}]
    s = Scenario({"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "flows", "flows": flows}}, base_dir=tmp_path)
    got = s.resolved()
    got["workload"]["flows"][0]["size"] = "9KiB"
    got["topology"]["hosts"] = 32
    assert s.data["workload"]["flows"][0]["size"] == "2KiB" and s.data["topology"]["hosts"] == 16
    s.to_json()
    assert "stop" not in s.data and s.data["workload"] == {"kind": "flows", "flows": flows}
