"""`fabricsim run`."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import InterruptedAfterWrite, ScenarioError, scenario_error
from ..results import Results
from ..run import prepare
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
    _say_estimate,
    _threads_option,
    _warn,
    app,
    err,
)
from .printer import (
    _print_summary,
)


@app.command()
@_guard
def run(
    scenario: Annotated[Path, typer.Argument(metavar="SCENARIO.toml", help="Scenario TOML file.")],
    set_: SetOpt = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", metavar="DIR", help="Write flows.parquet, ports.parquet, reorder.parquet, summary.json, scenario.toml here."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print {scenario, summary} as one JSON object on stdout.")] = False,
    quiet: QuietOpt = False,
    threads: ThreadsOpt = "auto",
    reference: ReferenceOpt = None,
    mpi: Annotated[
        bool,
        typer.Option(
            "--mpi",
            help="One run across the processes of an MPI launch (mpiexec -n N fabricsim run SCENARIO --mpi): each runs its share "
            "of the fabric on --threads threads (auto: one); rank 0 prints and writes the results, the same as one process's. "
            "Needs fabricsim[mpi].",
        ),
    ] = False,
) -> None:
    """Run one scenario and print its summary."""
    asked = _threads_option(threads)
    sc = _load(scenario, set_)
    # checked and built once, for its warnings, its reference and its run; a run whose tables
    # are not written keeps only the flows columns its summary reads (its estimate counts those)
    columns = None if out_dir is not None else SUMMARY_FLOW_COLUMNS
    if mpi:
        found, ref = _across_processes(sc, scenario.stem, out_dir, quiet, asked, reference, columns)
        if found is None:
            return  # not rank 0: it prints and writes
        res = found
    else:
        if not quiet:
            _say_estimate(sc, scenario.stem, columns)
        prepared = prepare(sc, "auto" if asked is None else asked, columns)
        ref = _reference_of(prepared, reference)
        if out_dir is not None:
            _check_writable(out_dir)
        _warn(sc, found=prepared.warnings)
        res = _run_with_bar(prepared, scenario.stem, quiet, asked, columns, estimated=not quiet)
    if ref is not None:
        # the non-blocking reference, small beside the run (across processes: on rank 0 alone)
        from .. import reference as reference_module

        reference_module.attach(res, _run_reference(ref, quiet, asked))
    if out_dir is not None:
        res.write(out_dir)
    try:
        if as_json:
            sys.stdout.write(json.dumps(res.to_json()) + "\n")
        else:
            _print_summary(res)
    except KeyboardInterrupt:
        if out_dir is None:
            raise
        raise InterruptedAfterWrite(signal.SIGINT, out_dir) from None
    if not res.complete:
        done = f"{res.summary['completed']}/{res.summary['flows']} flows completed"
        err.print(f"[yellow]incomplete:[/] {escape(res.summary['stop_reason'])}; {done}")
        raise typer.Exit(EXIT_INCOMPLETE)


def _across_processes(
    sc: Scenario, label: str, out_dir: Path | None, quiet: bool, asked: int | None, reference: str | None, columns: Sequence[str] | None
) -> tuple[Results | None, Scenario | None]:
    """``run --mpi``: the run across the processes of this MPI launch (:mod:`fabricsim.mpi`), each
    on ``asked`` threads (``None``, ``--threads auto``: one); its results on rank 0, ``None`` on
    the others, and the reference ``--reference`` asks for, which rank 0 runs in one process
    after the run. Rank 0 alone says the estimate and the warnings, and checks ``--out`` (and
    tells the others, which would otherwise wait for it in the run)."""
    from ..mpi import communicator, run_mpi

    # every rank checks the reference alike (an error stops them all before the run)
    ref = _reference_of(sc, reference)
    comm = communicator()
    first = comm.Get_rank() == 0
    if first and not quiet:
        _say_estimate(sc, label, columns)
    unwritable = None
    if first and out_dir is not None:
        try:
            _check_writable(out_dir)
        except ScenarioError as e:
            unwritable = (e.field, e.message)
    unwritable = comm.allgather(unwritable)[0]
    if unwritable is not None:
        raise scenario_error(*unwritable)
    if first:
        _warn(sc)
    return run_mpi(sc, comm, columns, threads=1 if asked is None else asked), ref
