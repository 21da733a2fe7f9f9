"""Topology files: a fabric's hosts, switches and links, read into a scenario's
``topology.graph`` (``[topology] kind = "graph"``, ``file = "fabric.toml"``) and written from a
built fabric (``fabricsim topology --export``). The core reads no files; it checks the graph
and names the entry at fault (docs/topologies.md).

Formats, by the file's suffix:

- ``.toml``, ``.json``: the graph as the core reads it: ``hosts`` (``name``, optional ``id``,
  ``server`` and ``gpu``), ``switches`` (``name``, optional ``tier``) and ``links`` (``a``, ``b``,
  optional ``rate``, ``latency`` and ``cost``);
- ``.edgelist``, ``.edges``, ``.txt``: NetworkX's edge list (``networkx.write_edgelist``): a
  link per line, ``a b`` or ``a b {'rate': '400Gbps', 'latency': '1us', 'cost': 3}``, ``#`` comments;
- ``.graphml``: GraphML (``networkx.write_graphml``): nodes, and edges whose ``rate``,
  ``latency`` and ``cost`` data become the link's;
- ``.yaml``, ``.yml``, or ``.json`` with ``devices`` and ``instances`` at its top: InfraGraph
  (:mod:`fabricsim.io.infragraph`).

An edge list or GraphML file says which nodes are hosts by a node attribute ``kind`` (or
``type``) of ``"host"`` or ``"switch"`` (GraphML), or else by shape: a node with one link is a
host, any other a switch. Nodes keep the order in which the file first names them.
"""

from __future__ import annotations

import ast
import json
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, NamedTuple

import tomli_w

from .. import _core
from ..errors import ScenarioError, scenario_error
from . import infragraph
from .files import MAX_DIGITS, MAX_NESTING, check_input, check_shape, read_text
from .formats import format_of, require
from .ns3 import is_ns3_topology, read_ns3_topology

FIELD = "topology.file"
LINK_KEYS = ("rate", "latency", "cost")


def _link_value(key: str, value: Any) -> Any:
    """A link attribute as the core reads it: ``cost`` a whole number of ASCII digits (int()
    would read other scripts' digits: a cost of ``٣`` as 3; anything else goes to the core as
    text, which refuses it naming the link), ``rate`` and ``latency`` strings with their units."""
    text = str(value).strip()
    if key == "cost" and text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS:
        return int(text)
    return text


def is_topology_file(path: Path) -> bool:
    """Whether ``path`` is a topology file rather than a scenario: a GraphML file or an edge
    list, or a TOML/JSON file with ``links`` at its top."""
    fmt = format_of(FIELD, path)
    if fmt is not None and fmt.name != "graph":
        return True
    if fmt is not None:
        try:
            data = _read_structured(path)
        except (ValueError, ScenarioError):  # not readable as one: read as a scenario, refused so
            return False
        return isinstance(data, dict) and ("links" in data or infragraph.is_infragraph(data)) and "topology" not in data
    return False


WHAT = "a topology file"
#: The most bytes of a topology file: about 2 M links as an edge list (a 65 536-host 3-tier fat
#: tree has 200 000); each link becomes a few hundred bytes of Python objects before the core.
MAX_TOPOLOGY_BYTES = 64 << 20


def _text(path: Path) -> str:
    return read_text(path, FIELD, WHAT, MAX_TOPOLOGY_BYTES)


class TopologyFile(NamedTuple):
    """What a topology file gives: the graph as ``topology.graph`` takes it; where the file
    gives each link (``f.edgelist:3``, ``f.graphml: edge 2 (a - b)``) where its format says
    (edge lists, GraphML, ns-3; empty otherwise), what an error of the core on a link names;
    and ``[topology]`` fields the file sets beside the graph (htsim's switch latency)."""

    graph: dict[str, Any]
    places: list[str]
    fields: dict[str, str]


def read_topology(path: Path) -> dict[str, Any]:
    """The graph in ``path`` as ``topology.graph`` takes it; a file that cannot be read raises
    ``ScenarioError`` naming the file and the line or node."""
    return read_topology_file(path).graph


