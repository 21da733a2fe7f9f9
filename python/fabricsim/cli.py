"""The ``fabricsim`` command.

Exit codes: 0 success, 1 internal error, 2 bad input (a scenario the core rejects, a
missing file, a bad option, a sweep or experiment file), 3 a run that ended incomplete (stop
guard hit), 4 a missing optional dependency; each from the exception's class
(:mod:`fabricsim.errors`).
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from . import registry
from .errors import ArgumentError, InterruptedAfterWrite, MissingDependency, ScenarioError, scenario_error
from .results import PROVENANCE, Results
from .run import Prepared, parse_threads, prepare
from .run import Progress as RunProgress
from .run import run as run_scenario
from .scenario import Scenario, parse_value
from .sweep import Interrupted

P = ParamSpec("P")
R = TypeVar("R")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Packet-level simulator of AI/ML datacenter fabrics.",
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)
err = Console(stderr=True, soft_wrap=True)
# Tables keep their columns when piped (rich would otherwise assume 80 columns).
out = Console(width=shutil.get_terminal_size((150, 24)).columns)

EXIT_INTERNAL, EXIT_USAGE, EXIT_INCOMPLETE = 1, 2, 3

SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        metavar="KEY=VALUE",
        help=(
            "Override a field: dotted.key=value (repeatable). lb.kind=X (topology.kind=X) keeps only the [lb] ([topology])"
            " parameters X accepts."
        ),
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
ReferenceOpt = Annotated[
    str | None,
    typer.Option(
        "--reference",
        metavar="nonblocking",
        help="Also run the scenario on one non-blocking switch (same hosts, NICs, transport, placement; no faults) "
        "and report each job's JCT over it (fabric_cost).",
    ),
]
ThreadsOpt = Annotated[
    str,
    typer.Option(
        "--threads",
        "-t",
        metavar="N|auto",
        help="Threads of the parallel engine (default auto: one for a small run, else one per CPU available to this process; "
        "a window after a sparse one runs on one). The results are the same for any number.",
    ),
]
AllowOtherVersionOpt = Annotated[
    bool,
    typer.Option(
        "--allow-other-version",
        help="Resume into a directory another build of fabricsim wrote points into (they mix; points.parquet says which).",
    ),
]
# `plot` and `report` read the same directories and take the same sweep options
ResultDirArg = Annotated[Path, typer.Argument(metavar="DIR", help="A run directory (run --out) or a sweep directory (sweep --out).")]
XOpt = Annotated[str | None, typer.Option("--x", metavar="AXIS", help="Sweep: the line plot's x axis.")]
LineOpt = Annotated[str | None, typer.Option("--line", metavar="AXIS", help="Sweep: one line (and CDF) per value of this axis.")]
MetricOpt = Annotated[
    str | None,
    typer.Option(
        "--metric", metavar="COLUMN", help="Sweep: the column of points.parquet plotted (default: max_jct_ns with jobs, else max_fct_ns)."
    ),
]


PartialOpt = Annotated[
    bool,
    typer.Option("--partial", help="Sweep: plot one that was stopped before all its points (every title says how many are there)."),
]


def _sweep_options(path: Path, x: str | None, line: str | None, metric: str | None) -> dict[str, Any]:
    """The sweep options of `plot` and `report` for DIR: they apply to a sweep directory only."""
    if not path.is_dir():
        raise scenario_error("DIR", f"no such directory {str(path)!r}")
    return {"x": x, "line": line, "metric": metric} if (path / "points.parquet").exists() else {}


def _load(path: Path, sets: list[str] | None) -> Scenario:
    if not path.exists():
        raise scenario_error("SCENARIO", f"no such file {str(path)!r}")
    return _with_sets(Scenario.load(path), sets)


def _with_sets(scenario: Scenario, sets: list[str] | None) -> Scenario:
    for item in sets or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise scenario_error("--set", f"got {item!r}; expected dotted.key=value, e.g. lb.kind=ecmp")
        key, value = key.strip(), parse_value(value.strip())
        # switching kind keeps only the [lb] or [topology] fields the new one accepts
        scenario = scenario.switched(key, value)
    return scenario


def _check_writable(out_dir: Path) -> None:
    """Refuse an output directory that cannot be written, before anything runs."""
    import tempfile

    # probe the nearest existing directory: one made here would outlive an interrupted run
    probe = out_dir
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        if not probe.is_dir():
            raise NotADirectoryError(20, "not a directory")
        with tempfile.NamedTemporaryFile(dir=probe):
            pass
    except OSError as e:
        raise scenario_error("--out", f"cannot write to {str(out_dir)!r}: {e.strerror or e}") from None


def _threads_option(text: str) -> int | None:
    """``--threads``: a count (ASCII digits) or ``auto`` (``None``)."""
    text = text.strip()
    return parse_threads(int(text) if text.isascii() and text.isdigit() else text, "--threads")


def _warn(scenario: Scenario, label: str = "", found: list[str] | None = None) -> None:
    """Prints the scenario's warnings (`found`, where :meth:`Scenario.validate` gave them)."""
    for w in scenario.warnings() if found is None else found:
        err.print(f"[yellow]warning{' (' + escape(label) + ')' if label else ''}:[/] {escape(w)}", highlight=False)


