"""A perfect-fabric reference for a run's jobs: the same scenario on one non-blocking switch.

``fabricsim.run(s, reference="nonblocking")`` (``fabricsim run --reference nonblocking``) runs
the scenario as given, then again on one switch that every host hangs from (a 2-tier tree of one
leaf whose radix is the host count plus one: no link is shared by two hosts' traffic but the
hosts' own; on a graph, each host by a link of its own link's rate and latency; on a multi-plane
fabric, one such leaf a plane), with the same hosts, NICs, host links, switch latency, scale-up network, transport,
buffers and workload, every job's ranks on the same hosts, and no faults. Sizes given as BDP
fractions and the ``"auto"`` windows are written out in bytes from the scenario's own fabric
first, so that the reference's NICs and buffers are the scenario's, not sized by its shorter
round trip. Each job iteration's JCT over the reference's is ``fabric_cost``: what this fabric,
its load balancer and its faults cost the job, beside ``slowdown`` (JCT over the ideal, a lower
bound where every message runs alone). The reference's shorter paths (one switch, not three
or five) are part of that cost.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl

from .errors import scenario_error
from .io.files import size_bytes
from .scenario import Scenario

__all__ = ["REFERENCES", "attach", "nonblocking", "reference_scenario"]

#: The references a run can ask for.
REFERENCES = ("nonblocking",)

_BDP = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*bdp\s*$", re.IGNORECASE)


def fabric_hosts(topo: dict[str, Any]) -> int:
    """The hosts of a filled ``[topology]``: a fat tree's ``hosts``, a graph's list, another
    generator's as the core builds it."""
    kind = topo.get("kind", "fat_tree")
    if kind == "fat_tree":
        return int(topo["hosts"])
    if kind == "graph":
        return len(topo["graph"]["hosts"])
    from . import _core

    summary, _ = _core.topology(json.dumps({"topology": topo, "workload": {"kind": "permutation", "size": "1B"}}), False)
    return int(json.loads(summary)["hosts"])


def _hosts(topo: dict[str, Any]) -> tuple[int, str, str]:
    """A generated fabric's hosts and their links' rate and latency: a fat tree's host tier, a
    dragonfly's or rail-only network's ``link_rate``."""
    kind = topo.get("kind", "fat_tree")
    if kind == "fat_tree":
        return int(topo["hosts"]), topo["tier_link_rates"][0], topo["tier_link_latencies"][0]
    return fabric_hosts(topo), topo["link_rate"], topo["link_latency"]


def _one_switch(topo: dict[str, Any]) -> dict[str, Any]:
    """The reference's fabric: the scenario's hosts on one switch, each by a link like its own.

    - A graph: the same hosts (names, servers), each linked to one switch at its own link's rate
      and latency (hosts of a graph may differ: one rate for all would make a slow host's job
      look faster than its own fabric lets it).
    - A multi-plane fabric: the same planes, each one leaf of every host (radix twice the hosts:
      a leaf of radix / 2 hosts), so that a message is striped over as many ports as it is.
    - Any other: a 2-tier tree of one leaf whose radix is the host count plus one (one uplink);
      where a fat tree's GPUs have several NICs (``nics_per_gpu``), one port a NIC, so that a
      message is cut into as many parts as it is."""
    kind = topo.get("kind", "fat_tree")
    shared = {k: topo[k] for k in ("switch_latency", "nics_per_server", "scale_up_rate", "scale_up_latency") if k in topo}
    if kind == "graph":
        graph = topo["graph"]
        hosts = graph["hosts"]
        names = {h["name"] for h in hosts}
        link_of: dict[str, dict[str, Any]] = {}
        for link in graph["links"]:
            for end in ("a", "b"):
                if link[end] in names:
                    link_of.setdefault(link[end], link)
        switch = "nonblocking"
        while switch in names:
            switch += "_"
        links = []
        for h in hosts:
            own = link_of.get(h["name"], {})
            rate, latency = own.get("rate", topo["link_rate"]), own.get("latency", topo["link_latency"])
            links.append({"a": h["name"], "b": switch, "rate": rate, "latency": latency})
        ref = {"kind": "graph", "link_rate": topo["link_rate"], "link_latency": topo["link_latency"]}
        ref["graph"] = {"hosts": hosts, "switches": [{"name": switch}], "links": links}
        if any("server" in h for h in hosts):
            shared.pop("nics_per_server", None)  # the hosts' servers say it
        return ref | shared
    if kind == "multi_plane":
        hosts = int(topo["hosts"])
        planes = {"kind": "multi_plane", "planes": topo["planes"], "hosts": hosts, "radix": 2 * hosts}
        return planes | {"link_rate": topo["link_rate"], "link_latency": topo["link_latency"]} | shared
    hosts, rate, latency = _hosts(topo)
    per_gpu = int(topo.get("nics_per_gpu", 1)) if kind == "fat_tree" else 1
    ports = hosts * per_gpu
    one = {"tiers": 2, "hosts": hosts, "radix": ports + 1, "oversubscription": ports, "link_rate": rate, "link_latency": latency}
    return one | ({"nics_per_gpu": per_gpu} if per_gpu > 1 else {}) | shared


