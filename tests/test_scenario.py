from __future__ import annotations

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
        "rto": "70us",
        "loss_detection": "rto",
        "cc": "dctcp",
        "init_cwnd": "auto",
        "max_cwnd": "auto",
    }
    assert filled["switch"]["ecn"] == {"enabled": True, "kmin": "0.2bdp", "kmax": "0.8bdp", "mark": "dequeue"}
    assert filled["lb"] == {"kind": "ops", "evs_size": 65536}


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
        ({"workload": {"kind": "flows", "flows": [{"src": 0, "dst": 300, "size": "1MiB"}]}}, "workload.flows[0].dst", ["300", "0..128"]),
        ({"transport": {"mtu": "4160B", "colour": "red"}}, "transport.colour", ["colour", "mtu"]),
        ({"lb": {"kind": "ops", "evs": 8}}, "lb.evs", ["evs", "evs_size"]),
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


def test_flows_from_csv(tmp_path):
    (tmp_path / "flows.csv").write_text("src,dst,size,start\n0,9,1MiB,0us\n3,100,64KiB,5us\n")
    (tmp_path / "s.toml").write_text('[workload]\nkind = "flows"\nfile = "flows.csv"\n')
    r = fabricsim.run(fabricsim.load(tmp_path / "s.toml"))
    assert r.flows["bytes"].to_list() == [1 << 20, 64 << 10]
    assert r.flows["start_ps"].to_list() == [0, 5_000_000]
    assert r.complete


def test_csv_with_a_bad_row_is_a_scenario_error(tmp_path):
    (tmp_path / "flows.csv").write_text("src,dst\n0,9\n")
    (tmp_path / "s.toml").write_text('[workload]\nkind = "flows"\nfile = "flows.csv"\n')
    with pytest.raises(ScenarioError, match="size"):
        fabricsim.load(tmp_path / "s.toml").validate()