def read_topology_file(path: Path) -> TopologyFile:
    """:func:`read_topology`, with where each link is given and the fields the file sets."""
    places: list[str] = []
    fields: dict[str, str] = {}
    graph = _read(path, places, fields)
    return TopologyFile(graph, places, fields)


def _read(path: Path, places: list[str], fields: dict[str, str]) -> dict[str, Any]:
    check_input(path, FIELD, WHAT, MAX_TOPOLOGY_BYTES)
    fmt = require(FIELD, path).name
    if fmt == "infragraph":
        return infragraph.read_infragraph(path, infragraph.parse(path, _text(path)))
    if fmt == "graph":
        try:
            data = _read_structured(path)
        except ValueError as e:
            raise scenario_error(FIELD, f"{path}: {e}") from None
        if infragraph.is_infragraph(data):
            return infragraph.read_infragraph(path, data)
        if not isinstance(data, dict) or not isinstance(data.get("links"), list):
            raise scenario_error(FIELD, f"{path}: no list of links; allowed: hosts, switches and links (docs/topologies.md)")
        return {k: data.get(k, []) for k in ("hosts", "switches", "links")}
    if fmt == "htsim":
        from .htsim import read_topo

        graph, switch_latency = read_topo(path)
        fields["switch_latency"] = f"{switch_latency}ps"
        return graph
    if fmt == "edges" and is_ns3_topology(text := _text(path)):
        graph, where = read_ns3_topology(path, text)
        places.extend(where)
        return graph
    if fmt == "edges":
        edges = _edge_list(path)
        places.extend(e[3] for e in edges)
        return _graph(edges, {})
    return _graphml(path, places)


def write_topology(graph: dict[str, Any], path: Path) -> None:
    """Writes ``graph`` to ``path`` as TOML or JSON (by its suffix)."""
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(graph, indent=1) + "\n")
    elif path.suffix.lower() == ".toml":
        path.write_text(tomli_w.dumps(graph))
    else:
        raise scenario_error("--export", f"{str(path)!r}; allowed: a .toml or .json file")


def _read_structured(path: Path) -> Any:
    text = _text(path)
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than it can be read; allowed: at most {MAX_NESTING} deep") from None
    except ValueError as e:  # JSONDecodeError and TOMLDecodeError are ValueErrors; so is an integer of 4 300 digits
        raise ValueError(str(e).splitlines()[0][:400]) from None
    check_shape(data, FIELD, str(path), len(text))
    return data


#: A link read from a file: its ends, its attributes, and where the file gives it (for errors).
Edge = tuple[str, str, dict[str, Any], str]
#: FNSS's GraphML (``fnss.write_topology``): a link's ``capacity`` and ``delay`` in the units its
#: graph's ``capacity_unit`` and ``delay_unit`` give, read as ``rate`` and ``latency``.
FNSS = {"capacity": ("rate", "capacity_unit"), "delay": ("latency", "delay_unit")}
_FNSS_UNITS = {"bps": "bps", "kbps": "Kbps", "Kbps": "Kbps", "Mbps": "Mbps", "Gbps": "Gbps", "Tbps": "Tbps"}
_FNSS_UNITS |= {"ns": "ns", "us": "us", "ms": "ms", "s": "s", "sec": "s"}


