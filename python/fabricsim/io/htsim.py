"""Traffic from htsim, the reference packet simulator: its connection-matrix files and its
permutation generator, so a comparison runs on exactly the reference's traffic.

* :func:`read_connection_matrix` reads an htsim ``.cm`` file, or a ``.tm`` file as the
  reference's own scripts name the same format (``[workload] kind = "flows"``, ``file =
  "x.cm"`` reads one): a ``Nodes N`` and ``Connections C`` header, then one line per
  connection, ``SRC->DST [id N] start PS size BYTES``. Start times are picoseconds, sizes bytes.
  Triggers (``trigger id T oneshot|barrier [count N]``, a connection's ``trigger T`` and
  ``recv_done_trigger T``) become ``after`` where htsim's firing does not depend on the order of
  events; ``msg`` marks a file for htsim's ``-conn_reuse``, whose starts are whole microseconds
  (docs/workloads.md, "Traffic from htsim", says what is refused and why).
* :func:`permutation` is the permutation of htsim's ``gen_permutation.py`` (sources and
  destinations shuffled by Python's ``random`` seeded with ``seed``, then a host that drew itself
  swaps destinations with the next one): the same seed gives the reference's matrix, pair for pair.
  :func:`write_connection_matrix` writes it in htsim's format.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, argument_error, scenario_error
from .files import MAX_DIGITS, read_text

__all__ = ["permutation", "read_connection_matrix", "read_topo", "write_connection_matrix"]

_HEADERS = ("Nodes", "Connections", "Triggers", "Failures")
#: The most hosts a permutation is drawn for (two lists of them are held).
MAX_NODES = 1 << 24
_NOT_READ = "not read; give faults in [[faults]]"


def permutation(nodes: int, seed: int) -> list[tuple[int, int]]:
    """htsim's permutation of ``nodes`` hosts for ``seed`` (0: unseeded, as htsim): a list of
    (src, dst) in the generator's order.

    >>> permutation(1024, 13)[:3]
    [(334, 395), (404, 414), (135, 874)]
    >>> sorted(d for _, d in permutation(16, 1)) == list(range(16))
    True
    """
    if not isinstance(nodes, int) or isinstance(nodes, bool) or not 2 <= nodes <= MAX_NODES:
        raise scenario_error("htsim.permutation: nodes", f"got {nodes!r}; allowed: an integer from 2 to {MAX_NODES}")
    if not isinstance(seed, int) or seed < 0:
        raise scenario_error("htsim.permutation: seed", f"got {seed!r}; allowed: an integer >= 0")
    srcs = list(range(nodes))
    dsts = list(range(nodes))
    rng = random.Random(seed) if seed else random.Random()
    rng.shuffle(srcs)
    rng.shuffle(dsts)
    for n in range(nodes):
        if srcs[n] == dsts[n]:
            other = (n + 1) % nodes
            dsts[n], dsts[other] = dsts[other], dsts[n]
    return list(zip(srcs, dsts, strict=True))


def write_connection_matrix(path: str | Path, nodes: int, pairs: list[tuple[int, int]], size: int, start_ps: int = 0) -> None:
    """Writes ``pairs`` as an htsim connection matrix: ids from 1, every flow ``size`` bytes."""
    lines = [f"Nodes {nodes}", f"Connections {len(pairs)}"]
    lines += [f"{s}->{d} id {i + 1} start {start_ps} size {size}" for i, (s, d) in enumerate(pairs)]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_connection_matrix(path: str | Path) -> list[dict[str, Any]]:
    """The messages of an htsim connection matrix, as ``[workload] flows`` entries (``src``,
    ``dst``, ``size``, ``start``, and ``id`` where the file gives one and uses no triggers or
    ``msg``; with triggers, ``after``). A malformed line is refused as ``workload.file[LINE]``
    with what is allowed."""
    if not isinstance(path, str | os.PathLike):
        raise argument_error("path", path, "an htsim connection matrix's path")
    return read_matrix(Path(path))[0]


def read_matrix(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """:func:`read_connection_matrix`'s entries, and whether the file is one for htsim's
    ``-conn_reuse`` (its lines say ``msg``): the messages of one connection ``id`` then share
    that connection."""
    text = read_text(path, "workload.file", "an htsim connection matrix")
    header: dict[str, int] = {}
    conns: list[_Conn] = []
    triggers: dict[int, _Trigger] = {}
    lines = [(number, line.split()) for number, line in enumerate(text.splitlines(), start=1)]
    # htsim takes `msg` only with -conn_reuse, which reads every line's start in microseconds
    reuse = any("msg" in tokens[1:] for _, tokens in lines if tokens and "->" in tokens[0])
    for number, tokens in lines:
        if not tokens or tokens[0].startswith("#"):
            continue
        where = f"workload.file[line {number}]"
        if tokens[0] in _HEADERS:
            header[tokens[0]] = _whole(tokens[1] if len(tokens) > 1 else "", where, tokens[0], path)
            if tokens[0] == "Failures" and header[tokens[0]]:
                raise scenario_error(where, f"{path} declares htsim failures: {_NOT_READ}")
            continue
        if tokens[0] == "failure":
            raise scenario_error(where, f"{path}: htsim failure lines are {_NOT_READ}")
        if tokens[0] == "trigger":
            trigger = _read_trigger(tokens[1:], number, path)
            if trigger.id in triggers:
                raise scenario_error(f"{where}.id", f"got trigger {trigger.id} again in {path}; allowed: each trigger once")
            triggers[trigger.id] = trigger
            continue
        if "->" not in tokens[0]:
            raise scenario_error(where, f"got {tokens[0]!r} in {path}; allowed: Nodes, Connections, Triggers, trigger or SRC->DST ...")
        conns.append(_read_connection(tokens, number, where, path, reuse, header.get("Nodes")))
    declared = header.get("Connections")
    if declared is not None and declared != len(conns):
        raise scenario_error("workload.file", f"{path} declares Connections {declared} but lists {len(conns)}")
    if header.get("Triggers", 0) != len(triggers):
        raise scenario_error("workload.file", f"{path} declares Triggers {header.get('Triggers', 0)} but lists {len(triggers)}")
    if not conns:
        raise scenario_error("workload.file", f"{path} lists no connections")
    if reuse:
        _one_connection_a_pair(conns, path)
    return _entries(conns, triggers, path, keep_ids=not triggers and not reuse), reuse


def _one_connection_a_pair(conns: list[_Conn], path: Path) -> None:
    """A ``-conn_reuse`` file runs each connection ``id`` as one long-lived connection here,
    ``transport.connections = "per_pair"``: one a pair of hosts (and class). Two ids between
    the same two hosts would be one connection: refused naming the line."""
    first: dict[tuple[int, int], tuple[int | None, int]] = {}
    for c in conns:
        seen = first.setdefault((c.src, c.dst), (c.id, c.line))
        if seen[0] != c.id:
            why = f"connection id {c.id} from {c.src} to {c.dst}, where line {seen[1]} has id {seen[0]} between them"
            allowed = "one connection id a pair of hosts (a long-lived connection here is one a pair and class)"
            raise scenario_error(f"workload.file[line {c.line}].id", f"{path}: {why}; allowed: {allowed}")


def connection_line(path: Path, i: int) -> int | None:
    """The line of ``path`` (an htsim connection matrix) that gives its ``i``-th connection, the
    ``i``-th entry :func:`read_connection_matrix` returns; ``None`` where it has fewer."""
    for number, line in enumerate(read_text(path, "workload.file", "an htsim connection matrix").splitlines(), start=1):
        tokens = line.split()
        if tokens and not tokens[0].startswith("#") and "->" in tokens[0]:
            if i == 0:
                return number
            i -= 1
    return None


_TRIGGERED = -1  # a connection's start: when its trigger fires


class _Conn:
    def __init__(self, line: int, src: int, dst: int) -> None:
        self.line, self.src, self.dst = line, src, dst
        self.size: int | None = None
        self.start: int | None = None
        self.id: int | None = None
        self.trigger = 0  # fires this connection
        self.done_trigger = 0  # this connection's receipt activates it


class _Trigger:
    def __init__(self, line: int, id: int, kind: str, count: int) -> None:
        self.line, self.id, self.kind, self.count = line, id, kind, count


def _read_trigger(fields: list[str], line: int, path: Path) -> _Trigger:
    """``trigger id T oneshot|multishot|barrier [count N]`` (htsim's ``connection_matrix.cpp``)."""
    where = f"workload.file[line {line}]"
    tid, kind, count, i = 0, "", 0, 0
    while i < len(fields):
        key = fields[i]
        if key in ("id", "count"):
            if i + 1 >= len(fields):
                raise scenario_error(f"{where}.{key}", f"{path}: {key} has no value")
            value = _whole(fields[i + 1], where, key, path)
            tid, count = (value, count) if key == "id" else (tid, value)
            i += 2
            continue
        if key not in ("oneshot", "multishot", "barrier") or kind:
            raise scenario_error(where, f"got {key!r} in {path}; a trigger is: trigger id T oneshot|barrier [count N]")
        kind, i = key, i + 1
    if not tid or not kind:
        raise scenario_error(where, f"{path}: a trigger needs an id above 0 and a type; trigger id T oneshot|barrier [count N]")
    return _Trigger(line, tid, kind, count)


def _read_connection(tokens: list[str], line: int, where: str, path: Path, reuse: bool, nodes: int | None) -> _Conn:
    src, _, dst = tokens[0].partition("->")
    conn = _Conn(line, _whole(src, where, "src", path), _whole(dst, where, "dst", path))
    fields, i = tokens[1:], 0
    shape = "a connection is SRC->DST [id N] [msg [N]] start PS|trigger T size BYTES [recv_done_trigger T|send_done_trigger T]"
    while i < len(fields):
        key = fields[i]
        if key == "msg":
            # a message on connection `id` (htsim's -conn_reuse); its number is optional
            i += 2 if i + 1 < len(fields) and fields[i + 1].isascii() and fields[i + 1].isdigit() else 1
            continue
        if key not in ("size", "start", "id", "trigger", "recv_done_trigger", "send_done_trigger", "prio"):
            raise scenario_error(
                f"{where}.{key}", f"unknown key in {path}; allowed: id, msg, start, size, trigger, recv_done_trigger, send_done_trigger"
            )
        if i + 1 >= len(fields):
            raise scenario_error(where, f"{path}: {key!r} has no value; {shape}")
        value = fields[i + 1]
        i += 2
        if key == "size":
            conn.size = _whole(value, where, "size", path)
        elif key == "start":
            # htsim: picoseconds; with -conn_reuse (the only way it takes `msg`) whole microseconds
            conn.start = _picoseconds(value, where, path, unit_ps=1_000_000 if reuse else 1)
        elif key == "id":
            conn.id = _whole(value, where, "id", path)
        elif key == "trigger":
            conn.trigger = _whole(value, where, "trigger", path)
        elif key in ("recv_done_trigger", "send_done_trigger"):
            if conn.done_trigger:
                raise scenario_error(
                    f"{where}.{key}", f"{path}: a connection activates one trigger here; allowed: recv_done_trigger or send_done_trigger"
                )
            if key == "send_done_trigger" and reuse:
                why = "fires on a message of -conn_reuse when its last packet leaves (UecMsg's SentLast), which no dependency here signals"
                raise scenario_error(f"{where}.{key}", f"{path}: htsim's send_done_trigger {why}; allowed: recv_done_trigger")
            # htsim's UecSrc fires its end trigger once the source holds every ACK: the
            # receipt its sender hears of by the final ACK, what `after` waits for from there
            conn.done_trigger = _whole(value, where, key, path)
        else:
            raise scenario_error(f"{where}.{key}", f"{path}: htsim's {key} is a sender priority fabricsim does not model")
    if conn.size is None:
        raise scenario_error(where, f"{path}: the connection has no size; {shape}")
    if conn.trigger and conn.start is not None:
        raise scenario_error(where, f"{path}: both a start and a trigger (htsim refuses it); {shape}")
    if not conn.trigger and conn.start is None:
        raise scenario_error(where, f"{path}: the connection has no start; {shape}")
    for end in ("src", "dst"):
        if nodes is not None and getattr(conn, end) >= nodes:
            raise scenario_error(f"{where}.{end}", f"got {getattr(conn, end)} in {path}; allowed: below Nodes {nodes}")
    return conn


def _entries(conns: list[_Conn], triggers: dict[int, _Trigger], path: Path, keep_ids: bool) -> list[dict[str, Any]]:
    """The flows entries; a triggered connection waits (``after``) for the connections whose
    receipt activates its trigger, when that is what htsim does whatever the order of events: a
    oneshot trigger activated by one connection, a barrier of ``count`` activated by ``count``."""
    activators: dict[int, list[int]] = {}
    targets: dict[int, list[int]] = {}
    for k, c in enumerate(conns):
        for tid, into in ((c.trigger, targets), (c.done_trigger, activators)):
            if not tid:
                continue
            if tid not in triggers:
                undeclared = f"{path}: trigger {tid} is not declared"
                raise scenario_error(f"workload.file[line {c.line}]", f"{undeclared}; add: trigger id {tid} oneshot")
            into.setdefault(tid, []).append(k)
    for tid, t in triggers.items():
        where, got, wait = f"workload.file[line {t.line}]", len(activators.get(tid, [])), targets.get(tid, [])
        need = {"oneshot": 1, "barrier": t.count}.get(t.kind)
        if need is None:
            why = "starts its targets one per activation, in the order activations come; allowed: oneshot or barrier"
            raise scenario_error(where, f"{path}: htsim's multishot trigger {tid} {why}")
        if got != need or (got and not wait) or (wait and not got):
            what = f"{got} connection(s) activate it (recv_done_trigger {tid}) and {len(wait)} wait for it"
            allowed = f"{need} activating it and at least one waiting, as htsim fires a {t.kind} trigger"
            raise scenario_error(where, f"{path}: trigger {tid} ({t.kind}): {what}; allowed: {allowed}")
    entries: list[dict[str, Any]] = []
    for c in conns:
        entry: dict[str, Any] = {"src": c.src, "dst": c.dst, "size": f"{c.size}B", "start": f"{c.start or 0}ps"}
        if keep_ids and c.id is not None:
            entry["id"] = c.id
        if c.trigger:
            entry["after"] = activators[c.trigger]  # row numbers: the entries' default ids
        entries.append(entry)
    return entries


def _whole(text: str, where: str, what: str, path: Path) -> int:
    # int() reads other scripts' digits and refuses superscripts; past 19 digits a number is
    # beyond the core's u64 (and past 4 300 int() refuses it with a traceback)
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_DIGITS:
        shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"
        raise scenario_error(f"{where}.{what}", f"got {shown!r} in {path}; allowed: a whole number >= 0 of at most {MAX_DIGITS} digits")
    return int(text)


def _picoseconds(text: str, where: str, path: Path, unit_ps: int = 1) -> int:
    """A start in picoseconds (``unit_ps`` 1, rounded) or in whole units of ``unit_ps``
    (truncated, as htsim's ``timeFromUs((uint32_t)start)`` under -conn_reuse)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        unit = "picoseconds" if unit_ps == 1 else "microseconds (htsim's -conn_reuse files)"
        raise scenario_error(f"{where}.start", f"got {text!r} in {path}; allowed: {unit} >= 0")
    return round(value) if unit_ps == 1 else int(value) * unit_ps


#: The keys of an htsim topology file (``FatTreeTopologyCfg::read_cfg``), lower-cased as it reads
#: them: the header's, then each tier's.
_TOPO_HEADER = ("nodes", "tiers", "podsize")
_TOPO_TIER: tuple[str, ...] = ("downlink_speed_gbps", "radix_up", "radix_down", "queue_up", "queue_down", "oversubscribed", "bundle")
_TOPO_TIER += ("switch_latency_ns", "downlink_latency_ns")
#: The most hosts an htsim topology file may describe (the core's own bound on a fabric).
MAX_TOPO_NODES = 1 << 20


def read_topo(path: Path) -> tuple[dict[str, Any], int]:
    """The fabric of an htsim topology file (``.topo``: ``htsim_uec -topo``) as ``topology.graph``
    takes it, and the switch latency (ps) every tier gives.

    htsim builds its custom fat tree from the file (``fat_tree_topology.cpp``,
    ``set_custom_params`` and the constructor): ``Nodes`` hosts in pods of ``Podsize``; tier 0's
    ``Radix_Down`` hosts a ToR (host ``s`` on ToR ``s / Radix_Down``), its links at tier 0's
    ``Downlink_speed_Gbps`` and ``Downlink_Latency_ns``; each ToR linked to every aggregation
    switch of its pod (of every pod's in 2 tiers) by tier 1's ``Bundle`` links at tier 1's speed
    and latency, ``Nodes x speed0 / (speed1 x Oversubscribed0) / (pods x Radix_Down1)``
    aggregation switches a pod; aggregation switch ``a`` linked to core switches ``a mod
    per_pod + per_pod x l`` for ``l`` below ``Radix_Up1 / Bundle2``. Switches are named as
    fabricsim's fat tree names them (htsim's ``Switch_LowerPod_j`` is ``leaf{j}``,
    ``Switch_UpperPod_j`` ``agg{j}``, ``Switch_Core_j`` ``core{j}``), so a fault names the same
    switch. What fabricsim does not model is refused naming the line: per-tier queue sizes
    (``[switch] buffer`` is every port's), parallel links (``Bundle`` above 1), and switch
    latencies that differ between tiers (``topology.switch_latency`` is one)."""
    text = read_text(path, "topology.file", "an htsim topology file")
    header: dict[str, int] = {}
    tiers: dict[int, dict[str, int]] = {}
    tier = -1
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        where = f"{path}:{number}"
        key = tokens[0].lower()
        if not (key == "tier" or (key in _TOPO_HEADER and tier < 0) or (key in _TOPO_TIER and tier >= 0)):
            allowed = "Nodes, Tiers, Podsize, then Tier N and its " + ", ".join(_TOPO_TIER)
            raise scenario_error("topology.file", f"{where}: got {tokens[0]!r}; allowed: {allowed} (htsim's FatTreeTopologyCfg)")
        text = tokens[1] if len(tokens) > 1 else ""
        if not (text.isascii() and text.isdigit()) or len(text) > MAX_DIGITS:
            raise scenario_error(
                "topology.file", f"{where}: {tokens[0]} {text[:40]!r}; allowed: a whole number of at most {MAX_DIGITS} digits"
            )
        value = int(text)
        if key in _TOPO_HEADER and tier < 0:
            header[key] = value
        elif key == "tier":
            if value > 2:
                raise scenario_error("topology.file", f"{where}: tier {value}; allowed: 0, 1 or 2")
            tier = value
            tiers.setdefault(tier, {})
        else:
            if key in tiers[tier]:
                raise scenario_error("topology.file", f"{where}: {tokens[0]} given twice for tier {tier}")
            if key in ("queue_up", "queue_down"):
                why = "per-tier queue sizes are not modelled: [switch] buffer sizes every port's queue"
                raise scenario_error("topology.file", f"{where}: {tokens[0]}: {why}; allowed: remove it and set [switch] buffer")
            if key == "bundle" and value != 1:
                why = "parallel links between two switches are not modelled"
                raise scenario_error("topology.file", f"{where}: Bundle {value}: {why}; allowed: Bundle 1")
            tiers[tier][key] = value
    return _topo_graph(path, header, tiers)


def _topo_graph(path: Path, header: dict[str, int], tiers: dict[int, dict[str, int]]) -> tuple[dict[str, Any], int]:
    """:func:`read_topo`'s fabric from the file's values, checked as htsim checks them."""

    def refuse(why: str) -> ScenarioError:
        return scenario_error("topology.file", f"{path}: {why} (as htsim's set_custom_params requires)")

    for key in _TOPO_HEADER:
        if not header.get(key):
            raise refuse(f"no {key.capitalize()} above 0 in the header")
    n, levels, podsize = header["nodes"], header["tiers"], header["podsize"]
    if levels not in (2, 3) or n > MAX_TOPO_NODES:
        raise refuse(f"Tiers {levels}, Nodes {n}; allowed: 2 or 3 tiers, at most {MAX_TOPO_NODES} nodes")
    for t in range(levels):
        got = tiers.get(t)
        need = ["downlink_speed_gbps", "downlink_latency_ns", "radix_down"] + (["radix_up"] if t < levels - 1 else [])
        missing = [k for k in need if got is None or not got.get(k)]
        if missing:
            raise refuse(f"tier {t} has no {', '.join(missing)}")
    speed = [tiers[t]["downlink_speed_gbps"] for t in range(levels)]
    radix_down = [tiers[t]["radix_down"] for t in range(levels)]
    radix_up = [tiers[t].get("radix_up", 0) for t in range(levels)]
    oversub = [tiers[t].get("oversubscribed", 1) for t in range(levels)]
    if n % podsize or podsize % radix_down[0]:
        raise refuse(f"Nodes {n}, Podsize {podsize}, tier 0 Radix_Down {radix_down[0]}: pods of whole ToRs")
    pods = n // podsize
    tors = n // radix_down[0]
    if radix_down[0] // radix_up[0] != oversub[0] or (n * speed[0]) % (speed[1] * oversub[0]):
        raise refuse(f"tier 0 Radix_Down {radix_down[0]} over Radix_Up {radix_up[0]} is not Oversubscribed {oversub[0]}")
    tor_up = n * speed[0] // (speed[1] * oversub[0])
    if tor_up % (pods * radix_down[1]):
        raise refuse(f"{tor_up} ToR uplinks do not fill {pods} pods of tier 1 switches of Radix_Down {radix_down[1]}")
    aggs_per_pod = tor_up // (pods * radix_down[1])
    if aggs_per_pod != radix_up[0]:
        raise refuse(f"tier 0 Radix_Up {radix_up[0]} against {aggs_per_pod} tier 1 switches a pod")
    cores = 0
    if levels == 3:
        agg_up = tor_up * speed[1] // (speed[2] * oversub[1])
        cores = agg_up // radix_down[2]
        if agg_up % radix_down[2] or cores % aggs_per_pod or cores // aggs_per_pod != radix_up[1]:
            raise refuse(f"{cores} core switches against tier 1 Radix_Up {radix_up[1]} and {aggs_per_pod} tier 1 switches a pod")
    latencies = {tiers[t].get("switch_latency_ns", 0) for t in range(levels)}
    if len(latencies) > 1:
        raise refuse(f"switch latencies {sorted(latencies)} ns by tier; allowed: one for every tier (topology.switch_latency)")

    def link(a: str, b: str, t: int) -> dict[str, Any]:
        return {"a": a, "b": b, "rate": f"{speed[t]}Gbps", "latency": f"{tiers[t]['downlink_latency_ns']}ns"}

    hosts = [{"name": f"host{s}"} for s in range(n)]
    switches = [{"name": f"leaf{j}", "tier": 0} for j in range(tors)]
    aggs = aggs_per_pod * pods
    switches += [{"name": f"agg{j}" if levels == 3 else f"spine{j}", "tier": 1} for j in range(aggs)]
    switches += [{"name": f"core{j}", "tier": 2} for j in range(cores)]
    up = "agg" if levels == 3 else "spine"
    links = [link(f"host{s}", f"leaf{s // radix_down[0]}", 0) for s in range(n)]
    tors_per_pod = podsize // radix_down[0]
    for tor in range(tors):
        # in 3 tiers a ToR reaches its pod's aggregation switches, in 2 every one
        first, count = (tor // tors_per_pod * aggs_per_pod, aggs_per_pod) if levels == 3 else (0, aggs)
        links += [link(f"leaf{tor}", f"{up}{a}", 1) for a in range(first, first + count)]
    for a in range(aggs if levels == 3 else 0):
        links += [link(f"agg{a}", f"core{a % aggs_per_pod + aggs_per_pod * k}", 2) for k in range(radix_up[1])]
    return {"hosts": hosts, "switches": switches, "links": links}, latencies.pop() * 1000