#: The flows table's columns the printed summary reads (`Results.traffic_table`,
#: `Results.buckets_by_source`): all a run keeps unless it writes its tables (`--out`).
SUMMARY_FLOW_COLUMNS = ("bytes", "job", "traffic", "path_links", "slowdown", "completed")


def _run_with_bar(
    scenario: Scenario | Prepared, label: str, quiet: bool, threads: int | None = None, flow_columns: Sequence[str] | None = None
) -> Results:
    """Run one scenario on `threads` threads; progress on stderr: flows completed (the bar),
    simulated time and events per second (a run whose flows finish together shows its pace
    there). Says so where the run used fewer threads than asked. `flow_columns`: the flows
    table's columns to keep (all if None)."""
    res = _run_quietly_or_not(scenario, label, quiet, threads, flow_columns)
    if "thread_note" in res.summary and not quiet:
        err.print(f"[yellow]note{' (' + escape(label) + ')' if label else ''}:[/] {escape(res.summary['thread_note'])}", highlight=False)
    return res


def _reference_of(scenario: Scenario | Prepared, reference: str | None) -> Scenario | None:
    """The reference scenario ``--reference`` asks for (checked before anything runs), from
    the prepared run where there is one."""
    from . import _core
    from . import reference as reference_module

    if reference_module.check(reference) is None:
        return None
    if isinstance(scenario, Prepared):
        return scenario.reference()
    return reference_module.reference_scenario(_core.Simulation(scenario.to_json(), 1), scenario.base_dir)


def _run_reference(ref: Scenario, quiet: bool, threads: int | None) -> Results:
    """Runs the non-blocking reference once: its jobs table is all it gives (no flows columns)."""
    return _run_with_bar(ref, "non-blocking reference", quiet, threads, ())


#: Events a second on one thread on the benchmarks (docs/performance.md, "How long a run
#: takes"): the range a run's time is estimated with, before it starts.
EVENTS_PER_S = (5e6, 15e6)
#: A run estimated to take longer than this may take up to this long, s: the estimate suggests
#: stop.max_wall.
LONG_RUN_S = 600.0
#: Seconds between progress lines when stderr is not a terminal.
LINE_EVERY_S = 30.0


def _estimate(label: str, events: int, memory: int, max_wall: bool) -> str:
    """What a run will take, said before it starts: its `events`, a range of wall time on one
    thread, its `memory`; and stop.max_wall where it may be long and none is set."""
    fast, slow = (events / rate for rate in reversed(EVENTS_PER_S))
    text = (
        f"{escape(label)}: about {events / 1e6:,.1f} M events, {_seconds(fast)} to {_seconds(slow)} on one thread; "
        f"about {_bytes(memory)} of memory"
    )
    if slow > LONG_RUN_S and not max_wall:
        text += "; stop.max_wall bounds it (--set stop.max_wall=600s: the run stops there, incomplete, with what it has)"
    return text


def _seconds(s: float) -> str:
    """0.3 s, 42 s, 12 min, 3.1 h."""
    if s < 10:
        return f"{s:.1f} s"
    if s < 600:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min" if s < 3 * 3600 else f"{s / 3600:.1f} h"


def _where(p: RunProgress, elapsed: float) -> tuple[float, str]:
    """How far a run is, by its events against the expected ones (at most 0.99 until every flow
    is done: the estimate is rough; by its flows where no events are expected), and the words
    for it. Not by its flows where events are expected: a training step's many small scale-up
    messages end early (80 % of the flows of docs/workloads.md's 512-GPU step at 2 % of its
    events)."""
    share = p.flows_done / max(p.flow_count, 1)
    if p.expected_events > 0 and share < 1.0:
        share = min(p.events / p.expected_events, 0.99)
    words = (
        f"{p.now_ps / 1e6:,.1f} us simulated, {p.events / 1e6:,.1f} of about {p.expected_events / 1e6:,.1f} M events, "
        f"flows {p.flows_done:,}/{p.flow_count:,}, {p.events / max(elapsed, 1e-9) / 1e6:.2f} M events/s"
    )
    return share, words