def nonblocking(filled: dict[str, Any], job_hosts: list[list[int]], bdp_bytes: int) -> dict[str, Any]:
    """The reference scenario of ``filled`` (a scenario with every default, as a run reports
    it), whose jobs took ``job_hosts`` and whose fabric's BDP is ``bdp_bytes``."""
    mtu = size_bytes(filled["transport"]["mtu"])
    if mtu is None:
        raise scenario_error("transport.mtu", f"got {filled['transport']['mtu']!r}; allowed: a size as the run reports it")
    packets = bdp_bytes // mtu
    ref = {k: v for k, v in filled.items() if k not in ("topology", "faults", "jobs")}
    ref["topology"] = _one_switch(filled["topology"])
    for table in ("switch", "transport", "lb"):
        if table in ref:
            ref[table] = _in_bytes(ref[table], packets, mtu)
    # one rule a switch tier with groups: the reference's one switch has none to choose from
    if isinstance(ref.get("switch", {}).get("routing"), list):
        ref["switch"]["routing"] = "auto"
    transport = ref["transport"]
    for key in ("init_cwnd", "max_cwnd"):
        if transport.get(key) == "auto":
            transport[key] = f"{(packets + int(transport['ack_every']) - 1) * mtu}B"
    jobs = []
    for job, placed in zip(filled.get("jobs", []), job_hosts, strict=False):
        job = {k: v for k, v in job.items() if k not in ("ranks", "placement")}
        job["hosts"] = placed
        jobs.append(job)
    if jobs:
        ref["jobs"] = jobs
    return ref


def reference_scenario(sim: Any, base_dir: Path) -> Scenario:
    """The reference of the scenario a built, not yet run ``_core.Simulation`` holds (its
    scenario as filled, its jobs' hosts, its BDP); refused for a run without jobs."""
    if not sim.job_hosts:
        raise scenario_error("reference", "a run without jobs; allowed: with [[jobs]] or a trace (messages with after)")
    return Scenario(nonblocking(json.loads(sim.scenario_json()), sim.job_hosts, sim.bdp_bytes), base_dir)


def attach(res: Any, ref: Any) -> None:
    """Adds the reference's JCT to ``res.jobs`` (``nonblocking_jct_ps``, and ``fabric_cost`` =
    ``jct_ps / nonblocking_jct_ps``) and ``reference`` and ``max_fabric_cost`` to its summary."""
    if res.jobs is None or res.jobs.height == 0:
        return
    theirs = ref.jobs.select("job", "iteration", pl.col("jct_ps").alias("nonblocking_jct_ps"))
    jobs = res.jobs.join(theirs, on=["job", "iteration"], how="left", maintain_order="left")
    res.jobs = jobs.with_columns((pl.col("jct_ps") / pl.col("nonblocking_jct_ps")).alias("fabric_cost"))
    cost = res.jobs["fabric_cost"].max()
    res.summary["reference"] = "nonblocking"
    res.summary["max_fabric_cost"] = None if cost is None else float(cost)


def check(reference: object) -> str | None:
    """``reference`` as :func:`fabricsim.run` takes it: ``None`` or one of :data:`REFERENCES`."""
    if reference is None:
        return None
    if isinstance(reference, str) and reference in REFERENCES:
        return reference
    raise scenario_error("reference", f"got {reference!r}; allowed: {', '.join(REFERENCES)}, or none")


def _in_bytes(value: Any, packets: int, mtu: int) -> Any:
    """``value`` with every BDP fraction written as bytes: the fraction of ``packets`` rounded
    up to whole packets of ``mtu`` (the core's ``SizeOrBdp::resolve``)."""
    if isinstance(value, dict):
        return {k: _in_bytes(v, packets, mtu) for k, v in value.items()}
    if isinstance(value, list):
        return [_in_bytes(v, packets, mtu) for v in value]
    if isinstance(value, str) and (m := _BDP.match(value)):
        whole = -(-Fraction(m.group(1)) * packets // 1)
        return f"{int(whole) * mtu}B"
    return value
