"""InfraGraph files: a fabric described as "infrastructure as a graph" (the schema ASTRA-sim 3.0
adopts; the ``infragraph`` package, ``pip install 'fabricsim[infragraph]'``), read into the graph
that ``[topology] kind = "graph"`` takes (docs/topologies.md, "InfraGraph").

InfraGraph describes devices (a server, a switch, a NIC) as components (``cpu``, ``xpu``, ``nic``,
``switch``, ``port``, nested devices) wired by the device's own edges, instances of those devices,
and the infrastructure's edges between components of instances, each through a named link whose
``physical`` bandwidth and latency it may give. The package expands that into a component graph
(``InfraGraphService.set_graph`` then ``get_networkx_graph``: nodes ``server.0.nic.1``, edges with
``link``, ``bandwidth`` and ``latency``). fabricsim reads that graph so:

- an edge between components of two different device instances is a fabric link; an edge inside
  one instance (PCIe, NVLink, a switch's ASIC to its ports) is not read: a server's scale-up
  network is ``topology.scale_up_rate``/``scale_up_latency``, a switch's insides its one
  ``switch_latency``;
- an instance is a *server* when it has a component of type ``nic`` or ``xpu`` (or it has one
  fabric link and nothing says otherwise); each of its components that a fabric link ends at (a
  NIC, or a port of a nested NIC device) is one host, named by the component (``server.0.nic.1``),
  with the instance as its ``server`` (numbered in the file's order); such a component has exactly one fabric link;
- any other instance is one *switch* named by the instance (``tier_0.3``): all its ports are one
  switch's ports;
- a link's rate is its bandwidth (Gb/s, or GB/s times 8) and its latency the link's latency;
  where the link gives none, ``topology.link_rate`` and ``link_latency`` apply.

Nothing else of the schema is read (annotations, the devices' inner links, transceivers). Before
the package expands a file, its size is bounded from the counts it declares, so that a short file
cannot ask for billions of components.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import MissingDependency, scenario_error
from .files import MAX_NESTING, check_shape

FIELD = "topology.file"
#: The most components (graph nodes) and component edges an InfraGraph file may expand to: the
#: package holds each as Python objects (about 1 KB a node with its edges), so 1 M components is
#: a few GB; a 65 536-GPU fat tree of generic servers and 64-port switches has about 600 000.
MAX_COMPONENTS = 1 << 20
MAX_EDGES = 1 << 22
#: Rate units of InfraGraph's ``physical.bandwidth``, as the package writes them on an edge, and
#: the factor to Gb/s.
RATE_UNITS = {"Gbps": 1.0, "GBps": 8.0}
LATENCY_UNITS = ("ms", "us", "ns")


def is_infragraph(data: Any) -> bool:
    """Whether parsed JSON/YAML ``data`` is an InfraGraph infrastructure (``devices`` and
    ``instances`` at its top) rather than fabricsim's own graph."""
    return isinstance(data, dict) and "devices" in data and "instances" in data


def parse(path: Path, text: str) -> Any:
    """``text`` of ``path`` parsed as YAML (``.yaml``/``.yml``; YAML holds JSON) or JSON, its
    nesting and what its aliases expand to bounded (:func:`fabricsim.io.files.check_shape`)."""
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise scenario_error(FIELD, f"{path}:{e.lineno}: not JSON ({e.msg})") from None
        except RecursionError:
            raise scenario_error(FIELD, f"{path}: nested deeper than JSON can be read; allowed: at most {MAX_NESTING} deep") from None
        except ValueError as e:  # an integer of more than 4 300 digits
            raise scenario_error(FIELD, f"{path}: not JSON fabricsim can read ({_first_line(e)})") from None
    else:
        yaml = _module("yaml")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            raise scenario_error(FIELD, f"{where}: not YAML ({getattr(e, 'problem', None) or e})") from None
        except RecursionError:
            raise scenario_error(FIELD, f"{path}: nested deeper than YAML can be read; allowed: at most {MAX_NESTING} deep") from None
        except ValueError as e:  # an integer of more than 4 300 digits
            raise scenario_error(FIELD, f"{path}: not YAML fabricsim can read ({_first_line(e)})") from None
    check_shape(data, FIELD, str(path), len(text))
    return data


