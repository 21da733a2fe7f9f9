"""Running a sweep's points: on this machine's CPUs or on a Ray cluster, each point's results
written once, the points' table collected, interrupted runs resumed."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import MissingDependency, spec_error
from ..results import JOB_METRICS, PROVENANCE, job_table, parquet_metadata
from ..run import Progress
from ..scenario import Scenario
from .spec import MACHINE_COLUMNS, POINTS_FILE, Point, Sweep

# ---- running -------------------------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """A sweep stopped by a signal; ``points.parquet`` holds the points done so far (a
    KeyboardInterrupt, so ``except Exception`` does not swallow it)."""

    def __init__(self, signum: int, done: int, total: int, out_dir: Path) -> None:
        self.signum, self.done, self.total, self.out_dir = signum, done, total, out_dir
        super().__init__(f"{signal.Signals(signum).name}: {done} of {total} points done, in {out_dir / POINTS_FILE}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class _Stop(BaseException):
    """Raised in the main thread by SIGINT or SIGTERM while a sweep runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """While the sweep runs, SIGINT and SIGTERM raise :class:`_Stop` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: Any) -> None:
        raise _Stop(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _worker_init(parent: int) -> None:
    """In each worker: leave SIGINT to the parent, and exit if the parent goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


#: How often a running point writes where it stands (:func:`running`), s.
PROGRESS_EVERY_S = 5.0


def _progress_file(out: Path) -> Path:
    """Where the point whose tables go to ``out`` writes where it stands while it runs."""
    return out.with_name(f".{out.name}.progress")


def running(out_dir: str | Path) -> dict[str, tuple[Progress, float]]:
    """The points of the sweep in ``out_dir`` that are running, by id: where each stands (as
    :func:`fabricsim.run` reports it to a progress callback) and the seconds it has run; each
    writes it every :data:`PROGRESS_EVERY_S` seconds, and removes it when its tables are
    written."""
    found = {}
    for path in (Path(out_dir) / "points").glob(".*.progress"):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # gone, or being replaced
        wall = doc.pop("wall_s", 0.0)
        found[path.name[1 : -len(".progress")]] = (Progress(**doc), wall)
    return found


def run_point(data: dict[str, Any], base_dir: str, out: str, threads: int = 1) -> dict[str, Any]:
    """Run one point on ``threads`` threads and write its tables to ``out`` whole (a
    temporary directory, renamed); while it runs, where it stands goes to a file beside it
    every :data:`PROGRESS_EVERY_S` seconds (:func:`running` reads them).

    Top-level so a process pool or Ray can ship it. Returns the summary.
    """
    from ..run import run

    final = Path(out)
    where = _progress_file(final)
    began = time.monotonic()
    last = [began]

    def progress(p: Progress) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY_S:
            return
        last[0] = now
        tmp = where.with_name(f"{where.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(dataclasses.asdict(p) | {"wall_s": now - began}))
            os.replace(tmp, where)
        except OSError:
            pass  # where it stands is a courtesy: the run goes on

    try:
        res = run(Scenario(data, base_dir), threads=threads, progress=progress)
    finally:
        where.unlink(missing_ok=True)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    res.write(tmp)
    try:
        os.replace(tmp, final)
    except OSError:
        # another process (a worker of an earlier, killed sweep) wrote the same point first:
        # the same scenario gives the same tables, keep those
        shutil.rmtree(tmp, ignore_errors=True)
        if not (final / "summary.json").exists():
            raise
    return dict(res.summary)


def _done(out_dir: Path, point: Point) -> bool:
    return (out_dir / "points" / point.id / "summary.json").exists()


Runner = Callable[[list[Point], Path, Callable[[Point], None]], None]


def run_local(
    points: list[Point],
    out_dir: Path,
    finished: Callable[[Point], None],
    workers: int,
    threads: int = 1,
    started: Callable[[Point], None] | None = None,
) -> None:
    """Run points in a pool of ``workers`` processes (spawned: no state shared with this one),
    each on ``threads`` threads; at most ``workers`` are handed to the pool at once, so that
    ``started`` hears of a point when a worker takes it."""
    start = started or (lambda p: None)
    if workers == 1:
        for p in points:
            start(p)
            run_point(p.scenario.data, str(p.scenario.base_dir), str(out_dir / "points" / p.id), threads)
            finished(p)
        return
    with _main_not_imported():
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=_worker_init, initargs=(os.getpid(),))
        try:
            queue = iter(points)
            pending: dict[Future[dict[str, Any]], Point] = {}

            def submit() -> None:
                for p in queue:
                    start(p)
                    pending[pool.submit(run_point, p.scenario.data, str(p.scenario.base_dir), str(out_dir / "points" / p.id), threads)] = p
                    return

            for _ in range(workers):
                submit()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    p = pending.pop(f)
                    f.result()
                    submit()
                    finished(p)
        except BaseException:
            _terminate(pool)
            raise
        pool.shutdown()


