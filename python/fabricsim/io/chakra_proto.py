"""Chakra execution traces (MLCommons' ``et_def.proto``, one ``.et`` file a rank) decoded
without the protobuf package: a file is a sequence of length-prefixed ``Node`` messages, and
the reader takes each node's id, type, dependencies and the attributes the conversion reads
(:mod:`fabricsim.io.chakra`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import scenario_error
from .files import read_input

# NodeType of et_def.proto
_METADATA, _MEM_LOAD, _MEM_STORE, _COMP, _SEND, _RECV, _COLL = range(1, 8)
_TYPE_NAMES = ["INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE"]
_TYPE_NAMES += ["COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"]
#: The most nodes one rank's file may hold (each becomes Python objects and entries).
_MAX_NODES = 1 << 24


class _Bad(Exception):
    """A malformed protobuf message (the text says what)."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise _Bad("a varint runs past the end of its message")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise _Bad("a varint longer than 10 bytes")


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of one message: an int for varint and fixed types, the
    bytes for a length-delimited one."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if pos + width > len(buf):
                raise _Bad(f"field {number} runs past the end of its message")
            value, pos = int.from_bytes(buf[pos : pos + width], "little"), pos + width
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise _Bad(f"field {number} runs past the end of its message")
            value, pos = buf[pos : pos + length], pos + length
        else:
            raise _Bad(f"wire type {wire} (field {number}); allowed: 0, 1, 2, 5")
        out.append((number, wire, value))
    return out


def _signed(v: int) -> int:
    """An int32/int64 varint as the number it encodes (negative ones take 10 bytes)."""
    return v - (1 << 64) if v >= 1 << 63 else v


def _attr(buf: bytes) -> tuple[str, Any]:
    name: str = ""
    value: Any = None
    for number, wire, v in _fields(buf):
        if number == 1 and wire == 2:
            name = bytes(v).decode("utf-8", "replace")
        elif number in (7, 9) and wire == 0:  # int32_val, int64_val
            value = _signed(v)
        elif number in (11, 13, 19, 21) and wire != 2:  # uint32, uint64, fixed32, fixed64
            value = v
        elif number in (15, 17) and wire == 0:  # sint32, sint64 (zigzag)
            value = (v >> 1) ^ -(v & 1)
        elif number == 27 and wire == 0:
            value = bool(v)
        elif number == 29 and wire == 2:
            value = bytes(v).decode("utf-8", "replace")
    return name, value


@dataclass
class _Node:
    rank: int
    id: int = 0
    name: str = ""
    type: int = 0
    deps: list[int] = field(default_factory=list)
    duration_us: int = 0
    attrs: dict[str, Any] = field(default_factory=dict)

    def where(self) -> str:
        return f"workload.file[rank {self.rank}, node {self.id}]"

    def comm(self, key: str, path: Path) -> int:
        value = self.attrs.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            what = "missing" if value is None else repr(value)
            raise scenario_error(
                self.where(), f"{path}: {_TYPE_NAMES[self.type]} {self.name!r} has attribute {key} {what}; allowed: an integer >= 0"
            )
        return value


def _node(rank: int, buf: bytes) -> _Node:
    n = _Node(rank)
    for number, wire, v in _fields(buf):
        if number == 1 and wire == 0:
            n.id = v
        elif number == 2 and wire == 2:
            n.name = bytes(v).decode("utf-8", "replace")
        elif number == 3 and wire == 0:
            n.type = v
        elif number in (4, 5):  # ctrl_deps, data_deps: packed or not
            if wire == 2:
                pos = 0
                while pos < len(v):
                    d, pos = _varint(v, pos)
                    n.deps.append(d)
            else:
                n.deps.append(v)
        elif number == 7 and wire == 0:
            n.duration_us = v
        elif number == 10 and wire == 2:
            key, value = _attr(v)
            n.attrs[key] = value
    return n


def _read_rank(path: Path, rank: int) -> list[_Node]:
    data = read_input(path, f"workload.file[rank {rank}]", "a Chakra trace's rank file", gzip=True)
    nodes: list[_Node] = []
    pos, first = 0, True
    while pos < len(data):
        try:
            length, body = _varint(data, pos)
            if body + length > len(data):
                raise _Bad(f"a message of {length} bytes at byte {pos}, past the end of the file ({len(data)} bytes)")
            message = data[body : body + length]
            if first:
                _fields(message)  # GlobalMetadata: checked, not used
            elif length == 0:
                # a node has at least its type: an empty message is none (a run of zero bytes,
                # say, which would make one object per byte)
                raise _Bad(f"an empty message at byte {pos}, where a node is expected")
            elif len(nodes) >= _MAX_NODES:
                raise _Bad(f"more than {_MAX_NODES:,} nodes in one rank's file; allowed: at most {_MAX_NODES:,}")
            else:
                nodes.append(_node(rank, message))
        except _Bad as e:
            after = f"after node {nodes[-1].id}" if nodes else "in its first messages"
            raise scenario_error(f"workload.file[rank {rank}]", f"{path} is not a Chakra trace ({after}): {e}") from None
        pos, first = body + length, False
    if not nodes:
        raise scenario_error(
            f"workload.file[rank {rank}]", f"{path} holds no node; a Chakra trace is a GlobalMetadata then the rank's nodes"
        )
    return nodes
