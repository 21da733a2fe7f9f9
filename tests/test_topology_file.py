"""Topology files: a fabric read from a file (TOML/JSON graph, NetworkX edge list, GraphML) is
the fabric it describes, and a bad file is refused naming the file and its line or node."""

import json

import fabricsim
import pytest
from fabricsim.cli import app
from fabricsim.errors import ScenarioError
from typer.testing import CliRunner

WORKLOAD = {"kind": "permutation", "size": "256KiB"}


def leaf_spine_edges(leaves: int = 4, spines: int = 2, per_leaf: int = 2) -> list[str]:
    lines = [f"h{leaf * per_leaf + i} leaf{leaf}" for leaf in range(leaves) for i in range(per_leaf)]
    return lines + [f"leaf{leaf} spine{s} {{'rate': '400Gbps', 'latency': '500ns'}}" for leaf in range(leaves) for s in range(spines)]


def test_a_fat_tree_exported_and_read_back_runs_the_same(tmp_path):
    tree = {"topology": {"tiers": 3, "hosts": 32, "radix": 8}, "workload": WORKLOAD, "lb": {"kind": "ops"}}
    r = CliRunner().invoke(app, ["topology", str(write(tmp_path / "tree.toml", tree)), "--export", str(tmp_path / "fabric.toml")])
    assert r.exit_code == 0, r.output
    graph = fabricsim.Scenario({"topology": {"file": "fabric.toml"}, "workload": WORKLOAD, "lb": {"kind": "ops"}}, base_dir=tmp_path)
    a, b = fabricsim.run(tree).flows, fabricsim.run(graph).flows
    assert a.equals(b)
    assert graph.filled()["topology"]["kind"] == "graph"


def test_a_fabric_of_several_ports_a_host_exported_and_read_back_runs_the_same(tmp_path):
    # GPUs of two NICs on rails, and two planes: the graph's hosts name their GPU
    jobs = [{"name": "ar", "collective": "allreduce", "size": "1MiB", "ranks": 16}]
    for topo in [
        {"hosts": 16, "radix": 8, "nics_per_server": 4, "nics_per_gpu": 2, "rails": True},
        {"kind": "multi_plane", "hosts": 16, "radix": 8},
    ]:
        tree = {"topology": topo, "jobs": jobs}
        path = write(tmp_path / "f.toml", tree)
        r = CliRunner().invoke(app, ["topology", str(path), "--export", str(tmp_path / "g.toml")])
        assert r.exit_code == 0 and "2 a host (planes, or a GPU's NICs), 32 in all" in r.output, r.output
        # the summary counts GPUs, and says how many ports each has; so does the graph read back
        for source in (path, tmp_path / "g.toml"):
            r = CliRunner().invoke(app, ["topology", str(source), "--json"])
            assert r.exit_code == 0 and json.loads(r.output)["hosts"] == 16 and json.loads(r.output)["ports_per_host"] == 2, r.output
        graph = fabricsim.Scenario({"topology": {"file": "g.toml"}, "jobs": jobs}, base_dir=tmp_path)
        assert graph.filled()["topology"]["nics_per_server"] == topo.get("nics_per_server", 1)
        a, b = fabricsim.run(tree), fabricsim.run(graph)
        assert a.flows.equals(b.flows) and a.jobs.equals(b.jobs)
        assert a.flows.height == 2 * fabricsim.run(tree | {"topology": topo | {"nics_per_gpu": 1, "kind": "fat_tree"}}).flows.height


def write(path, data):
    import tomli_w

    path.write_text(tomli_w.dumps(data))
    return path


def test_an_edge_list_and_graphml_are_read_hosts_by_shape_or_kind(tmp_path):
    (tmp_path / "f.edgelist").write_text("# a leaf-spine\n" + "\n".join(leaf_spine_edges()) + "\n")
    s = fabricsim.Scenario({"topology": {"file": "f.edgelist"}, "workload": WORKLOAD}, base_dir=tmp_path)
    r = fabricsim.run(s)
    assert r.summary["completed"] == 8
    # one flow alone meets its ideal exactly, over the file's links
    lone = s.set("workload", {"kind": "flows", "flows": [{"src": 0, "dst": 7, "size": "1MiB"}]})
    flow = fabricsim.run(lone).flows.row(0, named=True)
    assert flow["fct_ps"] == flow["ideal_fct_ps"] and flow["path_links"] == 4
    # the same fabric in GraphML, a host marked by its kind even with two links drawn apart
    nodes = [f'<node id="h{i}"><data key="k">host</data></node>' for i in range(8)]
    edges = [f'<edge source="{line.split()[0]}" target="{line.split()[1]}"/>' for line in leaf_spine_edges()]
    (tmp_path / "f.graphml").write_text(
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"><key id="k" for="node" attr.name="kind" attr.type="string"/>'
        f'<graph edgedefault="undirected">{"".join(nodes)}{"".join(edges)}</graph></graphml>'
    )
    g = fabricsim.run(s.set("topology.file", "f.graphml"))
    assert g.flows.equals(r.flows)


