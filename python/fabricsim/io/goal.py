"""GOAL schedules (LogGOPSim's text format) as ``[workload] kind = "flows"`` entries.

``file = "x.goal"`` reads one. The format (LogGOPSim's ``txt2bin``; Hoefler, Schneider and
Lumsdaine, "LogGOPSim - Simulating Large-Scale Applications in the LogGOPS Model", LSAP 2010):

.. code-block:: text

    num_ranks 2
    rank 0 {
    l1: send 1024b to 1 tag 0
    l2: calc 500
    l2 requires l1
    }
    rank 1 {
    l1: recv 1024b from 0 tag 0
    }

Each rank lists operations, each with an optional label: ``send Nb to R``, ``recv Nb from R``
(each with an optional ``tag T``, ``cpu C`` and ``nic N``) and ``calc T``; then dependencies
between its labels: ``A requires B`` (A starts once B is done) and ``A irequires B`` (A starts
once B has started). ``//`` and ``/* */`` are comments.

How they become fabricsim's entries (GOAL rank r is host r):

* a ``send`` is a message, released once what it requires is done. It is matched with the
  ``recv`` of the same (source, destination, tag) in order, as MPI matches them; its bytes are
  the send's (a 0-byte send moves 1 byte);
* a ``recv`` is done when its message has arrived and what it requires is done (a compute
  task of no time when it requires anything, else the message itself);
* a ``calc T`` is a compute task of ``T`` nanoseconds (LogGOPSim's time unit) on its rank,
  once what it requires is done;
* ``A irequires B`` makes A wait for what B waits for (B's start); a send is done when its
  message has been received, which its sender hears by the final ACK.

A rank's operations on one CPU (``cpu C``, default 0) run one at a time, as LogGOPSim runs them
(its ``nexto`` per host and CPU in ``LogGOPSim.cpp``: an operation whose CPU is busy is queued
again for when it frees): a ``calc`` holds its CPU for its time; a ``send`` waits for its CPU to
be free and holds it for no time, as does a message's arrival at its receiver (LogGOPSim's
``o`` and ``O``, the CPU's per-message overheads, are 0 here: the NIC and the fabric are
simulated instead). So two calcs on one CPU run back to back, and a send that requires the
second leaves after both. Where a rank has no ``calc`` on a CPU its operations never wait for
it, and none is written (``cpu`` on the entries: docs/scenario.md). Simplified: LogGOPSim
charges a message's arrival to the CPU numbered as the sender's operation; here the
``recv``'s own ``cpu`` (both 0 unless a schedule says otherwise).

A malformed line, an undefined label, an unmatched send or receive, a wildcard (``-1``) source
or tag, and a dependency cycle are refused as ``workload.file[line N]`` or naming the rank.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import argument_error, scenario_error
from ._schedules import match_in_order, topological
from .files import MAX_DIGITS, read_text

__all__ = ["read_goal"]

_OP = re.compile(
    r"^(?:(?P<label>[A-Za-z][A-Za-z0-9_]*)\s*:\s*)?"
    r"(?:(?P<kind>send|recv)\s+(?P<size>\d+)b\s+(?P<dir>to|from)\s+(?P<peer>-?\d+)"
    r"|calc\s+(?P<time>\d+))"
    r"(?P<opts>(?:\s+(?:tag|cpu|nic)\s+-?\d+)*)\s*$",
    re.ASCII,  # digits 0-9 only: \d would take other scripts' digits, which int() reads
)
_DEP = re.compile(r"^(?P<a>[A-Za-z][A-Za-z0-9_]*)\s+(?P<how>requires|irequires)\s+(?P<b>[A-Za-z][A-Za-z0-9_]*)\s*$")
_OPT = re.compile(r"(tag|cpu|nic)\s+(-?\d+)", re.ASCII)
_MAX_CPU = 65535
#: The most ranks a schedule may declare (a list of labels is kept per rank).
_MAX_RANKS = 1 << 24


@dataclass
class _Op:
    rank: int
    line: int
    kind: str  # send, recv, calc
    size: int = 0
    peer: int = 0
    tag: int = 0
    time: int = 0
    cpu: int = 0
    requires: list[tuple[str, int]] = field(default_factory=list)  # (label, line)
    irequires: list[tuple[str, int]] = field(default_factory=list)


def _strip_comments(text: str) -> list[str]:
    """The lines without ``/* */`` and ``//`` comments (a block comment keeps its lines)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return [line.split("//", 1)[0].strip() for line in text.splitlines()]


