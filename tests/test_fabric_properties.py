"""The model's invariants on every kind of fabric and every file a fabric is read from (issue 61):
random graphs with next-hop groups of unequal size (inline, as an edge list, GraphML, the ns-3
simulators' topology.txt), htsim's fat trees (.topo), InfraGraph, dragonflies under minimal,
Valiant and UGAL routing with global links shorter or longer than local ones, multi-plane and
rail-only fabrics; every load balancer (the multi-part EV ones included), jobs with channels and
slices over iterations, and the non-blocking reference. Whatever is drawn: no crash, every
packet accounted for, nothing faster than its ideal (a message, an iteration, a step), the same
tables on one thread and two, and a job under one leaf costs exactly 1 against the reference."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import fabricsim
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
LBS = [r["name"] for r in fabricsim.registry() if r["category"] == "lb"]
RATES = ["100Gbps", "200Gbps", "400Gbps"]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[str], list[str], list[tuple[str, str, str, str]]]:
    """A leaf-spine whose leaves have 1 to 3 hosts and uplinks to a random set of the spines
    (every leaf to spine 0, so it is connected): next-hop groups of unequal size; links of
    random rates and latencies."""
    leaves, spines = draw(st.integers(2, 4)), draw(st.integers(1, 3))
    hosts: list[str] = []
    links: list[tuple[str, str, str, str]] = []
    lat = st.sampled_from(["200ns", "1us"])
    for leaf in range(leaves):
        for _ in range(draw(st.integers(1, 3))):
            hosts.append(f"h{len(hosts)}")
            links.append((hosts[-1], f"l{leaf}", draw(st.sampled_from(RATES)), draw(lat)))
        ups = {0} | set(draw(st.lists(st.integers(0, spines - 1), max_size=spines)))
        links += [(f"l{leaf}", f"s{s}", draw(st.sampled_from(RATES)), draw(lat)) for s in sorted(ups)]
    linked = {b for _, b, _, _ in links}
    switches = [f"l{i}" for i in range(leaves)] + [f"s{i}" for i in range(spines) if f"s{i}" in linked]
    return hosts, switches, links


def as_file(fmt: str, g: tuple[list[str], list[str], list[tuple[str, str, str, str]]], folder: Path) -> dict[str, Any]:
    """The graph ``g`` as a ``[topology]``: inline, or in a file of format ``fmt``."""
    hosts, switches, links = g
    if fmt == "inline":
        graph = {
            "hosts": [{"name": h} for h in hosts],
            "switches": [{"name": s} for s in switches],
            "links": [{"a": a, "b": b, "rate": r, "latency": d} for a, b, r, d in links],
        }
        return {"kind": "graph", "graph": graph}
    if fmt == "edgelist":
        text = "".join(f"{a} {b} {{'rate': '{r}', 'latency': '{d}'}}\n" for a, b, r, d in links)
        (folder / "f.edgelist").write_text(text)
        return {"file": str(folder / "f.edgelist")}
    if fmt == "graphml":
        keys = '<key id="r" for="edge" attr.name="rate" attr.type="string"/><key id="d" for="edge" attr.name="latency" attr.type="string"/>'
        edges = "".join(f'<edge source="{a}" target="{b}"><data key="r">{r}</data><data key="d">{d}</data></edge>' for a, b, r, d in links)
        nodes = "".join(f'<node id="{n}"/>' for n in hosts + switches)
        xml = (
            f'<graphml xmlns="http://graphml.graphdrawing.org/xmlns">{keys}<graph edgedefault="undirected">{nodes}{edges}</graph></graphml>'
        )
        (folder / "f.graphml").write_text(xml)
        return {"file": str(folder / "f.graphml")}
    # the ns-3 simulators' topology.txt: hosts first, then the switches, by id
    ids = {n: i for i, n in enumerate(hosts + switches)}
    rows = [f"{ids[a]} {ids[b]} {r} {d} 0" for a, b, r, d in links]
    head = [f"{len(ids)} {len(switches)} {len(links)}", " ".join(str(ids[s]) for s in switches)]
    (folder / "topology.txt").write_text("\n".join(head + rows) + "\n")
    return {"file": str(folder / "topology.txt")}


HTSIM_2_TIER = (
    "Nodes {n}\nTiers 2\nPodsize {n}\n\nTier 0\nDownlink_speed_Gbps 400\nRadix_Down {d}\nRadix_Up {d}\nDownlink_Latency_ns 1000\n\n"
    "Tier 1\nDownlink_speed_Gbps 400\nRadix_Down {t}\nDownlink_Latency_ns 500\n"
)
HTSIM_3_TIER = (
    "Nodes 16\nTiers 3\nPodsize 8\n\nTier 0\nDownlink_speed_Gbps 400\nRadix_Down 2\nRadix_Up 2\nDownlink_Latency_ns 1000\n\n"
    "Tier 1\nDownlink_speed_Gbps 400\nRadix_Down 4\nRadix_Up 2\nDownlink_Latency_ns 1000\n\n"
    "Tier 2\nDownlink_speed_Gbps 400\nRadix_Down 4\nDownlink_Latency_ns 1000\n"
)


@st.composite
def fabrics(draw: st.DrawFn, folder: Path) -> dict[str, Any]:
    kind = draw(st.sampled_from(["graph", "htsim", "infragraph", "dragonfly", "multi_plane", "rail_only", "fat_tree"]))
    if kind == "graph":
        return as_file(draw(st.sampled_from(["inline", "edgelist", "graphml", "ns3"])), draw(graphs()), folder)
    if kind == "htsim":
        if draw(st.booleans()):
            text = HTSIM_3_TIER
        else:
            t, d = draw(st.integers(2, 4)), draw(st.integers(2, 3))
            text = HTSIM_2_TIER.format(n=t * d, d=d, t=t)
        (folder / "f.topo").write_text(text)
        return {"file": str(folder / "f.topo")}
    if kind == "infragraph":
        return {"file": str(ROOT / "scenarios" / "infragraph_rails_16.yaml"), "scale_up_rate": "1600Gbps"}
    if kind == "dragonfly":
        topo = {"kind": "dragonfly", "hosts_per_router": draw(st.integers(1, 2)), "routers_per_group": draw(st.integers(2, 3))}
        topo |= {"global_links_per_router": draw(st.integers(1, 2)), "link_latency": "1us"}
        topo |= {
            "global_link_latency": draw(st.sampled_from(["100ns", "1us", "3us"])),
            "group_routing": draw(st.sampled_from(["minimal", "valiant", "ugal"])),
        }
        return topo
    if kind == "multi_plane":
        return {"kind": "multi_plane", "planes": draw(st.integers(2, 3)), "hosts": 16, "radix": 8}
    if kind == "rail_only":
        return {"kind": "rail_only", "hosts": 16, "radix": 8, "nics_per_server": draw(st.sampled_from([2, 4])), "scale_up_rate": "1600Gbps"}
    radix = draw(st.sampled_from([4, 8]))
    tree = {"tiers": draw(st.sampled_from([2, 3])), "hosts": 16 if radix == 8 else 8, "radix": radix}
    # GPUs of two NICs each: 32 NICs fill a 2-tier tree of radix 8, or two of its pods
    return tree | ({"nics_per_gpu": 2} if radix == 8 and draw(st.booleans()) else {})


@st.composite
def scenarios(draw: st.DrawFn, folder: Path) -> dict[str, Any]:
    topology = draw(fabrics(folder))
    lb = draw(st.sampled_from(LBS))
    s: dict[str, Any] = {
        "seed": draw(st.integers(1, 1000)),
        "topology": topology,
        "lb": {"kind": lb},
        "switch": {"routing": draw(st.sampled_from(["auto", "auto", "ecmp", "mp_ev", "adaptive", "spray"]))},
        "transport": {"ack_every": draw(st.sampled_from([1, 4]))},
        "stop": {"max_time": "30ms"},
    }
    if draw(st.booleans()):
        # what posting a message costs its host (LogGOPSim's o and g)
        overhead, gap = draw(st.sampled_from(["300ns", "2us"])), draw(st.sampled_from(["0ns", "200ns"]))
        s["transport"] |= {"message_overhead": overhead, "message_gap": gap}
    if draw(st.booleans()):
        s["workload"] = {"kind": "permutation", "size": draw(st.sampled_from(["4KiB", "64KiB", "300KiB"]))}
    else:
        ranks = draw(st.integers(2, 4))
        job: dict[str, Any] = {"collective": "allreduce", "algorithm": "ring", "size": draw(st.sampled_from(["64KiB", "256KiB"]))}
        job |= {"ranks": ranks, "placement": draw(st.sampled_from(["packed", "spread"])), "iterations": draw(st.integers(1, 2))}
        if draw(st.booleans()):
            job["channels"] = draw(st.integers(1, 2))
        if draw(st.booleans()):
            job["slice"] = draw(st.sampled_from(["4KiB", "16KiB"]))
            job["compute"] = "2us"
        s["jobs"] = [job]
    return s


#: Cases per run: 30 in CI; `make fuzz` runs more (FABRICSIM_PROPERTY_EXAMPLES).
EXAMPLES = int(os.environ.get("FABRICSIM_PROPERTY_EXAMPLES", "30"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_invariants_hold_on_every_fabric_and_file(data):
    folder = Path(tempfile.mkdtemp(prefix="fabricsim-fabric-"))
    try:
        s = data.draw(scenarios(folder))
        check(s)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check(s: dict[str, Any]) -> None:
    try:
        fabricsim.Scenario(s).validate()
    except fabricsim.ScenarioError as e:
        # drawn combinations a fabric cannot take (a workload wider than it, mp_ev where no
        # tier has groups) are refused by name before any run: never anything else
        assert e.field and str(e), e
        return
    r = fabricsim.run(s, threads=1)
    a = r.accounting
    assert a["data_sent"] == a["data_delivered"] + a["data_trimmed"] + a["data_dropped"] + a["data_in_flight"]
    assert a["data_trimmed"] == a["headers_delivered"] + a["headers_dropped"] + a["headers_in_flight"]
    done = r.flows.filter(r.flows["completed"])
    assert (done["delivered_bytes"] == done["bytes"]).all()
    assert (done["fct_ps"] >= done["ideal_fct_ps"]).all(), done.filter(done["fct_ps"] < done["ideal_fct_ps"])
    if r.jobs is not None and r.jobs.height:
        iters = r.jobs.filter(r.jobs["jct_ps"].is_not_null())
        assert (iters["jct_ps"] >= iters["ideal_jct_ps"]).all(), iters
        steps = r.steps.filter(r.steps["end_ps"].is_not_null())
        assert (steps["end_ps"] >= steps["ideal_end_ps"]).all()
    # the same tables on two threads as on one
    two = fabricsim.run(s, threads=2)
    assert two.flows.equals(r.flows) and two.ports.equals(r.ports)
    # a packed job of 2 ranks shares a leaf on these fabrics: against one switch it costs exactly 1
    jobs = s.get("jobs", [])
    kind = s["topology"].get("kind", "graph" if "file" in s["topology"] else "fat_tree")
    if jobs and jobs[0]["placement"] == "packed" and jobs[0]["ranks"] == 2 and kind in ("fat_tree", "multi_plane") and r.complete:
        ref = fabricsim.run(s, threads=1, reference="nonblocking")
        assert ref.jobs["fabric_cost"].to_list() == [1.0] * ref.jobs.height, ref.jobs