def _run_quietly_or_not(
    scenario: Scenario | Prepared, label: str, quiet: bool, threads: int | None, flow_columns: Sequence[str] | None = None
) -> Results:
    """The run, with its estimate said first (before a scenario is built: its survey, which
    counts a job's messages without holding them); then a bar on a terminal, or a line every
    LINE_EVERY_S seconds otherwise (nohup, CI, a batch job)."""
    if quiet:
        return run_scenario(scenario, threads=threads, flow_columns=flow_columns)
    import time

    started = time.perf_counter()
    data = scenario.scenario.data if isinstance(scenario, Prepared) else scenario.data
    max_wall = "max_wall" in data.get("stop", {})
    said = [False]
    if isinstance(scenario, Scenario):
        said[0] = True
        err.print(_estimate(label, *scenario.estimate(), max_wall), highlight=False, soft_wrap=True)

    def say_estimate(p: RunProgress) -> None:
        if not said[0]:
            said[0] = True
            err.print(_estimate(label, p.expected_events, p.memory_estimate, max_wall), highlight=False, soft_wrap=True)

    if not err.is_terminal and not _force_progress():
        last = [started]

        def line(p: RunProgress) -> None:
            say_estimate(p)
            now = time.perf_counter()
            if now - last[0] >= LINE_EVERY_S:
                last[0] = now
                share, words = _where(p, now - started)
                err.print(f"{escape(label)}: {share:.0%}: {words}, {now - started:,.0f} s", highlight=False, soft_wrap=True)

        return run_scenario(scenario, progress=line, threads=threads, flow_columns=flow_columns)

    columns = (TextColumn(f"[bold]{escape(label)}"), BarColumn(), TextColumn("{task.fields[words]}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(label, total=1.0, words="")

        def update(p: RunProgress) -> None:
            say_estimate(p)
            share, words = _where(p, time.perf_counter() - started)
            bar.update(task, completed=share, words=words)

        return run_scenario(scenario, progress=update, threads=threads, flow_columns=flow_columns)


def _say_sweep_estimate(todo: list[Any], at_once: int) -> dict[str, int]:
    """What the points left to run will take, said before they start: their events, and a range
    of wall time on the ``at_once`` workers the sweep runs (each point at 5 to 15 M events/s),
    the largest point's memory times the workers. Returns each point's expected events, by id."""
    if not todo:
        return {}
    estimates = [p.scenario.estimate() for p in todo]
    events = sum(e for e, _ in estimates)
    fast, slow = (events / rate / at_once for rate in reversed(EVENTS_PER_S))
    memory = max(m for _, m in estimates) * at_once
    err.print(
        f"sweep: {len(todo)} points to run, about {events / 1e6:,.1f} M events: {_seconds(fast)} to {_seconds(slow)} "
        f"on {at_once} worker{'s' if at_once > 1 else ''}; up to about {_bytes(memory)} of memory at once",
        highlight=False,
        soft_wrap=True,
    )
    return {p.id: e for p, (e, _) in zip(todo, estimates, strict=True)}


class _SweepLines:
    """A line on stderr as each point starts and as it ends, the latter with the time the
    points left will take: their expected events at the wall time per expected event the
    finished points took here, over the workers (so the estimate learns this machine's speed
    and the scenario's events per estimated event as the sweep goes)."""

    def __init__(self, total: int, done: int, expected: dict[str, int], workers: int, enabled: bool) -> None:
        self.total, self.done, self.expected, self.workers, self.enabled = total, done, expected, max(1, workers), enabled
        self.begun: dict[str, float] = {}
        self.wall = 0.0
        self.events_done = 0

    def started(self, p: Any) -> None:
        import time

        self.begun[p.id] = time.monotonic()
        if self.enabled:
            events = self.expected.get(p.id, 0)
            err.print(escape(f"sweep: started {p.label()} (about {events / 1e6:,.1f} M events)"), highlight=False, soft_wrap=True)

    def finished(self, p: Any) -> None:
        import time

        self.done += 1
        took = time.monotonic() - self.begun.pop(p.id, time.monotonic())
        self.wall += took
        self.events_done += self.expected.pop(p.id, 0)
        if not self.enabled:
            return
        left = sum(self.expected.values())
        eta = ""
        if self.done < self.total and self.events_done:
            eta = f"; about {_seconds(left * self.wall / self.events_done / self.workers)} left"
        err.print(escape(f"sweep: {self.done}/{self.total} done: {p.label()} in {_seconds(took)}{eta}"), highlight=False, soft_wrap=True)

    def running(self, out_dir: Path, labels: dict[str, str]) -> None:
        """A line for each point running now: how far it is (events against its estimate,
        simulated time, flows) and its pace, as a run's progress lines say."""
        from .sweep import running

        for point, (p, wall) in sorted(running(out_dir).items()):
            share, words = _where(p, wall)
            label = labels.get(point, point)
            err.print(escape(f"sweep: running {label}: {share:.0%}: {words}, {wall:,.0f} s"), highlight=False, soft_wrap=True)


def _force_progress() -> bool:
    import os

    return os.environ.get("FABRICSIM_PROGRESS") == "1"


def _guard(fn: Callable[P, R]) -> Callable[P, R]:
    """Map errors to exit codes from their class (:mod:`fabricsim.errors`): bad input 2 with the
    message, a missing dependency 4; anything else is an internal error, 1 (``main``)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except ScenarioError as e:
            err.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False)
            raise typer.Exit(EXIT_USAGE) from None
        except (MissingDependency, ArgumentError) as e:
            err.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False)
            raise typer.Exit(e.exit_code) from None
        except Interrupted as e:
            err.print(f"[bold yellow]stopped[/] by {escape(str(e))}; the same command resumes it", highlight=False)
            raise typer.Exit(e.exit_code) from None
        except InterruptedAfterWrite as e:
            err.print(f"[bold yellow]stopped[/] by {escape(str(e))}", highlight=False)
            raise typer.Exit(e.exit_code) from None
        except KeyboardInterrupt:
            _stopped_by_sigint()
            raise typer.Exit(130) from None

    return wrapper


#: Whether this process said it was stopped by SIGINT (typer exits 130 without a word for one
#: that comes while it reads the arguments, before a command's guard: ``main`` says it then).
_SAID: list[bool] = []


def _stopped_by_sigint() -> None:
    err.print("[bold yellow]stopped[/] by SIGINT; nothing was written", highlight=False)
    _SAID.append(True)


def _version(value: bool) -> None:
    if value:
        from . import __version__

        sys.stdout.write(f"fabricsim {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Packet-level simulator of AI/ML datacenter fabrics."""


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
) -> None:
    """Run one scenario and print its summary."""
    asked = _threads_option(threads)
    sc = _load(scenario, set_)
    # checked and built once, for its warnings, its reference and its run
    prepared = prepare(sc, "auto" if asked is None else asked)
    ref = _reference_of(prepared, reference)
    if out_dir is not None:
        _check_writable(out_dir)
    _warn(sc, found=prepared.warnings)
    # a run whose tables are not written keeps only the flows columns its summary reads
    res = _run_with_bar(prepared, scenario.stem, quiet, asked, None if out_dir is not None else SUMMARY_FLOW_COLUMNS)
    if ref is not None:
        from . import reference as reference_module

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


def _num(v: Any, digits: int = 3) -> str:
    """A number for reading: thousands separated, no exponent; null as "-"."""
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:,.{digits}f}" if abs(v) < 1000 else f"{v:,.1f}"


