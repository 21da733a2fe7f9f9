"""Fabrics in the formats of the peers' own tools (issue 61 item 4): htsim's ``.topo`` (the
reference's fat trees) and the ns-3 RDMA simulators' ``topology.txt`` (HPCC, ConWeave, SimAI),
each on an example written as the tool writes its own, read as the tool builds it."""

from __future__ import annotations

from pathlib import Path

import fabricsim
import polars as pl
import pytest
from fabricsim.cli import app
from fabricsim.errors import ScenarioError
from fabricsim.io.topology_file import read_topology
from typer.testing import CliRunner

#: htsim's 3-tier fat tree of 128 hosts, as its own ``fat_tree_128_1os.topo`` describes it
#: (pods of 16, ToRs of 4 hosts and 4 uplinks, 100 Gb/s, 1 us links).
FAT_TREE_128 = """# a 3-tier fat tree as htsim's FatTreeTopologyCfg reads it
Nodes 128
Tiers 3
Podsize 16

Tier 0
Oversubscribed 1
Downlink_speed_Gbps 100
Radix_Down 4
Radix_Up 4
Downlink_Latency_ns 1000
Switch_Latency_ns 0

Tier 1
Oversubscribed 1
Downlink_speed_Gbps 100
Radix_Down 4
Radix_Up 4
Downlink_Latency_ns 1000
Switch_Latency_ns 0
Bundle 1

Tier 2
Downlink_speed_Gbps 100
Radix_Down 8
Downlink_Latency_ns 1000
Switch_Latency_ns 0
Bundle 1
"""

#: htsim's 2-tier leaf-spine of 1024 hosts, 4:1 oversubscribed (32 hosts and 8 uplinks a leaf).
LEAF_SPINE_1024_OVERSUB = """Nodes 1024
Tiers 2
Podsize 1024

Tier 0
Downlink_speed_Gbps 100
Radix_Down 32
Radix_Up 8
Downlink_Latency_ns 1000
Oversubscribed 4
Switch_Latency_ns 0

Tier 1
Downlink_speed_Gbps 100
Radix_Down 32
Downlink_Latency_ns 1000
Switch_Latency_ns 0
"""


def lone_flow(topology: dict, src: int, dst: int) -> tuple[int, int]:
    s = {"seed": 1, "topology": topology, "workload": {"kind": "flows", "flows": [{"src": src, "dst": dst, "size": "1MiB"}]}}
    r = fabricsim.run(s)
    return r.flows["fct_ps"][0], r.flows["ideal_fct_ps"][0]


def test_htsims_fat_tree_file_is_the_fat_tree_htsim_builds(tmp_path: Path):
    (tmp_path / "ft.topo").write_text(FAT_TREE_128)
    g = read_topology(tmp_path / "ft.topo")
    names = [s["name"] for s in g["switches"]]
    assert len(g["hosts"]) == 128 and sum(n.startswith("leaf") for n in names) == 32
    assert sum(n.startswith("agg") for n in names) == 32 and sum(n.startswith("core") for n in names) == 16
    assert len(g["links"]) == 128 * 3 and {link["rate"] for link in g["links"]} == {"100Gbps"}
    # htsim's wiring: a ToR to its pod's 4 aggregation switches; aggregation switch a to core
    # switches a mod 4 + 4 l (fat_tree_topology.cpp)
    ups = {(link["a"], link["b"]) for link in g["links"]}
    assert {b for a, b in ups if a == "leaf5"} == {"agg4", "agg5", "agg6", "agg7"}
    assert {b for a, b in ups if a == "agg6"} == {"core2", "core6", "core10", "core14"}
    # the same paths as fabricsim's own 3-tier fat tree of 8-port switches: a lone flow across
    # pods takes its ideal, to the picosecond, on both
    tree = {"tiers": 3, "hosts": 128, "radix": 8, "link_rate": "100Gbps", "link_latency": "1us", "switch_latency": "0ns"}
    read = lone_flow({"file": str(tmp_path / "ft.topo")}, 3, 100)
    assert read[0] == read[1] == lone_flow(tree, 3, 100)[0]
    # and the command that shows a fabric reads it (it said "not valid TOML")
    out = CliRunner().invoke(app, ["topology", str(tmp_path / "ft.topo")])
    assert out.exit_code == 0 and "128" in out.output, out.output


