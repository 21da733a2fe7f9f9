"""Results of a run as polars DataFrames, with Parquet + JSON output."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl
import tomli_w

from . import _core
from .errors import InternalError, InterruptedAfterWrite, MissingDependency, argument_error
from .summary import Summary

__all__ = ["COLUMNS", "JOB_METRICS", "OUTPUT_FILES", "PROVENANCE", "Results", "job_table", "schema"]

#: What computes a result: the fabricsim version and, for a build from a git checkout, its
#: commit. Written into ``summary.json``, every Parquet file's metadata and a sweep's points.
PROVENANCE: dict[str, str] = {"fabricsim": _core.__version__} | ({"commit": _core.__commit__} if _core.__commit__ else {})

#: The files :meth:`Results.write` owns in its directory.
OUTPUT_FILES = (
    "flows.parquet",
    "ports.parquet",
    "reorder.parquet",
    "samples.parquet",
    "jobs.parquet",
    "steps.parquet",
    "buckets.parquet",
    "summary.json",
    "scenario.toml",
)

#: The output columns as the core declares them: {table: [(name, type, unit, null_when, meaning)]}.
COLUMNS: dict[str, list[tuple[str, str, str, str, str]]] = _core.columns()

_DTYPES: dict[str, type[pl.DataType]] = {"u64": pl.UInt64, "f64": pl.Float64, "bool": pl.Boolean, "str": pl.String}


def parquet_metadata(provenance: dict[str, str]) -> dict[str, str]:
    """A Parquet file's key-value metadata for results computed by ``provenance``:
    ``fabricsim`` (the version) and ``fabricsim_commit`` (when known)."""
    return {("fabricsim" if k == "fabricsim" else f"fabricsim_{k}"): v for k, v in provenance.items()}


def schema(table: str) -> dict[str, type[pl.DataType]]:
    """The polars schema of a results table, from the core's declaration of its columns."""
    return {name: _DTYPES[ty] for name, ty, *_ in COLUMNS[table]}


_NUMPY = {pl.UInt64: np.dtype("<u8"), pl.Float64: np.dtype("<f8"), pl.Boolean: np.dtype(np.bool_)}


def _series(name: str, dtype: type[pl.DataType], value: Any) -> pl.Series:
    """A column as the native module hands it over: strings as a list (or, where a few values
    repeat over many rows, as (a code byte per row, the values)), numbers as their
    little-endian bytes, and a column with nulls as (values, validity) bytes."""
    if dtype == pl.String:
        if isinstance(value, tuple):
            codes, labels = value
            return pl.Series(name, labels, dtype=dtype).gather(np.frombuffer(codes, dtype=np.uint8)).alias(name)
        return pl.Series(name, value, dtype=dtype)
    if isinstance(value, tuple):
        data, valid = value
        array = np.ma.masked_array(np.frombuffer(data, dtype=_NUMPY[dtype]), ~np.frombuffer(valid, dtype=np.bool_))
        return pl.Series(name, array, dtype=dtype)
    return pl.Series(name, np.frombuffer(value, dtype=_NUMPY[dtype]), dtype=dtype)


def _frame(raw: dict[str, Any], table: str) -> pl.DataFrame:
    """The native module's `table` as a frame: every declared column, or (the flows table of a
    run asked for some columns) those of them it made, in their declared order."""
    columns = raw[table]
    declared = {name: dtype for name, dtype in schema(table).items() if name in columns}
    if list(columns) != list(declared):
        raise InternalError(f"the native {table} table has columns {list(columns)}, declared {list(schema(table))}")
    # each column's bytes are let go once it is a series: the hand-over holds one column twice
    return pl.DataFrame([_series(name, dtype, columns.pop(name)) for name, dtype in declared.items()])


#: The per-job answers of :func:`job_table`, as sweep columns ``job.NAME.<metric>``.
JOB_METRICS = ("jct_ns", "ideal_jct_ns", "slowdown", "busbw_gbps")