def _number(text: str, where: str, what: str, path: Path) -> int:
    """A number the line's pattern matched (ASCII digits, maybe a sign), refused past
    :data:`fabricsim.io.files.MAX_DIGITS` digits naming the line."""
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise scenario_error(where, f"got a {what} of {len(text)} digits in {path}; allowed: at most {MAX_DIGITS} digits")
    return int(text)


def _parse(path: Path, text: str) -> tuple[int, list[_Op], list[dict[str, _Op]]]:
    ranks: int | None = None
    ops: list[_Op] = []
    labels: list[dict[str, _Op]] = []
    rank: int | None = None
    for number, line in enumerate(_strip_comments(text), start=1):
        where = f"workload.file[line {number}]"
        if not line:
            continue
        if rank is None:
            if m := re.fullmatch(r"num_ranks\s+(\d+)", line, re.ASCII):
                ranks = int(m.group(1)) if len(m.group(1)) <= 9 else _MAX_RANKS + 1
                if not 1 <= ranks <= _MAX_RANKS:
                    raise scenario_error(where, f"got num_ranks {m.group(1)[:20]} in {path}; allowed: 1 to {_MAX_RANKS}")
                labels = [{} for _ in range(ranks)]
            elif m := re.fullmatch(r"rank\s+(\d+)\s*\{", line, re.ASCII):
                if ranks is None:
                    raise scenario_error(where, f"{path}: a rank before num_ranks; allowed: num_ranks N first")
                rank = _number(m.group(1), where, "rank", path)
                if rank >= ranks:
                    raise scenario_error(where, f"got rank {rank} in {path}; allowed: 0 to num_ranks - 1 ({ranks - 1})")
            else:
                raise scenario_error(where, f"got {line!r} in {path}; allowed: num_ranks N, or rank R {{")
            continue
        if line == "}":
            rank = None
            continue
        if m := _OP.match(line):
            opts = {k: _number(v, where, k, path) for k, v in _OPT.findall(m.group("opts") or "")}
            cpu = opts.get("cpu", 0)
            if not 0 <= cpu <= _MAX_CPU:
                raise scenario_error(where, f"got cpu {cpu} in {path}; allowed: 0 to {_MAX_CPU}")
            if m.group("time") is not None:
                op = _Op(rank, number, "calc", time=_number(m.group("time"), where, "calc", path), cpu=cpu)
            else:
                peer, tag = _number(m.group("peer"), where, "peer", path), opts.get("tag", 0)
                if peer < 0 or tag < 0:
                    raise scenario_error(where, f"got a wildcard (-1) source or tag in {path}; allowed: a rank and a tag >= 0")
                if ranks is not None and peer >= ranks:
                    raise scenario_error(where, f"got peer {peer} in {path}; allowed: 0 to num_ranks - 1 ({ranks - 1})")
                if peer == rank:
                    raise scenario_error(where, f"got rank {rank} sending to itself in {path}; allowed: another rank")
                op = _Op(rank, number, m.group("kind"), size=_number(m.group("size"), where, "size", path), peer=peer, tag=tag, cpu=cpu)
            ops.append(op)
            if label := m.group("label"):
                if label in labels[rank]:
                    raise scenario_error(where, f"got label {label} again on rank {rank} in {path}; allowed: each label once per rank")
                labels[rank][label] = op
            continue
        if m := _DEP.match(line):
            target = labels[rank].get(m.group("a"))
            if target is None:
                undefined = f"got label {m.group('a')} in {path}, not defined on rank {rank} above"
                raise scenario_error(where, f"{undefined}; allowed: a label of this rank")
            (target.requires if m.group("how") == "requires" else target.irequires).append((m.group("b"), number))
            continue
        raise scenario_error(where, f"got {line!r} in {path}; allowed: [label:] send Nb to R | recv Nb from R | calc T, or A requires B")
    if rank is not None:
        raise scenario_error("workload.file", f"{path} ends inside rank {rank}: a closing }} is missing")
    if ranks is None or not ops:
        raise scenario_error("workload.file", f"{path} has no num_ranks or no operation")
    return ranks, ops, labels


