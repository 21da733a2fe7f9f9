"""Files of every format fabricsim reads, as a hostile campaign wrote them (issue 61): each is
refused before it expands, naming the file and the place, never a traceback; or read as its
tool means it."""

from __future__ import annotations

import time
from pathlib import Path

import fabricsim
import pytest
from fabricsim.errors import ScenarioError
from fabricsim.io.topology_file import read_topology

ROOT = Path(__file__).resolve().parent.parent

#: A YAML "billion laughs": 12 lines whose aliases expand to 10^9 items.
ALIAS_BOMB = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(8)]
    + ["devices: [*i]", "instances: []", "links: []"]
)


def refused(path: Path, says: str) -> ScenarioError:
    t0 = time.monotonic()
    with pytest.raises(ScenarioError) as e:
        read_topology(path)
    assert says in str(e.value) and str(path) in str(e.value), str(e.value)
    assert time.monotonic() - t0 < 5, "refused before anything expands it"
    return e.value


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path: Path):
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB + "\n")
    assert len(ALIAS_BOMB.splitlines()) == 12
    e = refused(path, "expands to more than")
    assert "aliases" in str(e) and e.field == "topology.file"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("graph.json", '{"links": ' + "[" * 50_000 + "]" * 50_000 + "}"),
        ("infra.json", '{"devices": ' + "[" * 50_000 + "]" * 50_000 + ', "instances": []}'),
        ("infra.yaml", "devices: " + "[" * 50_000 + "]" * 50_000 + "\ninstances: []\n"),
        ("shallow.json", '{"links": [' + "[" * 100 + "]" * 100 + "]}"),
    ],
)
def test_deep_nesting_is_refused_naming_the_file(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    refused(path, "nested")


def test_an_integer_of_thousands_of_digits_in_a_graph_is_refused(tmp_path: Path):
    path = tmp_path / "graph.json"
    path.write_text('{"links": [{"a": "h0", "b": "s", "cost": ' + "9" * 5000 + "}]}")
    refused(path, "digits")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("num_ranks 2\nrank 0 {\nsend " + "9" * 5000 + "b to 1\n}\nrank 1 {\nrecv 8b from 0\n}\n", "size of 5000 digits"),
        ("num_ranks 1\nrank 0 {\ncalc 5 cpu " + "9" * 5000 + "\n}\n", "cpu of 5000 digits"),
        ("num_ranks 1\nrank 0 {\ncalc " + "9" * 5000 + "\n}\n", "calc of 5000 digits"),
    ],
)
def test_goal_numbers_of_thousands_of_digits_are_refused_naming_the_line(tmp_path: Path, text: str, says: str):
    (tmp_path / "bad.goal").write_text(text)
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"workload": {"kind": "flows", "file": "bad.goal"}}, tmp_path).validate()
    assert e.value.field == "workload.file[line 3]" and says in str(e.value), str(e.value)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (
            "Nodes 4\nTriggers 1\nConnections 1\n0->1 start 0 size 100 recv_done_trigger 1\ntrigger id " + "7" * 5000 + " oneshot\n",
            "workload.file[line 5].id",
        ),
        ("Nodes " + "1" + "0" * 23 + "\nConnections 1\n0->1 start 0 size 100\n", "workload.file[line 1].Nodes"),
    ],
)
def test_htsim_numbers_beyond_u64_are_refused_naming_the_line(tmp_path: Path, text: str, field: str):
    (tmp_path / "bad.cm").write_text(text)
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"workload": {"kind": "flows", "file": "bad.cm"}}, tmp_path).validate()
    assert e.value.field == field and "at most 19 digits" in str(e.value), str(e.value)


def test_an_edge_list_that_repeats_a_line_is_refused_not_read_as_a_switch(tmp_path: Path):
    # h0 would have two links, so it would become a switch: NetworkX keeps one edge of a pair
    (tmp_path / "f.edgelist").write_text("h0 s0\nh1 s0\nh0 s0\n")
    e = refused(tmp_path / "f.edgelist", "f.edgelist:3: the link h0 - s0 again (first at")
    assert "f.edgelist:1" in str(e)


def test_a_cost_in_another_scripts_digits_is_not_read_as_a_number(tmp_path: Path):
    (tmp_path / "f.edgelist").write_text("h0 s0\nh1 s1\ns0 s1 {'cost': '\u0663'}\n")
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"topology": {"file": "f.edgelist"}}, base_dir=tmp_path).filled()
    assert "cost" in e.value.field and "\u0663" in str(e.value), (e.value.field, str(e.value))


