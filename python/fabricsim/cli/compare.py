"""`fabricsim compare`."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import InterruptedAfterWrite, ScenarioError, scenario_error
from ..results import PROVENANCE, Results
from ..scenario import Scenario
from .common import (
    EXIT_INCOMPLETE,
    SUMMARY_FLOW_COLUMNS,
    QuietOpt,
    ReferenceOpt,
    SetOpt,
    ThreadsOpt,
    _check_writable,
    _guard,
    _load,
    _reference_of,
    _run_reference,
    _run_with_bar,
    _threads_option,
    _warn,
    app,
    err,
)
from .printer import (
    _print_compare,
)


@app.command()
@_guard
def compare(
    scenario: Annotated[Path, typer.Argument(metavar="SCENARIO.toml", help="Scenario TOML file.")],
    lb: Annotated[str, typer.Option("--lb", metavar="LB,LB,...", help="Comma-separated load balancers, e.g. ecmp,ops.")] = "ecmp,ops",
    set_: SetOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object {lb: summary}.")] = False,
    quiet: QuietOpt = False,
    threads: ThreadsOpt = "auto",
    reference: ReferenceOpt = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Write each load balancer's run into DIR/LB/ as it finishes, as run --out does (a stop keeps them; rerun to resume).",
        ),
    ] = None,
) -> None:
    """Run the same scenario under several load balancers and tabulate FCTs, queues, trims, drops."""
    asked = _threads_option(threads)
    if out_dir is not None:
        _check_writable(out_dir)
    base = _load(scenario, set_)
    names = [n.strip() for n in lb.split(",") if n.strip()]
    if not names:
        raise scenario_error("--lb", f"got {lb!r}; expected names such as ecmp,ops")
    # a run whose tables are not written keeps only the flows columns its summary reads
    keep = None if out_dir is not None else SUMMARY_FLOW_COLUMNS
    variants = {}
    for name in names:  # validate every variant before running any
        v = base.with_lb(name)
        try:
            # checked by the survey that also says its estimate (of the columns the run keeps)
            v.estimate(keep)
        except ScenarioError as e:
            also = ", or switch-ar (ECMP hosts, adaptive switches)" if e.field == "lb.kind" else ""
            raise scenario_error(f"--lb {name}: {e.field}", e.message + also) from None
        variants[name] = v
        _warn(v, name)
    # one reference for all: on one switch the load balancer has no choice to make
    ref = _reference_of(next(iter(variants.values())), reference)
    from .. import reference as reference_module

    # the reference first (its jobs table is all it gives), so that each run is whole when
    # it is written: as it finishes, so that a stop keeps the runs done
    theirs = None if ref is None else _run_reference(ref, quiet, asked)
    results: dict[str, Results] = {}
    for name, v in variants.items():
        kept = None if out_dir is None else _kept_run(out_dir / name, v)
        if kept is not None and out_dir is not None:
            # written by an earlier compare (one that was stopped) of the same scenario, by this
            # build: the same run would give the same tables
            if not quiet:
                err.print(escape(f"{name}: kept {out_dir / name} (the same scenario, run by this build)"), highlight=False)
            res = kept
        else:
            try:
                res = _run_with_bar(v, name, quiet, asked, keep)
            except KeyboardInterrupt:
                if out_dir is None or not results:
                    raise
                written = ", ".join(str(out_dir / n) for n in results)
                raise InterruptedAfterWrite(signal.SIGINT, f"{written}; the same command resumes it") from None
        if theirs is not None:
            reference_module.attach(res, theirs)
        if out_dir is not None and kept is None:
            res.write(out_dir / name)
            # the rest of its flows table is on disk: it holds what the printed tables read
            res.flows = res.flows.select(SUMMARY_FLOW_COLUMNS)
        results[name] = res
    if as_json:
        sys.stdout.write(json.dumps({n: r.summary for n, r in results.items()}) + "\n")
    else:
        _print_compare(results)
    incomplete = [name for name, r in results.items() if not r.complete]
    if incomplete:
        err.print("[yellow]incomplete:[/] " + ", ".join(escape(f"{n} ({results[n].summary['stop_reason']})") for n in incomplete))
        raise typer.Exit(EXIT_INCOMPLETE)


def _kept_run(out: Path, scenario: Scenario) -> Results | None:
    """The run in ``out`` if it is whole (its ``summary.json`` is written last), of
    ``scenario`` as the core fills it in, and computed by this build of fabricsim; else None
    (it is run again, and written over)."""
    if not (out / "summary.json").exists():
        return None
    try:
        res = Results.read(out)
    except (OSError, ValueError, KeyError):
        return None
    same = json.dumps(res.scenario, sort_keys=True) == json.dumps(scenario.filled(), sort_keys=True)
    return res if same and res.provenance == PROVENANCE else None
