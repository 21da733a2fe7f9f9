"""The one table of the files a scenario may name: for each field, the formats it reads, by
suffix, and the module of :mod:`fabricsim.io` that reads each. The readers dispatch on
:func:`format_of`, and an unknown suffix is refused with the list this table makes.

Where one suffix serves two formats, the reader looks inside: a ``.json`` topology with
``devices`` and ``instances`` at its top is InfraGraph, a ``.txt`` edge list in the ns-3 RDMA
simulators' layout is ns-3's.

Examples
--------
>>> from pathlib import Path
>>> format_of("workload.file", Path("steps.goal")).name
'goal'
>>> format_of("workload.file", Path("flows.tsv")).name  # any other name is CSV
'csv'
>>> format_of("topology.file", Path("fabric.graphml")).module
'topology_file'
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ..errors import scenario_error

__all__ = ["FORMATS", "Format", "allowed", "format_of"]


class Format(NamedTuple):
    """A file format a scenario field reads."""

    #: The scenario field that names such a file.
    field: str
    #: Its name in the readers' dispatch.
    name: str
    #: Its suffixes, lower case (empty: every name no other format of the field claims).
    suffixes: tuple[str, ...]
    #: The module of :mod:`fabricsim.io` that reads it.
    module: str
    #: What it is, as an error's list of what is allowed says.
    what: str


FORMATS: tuple[Format, ...] = (
    Format("workload.file", "chakra", (".et",), "chakra", ".et (a Chakra execution trace, one file a rank)"),
    Format("workload.file", "json", (".json",), "flows", ".json (a list of flows)"),
    Format("workload.file", "goal", (".goal",), "goal", ".goal (a GOAL schedule)"),
    Format("workload.file", "htsim", (".cm", ".tm"), "htsim", ".cm/.tm (an htsim connection matrix)"),
    Format("workload.file", "csv", (), "flows", "any other name: CSV (src, dst, size, ...)"),
    Format("topology.file", "graph", (".toml", ".json"), "topology_file", ".toml or .json (the graph)"),
    Format(
        "topology.file",
        "edges",
        (".edgelist", ".edges", ".txt"),
        "topology_file",
        ".edgelist/.edges/.txt (NetworkX edge list, or the ns-3 RDMA simulators' topology.txt)",
    ),
    Format("topology.file", "graphml", (".graphml",), "topology_file", ".graphml"),
    Format("topology.file", "htsim", (".topo",), "htsim", ".topo (htsim's fat tree)"),
    Format("topology.file", "infragraph", (".yaml", ".yml"), "infragraph", ".yaml/.yml/.json (InfraGraph)"),
)


def format_of(field: str, path: Path) -> Format | None:
    """The format ``field`` reads ``path`` as, by its suffix; ``None`` where the field has no
    format for it (and no catch-all)."""
    suffix = path.suffix.lower()
    mine = [f for f in FORMATS if f.field == field]
    return next((f for f in mine if suffix in f.suffixes), next((f for f in mine if not f.suffixes), None))


def allowed(field: str) -> str:
    """The formats ``field`` reads, as a refusal lists them."""
    whats = [f.what for f in FORMATS if f.field == field]
    return ", ".join(whats[:-1]) + " or " + whats[-1]


def require(field: str, path: Path) -> Format:
    """:func:`format_of`, refusing a file no format of ``field`` reads."""
    found = format_of(field, path)
    if found is None:
        raise scenario_error(field, f"{str(path)!r}; allowed: {allowed(field)}")
    return found