def _edge_list(path: Path) -> list[Edge]:
    edges: list[Edge] = []
    for n, raw in enumerate(_text(path).splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(maxsplit=2)
        if len(parts) < 2:
            raise scenario_error(FIELD, f"{path}:{n}: {raw.strip()!r}; allowed: 'a b' or 'a b {{attributes}}'")
        attrs: dict[str, Any] = {}
        if len(parts) == 3:
            try:
                value = ast.literal_eval(parts[2])
            except (ValueError, SyntaxError):
                value = None
            if not isinstance(value, dict):
                raise scenario_error(FIELD, f"{path}:{n}: {parts[2]!r}; allowed: a dict of attributes like {{'rate': '400Gbps'}}")
            attrs = value
        edges.append((parts[0], parts[1], attrs, f"{path}:{n}"))
    if not edges:
        raise scenario_error(FIELD, f"{path}: no links")
    return edges


def _edge_lines(text: str) -> list[int]:
    """The line each ``<edge>`` of a GraphML file's ``text`` starts on, in order (expat reports
    them; ElementTree does not)."""
    from xml.parsers import expat

    lines: list[int] = []
    parser = expat.ParserCreate(namespace_separator=" ")

    def start(name: str, _attrs: dict[str, str]) -> None:
        if name.rsplit(" ", 1)[-1] == "edge":
            lines.append(parser.CurrentLineNumber)

    parser.StartElementHandler = start
    try:
        parser.Parse(text, True)
    except expat.ExpatError:
        return lines  # ElementTree's error says what is wrong with the file
    return lines


def _graphml(path: Path, places: list[str]) -> dict[str, Any]:
    text = _text(path)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise scenario_error(FIELD, f"{path}: not GraphML ({e})") from None
    ns = root.tag.split("}")[0] + "}" if root.tag.startswith("{") else ""
    names = {k.get("id", ""): k.get("attr.name", k.get("id", "")) for k in root.iter(f"{ns}key")}

    def data(element: ET.Element) -> dict[str, Any]:
        keys = (d.get("key", "") for d in element.findall(f"{ns}data"))
        return {names.get(k, k): (d.text or "").strip() for k, d in zip(keys, element.findall(f"{ns}data"), strict=True)}

    kinds: dict[str, str] = {}
    order: list[str] = []
    for node in root.iter(f"{ns}node"):
        name = node.get("id")
        if not name:
            raise scenario_error(FIELD, f"{path}: a node without an id")
        order.append(name)
        attrs = data(node)
        kind = attrs.get("kind", attrs.get("type"))
        if kind is not None:
            if kind not in ("host", "switch"):
                raise scenario_error(FIELD, f"{path}: node {name!r} has kind {kind!r}; allowed: 'host' or 'switch'")
            kinds[name] = kind
    graph = root.find(f"{ns}graph")
    units = data(graph) if graph is not None else {}
    edges: list[Edge] = []
    lines = _edge_lines(text)
    for i, edge in enumerate(root.iter(f"{ns}edge")):
        a, b = edge.get("source"), edge.get("target")
        # where the file has it: its line, and its id where it has one (else its place)
        where = f"{path}{f':{lines[i]}' if i < len(lines) else ''}: edge {edge.get('id') or i}"
        if not a or not b:
            raise scenario_error(FIELD, f"{where} lacks a source or target")
        place = f"{where} ({a} - {b})"
        edges.append((a, b, _fnss(data(edge), units, place), place))
    places.extend(e[3] for e in edges)
    return _graph(edges, kinds, order)


def _fnss(attrs: dict[str, Any], units: dict[str, Any], where: str) -> dict[str, Any]:
    """A GraphML edge's attributes with FNSS's ``capacity`` and ``delay`` written as ``rate``
    and ``latency`` in the units the graph gives (:data:`FNSS`)."""
    out = dict(attrs)
    for key, (ours, unit_key) in FNSS.items():
        if key not in out:
            continue
        unit = _FNSS_UNITS.get(str(units.get(unit_key, "")))
        if unit is None or ours in out:
            why = f"the graph's {unit_key} is {units.get(unit_key)!r}" if unit is None else f"it also gives {ours}"
            raise scenario_error(
                FIELD,
                f"{where}: {key} {out[key]!r} cannot be read as its {ours} ({why}); allowed: {unit_key} one of {', '.join(_FNSS_UNITS)}",
            )
        out[ours] = f"{out.pop(key)}{unit}"
    return out


def _graph(edges: list[Edge], kinds: dict[str, str], order: list[str] | None = None) -> dict[str, Any]:
    """Hosts, switches and links of ``edges``: a node is a host where ``kinds`` says so, or
    where it has one link and ``kinds`` says nothing of it."""
    degree: dict[str, int] = {name: 0 for name in order or []}
    seen: dict[frozenset[str], str] = {}
    for a, b, attrs, where in edges:
        # a line given twice would make its host a node of two links, so a switch: NetworkX's
        # own reader keeps one edge of a pair
        pair = frozenset((a, b))
        if pair in seen:
            raise scenario_error(
                FIELD, f"{where}: the link {a} - {b} again (first at {seen[pair]}); allowed: each pair of nodes linked once"
            )
        seen[pair] = where
        unknown = sorted(set(attrs) - set(LINK_KEYS))
        if unknown:
            allowed = f"{', '.join(LINK_KEYS)} (and, in GraphML, FNSS's capacity and delay)"
            raise scenario_error(FIELD, f"{where}: unknown link attribute {', '.join(map(repr, unknown))}; allowed: {allowed}")
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    host = {n: kinds.get(n, "host" if d == 1 else "switch") == "host" for n, d in degree.items()}
    links = []
    for a, b, attrs, _ in edges:
        link: dict[str, Any] = {"a": a, "b": b}
        link.update({k: _link_value(k, attrs[k]) for k in LINK_KEYS if attrs.get(k) not in (None, "")})
        links.append(link)
    return {
        "hosts": [{"name": n} for n in degree if host[n]],
        "switches": [{"name": n} for n in degree if not host[n]],
        "links": links,
    }


#: The most nodes ``draw_fabric`` draws: beyond, a drawing is a grey smear.
MAX_DRAWN = 3000


def draw_fabric(graph: dict[str, Any], path: Path) -> None:
    """Draws ``graph`` (as :func:`read_topology` returns it, switches with their tiers) into
    ``path``: hosts along the bottom, each switch tier a row above, every link a line."""
    from .._pyplot import _pyplot

    hosts, switches = graph["hosts"], graph["switches"]
    if len(hosts) + len(switches) > MAX_DRAWN:
        raise scenario_error("--draw", f"{len(hosts) + len(switches)} nodes; allowed: at most {MAX_DRAWN} to draw")
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise scenario_error("--draw", f"{str(path)!r}; allowed: a .png, .svg or .pdf file")
    rows: dict[int, list[str]] = {-1: [h["name"] for h in hosts]}
    for s in switches:
        rows.setdefault(int(s.get("tier") or 0), []).append(s["name"])
    where = {name: ((i + 0.5) / len(names), tier + 1) for tier, names in rows.items() for i, name in enumerate(names)}
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(12, 1.5 + 1.5 * len(rows)))
    for link in graph["links"]:
        (x0, y0), (x1, y1) = where[link["a"]], where[link["b"]]
        ax.plot([x0, x1], [y0, y1], color="0.6", linewidth=0.4, zorder=1)
    for tier, names in rows.items():
        xs = [where[n][0] for n in names]
        ax.scatter(xs, [tier + 1] * len(xs), s=12 if tier < 0 else 30, marker="o" if tier < 0 else "s", zorder=2)
        label = "hosts" if tier < 0 else f"tier {tier} switches"
        ax.annotate(f"{label} ({len(names)})", (0, tier + 1), xytext=(-8, 0), textcoords="offset points", ha="right", va="center")
    ax.set_axis_off()
    fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Date": None} if path.suffix.lower() == ".svg" else None)
    plt.close(fig)


def field_from_file(topo: dict[str, Any], key: str, value: str, path: Path) -> None:
    """A ``[topology]`` field a topology file sets (htsim's switch latency:
    :class:`fabricsim.io.topology_file.TopologyFile`): taken where the scenario leaves it out,
    refused where it gives another value."""
    given = topo.get(key)
    if given is None:
        topo[key] = value
        return

    def filled(v: Any) -> Any:
        return json.loads(_core.validate(json.dumps({"topology": {key: v}})))["topology"][key]

    if filled(given) != filled(value):
        raise scenario_error(f"topology.{key}", f"got {given!r} where {path} gives {filled(value)}; allowed: the file's, or none")


def same_graph(a: Any, b: dict[str, Any]) -> bool:
    """Whether the graph ``a`` given inline is ``b`` (read from a file) once the core has filled
    both; ``a`` the core refuses is not."""

    def filled(graph: Any) -> Any:
        return json.loads(_core.validate(json.dumps({"topology": {"kind": "graph", "graph": graph}})))["topology"]["graph"]

    try:
        return bool(filled(a) == filled(b))
    except (ValueError, TypeError):  # one of them is not a valid graph: not the same
        return False