def job_table(jobs: pl.DataFrame | None) -> pl.DataFrame:
    """One row per job (in ``[[jobs]]`` order): ``job`` (its index, as the flows, traffic and
    bucket tables name it), ``name``, ``collective``, ``ranks``,
    ``size_bytes``, ``iterations`` (completed / run), and over its completed iterations the mean
    ``jct_ns``, ``ideal_jct_ns``, ``slowdown``, ``busbw_gbps``, (training) ``exposed_comm_ns``
    (null when none completed, or not a training job) and, from a run with a reference,
    ``fabric_cost`` (JCT over the non-blocking reference's: :mod:`fabricsim.reference`).

    A job's slowdown is the answer to "how much did the fabric slow my job": a message's
    slowdown (the summary's ``max_slowdown``) can be large for a message that waits behind its
    own job's others on a NIC without the job being late.
    """
    if jobs is None or jobs.height == 0:
        return pl.DataFrame()
    done = pl.col("jct_ps").is_not_null()
    return (
        jobs.group_by("job", maintain_order=True)
        .agg(
            pl.col("name", "collective", "ranks", "size_bytes").first(),
            (done.sum().cast(pl.String) + " / " + pl.len().cast(pl.String)).alias("iterations"),
            (pl.col("jct_ps").mean() / 1e3).alias("jct_ns"),
            (pl.col("ideal_jct_ps").filter(done).mean() / 1e3).alias("ideal_jct_ns"),
            pl.col("slowdown").mean(),
            pl.col("busbw_gbps").mean(),
            (pl.col("exposed_comm_ps").mean() / 1e3).alias("exposed_comm_ns"),
            *([pl.col("fabric_cost").mean()] if "fabric_cost" in jobs.columns else []),
        )
        .sort("job")
    )