def test_htsims_oversubscribed_leaf_spine_and_its_switch_latency(tmp_path: Path):
    (tmp_path / "ls.topo").write_text(LEAF_SPINE_1024_OVERSUB.replace("Switch_Latency_ns 0", "Switch_Latency_ns 300"))
    g = read_topology(tmp_path / "ls.topo")
    names = [s["name"] for s in g["switches"]]
    assert (sum(n.startswith("leaf") for n in names), sum(n.startswith("spine") for n in names)) == (32, 8)
    assert len(g["links"]) == 1024 + 32 * 8
    filled = fabricsim.Scenario({"topology": {"file": "ls.topo"}}, base_dir=tmp_path).filled()
    assert filled["topology"]["switch_latency"] == "300ns"
    with pytest.raises(ScenarioError) as e:
        fabricsim.Scenario({"topology": {"file": "ls.topo", "switch_latency": "1us"}}, base_dir=tmp_path).filled()
    assert e.value.field == "topology.switch_latency"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            (
                "Radix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle 1",
                "Radix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle 2",
            ),
            "ft.topo:21: Bundle 2",
        ),
        (("Tier 2\n", "Tier 2\nQueue_Down 100000\n"), "Queue_Down"),
        (("Podsize 16", "Podsize 24"), "pods of whole ToRs"),
        (("Radix_Down 8", "Radix_Down 16"), "core switches"),
        (("Tier 2\n", "Tier 2\nColour blue\n"), "got 'Colour'"),
        (("Switch_Latency_ns 0\nBundle 1\n\nTier 2", "Switch_Latency_ns 100\nBundle 1\n\nTier 2"), "one for every tier"),
    ],
)
def test_a_topo_file_htsim_would_refuse_or_fabricsim_cannot_model_is_refused_naming_why(tmp_path: Path, change, says):
    old, new = change
    assert old in FAT_TREE_128
    (tmp_path / "ft.topo").write_text(FAT_TREE_128.replace(old, new, 1))
    with pytest.raises(ScenarioError) as e:
        read_topology(tmp_path / "ft.topo")
    assert says in str(e.value) and e.value.field.startswith("topology.file"), str(e.value)


def ns3_topology(error: str = "0") -> str:
    """16 hosts (0-15) under 4 ToRs (16-19), each ToR to both spines (20, 21): HPCC's format."""
    links = [f"{h} {16 + h // 4} 100Gbps 1000ns 0" for h in range(16)]
    links += [f"{tor} {spine} 400Gbps 1000ns {error if tor == 19 and spine == 21 else 0}" for tor in range(16, 20) for spine in (20, 21)]
    return "\n".join(["22 6 24", "16 17 18 19 20 21", *links]) + "\n"


def test_the_ns3_rdma_topology_format_is_read_hosts_by_node_id(tmp_path: Path):
    (tmp_path / "topology.txt").write_text(ns3_topology())
    g = read_topology(tmp_path / "topology.txt")
    assert [h["name"] for h in g["hosts"]] == [f"host{i}" for i in range(16)]
    assert [s["name"] for s in g["switches"]] == [f"switch{i}" for i in range(16, 22)]
    assert g["links"][0] == {"a": "host0", "b": "switch16", "rate": "100Gbps", "latency": "1000ns"}
    fct, ideal = lone_flow({"file": str(tmp_path / "topology.txt")}, 0, 15)
    assert fct == ideal
    r = fabricsim.run({"topology": {"file": str(tmp_path / "topology.txt")}, "workload": {"kind": "permutation", "size": "256KiB"}})
    assert r.summary["status"] == "complete" and r.flows.filter(pl.col("fct_ps") < pl.col("ideal_fct_ps")).height == 0


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (ns3_topology("0.001"), "topology.txt:26: error rate '0.001'"),
        (ns3_topology().replace("22 6 24", "22 6 23"), "the header says 23 links"),
        (ns3_topology().replace("16 17 18 19 20 21", "16 17 18 19 20 99"), "switch id '99'"),
        (ns3_topology() + "0 16 100Gbps 1000ns 0\n", "the header says 24 links and 25"),
        (ns3_topology().replace("22 6 24", "22 6 25") + "0 16 100Gbps 1000ns 0\n", "topology.txt:27: node 0 linked to 16 again"),
    ],
)
def test_an_ns3_topology_that_cannot_be_read_is_refused_naming_the_line(tmp_path: Path, text: str, says: str):
    (tmp_path / "topology.txt").write_text(text)
    with pytest.raises(ScenarioError) as e:
        read_topology(tmp_path / "topology.txt")
    assert says in str(e.value), str(e.value)
