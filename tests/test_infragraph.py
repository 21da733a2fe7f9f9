"""InfraGraph files (docs/topologies.md, "InfraGraph"): the package's own Clos blueprint read by
fabricsim is the fat tree the generator builds, flow for flow; a nested NIC device's port is a
host; a bad or oversized file is refused naming the file and what is wrong, before anything
expands it."""

import time
from pathlib import Path

import fabricsim
import pytest
import yaml
from fabricsim.errors import MissingDependency, ScenarioError
from fabricsim.io.topology_file import read_topology
from infragraph import Infrastructure
from infragraph.blueprints.devices.generic.generic_switch import Switch
from infragraph.blueprints.devices.generic.server import Server
from infragraph.blueprints.fabrics.clos_fat_tree_fabric import ClosFatTreeFabric

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "infragraph_rails_16.yaml"


def clos(tmp_path: Path, suffix: str = ".yaml") -> Path:
    """InfraGraph's 2-level Clos of 8-port switches and servers of 2 NICs, at 400 Gb/s."""
    fabric = ClosFatTreeFabric(Switch(port_count=8), Server(npu_factor=1), 2, [400, 400])
    path = tmp_path / f"clos{suffix}"
    path.write_text(fabric.serialize(encoding=Infrastructure.JSON if suffix == ".json" else Infrastructure.YAML))
    return path


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_the_packages_clos_blueprint_is_the_fat_tree_flow_for_flow(tmp_path, suffix):
    path = clos(tmp_path, suffix)
    graph = read_topology(path)
    assert (len(graph["hosts"]), len(graph["switches"]), len(graph["links"])) == (32, 12, 64)
    assert graph["hosts"][:2] == [{"name": "server.0.nic.0", "server": 0}, {"name": "server.0.nic.1", "server": 0}]
    assert {link["rate"] for link in graph["links"]} == {"400Gbps"}
    base = {"workload": {"kind": "permutation", "size": "1MiB"}, "lb": {"kind": "ecmp"}, "seed": 3}
    read = fabricsim.Scenario({**base, "topology": {"file": path.name}}, base_dir=tmp_path)
    tree = {**base, "topology": {"hosts": 32, "radix": 8, "tiers": 2, "nics_per_server": 2, "link_rate": "400Gbps"}}
    assert read.filled()["topology"]["nics_per_server"] == 2
    a, b = fabricsim.run(read).flows, fabricsim.run(tree).flows
    assert a["fct_ps"].n_unique() > 1, "ECMP collides somewhere, so port order matters"
    assert a.equals(b)


def test_a_nested_nic_devices_port_is_a_host_and_links_keep_their_rate_and_latency():
    graph = read_topology(EXAMPLE)
    assert len(graph["hosts"]) == 16 and [s["name"] for s in graph["switches"]] == ["leaf.0", "leaf.1", "spine.0", "spine.1"]
    assert graph["hosts"][1] == {"name": "server.0.nic400.1.port.0", "server": 0}
    first, last = graph["links"][0], graph["links"][-1]
    assert first == {"a": "server.0.nic400.0.port.0", "b": "leaf.0", "rate": "400Gbps", "latency": "500ns"}
    assert last == {"a": "leaf.1", "b": "spine.1", "rate": "800Gbps", "latency": "1us"}
    # a lone flow between rails crosses a spine at exactly its ideal
    s = fabricsim.Scenario(
        {"topology": {"file": EXAMPLE.name}, "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 3, "size": "1MiB"}]}},
        base_dir=EXAMPLE.parent,
    )
    flows = fabricsim.run(s).flows
    assert flows["path_links"][0] == 4 and flows["fct_ps"][0] == flows["ideal_fct_ps"][0]


def edit(tmp_path: Path, change) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    change(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def second_nic_link(d):
    d["edges"].append(
        {
            "ep1": {"instance": "server[0]", "component": "nic400[0].port[0]"},
            "ep2": {"instance": "spine[0]", "component": "port[5]"},
            "link": "nic_link",
            "scheme": "one2one",
        }
    )


def one_server_short(d):
    d["edges"][1]["ep1"]["instance"] = "server[0:7]"
    d["edges"][1]["ep2"]["component"] = "port[0:7]"


def gt_per_s(d):
    d["links"][0]["physical"]["bandwidth"] = {"choice": "gigatransfers_per_second", "gigatransfers_per_second": 32}


def dangling(d):
    d["edges"][0]["ep2"]["instance"] = "leaf[7]"


def no_such_device(d):
    d["instances"][1]["device"] = "nope"


def no_such_link(d):
    d["edges"][0]["link"] = "nope"


def no_such_instance(d):
    d["edges"][0]["ep1"]["instance"] = "serv[0:8]"


def a_billion_servers(d):
    d["instances"][0]["count"] = 10**9


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (second_nic_link, "server.0.nic400.0.port.0 has 2 fabric links; allowed: one"),
        (one_server_short, "server server.7 has 1 NICs on the fabric and server.0 has 2"),
        (gt_per_s, "link 'nic_link' has bandwidth '32 GT/s'"),
        (dangling, "an edge ends at leaf.7.port.0, which no device instance has"),
        (no_such_device, "instances[1].device: got 'nope'; allowed: a device of the file (nic400, server, switch)"),
        (no_such_link, "edges[0].link: got 'nope'; allowed: a link of the file (nic_link, spine_link)"),
        (no_such_instance, "InfraGraph refuses it: Instance 'serv' does not exist"),
        (a_billion_servers, "allowed: at most 1,048,576 components"),
    ],
)
def test_a_bad_infragraph_file_is_refused_naming_what_is_wrong(tmp_path, change, says):
    path = edit(tmp_path, change)
    t0 = time.monotonic()
    with pytest.raises(ScenarioError) as e:
        read_topology(path)
    assert says in str(e.value) and str(path) in str(e.value), str(e.value)
    assert time.monotonic() - t0 < 5, "refused before anything expands it"


def test_broken_yaml_names_its_line_and_a_missing_package_says_how_to_install_it(tmp_path, monkeypatch):
    path = tmp_path / "broken.yaml"
    path.write_text("devices:\n  - name: x\n  bad: [\n")
    with pytest.raises(ScenarioError, match=r"broken\.yaml:\d+: not YAML"):
        read_topology(path)
    import sys

    monkeypatch.setitem(sys.modules, "infragraph.infragraph_service", None)  # as if not installed
    with pytest.raises(MissingDependency, match=r"fabricsim\[infragraph\]"):
        read_topology(EXAMPLE)


def test_the_topology_summary_names_infragraphs_switch_instances(tmp_path):
    """`fabricsim topology` groups switches by what their names share but the index: the Clos's
    tier_0.3 and tier_1.0 are tier_0 and tier_1 switches, not all 'tier'."""
    import json

    from fabricsim.cli import app
    from typer.testing import CliRunner

    r = CliRunner().invoke(app, ["topology", str(clos(tmp_path)), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["switches"] == [["tier_0", 8], ["tier_1", 4]]