def _us(v: Any) -> str:
    return "-" if v is None else f"{v / 1e3:,.1f}"


#: The job table of `run` and `compare`: (heading, column of job_table, format).
JOB_COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("job", "name", str),
    ("collective", "collective", str),
    ("ranks", "ranks", str),
    ("size", "size_bytes", lambda v: _size(v) if v else "-"),
    ("iterations done", "iterations", str),
    ("JCT us", "jct_ns", _us),
    ("ideal us", "ideal_jct_ns", _us),
    ("slowdown", "slowdown", lambda v: _num(v)),
    ("busbw Gb/s", "busbw_gbps", lambda v: _num(v, 1)),
    ("exposed comm us", "exposed_comm_ns", _us),
    ("vs non-blocking", "fabric_cost", lambda v: _num(v)),
]


#: Binary byte units, largest first.
BYTE_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def _size(v: int) -> str:
    """A byte count as a scenario writes it, in the largest unit it is a whole number of: 16MiB."""
    for unit, scale in BYTE_UNITS:
        if v >= scale and v % scale == 0:
            return f"{v // scale}{unit}"
    return f"{v}B"


def _print_summary(res: Results) -> None:
    """With jobs, their table comes first (a job's JCT and slowdown are its answer), then the
    summary; the JCT keys lead the summary too."""
    jobs = res.job_table()
    if jobs.height:
        t = Table(title="jobs (mean over completed iterations)")
        columns = [c for c in JOB_COLUMNS if c[1] in jobs.columns]
        for head, *_ in columns:
            t.add_column(head, justify="left" if head in ("job", "collective") else "right")
        for row in jobs.iter_rows(named=True):
            t.add_row(*(Text("-" if row[key] is None else fmt(row[key])) for _, key, fmt in columns))
        out.print(t)
        _print_trace_ranks(res)
        _print_traffic(res)
    _print_buckets(res, by_source=bool(jobs.height))
    keys = sorted(res.summary, key=lambda k: not (jobs.height and "jct" in k))
    t = Table(title="summary", show_header=False)
    for k in keys:
        v = res.summary[k]
        t.add_row(Text(k), Text("; ".join(v) if isinstance(v, list) else _num(v)))
    out.print(t)


