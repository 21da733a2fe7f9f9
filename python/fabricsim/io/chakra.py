"""Chakra execution traces (MLCommons' ``.et`` files, one per rank) as ``[workload] kind =
"flows"`` entries.

``file = "traces/llm.et"`` reads ``traces/llm.0.et``, ``traces/llm.1.et``, ... up to the first
missing number (the prefix naming ASTRA-sim uses); rank r is host r. Each file is Chakra's
stream of length-delimited protobuf messages (plain or gzip): a ``GlobalMetadata`` then the
rank's ``Node`` s, per the public schema (``schema/protobuf/et_def.proto`` of
mlcommons/chakra). The reader decodes the protobuf wire format itself (no protobuf
dependency) and uses these fields of a node: ``id``, ``name``, ``type``, ``ctrl_deps`` and
``data_deps`` (both are dependencies), ``duration_micros``, and the attributes ``comm_type``,
``comm_size``, ``comm_src``, ``comm_dst``, ``comm_tag`` and ``pg_name``.

How nodes become fabricsim's entries:

* ``COMP_NODE`` (and ``MEM_LOAD_NODE``, ``MEM_STORE_NODE``: fabricsim has no memory model) is a
  compute task of ``duration_micros`` on its rank, released once its dependencies are done. A
  compute node that gives its FLOPs (the attribute ``num_ops``) and no ``duration_micros``, as
  ASTRA-sim's LLM trace generator writes them, takes ``num_ops / gpu_tflops`` (``[workload]
  gpu_tflops``, TFLOP/s); without ``gpu_tflops`` it is refused, never run in 0 us. With
  ``[workload] gpu_memory_tb_per_s`` (TB/s) its ``tensor_size`` (the bytes it moves to and from
  memory) is timed too, as ASTRA-sim's roofline times it (``Roofline::get_perf``: ``min(peak,
  bandwidth x num_ops / tensor_size)``): ``max(num_ops / gpu_tflops, tensor_size / bandwidth)``;
  a memory node without a duration takes ``tensor_size / bandwidth``. A rank's compute nodes
  run one at a time, as ASTRA-sim's ``HardwareResource`` runs them (GPU nodes on CPU 0 of the
  host, ``is_cpu_op`` nodes on CPU 1);
* ``METADATA_NODE`` takes no time: it is done when its dependencies are;
* ``COMM_SEND_NODE`` (``comm_dst``, ``comm_size``, ``comm_tag``) is a message, matched with the
  ``COMM_RECV_NODE`` of the same (source, destination, tag) in file order; a send is done when
  its message has been received (its sender hears by the final ACK), a receive when its
  message has arrived and its own dependencies are done;
* ``COMM_COLL_NODE`` (``comm_type``, ``comm_size``) is one rank's part of a collective.
  ``comm_size`` means what it means to ASTRA-sim (``Ring.cc``: an all-reduce's and a
  reduce-scatter's ``msg_size = data_size / nodes_in_ring``, an all-gather's
  ``msg_size = data_size`` with ``final_data_size = data_size * nodes_in_ring``): the whole
  buffer of an all-reduce, a reduce-scatter, an all-to-all and a broadcast, but each rank's
  *input* of an all-gather, which fabricsim's collectives count as the gathered output
  (nccl-tests' size), so an all-gather of ``comm_size`` on n ranks runs as fabricsim's of
  n x ``comm_size``. The k-th
  collective node of each rank of a process group is one collective, expanded into messages
  by fabricsim's algorithm (``[workload] algorithm``, default a job's: ``ring``, ``direct``
  for all-to-all); a rank's first messages wait for its node's dependencies, and its node is
  done when its part is. Without ``pg_name`` a collective spans every rank; with one, the
  group's ranks come from ``comm_groups``, ASTRA-sim's communicator group file
  (``{"<pg_name>": [ranks]}``, JSON; a group of one rank, as ASTRA-sim's generators write for
  a dimension of size 1, is accepted: its collectives move nothing and take no time). All-reduce, reduce-scatter, all-gather, all-to-all and
  broadcast (from the group's first rank) are supported.

A file that is not such a stream, a node of an unknown or unsupported type, a dependency on a
node the rank does not have, an unmatched send or receive, ranks that disagree on a
collective, and a cycle (through messages and collectives too) are refused naming the rank
and node: ``workload.file[rank 3, node 17]``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import argument_error, scenario_error
from ._schedules import match_in_order, topological
from .chakra_proto import _COLL, _COMP, _MEM_LOAD, _MEM_STORE, _METADATA, _RECV, _SEND, _TYPE_NAMES, _Node, _read_rank
from .files import read_input

__all__ = ["read_chakra"]

# CollectiveCommType of et_def.proto
_COMM_NAMES = ["ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER", "BROADCAST", "ALL_TO_ALL"]
_COMM_NAMES += ["REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"]
_COLLECTIVES = {0: "allreduce", 2: "allgather", 5: "broadcast", 6: "alltoall", 7: "reduce_scatter"}
# the messages one trace may expand to (each becomes a Python entry before the run)
MAX_MESSAGES = 10_000_000
# the longest compute time a node's num_ops may make, in picoseconds: the core's longest
# duration (units.rs, `Duration`: 100 000 s)
_LONGEST_PS = 100_000 * 10**12


def _groups(comm_groups: Path | None, ranks: int) -> dict[str, list[int]]:
    if comm_groups is None:
        return {}
    text = read_input(comm_groups, "workload.comm_groups", "a communicator group file (JSON)")
    try:
        raw = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise scenario_error("workload.comm_groups", f"cannot read {str(comm_groups)!r} as JSON: {e}") from None
    ok = isinstance(raw, dict) and all(isinstance(v, list) and all(type(r) is int for r in v) for v in raw.values())
    if not ok:
        raise scenario_error("workload.comm_groups", f'{comm_groups} must hold an object of rank lists, as {{"1": [0, 1, 2, 3]}}')
    for name, members in raw.items():
        bad = [r for r in members if not 0 <= r < ranks]
        if bad or len(set(members)) != len(members) or not members:
            why = f"rank {bad[0]} (the trace has ranks 0 to {ranks - 1})" if bad else "a rank twice, or no rank"
            raise scenario_error(f"workload.comm_groups.{name}", f"got {why}; allowed: 1 or more distinct ranks of the trace")
    return {str(k): list(v) for k, v in raw.items()}


def read_chakra(
    path: str | Path,
    algorithm: str | None = None,
    comm_groups: str | Path | None = None,
    per_server: int = 1,
    gpu_tflops: float | None = None,
    gpu_memory_tb_per_s: float | None = None,
) -> list[dict[str, Any]]:
    """The entries of a Chakra trace (see the module's doc) named by ``path`` (``x.et`` for
    ``x.0.et``, ``x.1.et``, ...): messages and compute tasks with their ``id`` and ``after``.
    ``per_server``: the topology's GPUs per server (the hierarchical algorithm's layout);
    ``gpu_tflops``: the rate that times compute nodes given by ``num_ops`` alone;
    ``gpu_memory_tb_per_s``: the memory bandwidth that times their ``tensor_size``."""
    if not isinstance(path, str | os.PathLike):
        raise argument_error("path", path, "a Chakra trace's path (x.et for x.0.et, x.1.et, ...)")
    path = Path(path)
    if not path.name or "\x00" in str(path):
        raise scenario_error("workload.file", f"got {str(path)!r}; allowed: a Chakra trace's path (x.et for x.0.et, x.1.et, ...)")
    stem = path.with_suffix("")
    files: list[Path] = []
    while (f := stem.with_name(f"{stem.name}.{len(files)}.et")).exists():
        files.append(f)
    if not files:
        hint = (
            f" (a trace is named by its prefix: {stem.with_suffix('').name}.et reads {stem.name}.0.et, ...)"
            if stem.suffix[1:].isdigit()
            else ""
        )
        raise scenario_error("workload.file", f"found no {stem.name}.0.et beside {str(path)!r}{hint}")
    ranks = [_read_rank(f, r) for r, f in enumerate(files)]
    groups = _groups(Path(comm_groups) if comm_groups is not None else None, len(ranks))
    return _Convert(path, ranks, groups, algorithm, per_server, gpu_tflops, gpu_memory_tb_per_s).entries


class _Convert:
    """The nodes of every rank as entries: first an entry id for what completes each node,
    then every entry's ``after`` from those ids (ids are free numbers, so the order does not
    matter)."""

    def __init__(
        self,
        path: Path,
        ranks: list[list[_Node]],
        groups: dict[str, list[int]],
        algorithm: str | None,
        per_server: int,
        gpu_tflops: float | None = None,
        gpu_memory_tb_per_s: float | None = None,
    ):
        self.path, self.ranks, self.groups, self.algorithm, self.per_server = path, ranks, groups, algorithm, per_server
        self.gpu_tflops, self.memory = gpu_tflops, gpu_memory_tb_per_s
        self.entries: list[dict[str, Any]] = []
        self.by_id: list[dict[int, _Node]] = []
        for nodes in ranks:
            index: dict[int, _Node] = {}
            for n in nodes:
                if n.id in index:
                    raise scenario_error(n.where(), f"{path}: node id {n.id} twice on rank {n.rank}; allowed: unique ids per rank")
                index[n.id] = n
            self.by_id.append(index)
        for nodes in ranks:
            for n in nodes:
                for d in n.deps:
                    if d not in self.by_id[n.rank]:
                        raise scenario_error(n.where(), f"{path}: depends on node {d}, which rank {n.rank}'s trace does not have")
                if n.type not in range(1, 8):
                    kind = _TYPE_NAMES[n.type] if n.type < len(_TYPE_NAMES) else f"type {n.type}"
                    raise scenario_error(
                        n.where(),
                        f"{path}: got {kind}; allowed: COMP, MEM_LOAD, MEM_STORE, METADATA, COMM_SEND, COMM_RECV or COMM_COLL nodes",
                    )
        self.done: dict[tuple[int, int], int | None] = {}  # (rank, node id) -> the entry completing it
        self.waits: list[tuple[int, list[_Node], list[int]]] = []  # (entry, nodes whose deps it waits for, more ids)
        self.matched = self._match_messages()
        self.collectives = self._match_collectives()
        self._check_cycles()
        self._make()
        for entry, nodes, more in self.waits:
            after = set(more)
            for node in nodes:
                after.update(d for d in (self.done[(node.rank, x)] for x in node.deps) if d is not None)
            if after:
                self.entries[entry]["after"] = sorted(after)

    def _task(self, rank: int, delay: str = "", cpu: int | None = None) -> int:
        entry: dict[str, Any] = {"id": len(self.entries), "src": rank, "dst": rank, "size": "0B"}
        if delay:
            entry["delay"] = delay
        if cpu is not None:
            entry["cpu"] = cpu
        self.entries.append(entry)
        return len(self.entries) - 1

    def _message(self, src: int, dst: int, size: int) -> int:
        self.entries.append({"id": len(self.entries), "src": src, "dst": dst, "size": f"{max(size, 1)}B"})
        return len(self.entries) - 1

    def _match_messages(self) -> dict[tuple[int, int], _Node]:
        """Each receive's send, keyed by the receive's (rank, node id)."""
        sends: dict[tuple[int, int, int], list[_Node]] = {}
        recvs: dict[tuple[int, int, int], list[_Node]] = {}
        n = len(self.ranks)
        for nodes in self.ranks:
            for node in nodes:
                if node.type not in (_SEND, _RECV):
                    continue
                peer_key = "comm_dst" if node.type == _SEND else "comm_src"
                peer, tag = node.comm(peer_key, self.path), node.attrs.get("comm_tag", 0)
                node.comm("comm_size", self.path)
                if peer >= n or peer == node.rank:
                    raise scenario_error(node.where(), f"{self.path}: {peer_key} {peer}; allowed: another rank of the trace (0 to {n - 1})")
                key = (node.rank, peer, tag) if node.type == _SEND else (peer, node.rank, tag)
                (sends if node.type == _SEND else recvs).setdefault(key, []).append(node)

        def unmatched(key: tuple[int, int, int], extra: _Node) -> Exception:
            what = "a send without a matching receive" if extra.type == _SEND else "a receive without a matching send"
            return scenario_error(extra.where(), f"{self.path}: {what} (rank {key[0]} to {key[1]}, tag {key[2]})")

        matched: dict[tuple[int, int], _Node] = {}
        for a, b in match_in_order(sends, recvs, unmatched):
            if a.comm("comm_size", self.path) != b.comm("comm_size", self.path):
                sizes = f"{a.attrs['comm_size']} B sent, {b.attrs['comm_size']} B received"
                raise scenario_error(b.where(), f"{self.path}: a receive that does not match its send's size ({sizes})")
            matched[(b.rank, b.id)] = a
        return matched

    def _match_collectives(self) -> list[list[_Node]]:
        """Each collective: its ranks' nodes, in the group's rank order."""
        everyone = list(range(len(self.ranks)))
        issued: dict[str, list[list[_Node]]] = {}  # group -> per member, its nodes in file order
        for nodes in self.ranks:
            for node in nodes:
                if node.type != _COLL:
                    continue
                comm = node.comm("comm_type", self.path)
                if comm not in _COLLECTIVES:
                    name = _COMM_NAMES[comm] if comm < len(_COMM_NAMES) else str(comm)
                    allowed = ", ".join(_COMM_NAMES[c] for c in sorted(_COLLECTIVES))
                    raise scenario_error(node.where(), f"{self.path}: comm_type {name} is not supported; allowed: {allowed}")
                node.comm("comm_size", self.path)
                group = node.attrs.get("pg_name")
                members = everyone if group is None else self.groups.get(str(group))
                if members is None:
                    raise scenario_error(
                        node.where(), f"{self.path}: pg_name {group!r} is not in workload.comm_groups; allowed: a group it defines"
                    )
                if node.rank not in members:
                    raise scenario_error(node.where(), f"{self.path}: rank {node.rank} is not in its pg_name {group!r} ({members})")
                issued.setdefault("" if group is None else str(group), [[] for _ in members])[members.index(node.rank)].append(node)
        out: list[list[_Node]] = []
        for group, per_member in issued.items():
            members = everyone if group == "" else self.groups[group]
            count = max(len(p) for p in per_member)
            for i, nodes in enumerate(per_member):
                if len(nodes) != count:
                    fewer = f"rank {members[i]} issues {len(nodes)} collectives on group {group or 'of every rank'}, others {count}"
                    raise scenario_error(
                        f"workload.file[rank {members[i]}]", f"{self.path}: {fewer}; every rank of a group issues the same ones"
                    )
            for k in range(count):
                nodes = [p[k] for p in per_member]
                first = nodes[0]
                for other in nodes[1:]:
                    for key in ("comm_type", "comm_size"):
                        if other.attrs[key] != first.attrs[key]:
                            theirs = f"rank {first.rank}'s {first.attrs[key]}"
                            what = f"collective number {k + 1} of its group has {key} {other.attrs[key]}, {theirs}"
                            raise scenario_error(other.where(), f"{self.path}: {what}; allowed: the same on every rank")
                out.append(nodes)
        return out

    def _check_cycles(self) -> None:
        """A cycle through dependencies, messages and collectives would deadlock: refused naming
        a node on it."""
        waits_for: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for nodes in self.ranks:
            for n in nodes:
                waits_for[(n.rank, n.id)] = [(n.rank, d) for d in n.deps]
        for (rank, node), send in self.matched.items():
            waits_for[(rank, node)].append((send.rank, send.id))
        for nodes in self.collectives:
            # each rank's part needs every rank's entry (through the messages it receives)
            deps = [(n.rank, d) for n in nodes for d in n.deps]
            for n in nodes:
                waits_for[(n.rank, n.id)] += deps

        def cycle(key: tuple[int, int]) -> Exception:
            return scenario_error(f"workload.file[rank {key[0]}, node {key[1]}]", f"{self.path}: a dependency cycle through this node")

        topological(list(waits_for), waits_for, cycle)

    def _make(self) -> None:
        # every send's message first: a receive's completion is its send's
        for nodes in self.ranks:
            for n in nodes:
                if n.type == _SEND:
                    entry = self._message(n.rank, n.comm("comm_dst", self.path), n.comm("comm_size", self.path))
                    self.done[(n.rank, n.id)] = entry
                    self.waits.append((entry, [n], []))
        for nodes in self.collectives:
            self._collective(nodes)
        for nodes in self.ranks:
            for n in nodes:
                key = (n.rank, n.id)
                if n.type in (_COMP, _MEM_LOAD, _MEM_STORE) or (n.type == _METADATA and n.deps):
                    # ASTRA-sim's HardwareResource runs one GPU compute node (and one CPU
                    # node, `is_cpu_op`) of a rank at a time: CPU 0 and 1 of its host here
                    cpu = (1 if n.attrs.get("is_cpu_op") else 0) if n.type == _COMP else None
                    entry = self._task(n.rank, self._duration(n), cpu)
                    self.done[key] = entry
                    self.waits.append((entry, [n], []))
                elif n.type == _METADATA:
                    self.done[key] = None  # done at the start
                elif n.type == _RECV:
                    message = self.done[(self.matched[key].rank, self.matched[key].id)]
                    assert message is not None
                    if n.deps:
                        entry = self._task(n.rank)
                        self.done[key] = entry
                        self.waits.append((entry, [n], [message]))
                    else:
                        self.done[key] = message

    def _duration(self, n: _Node) -> str:
        """A compute or memory node's time: its ``duration_micros``, or its ``num_ops`` at
        ``gpu_tflops`` and its ``tensor_size`` at the memory bandwidth, the longer (ASTRA-sim's
        roofline)."""
        if n.type == _METADATA or n.duration_us:
            return f"{n.duration_us}us" if n.duration_us else ""
        times: list[float] = []  # picoseconds
        what: list[str] = []
        if n.type == _COMP and n.attrs.get("num_ops") is not None:
            ops = n.comm("num_ops", self.path)
            if self.gpu_tflops is None:
                raise scenario_error(
                    n.where(),
                    f"{self.path}: a compute node of {ops} FLOPs (num_ops) and no duration_micros; "
                    "allowed with workload.gpu_tflops (what one GPU computes, TFLOP/s) to time it",
                )
            # FLOPs / (TFLOP/s x 1e12) seconds = FLOPs / TFLOP/s picoseconds
            times.append(ops / self.gpu_tflops)
            what.append(f"{ops} FLOPs (num_ops) at workload.gpu_tflops {self.gpu_tflops}")
        if self.memory is not None and n.attrs.get("tensor_size") is not None:
            size = n.comm("tensor_size", self.path)
            # bytes / (TB/s x 1e12) seconds = bytes / (TB/s) picoseconds
            times.append(size / self.memory)
            what.append(f"{size} B (tensor_size) at workload.gpu_memory_tb_per_s {self.memory}")
        if not times:
            return ""
        ps = max(times)
        if not ps <= _LONGEST_PS:
            raise scenario_error(
                n.where(),
                f"{self.path}: {' and '.join(what)} take {ps / 1e12:.3g} s; "
                f"allowed: at most {_LONGEST_PS // 10**12} s (the longest duration: a smaller node or a faster GPU)",
            )
        return f"{round(ps)}ps"

    def _collective(self, nodes: list[_Node]) -> None:
        first = nodes[0]
        op, size = _COLLECTIVES[first.attrs["comm_type"]], first.attrs["comm_size"]
        hosts = [n.rank for n in nodes]
        if len(hosts) == 1:
            # a group of one: nothing to move, done once its dependencies are
            entry = self._task(first.rank)
            self.done[(first.rank, first.id)] = entry
            self.waits.append((entry, [first], []))
            return
        if op == "allgather":
            # ASTRA-sim's all-gather size is each rank's input; fabricsim's the gathered output
            size *= len(hosts)
        left = MAX_MESSAGES - len(self.entries)
        try:
            messages, after, done = _core.collective_messages(op, self.algorithm, hosts, self.per_server, size, None, max(left, 0))
        except ValueError as e:
            raise scenario_error(first.where(), f"{self.path}: its {op} on ranks {hosts} cannot be expanded: {e}") from None
        base = len(self.entries)
        for src, dst, nbytes in messages:
            self._message(src, dst, nbytes)
        for i, deps in enumerate(after):
            ids = [base + d for d in deps if d >= 0]
            # a rank's first messages wait for its node's dependencies
            self.waits.append((base + i, [nodes[-1 - d] for d in deps if d < 0], ids))
        for n, ends in zip(nodes, done, strict=True):
            entry = self._task(n.rank)
            self.done[(n.rank, n.id)] = entry
            self.waits.append((entry, [n], [base + m for m in ends]))
