"""`fabricsim topology` and `fabricsim list`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from .. import registry
from ..scenario import Scenario
from .common import (
    SetOpt,
    _guard,
    _load,
    _with_sets,
    app,
    out,
)


@app.command()
@_guard
def topology(
    scenario: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="A scenario TOML file (its [topology] is read) or a topology file (.toml/.json graph, .graphml, .edgelist).",
        ),
    ],
    set_: SetOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
    export: Annotated[
        Path | None,
        typer.Option("--export", metavar="PATH", help='Also write the fabric as a graph (.toml or .json) that kind = "graph" reads.'),
    ] = None,
    draw: Annotated[
        Path | None, typer.Option("--draw", metavar="PATH", help="Also draw the fabric, tier by tier (.png, .svg or .pdf).")
    ] = None,
) -> None:
    """Print the fabric read as a graph: switches, links, diameter, bisection, tables."""
    from .. import _core
    from ..io.topology_file import draw_fabric, is_topology_file, write_topology

    if is_topology_file(scenario):
        sc = _with_sets(Scenario({"topology": {"kind": "graph", "file": scenario.name}}, base_dir=scenario.parent), set_)
    else:
        sc = _load(scenario, set_)
    text = Scenario(sc.data | {"workload": {"kind": "permutation", "size": "1B"}}, sc.base_dir).to_json()
    summary_json, graph_json = _core.topology(text, bool(export or draw))
    summary = json.loads(summary_json)
    graph = None if graph_json is None else json.loads(graph_json)
    if export and graph is not None:
        write_topology(graph, export)
    if draw and graph is not None:
        draw_fabric(graph, draw)
    if as_json:
        sys.stdout.write(json.dumps(summary) + "\n")
        return
    t = Table(title=f"{escape(str(scenario))}: the fabric as a graph", show_header=False)
    t.add_row("hosts", f"{summary['hosts']:,}")
    if summary["ports_per_host"] > 1:
        ports = summary["ports_per_host"]
        t.add_row("NIC ports", f"{ports} a host (planes, or a GPU's NICs), {ports * summary['hosts']:,} in all")
    for name, count in summary["switches"]:
        t.add_row(f"{name} switches", f"{count:,}")
    for tier, count in enumerate(summary["links"]):
        t.add_row(f"links, tier {tier}", f"{count:,}" + (" (host to switch)" if tier == 0 else ""))
    t.add_row("diameter", f"{summary['diameter']} links between the farthest hosts")
    bisection, injection = summary["bisection_bps"], summary["injection_bps"]
    t.add_row(
        "bisection",
        f"{bisection / 1e12:,.1f} Tb/s from the first half of the hosts to the second "
        f"({bisection / injection:.3f} of their {injection / 1e12:,.1f} Tb/s)",
    )
    t.add_row(
        "forwarding tables",
        f"{summary['table_entries']:,} entries (switch, destination edge switch); "
        f"{summary['table_ports']:,} ports in their distinct groups",
    )
    if summary["irregular_count"]:
        more = summary["irregular_count"] - len(summary["irregular"])
        t.add_row("irregular", escape("; ".join(summary["irregular"]) + (f"; and {more} more" if more else "")))
    for what, path in (("written to", export), ("drawn in", draw)):
        if path is not None:
            t.add_row(what, escape(str(path)))
    out.print(t)


@app.command("list")
def list_(
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON: [{category, name, summary, reference}].")] = False,
) -> None:
    """List the registered load balancers, workloads, routing rules, CCs and topologies."""
    if as_json:
        sys.stdout.write(json.dumps(registry()) + "\n")
        return
    t = Table()
    for col in ("category", "name", "summary", "reference"):
        t.add_column(col)
    for row in registry():
        t.add_row(row["category"], row["name"], row["summary"], row["reference"])
    out.print(t)