def read_goal(path: str | Path) -> list[dict[str, Any]]:
    """The entries of a GOAL schedule (see the module's doc): messages and compute tasks with
    their ``id`` and ``after``."""
    if not isinstance(path, str | os.PathLike):
        raise argument_error("path", path, "a GOAL file's path")
    path = Path(path)
    text = read_text(path, "workload.file", "a GOAL schedule")
    _, ops, labels = _parse(path, text)
    # match sends and receives per (source, destination, tag), in order
    sends: dict[tuple[int, int, int], list[_Op]] = {}
    recvs: dict[tuple[int, int, int], list[_Op]] = {}
    for op in ops:
        if op.kind == "send":
            sends.setdefault((op.rank, op.peer, op.tag), []).append(op)
        elif op.kind == "recv":
            recvs.setdefault((op.peer, op.rank, op.tag), []).append(op)

    def unmatched(key: tuple[int, int, int], extra: _Op) -> Exception:
        what = "send without a matching recv" if extra.kind == "send" else "recv without a matching send"
        pair = f"rank {key[0]} to {key[1]}, tag {key[2]}"
        return scenario_error(f"workload.file[line {extra.line}]", f"{path}: a {what} ({pair}) on rank {extra.rank}")

    matched = {id(b): a for a, b in match_in_order(sends, recvs, unmatched)}  # id(recv) -> its send
    entries: list[dict[str, Any]] = []
    node: dict[int, int] = {}  # id(op) -> the entry whose completion is the op's
    waits: dict[int, list[int]] = {}  # id(op) -> entries it waits for (its start)

    def label(op: _Op, name: str, line: int) -> _Op:
        target = labels[op.rank].get(name)
        if target is None:
            undefined = f"got label {name} in {path}, not defined on rank {op.rank}"
            raise scenario_error(f"workload.file[line {line}]", f"{undefined}; allowed: a label of this rank")
        return target

    # the CPUs a calc holds: the only ones an operation can find busy
    busy = {(op.rank, op.cpu) for op in ops if op.kind == "calc"}
    # every send's message first (a recv's completion needs its send's, on another rank)
    for op in ops:
        if op.kind == "send":
            node[id(op)] = len(entries)
            entries.append({"id": len(entries), "src": op.rank, "dst": op.peer, "size": f"{max(op.size, 1)}B"})
            if (op.rank, op.cpu) in busy:
                entries[-1]["cpu"] = op.cpu
    for op in _topological(ops, label, path):
        after: list[int] = [node[id(label(op, n, ln))] for n, ln in op.requires]
        for n, ln in op.irequires:
            after += waits[id(label(op, n, ln))]
        waits[id(op)] = after
        if op.kind == "send":
            if after:
                entries[node[id(op)]]["after"] = sorted(set(after))
            continue
        if op.kind == "recv":
            message = node[id(matched[id(op)])]
            if (op.rank, op.cpu) in busy:
                # the message's arrival waits for the receiving CPU, whatever the recv waits for
                entries.append({"id": len(entries), "src": op.rank, "dst": op.rank, "size": "0B", "cpu": op.cpu, "after": [message]})
                message = len(entries) - 1
            if not after:
                node[id(op)] = message
                continue
            after.append(message)
        entry: dict[str, Any] = {"id": len(entries), "src": op.rank, "dst": op.rank, "size": "0B"}
        if op.kind == "calc":
            entry["delay"] = f"{op.time}ns"
            entry["cpu"] = op.cpu
        if after:
            entry["after"] = sorted(set(after))
        node[id(op)] = len(entries)
        entries.append(entry)
    return entries


def _topological(ops: list[_Op], label: Any, path: Path) -> list[_Op]:
    """The operations in an order where each comes after those it requires or irequires; a
    cycle is refused naming a rank and line on it."""
    by_id = {id(op): op for op in ops}
    deps = {id(op): [id(label(op, n, ln)) for n, ln in op.requires + op.irequires] for op in ops}

    def cycle(key: int) -> Exception:
        op = by_id[key]
        return scenario_error(f"workload.file[line {op.line}]", f"{path}: a dependency cycle through rank {op.rank}")

    return [by_id[k] for k in topological(list(by_id), deps, cycle)]
