"""The command line's frame: the typer app, the consoles, the options the commands share,
running a scenario with its progress, and the guard that turns errors into exit codes."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ..errors import ArgumentError, InterruptedAfterWrite, MissingDependency, ScenarioError, scenario_error
from ..results import Results
from ..run import Prepared, parse_threads
from ..run import Progress as RunProgress
from ..run import run as run_scenario
from ..scenario import Scenario, parse_value
from ..sweep import Interrupted

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
    scenario: Scenario | Prepared,
    label: str,
    quiet: bool,
    threads: int | None = None,
    flow_columns: Sequence[str] | None = None,
    estimated: bool = False,
) -> Results:
    """Run one scenario on `threads` threads; progress on stderr: flows completed (the bar),
    simulated time and events per second (a run whose flows finish together shows its pace
    there). Says so where the run used fewer threads than asked. `flow_columns`: the flows
    table's columns to keep (all if None); `estimated`: its estimate was said already
    (:func:`_say_estimate`)."""
    res = _run_quietly_or_not(scenario, label, quiet, threads, flow_columns, estimated)
    if "thread_note" in res.summary and not quiet:
        err.print(f"[yellow]note{' (' + escape(label) + ')' if label else ''}:[/] {escape(res.summary['thread_note'])}", highlight=False)
    return res


def _reference_of(scenario: Scenario | Prepared, reference: str | None) -> Scenario | None:
    """The reference scenario ``--reference`` asks for (checked before anything runs), from
    the prepared run where there is one."""
    from .. import _core
    from .. import reference as reference_module

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


BYTE_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def _bytes(n: int) -> str:
    """A byte count in the largest binary unit it fills, rounded: 4.0 GiB."""
    for unit, size in BYTE_UNITS:
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n} B"


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


def _say_estimate(scenario: Scenario, label: str, flow_columns: Sequence[str] | None) -> None:
    """What a run of ``scenario`` keeping ``flow_columns`` will take, said from its survey
    (seconds and a few hundred MB where the run's build of millions of messages takes minutes
    and GBs): before the build, so a run too long to wait for is stopped before it holds them."""
    max_wall = "max_wall" in scenario.data.get("stop", {})
    err.print(_estimate(label, *scenario.estimate(flow_columns), max_wall), highlight=False, soft_wrap=True)


def _run_quietly_or_not(
    scenario: Scenario | Prepared,
    label: str,
    quiet: bool,
    threads: int | None,
    flow_columns: Sequence[str] | None = None,
    estimated: bool = False,
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
    said = [estimated]
    if isinstance(scenario, Scenario) and not estimated:
        said[0] = True
        _say_estimate(scenario, label, flow_columns)

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
        from ..sweep import running

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
        from .. import __version__

        sys.stdout.write(f"fabricsim {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Packet-level simulator of AI/ML datacenter fabrics."""


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