def _print_traffic(res: Results) -> None:
    """With jobs: each source of traffic apart (:meth:`Results.traffic_table`)."""
    t = Table(title="traffic by source (completed messages' slowdown)")
    for head in ("job", "traffic", "messages", "bytes", "above the leaf", "mean slowdown", "p99 slowdown"):
        t.add_column(head, justify="left" if head in ("job", "traffic") else "right")
    for row in res.traffic_table().iter_rows(named=True):
        slow = ("-", "-") if row["mean_slowdown"] is None else (f"{row['mean_slowdown']:.3f}", f"{row['p99_slowdown']:.3f}")
        t.add_row(
            _job_of(row),
            row["traffic"],
            f"{row['messages']:,}",
            _bytes(row["bytes"]),
            f"{row['above_leaf_share']:.1%}",
            *slow,
        )
    out.print(t)


def _job_of(row: dict[str, Any]) -> str:
    """A source's job as the tables print it (`traffic_table`, `buckets_by_source`): its name,
    or "-" for the background."""
    return "-" if row["job"] is None else escape(str(row["name"] if row["name"] is not None else row["job"]))


def _print_buckets(res: Results, by_source: bool) -> None:
    """Slowdown by message size in the papers' buckets: per source of traffic with jobs
    (:meth:`Results.buckets_by_source`), pooled otherwise; buckets without messages left out."""
    if by_source:
        rows = list(res.buckets_by_source().iter_rows(named=True))
    elif res.buckets is not None:
        rows = [r | {"job": None, "traffic": "all"} for r in res.buckets.iter_rows(named=True) if r["messages"]]
    else:
        return
    if not rows:
        return
    t = Table(title="slowdown by message size" + (", by source" if by_source else ""))
    heads = (("job", "traffic") if by_source else ()) + ("size", "messages", "completed", "p50 slowdown", "p99 slowdown", "mean slowdown")
    for head in heads:
        t.add_column(head, justify="left" if head in ("job", "traffic", "size") else "right")
    for row in rows:
        source = (_job_of(row), row["traffic"]) if by_source else ()
        stats = (_num(row[k], 3) if row[k] is not None else "-" for k in ("p50_slowdown", "p99_slowdown", "mean_slowdown"))
        t.add_row(*source, row["bucket"], f"{row['messages']:,}", f"{row['completed']:,}", *stats)
    out.print(t)


def _bytes(n: int) -> str:
    """A byte count in the largest binary unit it fills, rounded: 4.0 GiB."""
    for unit, size in BYTE_UNITS:
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n} B"


def _print_trace_ranks(res: Results) -> None:
    """A trace's ranks (the steps table's `rank` rows): the slowest against its ideal end."""
    import polars as pl

    if res.steps is None:
        return
    ranks = res.steps.filter((pl.col("kind") == "rank") & pl.col("end_ps").is_not_null())
    for (job,), rows in ranks.group_by(["job"], maintain_order=True):
        rows = rows.with_columns((pl.col("end_ps") / pl.col("ideal_end_ps").clip(lower_bound=1)).alias("slowdown"))
        worst = rows.sort(["slowdown", "step"], descending=[True, False]).row(0, named=True)
        median = rows.select(pl.col("slowdown").median()).item()
        out.print(
            f"trace job {job}: {rows.height} ranks done; slowest rank {worst['step']} ended at {worst['end_ps'] / 1e6:,.1f} us, "
            f"its ideal {worst['ideal_end_ps'] / 1e6:,.1f} us (slowdown {worst['slowdown']:.3f}; median rank {median:.3f}); "
            "per rank: the steps table's rank rows"
        )


COMPARE_COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("status", "status", str),
    ("max FCT us", "max_fct_ns", _us),
    ("mean FCT us", "mean_fct_ns", _us),
    ("p99 FCT us", "p99_fct_ns", _us),
    ("max slowdown", "max_slowdown", lambda v: f"{v:.3f}"),
    ("mean slowdown", "mean_slowdown", lambda v: f"{v:.3f}"),
    ("max queue KB", "max_queue_bytes", lambda v: f"{v / 1e3:,.1f}"),
    ("trims", "trims", str),
    ("drops", "drops", str),
    ("wall s", "wall_s", lambda v: f"{v:.2f}"),
]
#: With jobs, these lead the compare table and the message columns say they are per message.
COMPARE_JOB_COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("max JCT us", "max_jct_ns", _us),
    ("max JCT slowdown", "max_jct_slowdown", lambda v: f"{v:.3f}"),
    ("max JCT / non-blocking", "max_fabric_cost", lambda v: f"{v:.3f}"),
]


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
    variants = {}
    for name in names:  # validate every variant before running any
        v = base.with_lb(name)
        try:
            v.validate()
        except ScenarioError as e:
            also = ", or switch-ar (ECMP hosts, adaptive switches)" if e.field == "lb.kind" else ""
            raise scenario_error(f"--lb {name}: {e.field}", e.message + also) from None
        variants[name] = v
        _warn(v, name)
    # one reference for all: on one switch the load balancer has no choice to make
    ref = _reference_of(next(iter(variants.values())), reference)
    keep = None if out_dir is not None else SUMMARY_FLOW_COLUMNS
    from . import reference as reference_module

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


