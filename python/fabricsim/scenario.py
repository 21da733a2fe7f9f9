"""Scenarios: load a TOML file, change fields, validate.

The Rust core owns the scenario model and its checks (one source of truth for the CLI,
Python and Rust); this class holds the user's table, resolves what only the front end can
(a CSV flow list), and asks the core to validate and fill defaults.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import re
import tomllib
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import tomli_w

from . import _core, readings
from .errors import ScenarioError, argument_error, scenario_error
from .io import flows as flow_files
from .io.files import check_values, memory_budget, read_toml, size_bytes
from .io.formats import require

__all__ = ["Scenario", "parse_value", "value_at"]


#: ``compare --lb`` names for switch adaptive routing (ECMP hosts, adaptive switches).
SWITCH_AR = ("switch-ar", "switch_ar")


def parse_value(text: str) -> Any:
    """Read a ``--set`` value as a TOML literal (``3``, ``true``, ``"x"``, ``[1, 2]``), else a string.

    Examples
    --------
    >>> parse_value("3"), parse_value("ecmp"), parse_value("2MiB"), parse_value("[1, 2]")
    (3, 'ecmp', '2MiB', [1, 2])
    """
    if "\n" in text or "\r" in text:
        raise scenario_error("--set", f"got {text!r}; a --set value is one value on one line")
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except ValueError:  # an integer of thousands of digits: Python refuses to read it
        raise scenario_error("--set", f"got a number of {len(text)} characters; allowed: a number of at most 4300 digits") from None
    except RecursionError:
        raise scenario_error("--set", f"got a value nested too deeply ({text[:20]}...); a --set value is one value") from None


class Estimate(NamedTuple):
    """What :meth:`Scenario.estimate` says a run will take, before it is built."""

    #: Events the run is expected to make.
    events: int
    #: Memory it is estimated to need, bytes (what ``stop.max_memory`` is checked against).
    memory_bytes: int


def value_at(data: dict[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` in a scenario's tables: keys by name, list entries by index
    (``"faults[0].rate"``); a KeyError names the path where nothing is there."""
    node: Any = data
    for part in dotted.split("."):
        key, bracket, index = part.partition("[")
        if not isinstance(node, dict) or key not in node:
            raise KeyError(dotted)
        node = node[key]
        if bracket:
            i = index.removesuffix("]")
            if not i.isdigit() or not isinstance(node, list) or int(i) >= len(node):
                raise KeyError(dotted)
            node = node[int(i)]
    return node