@pytest.mark.parametrize(
    ("content", "suffix", "says"),
    [
        ("h0 leaf0\nleaf0\n", ".edgelist", "f.edgelist:2"),
        ("h0 leaf0 rate=4\n", ".edgelist", "f.edgelist:1"),
        ('<graphml><graph><node id="a"><data key="kind">router</data></node></graph></graphml>', ".graphml", "node 'a'"),
        ("links = 3\n", ".toml", "no list of links"),
    ],
)
def test_a_bad_file_is_refused_naming_the_line_or_node(tmp_path, content, suffix, says):
    (tmp_path / f"f{suffix}").write_text(content)
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"topology": {"file": f"f{suffix}"}}, base_dir=tmp_path).filled()
    assert e.value.field == "topology.file" and says in str(e.value)


def test_the_core_names_the_link_that_names_no_node(tmp_path):
    (tmp_path / "f.toml").write_text(
        'hosts = [{name = "h0"}, {name = "h1"}]\nswitches = [{name = "s0"}]\nlinks = [{a = "h0", b = "s0"}, {a = "h1", b = "s9"}]\n'
    )
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"topology": {"file": "f.toml"}}, base_dir=tmp_path).filled()
    # named by the file it came from and the link's ends, not the graph the file became
    assert e.value.field == "topology.file.links[1].b" and '"s9"' in str(e.value) and "the link h1 - s9" in str(e.value)


def test_the_topology_command_reads_a_topology_file_and_draws_it(tmp_path):
    (tmp_path / "f.edges").write_text("\n".join(leaf_spine_edges()) + "\n")
    r = CliRunner().invoke(app, ["topology", str(tmp_path / "f.edges"), "--json", "--draw", str(tmp_path / "f.png")])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    assert summary["hosts"] == 8 and summary["diameter"] == 4 and summary["links"] == [8, 8]
    assert (tmp_path / "f.png").stat().st_size > 1000


def test_a_fifo_or_a_device_is_refused_before_it_is_read(tmp_path):
    import os

    os.mkfifo(tmp_path / "f.edgelist")
    for name in ("f.edgelist", "/dev/zero"):
        with pytest.raises(ScenarioError) as e:
            fabricsim.Scenario({"topology": {"file": name}}, base_dir=tmp_path).filled()
        assert e.value.field == "topology.file" and ("is a FIFO" in str(e.value) or "is a device" in str(e.value))


def test_a_graph_whose_hosts_name_their_servers_fills_nics_per_server(tmp_path):
    rails = {"topology": {"hosts": 64, "radix": 16, "nics_per_server": 4, "rails": True}, "workload": WORKLOAD}
    r = CliRunner().invoke(app, ["topology", str(write(tmp_path / "rails.toml", rails)), "--export", str(tmp_path / "g.json")])
    assert r.exit_code == 0, r.output
    graph = fabricsim.Scenario({"topology": {"file": "g.json"}, "workload": WORKLOAD}, base_dir=tmp_path)
    assert graph.filled()["topology"]["nics_per_server"] == 4
    # the same run: host ids and servers kept through the file
    assert fabricsim.run(graph).flows.equals(fabricsim.run(rails).flows)


def test_the_files_a_scenario_names_are_read_by_one_suffix_table(tmp_path):
    """Every format of the table is read by the module it names, each suffix by one format of a
    field, and a topology file of no format is refused listing the table's formats."""
    import importlib
    from pathlib import Path

    from fabricsim.io.formats import FORMATS, allowed, format_of

    for f in FORMATS:
        assert importlib.import_module(f"fabricsim.io.{f.module}")
        for suffix in f.suffixes:
            assert format_of(f.field, Path(f"x{suffix.upper()}")) == f
    for field in {f.field for f in FORMATS}:
        mine = [s for f in FORMATS if f.field == field for s in f.suffixes]
        assert len(mine) == len(set(mine)), field
    assert format_of("topology.file", Path("x.csv")) is None
    (tmp_path / "x.csv").write_text("a,b\n")
    scenario = fabricsim.Scenario({"topology": {"kind": "graph", "file": "x.csv"}}, base_dir=tmp_path)
    with pytest.raises(ScenarioError) as e:
        scenario.validate()
    assert e.value.field == "topology.file" and allowed("topology.file") in str(e.value), e.value
    assert ".graphml" in allowed("topology.file") and ".goal" in allowed("workload.file")