def _job_words(job: dict[str, Any]) -> str:
    """A job in a few words: its collective and size, or the model it trains and its layout."""
    if "collective" in job:
        return f"{job['collective']} {job['size']}"
    model, par = job.get("model", {}), job.get("parallel", {})
    layout = " ".join(f"{k}={par[k]}" for k in ("tp", "pp", "dp", "ep") if k in par)
    return f"training {model.get('preset', 'model')} {layout}".rstrip()


def _print_compare(results: dict[str, Results]) -> None:
    """The compare table; a value that does not exist (no flow completed) prints as "-". With
    jobs the JCT columns come first, the message columns are marked as such, and a second
    table gives each job's slowdown under each load balancer."""
    first = next(iter(results.values())).scenario
    topo, wl, jobs = first["topology"], first.get("workload"), first.get("jobs", [])
    first_summary = next(iter(results.values())).summary
    n_flows = first_summary["flows"]
    faults = first.get("faults", [])
    parts = [f"{wl['kind']} {wl['size']}" if "size" in wl else f"{n_flows} {wl['kind']}"] if wl else []
    parts += [f"{j.get('name', f'job{i}')}: {_job_words(j)}" for i, j in enumerate(jobs)]
    workload = " + ".join(parts)
    kind = topo.get("kind", "fat_tree")
    if kind == "graph":
        fabric = f"{len(topo['graph']['hosts'])} hosts, graph {topo.get('file', '')}".rstrip()
    elif kind == "fat_tree":
        fabric = f"{topo['hosts']} hosts, {topo['tiers']}-tier, {topo['link_rate']}"
    else:
        from .reference import fabric_hosts

        fabric = f"{fabric_hosts(topo)} hosts, {kind}, {topo['link_rate']}"
    title = f"{fabric}, {workload}"
    title += f", {len(faults)} fault{'s' * (len(faults) != 1)}" if faults else ""
    title += f", seed {first['seed']}"
    t = Table(title=Text(title))
    t.add_column("lb")
    if jobs:
        message = [(h.replace("FCT", "msg FCT").replace("slowdown", "msg slowdown"), k, f) for h, k, f in COMPARE_COLUMNS]
        columns = [COMPARE_COLUMNS[0], *COMPARE_JOB_COLUMNS, *message[1:]]
    else:
        columns = COMPARE_COLUMNS
    columns = [c for c in columns if c[1] in first_summary]
    for head, _, _ in columns:
        t.add_column(head, justify="right")
    for name, r in results.items():
        t.add_row(name, *("-" if r.summary.get(key) is None else fmt(r.summary[key]) for _, key, fmt in columns))
    out.print(t)
    if len(jobs) > 1:
        tables = {name: r.job_table() for name, r in results.items()}
        t = Table(title="job slowdown", caption="JCT / ideal, mean over iterations")
        t.add_column("job")
        for name in results:
            t.add_column(name, justify="right")
        for i, job in enumerate(next(iter(tables.values()))["name"]):
            t.add_row(Text(job), *(_num(jt["slowdown"][i]) for jt in tables.values()))
        out.print(t)
    _print_compare_buckets(results)
    if jobs:
        _print_compare_sources(results)


def _print_compare_buckets(results: dict[str, Results]) -> None:
    """The 99th percentile message slowdown in each size bucket that has messages, a row per
    load balancer (all sources pooled; `run` gives them apart)."""
    frames = {name: r.buckets for name, r in results.items() if r.buckets is not None}
    if not frames:
        return
    first = next(iter(frames.values()))
    buckets = [b for b, n in zip(first["bucket"], first["messages"], strict=True) if n]
    if not buckets:
        return
    title = "p99 message slowdown by size"
    t = Table(title=title, min_width=len(title) + 4)
    t.add_column("lb")
    for b in buckets:
        t.add_column(b, justify="right")
    for name, f in frames.items():
        p99 = dict(zip(f["bucket"], f["p99_slowdown"], strict=True))
        t.add_row(name, *(_num(p99[b]) for b in buckets))
    out.print(t)


def _print_compare_sources(results: dict[str, Results]) -> None:
    """With jobs: each source of traffic's share of bytes above the leaf (where a load balancer
    can act; the same under every one) and its p99 message slowdown under each."""
    tables = {name: r.traffic_table() for name, r in results.items()}
    t = Table(title="p99 message slowdown by source")
    for head in ("job", "traffic", "bytes above leaf"):
        t.add_column(head, justify="left" if head != "bytes above leaf" else "right")
    for name in results:
        t.add_column(name, justify="right")
    first = next(iter(tables.values()))
    for i, row in enumerate(first.iter_rows(named=True)):
        t.add_row(_job_of(row), row["traffic"], f"{row['above_leaf_share']:.1%}", *(_num(tt["p99_slowdown"][i]) for tt in tables.values()))
    out.print(t)


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
    from . import _core
    from .topology_file import draw_fabric, is_topology_file, write_topology

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


