"""Traffic from htsim, the reference packet simulator: its connection-matrix files and its
permutation generator, so a comparison runs on exactly the reference's traffic.

* :func:`read_connection_matrix` reads an htsim ``.cm`` file, or a ``.tm`` file as the
  reference's own scripts name the same format (``[workload] kind = "flows"``, ``file =
  "x.cm"`` reads one): a ``Nodes N`` and ``Connections C`` header, then one line per
  connection, ``SRC->DST [id N] start PS size BYTES``. Start times are picoseconds, sizes bytes.
  htsim's triggers (``trigger``, ``send_done_trigger``, ``recv_done_trigger``) and failure lines
  are refused naming the line: express dependencies with ``after`` in a CSV or JSON list.
* :func:`permutation` is the permutation of htsim's ``gen_permutation.py`` (sources and
  destinations shuffled by Python's ``random`` seeded with ``seed``, then a host that drew itself
  swaps destinations with the next one): the same seed gives the reference's matrix, pair for pair.
  :func:`write_connection_matrix` writes it in htsim's format.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from .errors import scenario_error

__all__ = ["permutation", "read_connection_matrix", "write_connection_matrix"]

_HEADERS = ("Nodes", "Connections", "Triggers", "Failures")
_UNSUPPORTED = ("trigger", "send_done_trigger", "recv_done_trigger")
_NOT_READ = "not read; give dependencies as `after` in a CSV or JSON list, faults in [[faults]]"


def permutation(nodes: int, seed: int) -> list[tuple[int, int]]:
    """htsim's permutation of ``nodes`` hosts for ``seed`` (0: unseeded, as htsim): a list of
    (src, dst) in the generator's order.

    >>> permutation(1024, 13)[:3]
    [(334, 395), (404, 414), (135, 874)]
    >>> sorted(d for _, d in permutation(16, 1)) == list(range(16))
    True
    """
    if not isinstance(nodes, int) or nodes < 2:
        raise scenario_error("htsim.permutation: nodes", f"got {nodes!r}; allowed: an integer >= 2")
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
    ``dst``, ``size``, ``start``, and ``id`` where the file gives one). A malformed line is
    refused as ``workload.file[LINE]`` with what is allowed."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise scenario_error("workload.file", f"cannot read {str(path)!r}: {e}") from None
    header: dict[str, int] = {}
    flows: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        where = f"workload.file[line {number}]"
        if tokens[0] in _HEADERS:
            header[tokens[0]] = _whole(tokens[1] if len(tokens) > 1 else "", where, tokens[0], path)
            if tokens[0] not in ("Nodes", "Connections") and header[tokens[0]]:
                raise scenario_error(where, f"{path} declares htsim {tokens[0].lower()}: {_NOT_READ}")
            continue
        if tokens[0] == "failure" or tokens[0] in _UNSUPPORTED:
            raise scenario_error(where, f"{path}: htsim {tokens[0]} lines are {_NOT_READ}")
        if "->" not in tokens[0]:
            raise scenario_error(where, f"got {tokens[0]!r} in {path}; allowed: Nodes, Connections or a connection SRC->DST ...")
        src, _, dst = tokens[0].partition("->")
        flow: dict[str, Any] = {"src": _whole(src, where, "src", path), "dst": _whole(dst, where, "dst", path)}
        fields = tokens[1:]
        if len(fields) % 2:
            raise scenario_error(where, f"{path}: {fields[-1]!r} has no value; a connection is SRC->DST [id N] start PS size BYTES")
        for key, value in zip(fields[::2], fields[1::2], strict=True):
            if key == "size":
                flow["size"] = f"{_whole(value, where, 'size', path)}B"
            elif key == "start":
                flow["start"] = f"{_picoseconds(value, where, path)}ps"
            elif key == "id":
                flow["id"] = _whole(value, where, "id", path)
            elif key in _UNSUPPORTED:
                raise scenario_error(f"{where}.{key}", f"{path}: htsim triggers are {_NOT_READ}")
            else:
                raise scenario_error(f"{where}.{key}", f"unknown key in {path}; allowed: id, start, size")
        for key in ("size", "start"):
            if key not in flow:
                raise scenario_error(where, f"{path}: the connection has no {key}; a connection is SRC->DST [id N] start PS size BYTES")
        nodes = header.get("Nodes")
        for end in ("src", "dst"):
            if nodes is not None and flow[end] >= nodes:
                raise scenario_error(f"{where}.{end}", f"got {flow[end]} in {path}; allowed: below Nodes {nodes}")
        flows.append(flow)
    declared = header.get("Connections")
    if declared is not None and declared != len(flows):
        raise scenario_error("workload.file", f"{path} declares Connections {declared} but lists {len(flows)}")
    if not flows:
        raise scenario_error("workload.file", f"{path} lists no connections")
    return flows


def _whole(text: str, where: str, what: str, path: Path) -> int:
    if not (text.isascii() and text.isdigit()):  # int() refuses other digits, superscripts among them
        raise scenario_error(f"{where}.{what}", f"got {text!r} in {path}; allowed: a whole number >= 0")
    return int(text)


def _picoseconds(text: str, where: str, path: Path) -> int:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise scenario_error(f"{where}.start", f"got {text!r} in {path}; allowed: picoseconds >= 0")
    return round(value)
