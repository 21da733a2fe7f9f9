"""What the commands print: numbers for reading, and the tables of a run and of a comparison."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..results import Results
from .common import (
    BYTE_UNITS,
    _bytes,
    out,
)


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
    t = Table(title="summary", show_header=False)
    for k, v in sorted(res.summary.items(), key=lambda kv: not (jobs.height and "jct" in kv[0])):
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


def _job_words(job: dict[str, Any]) -> str:
    """A job in a few words: its collective and size, or the model it trains and its layout."""
    if "collective" in job:
        return f"{job['collective']} {job['size']}"
    model, par = job.get("model", {}), job.get("parallel", {})
    layout = " ".join(f"{k}={par[k]}" for k in ("tp", "cp", "pp", "vpp", "dp", "ep") if k in par)
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
        from ..reference import fabric_hosts

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
        summary: dict[str, Any] = dict(r.summary)
        t.add_row(name, *("-" if summary.get(key) is None else fmt(summary[key]) for _, key, fmt in columns))
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
