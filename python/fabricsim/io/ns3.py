"""The topology file of the ns-3 RDMA simulators: HPCC's ``mix/topology.txt``, which ConWeave and
SimAI's ns-3 backend read too (``third_party/rdma/simulation/scratch/third.cc``, ``topof``).

Its first line is ``N S L``: the nodes, how many of them are switches, and the links. The second
lists the S switches' node ids. Each of the L lines after is a link, ``a b rate delay error``
(``0 320 100Gbps 1000ns 0``): its two nodes, its rate and one-way delay in ns-3's units, and the
probability that it drops a packet. Every node the second line does not name is a host.

fabricsim reads it as ``topology.graph``: the hosts in the order of their ids (host ``k`` is the
k-th host id; where the hosts are ids 0 to H - 1, as in the files these tools write, it is
ns-3's node ``k``), named ``host{id}``, the switches ``switch{id}``, each link with its rate and
delay. A link that drops packets is refused (a fault, ``kind = "random_loss"``, says it
instead), as is a pair of nodes linked twice: routing here sees one link between two nodes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import scenario_error

__all__ = ["is_ns3_topology", "read_ns3_topology"]

_HEADER = re.compile(r"\s*(\d{1,9})\s+(\d{1,9})\s+(\d{1,9})\s*", re.ASCII)
_NUMBER = re.compile(r"\d{1,9}", re.ASCII)
FIELD = "topology.file"


def _lines(text: str) -> list[tuple[int, str]]:
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), start=1) if line.strip() and not line.lstrip().startswith("#")]


def is_ns3_topology(text: str) -> bool:
    """Whether ``text`` starts as an ns-3 topology file does: three whole numbers on its first
    line (no edge list's line has three numbers and nothing else)."""
    lines = _lines(text[:4096])
    return bool(lines) and _HEADER.fullmatch(lines[0][1]) is not None


def read_ns3_topology(path: Path, text: str) -> tuple[dict[str, Any], list[str]]:
    """The graph of the ns-3 topology file ``path`` (its ``text``), and where each link is given
    (``path:LINE``); what cannot be read is refused naming the line."""
    lines = _lines(text)
    header = _HEADER.fullmatch(lines[0][1]) if lines else None
    if header is None:
        raise scenario_error(FIELD, f"{path}: its first line is not 'N S L' (nodes, switches, links)")
    nodes, count, links = (int(g) for g in header.groups())
    if count and len(lines) < 2:
        raise scenario_error(FIELD, f"{path}: no line of switch ids after the header")
    number, ids = lines[1] if count else (lines[0][0], "")
    switches: set[int] = set()
    for token in ids.split():
        if _NUMBER.fullmatch(token) is None or int(token) >= nodes:
            raise scenario_error(FIELD, f"{path}:{number}: switch id {token!r}; allowed: a node id below N ({nodes})")
        switches.add(int(token))
    if len(switches) != count or len(ids.split()) != count:
        raise scenario_error(FIELD, f"{path}:{number}: {len(ids.split())} switch ids ({len(switches)} distinct); the header says {count}")
    body = lines[2 if count else 1 :]
    if len(body) != links:
        raise scenario_error(FIELD, f"{path}: the header says {links} links and {len(body)} lines follow the switch ids")
    out: list[dict[str, Any]] = []
    places: list[str] = []
    seen: dict[frozenset[int], str] = {}
    used: set[int] = set()
    for number, line in body:
        where = f"{path}:{number}"
        parts = line.split()
        if len(parts) != 5:
            raise scenario_error(FIELD, f"{where}: {line!r}; allowed: 'a b rate delay error' (0 320 100Gbps 1000ns 0)")
        a, b, rate, delay, error = parts
        for end in (a, b):
            if _NUMBER.fullmatch(end) is None or int(end) >= nodes:
                raise scenario_error(FIELD, f"{where}: node {end!r}; allowed: a node id below N ({nodes})")
        try:
            loss = float(error)
        except ValueError:
            loss = -1.0
        if loss != 0.0:
            why = 'a link that drops packets at random is a fault here ([[faults]] kind = "random_loss")'
            raise scenario_error(FIELD, f"{where}: error rate {error!r}: {why}; allowed: 0")
        pair = frozenset((int(a), int(b)))
        if pair in seen or len(pair) == 1:
            again = f"again (first at {seen[pair]})" if pair in seen else "to itself"
            raise scenario_error(FIELD, f"{where}: node {a} linked to {b} {again}; allowed: each pair of nodes linked once")
        seen[pair] = where
        used |= pair
        out.append({"a": _name(int(a), switches), "b": _name(int(b), switches), "rate": rate, "latency": delay})
        places.append(where)
    hosts = [{"name": _name(i, switches)} for i in range(nodes) if i not in switches and i in used]
    unlinked = [i for i in range(nodes) if i not in used]
    if unlinked:
        raise scenario_error(FIELD, f"{path}: node {unlinked[0]} has no link ({len(unlinked)} such); allowed: every node linked")
    graph = {"hosts": hosts, "switches": [{"name": _name(i, switches)} for i in sorted(switches)], "links": out}
    return graph, places


def _name(node: int, switches: set[int]) -> str:
    return f"switch{node}" if node in switches else f"host{node}"