@app.command()
@_guard
def bench(
    only: Annotated[str | None, typer.Option("--only", metavar="TEXT", help="Run only the benchmarks whose name contains this.")] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Also the large ones (8192 and 32768 hosts, the 1024-rank allreduce, WebSearch).")
    ] = False,
    threads: Annotated[
        str | None,
        typer.Option(
            "--threads", "-t", metavar="N,N,...", help="Thread counts to run each at, or auto (default 1; with --contended 1,2,auto)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the measurements as JSON.")] = False,
    contended: Annotated[
        bool,
        typer.Option(
            "--contended",
            help="Run while busy loops hold every CPU (the 128- and 1024-host permutations on 1, 2 and auto threads "
            "unless --only/--threads say otherwise), --rounds times interleaved: median wall and its ratio to 1 thread.",
        ),
    ] = False,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="With --contended: interleaved rounds (default 5).")] = 5,
) -> None:
    """Run the standard performance scenarios, each in a fresh process: events/s, packets/s, wall, memory."""
    from .bench import BENCHMARKS, CONTENDED, measure

    given = threads if threads is not None else "1,2,auto" if contended else "1"
    counts = [_threads_option(t) for t in given.split(",")]
    if contended:
        picked = [b for b in BENCHMARKS if (only in b.name if only is not None else b.name in CONTENDED)]
        _bench_contended(picked, counts, rounds, as_json)
        return
    chosen = [(b, n) for b in BENCHMARKS if (only in b.name if only is not None else all_ or b.default) for n in counts]
    rows = []
    show = err.is_terminal or _force_progress()
    columns = (TextColumn("[bold]bench"), BarColumn(), TextColumn("{task.completed}/{task.total} {task.fields[name]}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=not show) as bar:
        task = bar.add_task("bench", total=len(chosen), name="")
        for b, n in chosen:
            bar.update(task, name=f"{b.name} on {n or 'auto'}")
            rows.append(measure(b, n))
            bar.advance(task)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    t = Table(title="fabricsim bench", caption="estimate s: what run says before it starts (its expected events at 5 to 15 M events/s)")
    for col in ("benchmark", "threads", "status", "events", "M events/s", "data pkts", "M data pkts/s", "wall s", "estimate s", "peak MB"):
        t.add_column(col, justify="right" if col != "benchmark" else "left")
    for r in rows:
        fast, slow = (r["expected_events"] / rate for rate in reversed(EVENTS_PER_S))
        t.add_row(
            r["name"],
            str(r["threads"]) + (" (auto)" if r.get("auto") else ""),
            r["status"],
            f"{r['events']:,}",
            f"{r['events'] / r['wall_s'] / 1e6:.2f}",
            f"{r['data_packets']:,}",
            f"{r['data_packets'] / r['wall_s'] / 1e6:.3f}",
            f"{r['wall_s']:.2f}",
            f"{fast:.2f}-{slow:.2f}",
            f"{r['peak_rss_mb']:.0f}",
        )
    out.print(t)


def _bench_contended(picked: list[Any], counts: list[int | None], rounds: int, as_json: bool) -> None:
    """`bench --contended`: the table (or JSON) of :func:`fabricsim.bench.contended`."""
    from .bench import contended
    from .run import cores

    if not picked:
        raise scenario_error("--only", "no benchmark's name contains it; `fabricsim bench --json` lists them")
    err.print(f"fabricsim bench --contended: {cores()} busy loops hold every CPU; {rounds} rounds", highlight=False)
    rows = contended(picked, counts, rounds)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    t = Table(title=f"fabricsim bench --contended ({cores()} busy loops, median of {rounds} rounds)")
    for col in ("benchmark", "threads", "used", "median wall s", "vs 1 thread", "walls s", "solo windows"):
        t.add_column(col, justify="left" if col == "benchmark" else "right")
    for r in rows:
        ratio = "" if r["vs_1_thread"] is None else f"{r['vs_1_thread']:.2f}x"
        solo = sum(w[1] for w in r["windows"]) / max(1, sum(w[0] + w[1] for w in r["windows"]))
        t.add_row(
            r["name"],
            str(r["asked"]),
            str(r["threads"]),
            f"{r['median_wall_s']:.2f}",
            ratio,
            " ".join(f"{w:.2f}" for w in r["walls_s"]),
            f"{solo:.0%}" if r["asked"] == "auto" else "",
        )
    out.print(t)


@app.command()
@_guard
def sweep(
    spec: Annotated[Path, typer.Argument(metavar="SPEC.toml", help="Sweep spec: base, grid/zip axes, seeds (docs/experiments.md).")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Write points.parquet and points/<id>/ here.")],
    workers: Annotated[
        int | None, typer.Option("--workers", "-j", min=1, help="Processes (default: CPUs available / threads per point).")
    ] = None,
    ray_address: Annotated[
        str | None, typer.Option("--ray", metavar="ADDRESS", help="Run on a Ray cluster: auto, ray://host:10001, or local.")
    ] = None,
    allow_other_version: AllowOtherVersionOpt = False,
    quiet: QuietOpt = False,
    threads_per_point: Annotated[
        int,
        typer.Option("--threads-per-point", min=1, metavar="N", help="Threads of the parallel engine for each point (default 1)."),
    ] = 1,
) -> None:
    """Run a scenario over a grid of field values and seeds, on every CPU; resumable."""
    import warnings

    from rich.progress import MofNCompleteColumn, TimeRemainingColumn

    from .sweep import Point, Sweep, local_workers, run_sweep

    sw = Sweep.load(spec)
    points = sw.validate()
    _check_writable(out_dir)
    show = not quiet and (err.is_terminal or _force_progress())
    columns = (TextColumn("[bold]sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True, disable=not show) as bar:
        todo = [p for p in points if not (out_dir / "points" / p.id / "summary.json").exists()]
        done_before = len(points) - len(todo)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the sweep itself warns of workers beyond the CPUs
            local = local_workers(workers, threads_per_point, max(1, len(todo)))
        expected = _say_sweep_estimate(todo, local) if not quiet else {}
        task = bar.add_task("sweep", total=len(points), completed=done_before)
        lines = _SweepLines(len(points), done_before, expected, 1 if ray_address is not None else local, enabled=not quiet)

        def finished(p: Point) -> None:
            bar.advance(task)
            lines.finished(p)

        # every LINE_EVERY_S, where each running point stands (its worker writes it)
        labels = {p.id: p.label() for p in points}
        stop = threading.Event()

        def report() -> None:
            while not stop.wait(LINE_EVERY_S):
                lines.running(out_dir, labels)

        reporter = threading.Thread(target=report, daemon=True)
        if not quiet:
            reporter.start()
        try:
            table = run_sweep(
                sw,
                out_dir,
                workers=workers,
                ray_address=ray_address,
                finished=finished,
                allow_other_version=allow_other_version,
                threads_per_point=threads_per_point,
                started=lines.started,
            )
        finally:
            stop.set()
    incomplete = table.filter(table["status"] != "complete").height if table.height else 0
    err.print(escape(f"{table.height} points in {out_dir / 'points.parquet'} ({done_before} were already there); {incomplete} incomplete"))


@app.command()
@_guard
def plot(
    path: ResultDirArg,
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", metavar="DIR", help="Where the PNG and SVG files go.")] = None,
    x: XOpt = None,
    line: LineOpt = None,
    metric: MetricOpt = None,
    partial: PartialOpt = False,
) -> None:
    """Plot a run (FCT CDF, JCT, reorder, queues, utilization) or a sweep (slowdown CDF, slowdown, metric vs axis)."""
    from .plot import plot_dir

    for f in plot_dir(path, out_dir, partial=partial, **_sweep_options(path, x, line, metric)):
        out.print(str(f), highlight=False)


@app.command()
@_guard
def report(
    path: ResultDirArg,
    out_file: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="The HTML file to write.")] = Path("report.html"),
    x: XOpt = None,
    line: LineOpt = None,
    metric: MetricOpt = None,
    partial: PartialOpt = False,
) -> None:
    """One self-contained HTML page (plotly inlined, no network): inputs, tables and interactive plots."""
    from .report import report as write_report

    out.print(str(write_report(path, out_file, partial=partial, **_sweep_options(path, x, line, metric))), highlight=False)


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

    from .reproduce import SOURCES, draw, experiments, fabricsim_cell, headline, markdown_claims, markdown_tables, run_experiment
    from .reproduce import tables as experiment_tables

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
            from .sensitivity import plan

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
        from .report import reproduction_report

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


def main() -> None:
    try:
        app()
    except SystemExit as e:
        # typer answers a SIGINT while it reads the arguments with exit 130 and nothing more
        if e.code == 130 and not _SAID:
            _stopped_by_sigint()
        raise
    except KeyboardInterrupt:  # outside typer and a command's guard
        _stopped_by_sigint()
        sys.exit(130)
    except Exception as e:  # an internal error: say so, distinctly from bad input
        err.print(f"[bold red]internal error:[/] {type(e).__name__}: {escape(str(e))}", highlight=False)
        sys.exit(EXIT_INTERNAL)


if __name__ == "__main__":
    main()