@dataclass
class Results:
    """What a run returns.

    Attributes
    ----------
    Every table's columns (name, type, unit, when null, meaning) are declared once in the core
    (:data:`COLUMNS`, docs/scenario.md "Outputs"); a value that does not exist is null, never 0.

    flows
        One row per message (under ``mptcp`` its subflows summed). ``first_send_ps``,
        ``end_ps``, ``fct_ps``, ``slowdown`` and ``goodput_gbps`` are null for messages that
        did not complete (``first_send_ps`` only if nothing was sent).
    ports
        One row per egress port (one link direction).
    summary
        ``status`` ("complete" / "incomplete"), ``flows``, ``completed``, FCT and slowdown
        statistics over completed flows, packet counters, ``events``, ``wall_s``,
        ``peak_rss_mb`` and more (docs/scenario.md, "Outputs").
    accounting
        Every data packet sent, by fate: delivered, trimmed, dropped or in flight.
    reorder
        Reorder distances at the receivers, one row per (``flow``, ``distance``) with the
        number of ``arrivals``: how far an arrival trailed the highest PSN received before it
        (0 = in order; 63 collects 63 and more). ``r.reorder.group_by("distance")`` gives the
        overall distribution.
    samples
        With ``[samples]``: every ``samples.every``, one row per sampled port: ``time_ps``,
        ``port`` (join with ``ports`` for the name), ``queue_bytes`` (data queued) and
        ``utilization`` (bits sent in the interval over what the link could send). Empty
        otherwise.
    jobs
        With ``[[jobs]]``: one row per job iteration: its start, end, JCT, ideal JCT,
        slowdown and nccl-tests' algorithm and bus bandwidths. Empty otherwise.
    steps
        With ``[[jobs]]``: one row per step of each job iteration (start, end, messages).
    buckets
        FCT slowdown by message size (<100KB, 100KB-1MB, 1-10MB, >10MB): p50, p99, mean.
    scenario
        The scenario as run, every default filled in.
    """

    flows: pl.DataFrame
    ports: pl.DataFrame
    summary: Summary
    accounting: dict[str, int]
    scenario: dict[str, Any]
    reorder: pl.DataFrame | None = None
    samples: pl.DataFrame | None = None
    jobs: pl.DataFrame | None = None
    steps: pl.DataFrame | None = None
    buckets: pl.DataFrame | None = None
    #: What computed it (:data:`PROVENANCE`).
    provenance: dict[str, str] = field(default_factory=lambda: dict(PROVENANCE))

    @classmethod
    def from_native(cls, raw: dict[str, Any], extra_summary: dict[str, Any]) -> Results:
        summary = cast(Summary, json.loads(raw["summary"]) | extra_summary)
        return cls(
            flows=_frame(raw, "flows"),
            ports=_frame(raw, "ports"),
            summary=summary,
            accounting=json.loads(raw["accounting"]),
            scenario=json.loads(raw["scenario"]),
            reorder=_frame(raw, "reorder"),
            samples=_frame(raw, "samples"),
            jobs=_frame(raw, "jobs"),
            steps=_frame(raw, "steps"),
            buckets=_frame(raw, "buckets"),
        )

    @classmethod
    def read(cls, out_dir: str | Path) -> Results:
        """A run that :meth:`write` (or ``fabricsim run --out``) wrote, read back: every table,
        the summary, the accounting, the scenario and the provenance. A table the run wrote no
        file for (it had no rows) comes back empty with its columns. A directory without
        ``summary.json`` (not a run, or one still being written) is refused naming it."""
        import tomllib

        from .errors import argument_error, scenario_error

        if not isinstance(out_dir, str | os.PathLike):
            raise argument_error("out_dir", out_dir, "the path of a directory a run was written to")
        d = Path(out_dir)
        if not (d / "summary.json").is_file():
            raise scenario_error(
                str(d), "holds no summary.json: not a run written by `fabricsim run --out` or Results.write (or one being written)"
            )
        try:
            doc = json.loads((d / "summary.json").read_text(encoding="utf-8"))
            scenario = tomllib.loads((d / "scenario.toml").read_text(encoding="utf-8"))
            frames = {
                name: pl.read_parquet(d / f"{name}.parquet") if (d / f"{name}.parquet").exists() else pl.DataFrame(schema=schema(name))
                for name in ("flows", "ports", "reorder", "samples", "jobs", "steps", "buckets")
            }
        except (OSError, ValueError, tomllib.TOMLDecodeError, pl.exceptions.PolarsError) as e:
            raise scenario_error(str(d), f"cannot read the run written there: {e}") from None
        return cls(
            summary=cast(Summary, doc["summary"]),
            accounting=doc["accounting"],
            scenario=scenario,
            provenance=doc.get("provenance", {}),
            **frames,
        )

    def to_pandas(self, table: str = "flows") -> Any:
        """A table (``flows``, ``ports``, ``reorder``, ``samples``, ``jobs``, ``steps``,
        ``buckets``) as a pandas DataFrame, which needs pandas and pyarrow: without them, says
        which extra installs them (``pip install 'fabricsim[pandas]'``) where polars' own
        ``to_pandas()`` names only the module it lacks."""
        frames = {"flows": self.flows, "ports": self.ports, "reorder": self.reorder, "samples": self.samples}
        frames |= {"jobs": self.jobs, "steps": self.steps, "buckets": self.buckets}
        if table not in frames:
            raise argument_error("table", table, f"one of {', '.join(frames)}")
        for module in ("pandas", "pyarrow"):
            try:
                __import__(module)
            except ImportError:
                raise MissingDependency(f"a table as pandas needs {module}; pip install 'fabricsim[pandas]'") from None
        frame = frames[table]
        return (frame if frame is not None else pl.DataFrame(schema=schema(table))).to_pandas()

    def job_table(self) -> pl.DataFrame:
        """One row per job: JCT, slowdown and bus bandwidth over its iterations (:func:`job_table`)."""
        return job_table(self.jobs)

    def traffic_table(self) -> pl.DataFrame:
        """One row per source of traffic: the background (``job`` null) and each job's kind of
        messages (its collective, or a training job's tp, pp, dp and ep): messages, bytes, the
        share of the bytes whose path climbs above the leaf (``path_links`` of 4 or more: a
        spine, aggregation or core switch; what a load balancer can act on), and the slowdown
        of the completed ones. Messages on a scale-up network count, on no fabric path. A job
        is named by its index (``job``, as in the flows and jobs tables) and its ``name``."""
        # a message's bytes that climb, a column of its own, and each source's p99 from its own
        # messages' slowdowns: an expression or a quantile in the group-by gathered the groups'
        # rows, several copies of a column (the 1 024-rank ring's 2.1 M messages: +114 MB in
        # the command line's summary, +630 MB read back from Parquet, against +31 MB so)
        climbs = pl.when(pl.col("path_links") >= 4).then(pl.col("bytes")).otherwise(0).alias("climbs")
        f = self.flows.select("job", "traffic", "bytes", "completed", "slowdown", climbs)
        names = self._job_names()
        table = (
            f.group_by(["job", "traffic"])
            .agg(
                pl.len().alias("messages"),
                pl.col("bytes").sum().alias("bytes"),
                pl.col("climbs").sum().alias("above_leaf_share"),
                pl.col("completed").sum().alias("completed"),
            )
            .with_columns(pl.col("above_leaf_share") / pl.col("bytes").clip(lower_bound=1))
            .sort(["job", "traffic"], nulls_last=False)
        )
        slowdowns = [f["slowdown"].filter(self._of_source(f, job, traffic)) for job, traffic in table.select("job", "traffic").iter_rows()]
        table = table.with_columns(
            pl.Series("mean_slowdown", [s.mean() for s in slowdowns], dtype=pl.Float64),
            pl.Series("p99_slowdown", [s.quantile(0.99, "nearest") for s in slowdowns], dtype=pl.Float64),
        )
        name = pl.col("job").replace_strict(names, default=None, return_dtype=pl.Utf8).alias("name")
        return table.select("job", name, pl.exclude("job"))

    @staticmethod
    def _of_source(f: pl.DataFrame, job: int | None, traffic: str) -> pl.Series:
        """Which of `f`'s messages come from the source (`job`, `traffic`): a null job is
        the background's, as the group-by groups it."""
        return f.select(pl.col("job").eq_missing(job) & pl.col("traffic").eq_missing(traffic)).to_series()

    def _job_names(self) -> dict[int, str]:
        """Each job's name by its index (the ``job`` of the flows, jobs and traffic tables)."""
        if self.jobs is None or not self.jobs.height:
            return {}
        return dict(self.jobs.select("job", "name").unique(maintain_order=True).iter_rows())

    def buckets_by_source(self) -> pl.DataFrame:
        """The size buckets (:attr:`buckets`: the papers' < 100 KB, 100 KB-1 MB, 1-10 MB, > 10 MB)
        apart for each source of traffic (:meth:`traffic_table`'s ``job`` and ``traffic``), so
        that a job's messages are not pooled with the background's: messages, completed, and
        the completed ones' p50 and p99 (nearest rank, as the pooled table) and mean slowdown.
        Buckets a source has no message in are left out. A job is named as in
        :meth:`traffic_table`: its index (``job``) and its ``name``."""
        schema = {
            "job": pl.UInt64,
            "name": pl.Utf8,
            "traffic": pl.Utf8,
            "bucket": pl.Utf8,
            "min_bytes": pl.UInt64,
            "messages": pl.UInt32,
            "completed": pl.UInt32,
            "p50_slowdown": pl.Float64,
            "p99_slowdown": pl.Float64,
            "mean_slowdown": pl.Float64,
        }
        if self.buckets is None or not self.buckets.height or not self.flows.height:
            return pl.DataFrame(schema=schema)
        bounds = self.buckets.select("min_bytes", "bucket").sort("min_bytes")
        lower, names = bounds["min_bytes"].to_numpy(), bounds["bucket"].to_list()
        # each message's bucket: the last whose lower bound it reaches (the buckets start at 0)
        at = np.searchsorted(lower, self.flows["bytes"].to_numpy(), side="right") - 1
        f = self.flows.select("job", "traffic")
        slowdown = self.flows["slowdown"]
        job_names = self._job_names()
        rows = []
        # each source's messages by a mask, then its buckets apart: a group-by on the bucket
        # too, or its groups' frames, held copies of the keys a message (the 1 024-rank ring's
        # 2.1 M messages: +205 MB read back from Parquet)
        for job, traffic in f.group_by(["job", "traffic"]).agg(pl.len()).drop("len").iter_rows():
            mask = self._of_source(f, job, traffic)
            theirs, slow = at[mask.to_numpy()], slowdown.filter(mask)
            for k in np.unique(theirs):
                # the completed ones' slowdowns as one sorted array (8 B each: a Python list of
                # them was most of a 2 M-message run's summary, 276 MB); the mean is their
                # running sum's last value, added in order as Python's sum() adds them
                mine = slow.filter(pl.Series(theirs == k))
                messages, done = len(mine), np.sort(mine.drop_nulls().to_numpy())
                n = len(done)

                def nearest(p: float, done: np.ndarray = done, n: int = n) -> float | None:
                    return float(done[min(n, max(1, math.ceil(p / 100 * n))) - 1]) if n else None

                rows.append(
                    {
                        "job": job,
                        "name": job_names.get(job) if job is not None else None,
                        "traffic": traffic,
                        "bucket": names[k],
                        "min_bytes": int(lower[k]),
                        "messages": messages,
                        "completed": n,
                        "p50_slowdown": nearest(50),
                        "p99_slowdown": nearest(99),
                        "mean_slowdown": float(np.cumsum(done)[-1]) / n if n else None,
                    }
                )
        return pl.DataFrame(rows, schema=schema).sort(["job", "traffic", "min_bytes"], nulls_last=False)

    @property
    def complete(self) -> bool:
        return bool(self.summary["status"] == "complete")

    def write(self, out_dir: str | Path) -> Path:
        """Write ``flows.parquet``, ``ports.parquet``, ``reorder.parquet``, ``summary.json`` and ``scenario.toml``,
        and ``samples.parquet``, ``jobs.parquet``, ``steps.parquet``, ``buckets.parquet`` when they have rows."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        # everything is written aside first, then moved in with summary.json last: readers take
        # a directory without summary.json for an unfinished run, never for a short one
        tmp = Path(tempfile.mkdtemp(prefix=".fabricsim-", dir=out))
        meta = parquet_metadata(self.provenance)
        try:
            self.flows.write_parquet(tmp / "flows.parquet", metadata=meta)
            self.ports.write_parquet(tmp / "ports.parquet", metadata=meta)
            if self.reorder is not None:
                self.reorder.write_parquet(tmp / "reorder.parquet", metadata=meta)
            for name, frame in (("samples", self.samples), ("jobs", self.jobs), ("steps", self.steps), ("buckets", self.buckets)):
                if frame is not None and frame.height:
                    frame.write_parquet(tmp / f"{name}.parquet", metadata=meta)
            (tmp / "scenario.toml").write_text(tomli_w.dumps(self.scenario))
            doc = {"summary": self.summary, "accounting": self.accounting, "provenance": self.provenance}
            (tmp / "summary.json").write_text(json.dumps(doc, indent=2) + "\n")
            # files of an earlier run there would read as this run's (a samples table it did not
            # make); its summary.json goes first, the new one comes in last. A Ctrl-C or SIGTERM
            # meanwhile waits until the new run is whole on disk, then stops the program
            with _signals_deferred() as caught:
                for name in sorted(OUTPUT_FILES, key=lambda n: n != "summary.json"):
                    (out / name).unlink(missing_ok=True)
                for name in sorted(os.listdir(tmp), key=lambda n: n == "summary.json"):
                    os.replace(tmp / name, out / name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if caught:
            raise InterruptedAfterWrite(caught[0], out)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "summary": self.summary}


@contextlib.contextmanager
def _signals_deferred() -> Iterator[list[int]]:
    """SIGINT and SIGTERM are recorded, not acted on, inside the block (in the main thread; the
    list yielded holds what arrived); the handlers before it come back after it."""
    import threading

    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    kinds = (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.signal(s, lambda signum, _frame: caught.append(signum)) for s in kinds}
    try:
        yield caught
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