class Scenario:
    """A scenario: the one input of a run.

    Parameters
    ----------
    data
        The scenario as nested dicts, as in the TOML file (see docs/scenario.md).
    base_dir
        Where relative paths in the scenario (``workload.file``) are looked up.

    Examples
    --------
    >>> s = Scenario({"topology": {"hosts": 16, "radix": 8}})
    >>> s = s.set("lb.kind", "ecmp").set("workload.size", "1MiB")
    >>> s["lb.kind"]
    'ecmp'
    >>> s.filled()["transport"]["mtu"]
    '4160B'
    """

    def __init__(self, data: dict[str, Any] | None = None, base_dir: Path | str | None = None) -> None:
        if data is not None and not isinstance(data, dict):
            raise argument_error("data", data, "a dict of the scenario's tables (or None), or use Scenario.load(path)")
        if base_dir is not None and not isinstance(base_dir, str | os.PathLike):
            raise argument_error("base_dir", base_dir, "a directory's path")
        try:
            self.data: dict[str, Any] = copy.deepcopy(data or {})
        except RecursionError:
            raise scenario_error("scenario", "nested too deeply to be a scenario") from None
        self.base_dir = Path(base_dir) if base_dir is not None else Path.cwd()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """Read a TOML scenario file; a file that is not one raises ``ScenarioError``."""
        if not isinstance(path, str | os.PathLike):
            raise argument_error("path", path, "the path of a TOML scenario file")
        path = Path(path)
        where = str(path)
        data = read_toml(path, "a scenario")
        if not data:
            raise scenario_error(where, "empty scenario: nothing to run; write at least one table, e.g. [workload]")
        return cls(data, base_dir=path.parent)

    def copy(self) -> Scenario:
        return Scenario(self.data, self.base_dir)

    def __getitem__(self, dotted: str) -> Any:
        """The value at ``dotted``, a path as :meth:`set` takes it (``"faults[0].rate"``).

        >>> Scenario({"faults": [{"rate": "1Gbps"}]})["faults[0].rate"]
        '1Gbps'
        """
        return value_at(self.data, dotted)

    def set(self, dotted: str, value: Any) -> Scenario:
        """Return a copy with ``dotted`` set to ``value``.

        A path names tables by key and list entries by index: ``"switch.ecn.kmin"``,
        ``"jobs[0].size"``, ``"faults[1].start"``, or ``"jobs[*].size"`` for every entry.

        >>> s = Scenario({"jobs": [{"size": "1MiB"}, {"size": "2MiB"}]})
        >>> [j["size"] for j in s.set("jobs[*].size", "8MiB").data["jobs"]]
        ['8MiB', '8MiB']
        >>> try:
        ...     s.set("jobs[2].size", "1MiB")
        ... except ValueError as e:
        ...     print(e)
        jobs[2].size: jobs has 2 entries; allowed: an index in 0..2 or *
        """
        if not isinstance(dotted, str):
            raise argument_error("dotted", dotted, 'a dotted field path such as "jobs[0].size"')
        out = self.copy()
        nodes: list[dict[str, Any]] = [out.data]
        keys = dotted.split(".")
        for n, part in enumerate(keys):
            name, bracket, rest = part.partition("[")
            index = rest.removesuffix("]") if bracket else None
            if not name or (bracket and not rest.endswith("]")) or (index is not None and index != "*" and not index.isdigit()):
                raise scenario_error(dotted, f"{part!r} is not a field: allowed: name, name[3] or name[*]")
            last = n == len(keys) - 1
            below: list[dict[str, Any]] = []
            for node in nodes:
                if index is None:
                    if last:
                        node[name] = value
                        continue
                    child = node.setdefault(name, {})
                    if not isinstance(child, dict):
                        raise scenario_error(dotted, f"{name} is {child!r}, not a table")
                    below.append(child)
                    continue
                entries = node.get(name)
                if not isinstance(entries, list):
                    raise scenario_error(dotted, f"{name} is {entries!r}, not a list")
                picked = range(len(entries)) if index == "*" else [int(index)]
                for i in picked:
                    if i >= len(entries):
                        raise scenario_error(dotted, f"{name} has {len(entries)} entries; allowed: an index in 0..{len(entries)} or *")
                    if last:
                        entries[i] = value
                    elif isinstance(entries[i], dict):
                        below.append(entries[i])
                    else:
                        raise scenario_error(dotted, f"{name}[{i}] is {entries[i]!r}, not a table")
            nodes = below
        return out

    def with_lb(self, kind: str) -> Scenario:
        """Return a copy that uses load balancer ``kind``, keeping the ``[lb]`` parameters it accepts.

        ``fabricsim compare --lb`` uses this, so one scenario file serves every algorithm:
        ``evs_size`` carries over from ``ops`` to ``arcane`` but not to ``prime``. ``"switch-ar"``
        is switch adaptive routing: ``ecmp`` hosts with ``switch.routing = "adaptive"``.
        """
        if kind in SWITCH_AR:
            # switch adaptive routing: ECMP hosts, leaves (and aggregation) pick the least-loaded
            # up-port; a scheme of its own in compare's table
            out = self.with_lb("ecmp")
            switch = out.data.get("switch")
            out.data["switch"] = (switch if isinstance(switch, dict) else {}) | {"routing": "adaptive"}
            return out
        accepted = _lb_parameters(kind)
        current = self.data.get("lb", {})
        kept = {k: v for k, v in current.items() if k in accepted} if isinstance(current, dict) else {}
        out = self.copy()
        out.data["lb"] = {"kind": kind} | kept
        return out

    def switched(self, dotted: str, value: Any) -> Scenario:
        """:meth:`set`, except that a new ``lb.kind`` or ``topology.kind`` keeps only the fields
        of its table the new kind accepts (:meth:`with_lb`, :meth:`with_topology`): what
        ``--set`` and a sweep's axes do, so that ``topology.kind = "dragonfly"`` does not carry a
        fat tree's ``tiers``."""
        if dotted == "lb.kind" and isinstance(value, str):
            return self.with_lb(value)
        if dotted == "topology.kind" and isinstance(value, str):
            return self.with_topology(value)
        return self.set(dotted, value)

    def with_topology(self, kind: str) -> Scenario:
        """Return a copy whose fabric is topology ``kind``, keeping the ``[topology]`` fields it
        accepts: ``kind = "rail_only"`` keeps a rail-optimized tree's ``hosts``, ``radix``,
        ``nics_per_server`` and scale-up network, and drops its ``rails``."""
        accepted = {name for table, k, name, _, _ in _core.parameters() if table == "topology" and k == kind}
        current = self.data.get("topology", {})
        kept = {k: v for k, v in current.items() if k in accepted} if isinstance(current, dict) else {}
        out = self.copy()
        out.data["topology"] = {"kind": kind} | kept
        return out

    def resolved(self) -> dict[str, Any]:
        """The table the core receives: a CSV flow list read in, ``stop.max_memory = "auto"``
        made half of this machine's memory."""
        data, flows = self._resolve()
        if flows is not None:
            data["workload"]["flows"] = json.loads(flows)
        return copy.deepcopy(data)  # what the scenario holds stays its own

    def _flow_csv(self, path: Path) -> str:
        """A CSV file's flows as JSON text (:func:`fabricsim.io.flows.flow_csv_json`), read once while the file
        stays the same: a run reads its scenario three times (check, warnings, run)."""
        stat = path.stat() if path.exists() else None
        key = (path.resolve(), stat.st_mtime_ns, stat.st_size) if stat else None
        cached = getattr(self, "_csv_cache", None)
        if key is None or cached is None or cached[0] != key:
            text = flow_files.flow_csv_json(path)
            if key is not None:
                self._csv_cache = (key, text)
            return text
        return str(cached[1])

    def _resolve(self) -> tuple[dict[str, Any], str | None]:
        """:meth:`resolved`, but the flows of a CSV file as JSON text beside the table (they
        are spliced into the core's JSON as they are)."""
        check_values(self.data, "")
        # the tables the files are read into are copied, not what they hold (a deep copy of 2 M
        # flows took 7 s): nothing below changes a value inside a table in place
        data = {k: dict(v) if isinstance(v, dict) else v for k, v in self.data.items()}
        stop = data.setdefault("stop", {})
        if isinstance(stop, dict) and stop.get("max_memory", "auto") == "auto":
            stop["max_memory"] = f"{machine_memory() // 2}B"
        # no file is read that would take more memory to read than the run may have
        with memory_budget(size_bytes(stop.get("max_memory")) if isinstance(stop, dict) else None):
            return self._read_files(data)

    def _read_files(self, data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """:meth:`_resolve`'s files: the topology's, the flows' (a CSV's as JSON text, returned
        beside the table) and a trace's CDF, read into ``data``."""
        flows = None
        topo = data.get("topology")
        if isinstance(topo, dict) and "file" in topo:
            # a fabric from a file: the core reads its graph (topology_file)
            from .io.topology_file import field_from_file, read_topology, read_topology_file, same_graph

            if not isinstance(topo["file"], str):
                raise scenario_error("topology.file", f"got {topo['file']!r}; allowed: the path of a topology file")
            path = self.base_dir / topo["file"]
            if "graph" not in topo:
                read = read_topology_file(path)
                topo["graph"] = read.graph
                topo.setdefault("kind", "graph")
                for key, value in read.fields.items():
                    field_from_file(topo, key, value, path)
            elif path.exists() and not same_graph(topo["graph"], read_topology(path)):
                # a scenario as run keeps `file` for the record beside the graph it read: both
                # may be given where they agree, never where one would silently win
                raise scenario_error(
                    "topology.file", f"got {topo['file']!r} and a topology.graph that differs from it; allowed: one of the two"
                )
        wl = data.get("workload", {})
        if isinstance(wl, dict) and wl.get("kind") == "flows" and "file" in wl:
            if not isinstance(wl["file"], str):
                raise scenario_error("workload.file", f"got {wl['file']!r}; allowed: the path of a flows, trace or Chakra file")
            path = self.base_dir / wl["file"]
            fmt = require("workload.file", path).name
            if not wl.get("flows") and fmt == "chakra":
                wl["flows"] = self._read_chakra(path, wl, data.get("topology", {}))
                _long_lived_connections(data)  # NCCL's queue pairs
            elif not wl.get("flows") and fmt == "csv":
                flows = self._flow_csv(path)
            elif not wl.get("flows") and fmt == "htsim":
                from .io.htsim import read_matrix

                wl["flows"], reuse = read_matrix(path)
                if reuse:
                    # htsim's -conn_reuse: a connection id's messages share its connection
                    _long_lived_connections(data)
            elif not wl.get("flows"):
                wl["flows"] = flow_files.read_flows(path)
            elif path.exists() and not flow_files.same_flows(wl["flows"], flow_files.read_flows(path)):
                # a scenario as run keeps `file` for the record beside the flows it read: both
                # may be given where they agree, never where one would silently win
                raise scenario_error(
                    "workload.file", f"got {wl['file']!r} and a workload.flows list that differs from it; allowed: one of the two"
                )
        cdf = wl.get("cdf") if isinstance(wl, dict) and wl.get("kind") == "trace" and not wl.get("points") else None
        if isinstance(cdf, str) and cdf not in flow_files.BUILTIN_CDFS:
            wl["points"] = flow_files.read_cdf(self.base_dir / cdf)
        return data, flows

    def _read_chakra(self, path: Path, wl: dict[str, Any], topology: Any) -> list[dict[str, Any]]:
        """A Chakra trace's entries (:mod:`fabricsim.io.chakra`), its collectives laid out on the
        topology's servers."""
        from .io.chakra import read_chakra

        filled = json.loads(_core.validate(json.dumps({"topology": topology})))["topology"]
        algorithm, groups = wl.get("algorithm"), wl.get("comm_groups")
        known = [name for category, name, _, _ in _core.registry() if category == "collective"]
        if algorithm is not None and algorithm not in known:
            raise scenario_error("workload.algorithm", f"got {algorithm!r}; allowed: {', '.join(known)}")
        if groups is not None and not isinstance(groups, str):
            raise scenario_error("workload.comm_groups", f"got {groups!r}; allowed: the path of a JSON file")
        tflops = wl.get("gpu_tflops")
        ok = isinstance(tflops, int | float) and not isinstance(tflops, bool) and math.isfinite(tflops) and 0 < tflops <= 1e6
        if tflops is not None and not ok:
            raise scenario_error("workload.gpu_tflops", f"got {tflops!r}; allowed: more than 0 up to 1000000 (TFLOP/s)")
        memory = wl.get("gpu_memory_tb_per_s")
        ok = isinstance(memory, int | float) and not isinstance(memory, bool) and math.isfinite(memory) and 0 < memory <= 1000
        if memory is not None and not ok:
            raise scenario_error("workload.gpu_memory_tb_per_s", f"got {memory!r}; allowed: more than 0 up to 1000 (TB/s)")
        per_server = int(filled.get("nics_per_server", 1))
        return read_chakra(path, algorithm, None if groups is None else self.base_dir / groups, per_server, tflops, memory)

    def to_json(self) -> str:
        data, flows = self._resolve()
        # what the files put in (the scenario's own values were checked by the resolve)
        for name, table in data.items():
            mine = self.data.get(name)
            if not isinstance(table, dict) or not isinstance(mine, dict):
                if table is not mine:
                    check_values(table, name)
                continue
            for key, value in table.items():
                if key not in mine or value is not mine[key]:
                    check_values(value, f"{name}.{key}")
        if flows is None:
            return json.dumps(data)
        marker = f"flows read from the file {uuid.uuid4()}"
        data["workload"]["flows"] = marker
        return json.dumps(data).replace(json.dumps(marker), flows, 1)

    def filled(self) -> dict[str, Any]:
        """The scenario with every default written out; raises ``ScenarioError`` if invalid."""
        with self.naming_files():
            filled: dict[str, Any] = json.loads(readings.parsed(self.to_json(), self.naming_files).validate())
        return filled

    @contextlib.contextmanager
    def naming_files(self) -> Iterator[None]:
        """The core names a message by its place in the list it was given
        (``workload.flows[7].size``); where the list came from ``workload.file``, a refusal
        raised inside this block names the file's row instead, as the front end's own checks
        of that file do (``workload.file[7].size: ... in row 8 of flows.csv``)."""
        try:
            yield
        except ScenarioError as e:
            self._name_topology_file(e)
            wl = self.data.get("workload")
            found = re.fullmatch(r"workload\.flows\[(\d+)\](.*)", e.field)
            if not (found and isinstance(wl, dict) and isinstance(wl.get("file"), str) and not wl.get("flows")):
                raise
            i, rest = int(found.group(1)), found.group(2)
            path = self.base_dir / wl["file"]
            fmt = require("workload.file", path).name
            if fmt == "htsim":
                from .io.htsim import connection_line

                line = connection_line(path, i)
                if line is not None:
                    raise scenario_error(f"workload.file[line {line}]{rest}", f"{e.message}, in {path}") from None
            if fmt == "json":
                where = f"entry {i} of {path}"
            elif fmt != "csv":
                where = f"message {i} read from {path}"
            else:
                where = f"row {i + 1} of {path} (line {i + 2})"
            raise scenario_error(f"workload.file[{i}]{rest}", f"{e.message}, in {where}") from None

    def _name_topology_file(self, e: ScenarioError) -> None:
        """Where the core refused an entry of a graph read from ``topology.file``
        (``topology.graph.links[3].rate``), raises the refusal naming the file and the entry (its
        ends, and its line or place in the file) instead; returns otherwise."""
        topo = self.data.get("topology")
        found = re.fullmatch(r"topology\.graph\.(links|hosts|switches)\[(\d+)\](.*)", e.field)
        if not (found and isinstance(topo, dict) and isinstance(topo.get("file"), str) and "graph" not in topo):
            return
        from .io.topology_file import read_topology_file

        table, i, rest = found.group(1), int(found.group(2)), found.group(3)
        path = self.base_dir / topo["file"]
        try:
            graph, places, _ = read_topology_file(path)
            entry = graph[table][i]
        except (ScenarioError, IndexError, KeyError):
            return
        if table == "links":
            where = f"the link {entry['a']} - {entry['b']} ({places[i] if i < len(places) else path})"
        else:
            where = f"{table[:-1]} {entry['name']!r} of {path}"
        raise scenario_error(f"topology.file.{table}[{i}]{rest}", f"{e.message}, in {where}") from None

    def warnings(self) -> list[str]:
        """Legal but probably unintended settings (e.g. PRIME on ECMP-hashing switches);
        raises ``ScenarioError`` where the scenario is not valid."""
        return list(self._survey(None, any_columns=True)[0])

    def estimate(self, flow_columns: Sequence[str] | None = None) -> Estimate:
        """What a run of this scenario will take, before it is built (:class:`Estimate`: the
        ``events`` it is expected to make, the shipped scenarios making 0.76 to 0.97 of them, and
        the ``memory_bytes`` it is estimated to need; a tuple, so ``events, memory =
        s.estimate()`` reads it too); raises ``ScenarioError`` where the scenario is not valid.
        ``flow_columns``: the flows table's columns the run will make (:func:`fabricsim.run`'s),
        which the memory counts (all if None)."""
        return Estimate(*self._survey(flow_columns)[1])

    def _survey(self, flow_columns: Sequence[str] | None = None, any_columns: bool = False) -> tuple[tuple[str, ...], tuple[int, int]]:
        """The core's warnings and estimate of this scenario (:func:`fabricsim.readings.survey`)."""
        return readings.survey(self.to_json(), flow_columns, any_columns, self.naming_files)

    def _take_parsed(self, text: str) -> _core.Parsed:
        """The core's reading of ``text`` (this scenario's :meth:`to_json`) for a build, which
        uses it up (:func:`fabricsim.readings.take`)."""
        return readings.take(text, self.naming_files)

    def validate(self) -> list[str]:
        """Raise ``ScenarioError`` if the core would reject this scenario; else return its
        warnings (:meth:`warnings`): one pass of the core for both."""
        return self.warnings()

    def to_toml(self) -> str:
        return tomli_w.dumps(self.data)

    def __repr__(self) -> str:
        return f"Scenario({self.data!r})"


def machine_memory() -> int:
    """Bytes of physical memory (capped at the 2 TiB the core's sizes allow twice over)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 16 << 30
    return min(int(total), 2 << 40)


def _lb_parameters(kind: str) -> set[str]:
    """The parameter names load balancer ``kind`` accepts, as the core declares them (empty for
    an unknown kind)."""
    return {name for table, k, name, _, _ in _core.parameters() if table == "lb" and k == kind}


def _long_lived_connections(data: dict[str, Any]) -> None:
    """Where ``transport.connections`` is left out, a workload read from a file whose tool keeps
    long-lived connections runs ``per_pair``, as a ``[[jobs]]`` collective does, unless the
    scenario's cc or load balancer needs a connection per message (the core's own default's
    exceptions): a Chakra trace (NCCL keeps a queue pair per peer and channel,
    ``src/transport/net_ib.cc``; a traced ring broadcast of 1 MiB on 8 ranks took 132.0 us on a
    connection per message, its 8 chunks sent at once, where the native job takes 51.9 us), and an
    htsim matrix for ``-conn_reuse`` (a connection ``id``'s messages go through it in turn)."""
    transport = data.setdefault("transport", {})
    lb = data.get("lb", {})
    if not isinstance(transport, dict) or "connections" in transport:
        return
    if transport.get("cc") == "dcqcn" or (isinstance(lb, dict) and lb.get("kind") == "mptcp"):
        return
    transport["connections"] = "per_pair"