def read_infragraph(path: Path, data: Any) -> dict[str, Any]:
    """The fabric of the InfraGraph file ``path``, parsed as ``data`` (:func:`parse`), as
    ``topology.graph`` takes it (hosts, switches, links); what cannot be read raises
    ``ScenarioError`` naming the file and the instance, link or component."""
    if not is_infragraph(data):
        raise scenario_error(FIELD, f"{path}: not an InfraGraph infrastructure; allowed: devices, instances, links and edges at its top")
    _names(path, data)
    _bound(path, data)
    service = _module("infragraph.infragraph_service").InfraGraphService()
    try:
        service.set_graph(json.dumps(data))
    except Exception as e:  # the package's own checks: a dangling endpoint, a duplicate name, a bad slice
        raise scenario_error(FIELD, f"{path}: InfraGraph refuses it: {_first_line(e)}") from None
    return contract(path, service.get_networkx_graph())


def _module(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise MissingDependency("reading InfraGraph files needs the infragraph package; pip install 'fabricsim[infragraph]'") from None


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:400]


def _instance(node: str) -> str:
    """The device instance a component node belongs to: ``server.0`` of ``server.0.cx5.0.port.1``."""
    return ".".join(node.split(".", 2)[:2])


def contract(path: Path, graph: Any) -> dict[str, Any]:
    """Hosts, switches and links of InfraGraph's expanded component ``graph`` (a NetworkX graph):
    the module's rules above."""
    servers: set[str] = set()
    order: list[str] = []
    for node, attrs in graph.nodes(data=True):
        if "type" not in attrs:  # made by an edge alone: InfraGraph does not check an index against the count
            raise scenario_error(
                FIELD, f"{path}: an edge ends at {node}, which no device instance has; allowed: indexes below each instance's count"
            )
        instance = _instance(node)
        if not order or order[-1] != instance:
            order.append(instance)
        if attrs.get("type") in ("nic", "xpu"):
            servers.add(instance)
    fabric = [(a, b, attrs) for a, b, attrs in graph.edges(data=True) if _instance(a) != _instance(b)]
    if not fabric:
        raise scenario_error(FIELD, f"{path}: no link between two device instances; a fabric needs switches and servers joined by links")
    degree: dict[str, int] = {}
    for a, b, _ in fabric:
        for instance in (_instance(a), _instance(b)):
            degree[instance] = degree.get(instance, 0) + 1
    servers |= {i for i, d in degree.items() if d == 1}

    def node_of(component: str) -> str:
        """The fabric node a component is: itself in a server (a host), its instance otherwise."""
        return component if _instance(component) in servers else _instance(component)

    links: list[dict[str, Any]] = []
    host_links: dict[str, int] = {}
    for a, b, attrs in fabric:
        ea, eb = node_of(a), node_of(b)
        if _instance(a) in servers and _instance(b) in servers:
            raise scenario_error(FIELD, f"{path}: link {a} - {b} joins two servers; allowed: a server's NIC to a switch")
        link: dict[str, Any] = {"a": ea, "b": eb}
        name = attrs.get("link", "?")
        if attrs.get("bandwidth"):
            link["rate"] = _rate(path, name, str(attrs["bandwidth"]))
        if attrs.get("latency"):
            link["latency"] = _latency(path, name, str(attrs["latency"]))
        links.append(link)
        for e in (ea, eb):
            if e != _instance(e):
                host_links[e] = host_links.get(e, 0) + 1
    hosts: list[dict[str, Any]] = []
    per_server: dict[str, int] = {}
    number_of: dict[str, int] = {}  # a server's number: the order in which the file first names it
    for node in graph.nodes:
        if node in host_links:
            if host_links[node] > 1:
                raise scenario_error(
                    FIELD, f"{path}: {node} has {host_links[node]} fabric links; allowed: one (each NIC port on the fabric is one host)"
                )
            server = _instance(node)
            number = number_of.setdefault(server, len(number_of))
            per_server[server] = per_server.get(server, 0) + 1
            hosts.append({"name": node, "server": number})
    counts = sorted(set(per_server.values()))
    if len(counts) > 1:
        first = next(iter(per_server))
        odd = next(s for s, n in per_server.items() if n != per_server[first])
        raise scenario_error(
            FIELD,
            f"{path}: server {odd} has {per_server[odd]} NICs on the fabric and {first} has {per_server[first]}; "
            "allowed: every server as many",
        )
    switches = [{"name": i} for i in order if i in degree and i not in servers]
    return {"hosts": hosts, "switches": switches, "links": links}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _rate(path: Path, link: str, text: str) -> str:
    value, _, unit = text.partition(" ")
    number = _number(value)
    if number is None or unit not in RATE_UNITS:
        raise scenario_error(FIELD, f"{path}: link {link!r} has bandwidth {text!r}; allowed: gigabits_per_second or gigabytes_per_second")
    gbps = number * RATE_UNITS[unit]
    return f"{gbps:g}Gbps"