@contextlib.contextmanager
def _main_not_imported() -> Iterator[None]:
    """While the pool starts its workers: the caller's script is not theirs to import. A
    spawned worker imports the parent's ``__main__`` (by its ``__spec__`` or its ``__file__``,
    ``multiprocessing.spawn.get_preparation_data``), which runs a script's top level again: a
    script that calls ``fabricsim.sweep`` without an ``if __name__ == "__main__":`` guard then
    started a second sweep in every worker ("another sweep is running in this directory",
    then ``BrokenProcessPool``). The workers run only fabricsim's own functions, so they need
    nothing of it; hidden while they start, restored after."""
    main = sys.modules.get("__main__")
    missing = object()
    saved = {k: getattr(main, k, missing) for k in ("__spec__", "__file__")} if main is not None else {}
    try:
        if main is not None:
            main.__spec__ = None
            if saved["__file__"] is not missing:
                del main.__file__
        yield
    finally:
        for k, v in saved.items():
            if v is not missing:
                setattr(main, k, v)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now: nothing more starts, running points are killed (their half-written
    directories are temporary ones, removed by the next run)."""
    # the executor has no public way to kill its workers; _processes is stable since 3.8
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join(1)


def run_ray(points: list[Point], out_dir: Path, finished: Callable[[Point], None], address: str, threads: int = 1) -> None:
    """Run points as Ray tasks on the cluster at ``address`` (``"local"`` starts one here), each
    on ``threads`` threads (and as many CPUs of the cluster)."""
    try:
        import ray  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise MissingDependency("--ray: Ray is not installed; pip install 'fabricsim[ray]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=None if address == "local" else address, include_dashboard=False, log_to_driver=False)
    try:
        task = ray.remote(num_cpus=threads)(run_point)
        refs = {task.remote(p.scenario.data, str(p.scenario.base_dir), str(out_dir / "points" / p.id), threads): p for p in points}
        try:
            while refs:
                done, _ = ray.wait(list(refs), num_returns=1)
                for ref in done:
                    ray.get(ref)
                    finished(refs.pop(ref))
        except BaseException:
            for ref in refs:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()


def collect(
    out_dir: Path, points: Iterable[Point], table: str = POINTS_FILE, partial: bool = False, read: dict[str, dict[str, Any]] | None = None
) -> pl.DataFrame:
    """``points.parquet`` (or ``table``): one row per point that has results (id, axis values,
    summary); ``partial``: written while the sweep runs (its Parquet metadata says
    ``fabricsim_sweep = "partial"``, else ``"complete"``). ``read``: the rows of points read
    before (a point's results do not change once written), kept between calls, so that a
    sweep that rewrites the table as each point finishes reads each point once."""
    rows = []
    read = {} if read is None else read
    for p in points:
        if p.id in read:
            rows.append(read[p.id])
            continue
        path = out_dir / "points" / p.id / "summary.json"
        if not path.exists():
            continue
        doc = json.loads(path.read_text())
        summary = doc["summary"]
        row: dict[str, Any] = {"point": p.id} | p.values
        for k, v in summary.items():
            if k in MACHINE_COLUMNS or k in row:
                continue
            row[k] = "; ".join(v) if isinstance(v, list) else v
        jobs = out_dir / "points" / p.id / "jobs.parquet"
        if jobs.exists():
            for job in job_table(pl.read_parquet(jobs)).iter_rows(named=True):
                row |= {f"job.{job['name']}.{m}": job[m] for m in JOB_METRICS}
        # what computed this point (null where it predates the record)
        made_by = doc.get("provenance", {})
        row |= {"fabricsim": made_by.get("fabricsim"), "fabricsim_commit": made_by.get("commit")}
        read[p.id] = row
        rows.append(row)
    frame = pl.DataFrame(rows, infer_schema_length=None, strict=False)
    target = out_dir / table
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    frame.write_parquet(tmp, metadata=parquet_metadata(PROVENANCE | {"sweep": "partial" if partial else "complete"}))
    os.replace(tmp, target)
    return frame


#: Which build of fabricsim writes a sweep directory's points.
BUILD_FILE = "fabricsim.json"


def _build_name(record: str | None) -> str:
    """A build as a message names it, from its record (:data:`BUILD_FILE`'s text)."""
    if record is None:
        return "a build that did not record itself"
    p = json.loads(record)
    return f"fabricsim {p.get('fabricsim')}" + (f" (commit {p['commit'][:12]})" if p.get("commit") else "")


def _claim_for_this_build(out: Path, allow_other_version: bool) -> None:
    """Record this build as the one writing ``out``'s points, refusing a directory another
    build wrote points into unless told (see :func:`run_sweep`)."""
    marker = out / BUILD_FILE
    here = json.dumps(PROVENANCE, sort_keys=True)
    before = marker.read_text() if marker.exists() else None
    has_points = any((d / "summary.json").exists() for d in (out / "points").iterdir())
    if has_points and before != here and not allow_other_version:
        raise spec_error(
            "--out",
            f"{out} holds points computed by {_build_name(before)}; this is {_build_name(here)}, and the two would mix in one table; "
            "allowed: another --out, or --allow-other-version to reuse them (points.parquet then says which build made each)",
        )
    if before != here:
        tmp = out / f".{BUILD_FILE}.tmp"
        tmp.write_text(here)
        os.replace(tmp, marker)


def run_sweep(
    sweep: Sweep,
    out_dir: str | Path,
    workers: int | None = None,
    ray_address: str | None = None,
    finished: Callable[[Point], None] | None = None,
    allow_other_version: bool = False,
    threads_per_point: int = 1,
    started: Callable[[Point], None] | None = None,
) -> pl.DataFrame:
    """Run every point not yet in ``out_dir``; return (and write) ``points.parquet``.

    A directory whose points another build of fabricsim computed (another version, or another
    commit of a checkout: ``out_dir/fabricsim.json``) is refused, as its results would mix with
    this one's, unless ``allow_other_version``; ``points.parquet`` says which build computed
    each point (``fabricsim``, ``fabricsim_commit``).

    Parameters
    ----------
    workers
        Processes for a local run; default (and at most) as many as keep workers x
        ``threads_per_point`` within the CPUs available to this process
        (:func:`fabricsim.run.cores`): threads beyond them wait for a core.
    ray_address
        Run on a Ray cluster instead (``"auto"``, ``"ray://host:10001"``, or ``"local"`` for a
        fresh one here).
    finished
        Called in this process after each point is written.
    started
        Called in this process as each point is handed to a worker (a local run hands a worker
        its next point when it is free; Ray takes them all at once).
    threads_per_point
        Threads of the parallel engine for each point (default 1: the points themselves run
        in parallel; the results do not depend on it).

    Examples
    --------
    >>> import tempfile
    >>> s = Sweep.from_dict({"base": {"topology": {"hosts": 16, "radix": 8}}, "seeds": [1, 2],
    ...                      "grid": {"lb.kind": ["ecmp", "ops"], "workload.size": ["64KiB"]}})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     table = run_sweep(s, d, workers=1)
    >>> table.select("lb.kind", "seed", "status").rows()
    [('ecmp', 1, 'complete'), ('ecmp', 2, 'complete'), ('ops', 1, 'complete'), ('ops', 2, 'complete')]
    """
    points = sweep.validate()
    spec = sweep.to_toml()

    def write_spec(out: Path) -> None:
        old = out / "sweep.toml"
        if not old.exists() or old.read_text() != spec:
            # the old table belongs to the old spec: never leave it beside the new one
            (out / POINTS_FILE).unlink(missing_ok=True)
            tmp = out / ".sweep.toml.tmp"
            tmp.write_text(spec)
            os.replace(tmp, old)

    return run_points(points, out_dir, workers, ray_address, finished, allow_other_version, threads_per_point, started, prepare=write_spec)


def run_points(
    points: list[Point],
    out_dir: str | Path,
    workers: int | None = None,
    ray_address: str | None = None,
    finished: Callable[[Point], None] | None = None,
    allow_other_version: bool = False,
    threads_per_point: int = 1,
    started: Callable[[Point], None] | None = None,
    prepare: Callable[[Path], None] | None = None,
    table: str = POINTS_FILE,
) -> pl.DataFrame:
    """Run the (validated) points not yet in ``out_dir/points`` and write their rows to
    ``out_dir/table``: :func:`run_sweep`'s engine, shared with the reproduction suite's
    sensitivity runs (points of one experiment's directory, under another default; a point
    the change leaves alone has the same id and is not run again). ``prepare`` runs first,
    under the directory's lock."""
    out = Path(out_dir)
    (out / "points").mkdir(parents=True, exist_ok=True)
    with _lock(out):
        _claim_for_this_build(out, allow_other_version)
        if prepare is not None:
            prepare(out)
        # what a killed run left half-written
        for stale in (out / "points").glob(".*.tmp"):
            shutil.rmtree(stale, ignore_errors=True)
        todo = [p for p in points if not _done(out, p)]
        read: dict[str, dict[str, Any]] = {}

        def note(p: Point) -> None:
            # the table holds the points done so far, marked partial, as each finishes
            collect(out, points, table, partial=True, read=read)
            if finished is not None:
                finished(p)

        try:
            with _stop_on_signals():
                if todo:
                    if ray_address is not None:
                        if started is not None:
                            for p in todo:
                                started(p)
                        run_ray(todo, out, note, ray_address, threads_per_point)
                    else:
                        n = local_workers(workers, threads_per_point, len(todo))
                        run_local(todo, out, note, n, threads_per_point, started)
        except _Stop as stop:
            frame = collect(out, points, table, read=read)
            raise Interrupted(stop.signum, frame.height, len(points), out) from None
        return collect(out, points, table, read=read)


def local_workers(workers: int | None, threads_per_point: int, points: int) -> int:
    """The processes a local sweep runs: ``workers`` (default: the CPUs available divided by
    ``threads_per_point``), at most that many (a warning says so where ``workers`` asked for
    more) and at most one per point."""
    from ..run import cores

    fit = max(1, cores() // max(1, threads_per_point))
    if workers is not None and workers > fit:
        warnings.warn(
            f"{workers} workers x {threads_per_point} threads per point asked with {cores()} CPUs available: "
            f"{fit} workers run (threads beyond the CPUs wait for a core and make the sweep slower)",
            stacklevel=3,
        )
    n = fit if workers is None else min(workers, fit)
    return max(1, min(n, points))


@contextmanager
def _lock(out: Path) -> Iterator[None]:
    """One sweep per directory at a time (released by the OS if the process dies)."""
    import fcntl

    with open(out / ".lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise spec_error(str(out), "another sweep is running in this directory; wait for it or stop it first") from None
        yield
