"""`fabricsim reproduce`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import scenario_error
from .common import (
    AllowOtherVersionOpt,
    _check_writable,
    _guard,
    app,
    err,
    out,
)


@app.command()
@_guard
def reproduce(
    names: Annotated[list[str] | None, typer.Argument(metavar="[NAME]...", help="Experiments to run (see --list).")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments and their claims.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Run every experiment.")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="Scaled down: fewer seeds, smaller sizes (minutes in all).")] = False,
    out_dir: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Sweeps and claims go here.")] = Path("out/reproduce"),
    workers: Annotated[
        int | None, typer.Option("--workers", "-j", min=1, help="Processes (default: CPUs available / threads per point).")
    ] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the verdicts as a Markdown table.")] = False,
    headline_only: Annotated[
        bool, typer.Option("--headline", help="Print only the verdicts' counts (the headline, Markdown), as the README quotes them.")
    ] = False,
    tables: Annotated[bool, typer.Option("--tables", help="Print the experiments' tables (Markdown) instead of the verdicts.")] = False,
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Skip the plots (DIR/NAME/plots) and the HTML report (DIR/report.html).")
    ] = False,
    allow_other_version: AllowOtherVersionOpt = False,
    sensitivity: Annotated[
        bool,
        typer.Option(
            "--sensitivity",
            help="Judge every claim again under each named default's documented values (freezing timeout, window cap, "
            "ACK ratio, trimming, latency split; docs/reproduction.md): a claim whose verdict changes says 'depends on'.",
        ),
    ] = False,
) -> None:
    """The source papers' experiments: run them, judge each claim against the paper, and write
    the verdicts and plots into an HTML report."""
    import polars as pl

    from ..reproduce import SOURCES, draw, experiments, fabricsim_cell, headline, markdown_claims, markdown_tables, run_experiment
    from ..reproduce import tables as experiment_tables

    suite = {e.name: e for e in experiments()}
    if list_:
        t = Table(title=f"{len(suite)} experiments")
        for col in ("experiment", "source", "claims", "reproduces"):
            t.add_column(col)
        for e in suite.values():
            t.add_row(e.name, e.source, str(len(e.claims)), e.reference)
        out.print(t)
        return
    chosen = list(suite) if all_ else (names or [])
    if not chosen:
        raise scenario_error("NAME", "give experiment names, --all or --list")
    for n in chosen:
        if n not in suite:
            raise scenario_error("NAME", f"got {n!r}; allowed: {', '.join(suite)}")
    for n in chosen:  # every sweep checked before any runs
        spec = suite[n].spec(quick)
        if spec is not None:
            spec.validate()
        if sensitivity:
            from ..reproduce.sensitivity import plan

            plan(suite[n], quick)
    _check_writable(out_dir)
    results = []
    for n in chosen:
        err.print(f"[bold]{n}[/] ({SOURCES[suite[n].source]})", highlight=False)
        claims = run_experiment(
            suite[n], out_dir, quick=quick, workers=workers, plots=False, allow_other_version=allow_other_version, sensitivity=sensitivity
        )
        d = out_dir / (n + ("-quick" if quick else ""))
        results.append((suite[n], claims, d, [] if no_report else draw(suite[n], d)))
    claims = pl.concat([c for _, c, _, _ in results])
    suffix = "-quick" if quick else ""
    claims.write_parquet(out_dir / f"claims{suffix}.parquet")
    if not no_report:
        from ..plot.report import reproduction_report

        page = reproduction_report(results, out_dir / f"report{suffix}.html", quick=quick)
        err.print(escape(f"report: {page}"))
    if tables:
        parts = []
        for exp, _, d, _ in results:
            if (d / "points.parquet").exists():
                parts.append(markdown_tables(experiment_tables(exp, pl.read_parquet(d / "points.parquet"), d)))
        sys.stdout.write("\n\n".join(p for p in parts if p) + "\n")
        return
    if headline_only:
        sys.stdout.write(f"**{headline(claims)}.**\n")
        return
    if markdown:
        sys.stdout.write(markdown_claims(claims))
        return
    t = Table(title="the documents vs fabricsim" + (" (quick)" if quick else ""), caption=headline(claims))
    for col in ("experiment", "kind", "claim", "source", "fabricsim", "verdict"):
        t.add_column(col, justify="right" if col in ("source", "fabricsim") else "left", overflow="fold")
    colors = {"matches": "green", "differs": "red", "inconclusive": "blue"}
    for r in claims.iter_rows(named=True):
        color = colors.get(r["verdict"], "yellow")
        t.add_row(r["experiment"], r["kind"], escape(r["claim"]), escape(r["source"]), fabricsim_cell(r), f"[{color}]{r['verdict']}[/]")
    out.print(t)