def test_unknown_link_attributes_are_refused_by_name_and_fnss_units_are_read(tmp_path: Path):
    (tmp_path / "f.edgelist").write_text("h0 s0\nh1 s0 {'weight': 2}\n")
    refused(tmp_path / "f.edgelist", "f.edgelist:2: unknown link attribute 'weight'; allowed: rate, latency, cost")
    keys = (
        '<key id="cu" for="graph" attr.name="capacity_unit" attr.type="string"/>'
        '<key id="du" for="graph" attr.name="delay_unit" attr.type="string"/>'
        '<key id="c" for="edge" attr.name="capacity" attr.type="double"/>'
        '<key id="d" for="edge" attr.name="delay" attr.type="double"/>'
    )
    edges = "".join(f'<edge source="h{i}" target="s"><data key="c">100</data><data key="d">0.5</data></edge>' for i in range(2))
    nodes = '<node id="h0"/><node id="h1"/><node id="s"/>'
    graphml = (
        f'<graphml xmlns="http://graphml.graphdrawing.org/xmlns">{keys}<graph edgedefault="undirected">'
        f'<data key="cu">Gbps</data><data key="du">us</data>{nodes}{edges}</graph></graphml>'
    )
    (tmp_path / "fnss.graphml").write_text(graphml)
    graph = read_topology(tmp_path / "fnss.graphml")
    assert graph["links"][0] == {"a": "h0", "b": "s", "rate": "100Gbps", "latency": "0.5us"}
    (tmp_path / "nounit.graphml").write_text(graphml.replace('<data key="du">us</data>', ""))
    refused(tmp_path / "nounit.graphml", "delay '0.5' cannot be read as its latency")
    (tmp_path / "other.graphml").write_text(graphml.replace('attr.name="delay"', 'attr.name="LinkLabel"'))
    refused(tmp_path / "other.graphml", "unknown link attribute 'LinkLabel'")
    # issue 68: an edge is named by the file's own place, its line and its id
    lines = graphml.replace("<edge ", '\n<edge id="e{}" ').replace("</graph>", "\n</graph>")
    lines = lines.format(*range(lines.count("{}")))
    last = '<data key="d">0.5</data></edge>\n</graph>'
    (tmp_path / "lines.graphml").write_text(lines.replace(last, last.replace("0.5", "x")))
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"topology": {"kind": "graph", "file": "lines.graphml"}}, tmp_path).validate()
    assert "lines.graphml:3: edge e1 (h1 - s)" in str(e.value), str(e.value)
    (tmp_path / "lines.graphml").write_text(lines.replace('source="h1" target="s"', 'source="h1"'))
    refused(tmp_path / "lines.graphml", "lines.graphml:3: edge e1 lacks a source or target")


def test_an_inline_graph_beside_a_different_file_is_refused(tmp_path: Path):
    (tmp_path / "f.edgelist").write_text("h0 s0\nh1 s0\nh2 s0\n")
    same = {"file": "f.edgelist", "kind": "graph"}
    same["graph"] = read_topology(tmp_path / "f.edgelist")
    fabricsim.Scenario({"topology": same}, base_dir=tmp_path).validate()  # as a run records it
    other = dict(
        same,
        graph={"hosts": [{"name": "a"}, {"name": "b"}], "switches": [{"name": "x"}], "links": [{"a": "a", "b": "x"}, {"a": "b", "b": "x"}]},
    )
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"topology": other}, base_dir=tmp_path).validate()
    assert e.value.field == "topology.file" and "differs" in str(e.value)


def test_the_cores_refusal_of_a_file_entry_names_the_file_and_its_line(tmp_path: Path):
    # a link of an edge list: its line; of InfraGraph: its ends and the file
    (tmp_path / "f.edgelist").write_text("h0 s0\nh1 s0 {'rate': '0Gbps'}\n")
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"topology": {"file": "f.edgelist"}}, base_dir=tmp_path).filled()
    assert e.value.field == "topology.file.links[1].rate" and "the link h1 - s0 (" in str(e.value) and "f.edgelist:2" in str(e.value)
    text = (ROOT / "scenarios" / "infragraph_rails_16.yaml").read_text()
    assert "gigabits_per_second: 800}" in text
    (tmp_path / "ig.yaml").write_text(text.replace("gigabits_per_second: 800}", "gigabits_per_second: 0}", 1))
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"topology": {"file": "ig.yaml"}}, base_dir=tmp_path).filled()
    assert e.value.field.startswith("topology.file.links[") and "ig.yaml" in str(e.value) and "the link " in str(e.value), str(e.value)
    # an htsim connection's start the core refuses: the matrix's line
    (tmp_path / "m.cm").write_text("Nodes 4\nConnections 2\n0->1 start 0 size 100\n\n1->2 start 1e30 size 100\n")
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"workload": {"kind": "flows", "file": "m.cm"}}, base_dir=tmp_path).filled()
    assert e.value.field == "workload.file[line 5].start" and "m.cm" in str(e.value), (e.value.field, str(e.value))