def _latency(path: Path, link: str, text: str) -> str:
    value, _, unit = text.partition(" ")
    if _number(value) is None or unit not in LATENCY_UNITS:
        raise scenario_error(FIELD, f"{path}: link {link!r} has latency {text!r}; allowed: ms, us or ns")
    return f"{value}{unit}"


def _names(path: Path, data: dict[str, Any]) -> None:
    """Refuses an instance of a device the file does not define and an edge through a link it
    does not define (InfraGraph takes the latter with no bandwidth or latency), naming the entry."""

    def names(key: str) -> list[str]:
        return [str(x.get("name")) for x in data.get(key) or [] if isinstance(x, dict)]

    devices, links = names("devices"), names("links")
    for i, instance in enumerate(data.get("instances") or []):
        if isinstance(instance, dict) and str(instance.get("device")) not in devices:
            allowed = ", ".join(devices)
            raise scenario_error(
                FIELD, f"{path}: instances[{i}].device: got {instance.get('device')!r}; allowed: a device of the file ({allowed})"
            )
    for i, edge in enumerate(data.get("edges") or []):
        if isinstance(edge, dict) and str(edge.get("link")) not in links:
            allowed = ", ".join(links)
            raise scenario_error(FIELD, f"{path}: edges[{i}].link: got {edge.get('link')!r}; allowed: a link of the file ({allowed})")


def _component(ep: dict[str, Any]) -> str:
    """The component an endpoint names, without its slice or nested part: ``cx5`` of ``cx5[0].port[1]``."""
    return str(ep.get("component", "")).split("[")[0].split(".")[0]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 1


def _bound(path: Path, data: dict[str, Any]) -> None:
    """Refuses a file whose declared counts expand past :data:`MAX_COMPONENTS` components or
    :data:`MAX_EDGES` edges, before the package expands it (an upper bound: every edge as if it
    joined all of its two components' instances)."""
    devices = {d.get("name"): d for d in data.get("devices") or [] if isinstance(d, dict)}
    nodes: dict[str, int] = {}
    edges: dict[str, int] = {}
    widths: dict[str, dict[str, int]] = {}

    def size(name: str, depth: int = 0) -> tuple[int, int]:
        if name in nodes:
            return nodes[name], edges[name]
        device = devices.get(name)
        if device is None or depth > 16:
            return 1, 0
        n = e = 0
        width: dict[str, int] = {}
        for c in device.get("components") or []:
            if not isinstance(c, dict):
                continue
            count = _count(c.get("count"))
            inner_n, inner_e = size(str(c.get("name")), depth + 1) if c.get("choice") == "device" else (1, 0)
            n += count * inner_n
            e += count * inner_e
            width[str(c.get("name"))] = count * inner_n
        for edge in device.get("edges") or []:
            if isinstance(edge, dict):
                e += _ends(edge, lambda ep: width.get(_component(ep), 1))
        nodes[name], edges[name] = min(n, MAX_COMPONENTS + 1), min(e, MAX_EDGES + 1)
        widths[name] = width
        return nodes[name], edges[name]

    instances = {i.get("name"): i for i in data.get("instances") or [] if isinstance(i, dict)}
    total_n = total_e = 0
    for instance in instances.values():
        n, e = size(str(instance.get("device")))
        total_n += _count(instance.get("count")) * n
        total_e += _count(instance.get("count")) * e

    def reach(ep: dict[str, Any]) -> int:
        instance = instances.get(str(ep.get("instance", "")).split("[")[0])
        if instance is None:
            return 1
        width = widths.get(str(instance.get("device")), {})
        return _count(instance.get("count")) * width.get(_component(ep), 1)

    for edge in data.get("edges") or []:
        if isinstance(edge, dict):
            total_e += _ends(edge, reach)
    if total_n > MAX_COMPONENTS or total_e > MAX_EDGES:
        raise scenario_error(
            FIELD,
            f"{path}: its instances expand to up to {total_n:,} components and {total_e:,} edges; "
            f"allowed: at most {MAX_COMPONENTS:,} components and {MAX_EDGES:,} edges",
        )


def _ends(edge: dict[str, Any], width: Any) -> int:
    """How many component edges ``edge`` can make at most: its two ends' widths multiplied for a
    many-to-many edge, the larger one otherwise."""
    ep1, ep2 = edge.get("ep1") or {}, edge.get("ep2") or {}
    a = width(ep1) if isinstance(ep1, dict) else 1
    b = width(ep2) if isinstance(ep2, dict) else 1
    return int(a * b if edge.get("scheme") == "many2many" else max(a, b))
