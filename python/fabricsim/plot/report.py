"""``fabricsim report DIR -o report.html``: one self-contained HTML page of a run or a sweep.

The page holds the scenario (or the sweep spec), the summary (or the points table) and the
interactive plots of :mod:`fabricsim.plot.figures` drawn with plotly, whose JavaScript is inlined:
the file opens anywhere with no network. A script on the page records any JavaScript error in
an element (``#fabricsim-errors``) and marks each plot drawn (``data-drawn``), so a headless
browser can check the page (``tests/test_report.py``).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import polars as pl

from ..results import job_table
from .figures import Figure, check_result_dir, is_sweep, partial_note, run_figures, sweep_axes, sweep_figures

__all__ = ["report", "reproduction_report"]

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


SYMBOLS = ("circle", "square", "triangle-up", "diamond", "triangle-down", "cross", "x", "star")
DASHES = ("solid", "dash", "dashdot", "dot")


def _plotly_figure(fig: Figure) -> Any:
    import plotly.graph_objects as go

    f = go.Figure()
    if fig.kind == "heatmap":
        f.add_trace(go.Heatmap(z=fig.z, x=fig.x, y=fig.rows, zmin=0, zmax=1, colorscale="Viridis", colorbar={"title": "utilization"}))
        f.update_yaxes(autorange="reversed")
    for i, s in enumerate(fig.series):
        color = PALETTE[i % len(PALETTE)]
        # each series its own marker and dash: a line drawn over another still shows
        marker = {"color": color, "symbol": SYMBOLS[i % len(SYMBOLS)], "size": 8}
        dash = DASHES[i % len(DASHES)]
        if fig.kind == "cdf":
            f.add_trace(go.Scatter(x=s.x, y=s.y, mode="lines", line={"shape": "hv", "color": color, "dash": dash}, name=s.label))
        elif fig.kind == "bar":
            f.add_trace(go.Bar(x=s.x, y=s.y, name=s.label, marker_color=color))
        elif fig.kind == "scatter":
            f.add_trace(go.Box(x=s.x, y=s.y, name=s.label, boxpoints="all", jitter=0.3, marker_color=color))
        elif fig.kind == "points":
            bars = s.spread()
            error = {"type": "data", "arrayminus": bars[0], "array": bars[1]} if bars else None
            f.add_trace(go.Scatter(x=s.x, y=s.y, mode="markers", name=s.label, marker=marker, error_y=error))
        else:
            if s.lo is not None and s.hi is not None:
                f.add_trace(go.Scatter(x=s.x, y=s.hi, mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip"))
                band = f"rgba({int(color[1:3], 16)}, {int(color[3:5], 16)}, {int(color[5:7], 16)}, 0.15)"
                f.add_trace(
                    go.Scatter(
                        x=s.x, y=s.lo, mode="lines", line={"width": 0}, fill="tonexty", fillcolor=band, showlegend=False, hoverinfo="skip"
                    )
                )
            mode = "lines+markers" if len(s.x) <= 50 else "lines"
            f.add_trace(go.Scatter(x=s.x, y=s.y, mode=mode, name=s.label, line={"color": color, "dash": dash}, marker=marker))
    f.update_layout(
        title=fig.title,
        xaxis_title=fig.xlabel,
        yaxis_title=fig.ylabel,
        template="plotly_white",
        height=420,
        margin={"t": 50},
        barmode="group",
    )
    if fig.kind == "points":
        # dots of one category side by side, not on top of each other
        f.update_layout(scattermode="group", scattergap=0.6)
    # plain numbers and powers of ten, never SI prefixes on a fraction (100μ)
    f.update_xaxes(exponentformat="power", separatethousands=True)
    f.update_yaxes(exponentformat="power", separatethousands=True)
    if fig.xlog:
        f.update_xaxes(type="log")
    if fig.ylog:
        f.update_yaxes(type="log")
    if fig.xticks is not None and fig.x is not None:
        f.update_xaxes(tickvals=fig.x, ticktext=fig.xticks)
    return f


def _cell(v: Any) -> str:
    """A table cell for reading: thousands separated, at most 4 significant digits below 1000,
    no exponent where a plain number reads; null as "-"."""
    if v is None:
        return "-"
    if isinstance(v, float):
        if v != v:
            return "-"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        if v == 0 or abs(v) >= 0.001:
            return f"{v:.4g}"
        return f"{v:.2e}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def _table(frame: pl.DataFrame, limit: int = 500) -> str:
    # a long column name may break after its dots and underscores, a short one never
    head = "".join(f"<th>{html.escape(c).replace('.', '.<wbr>').replace('_', '_<wbr>')}</th>" for c in frame.columns)
    rows = []
    for row in frame.head(limit).iter_rows():
        cells = [_cell(v) for v in row]
        # a long text (a warning, a fault list) wraps in its cell; numbers never do
        rows.append("<tr>" + "".join(f"<td{' class=text' if len(c) > 30 else ''}>{html.escape(c)}</td>" for c in cells) + "</tr>")
    more = f"<p>{frame.height - limit} more rows in the Parquet file.</p>" if frame.height > limit else ""
    return f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>{more}'


def _readable(frame: pl.DataFrame) -> pl.DataFrame:
    """Times in us (``max_fct_ns`` -> ``max_fct_us``), sizes as given."""
    return frame.with_columns(
        *(pl.col(c).cast(pl.Float64) / 1e3 for c in frame.columns if c.endswith("_ns")),
        *(pl.col(c).cast(pl.Float64) / 1e6 for c in frame.columns if c.endswith("_ps")),
    ).rename({c: c[:-3] + "_us" for c in frame.columns if c.endswith(("_ns", "_ps"))})


#: The points table of a sweep report: the axes, then these (when there), then every job's
#: columns; points.parquet has them all.
POINT_COLUMNS = (
    "status",
    "max_jct_ns",
    "max_jct_slowdown",
    "max_fct_ns",
    "p99_fct_ns",
    "max_slowdown",
    "max_queue_bytes",
    "trims",
    "drops",
    "retransmits",
)


def _summary(summary: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame({"key": list(summary), "value": ["; ".join(v) if isinstance(v, list) else _cell(v) for v in summary.values()]})


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
.table { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.85em; margin: 1em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { max-width: 9em; vertical-align: bottom; }
td { white-space: nowrap; }
td.text { white-space: normal; text-align: left; min-width: 12em; max-width: 26em; font-size: 0.95em; }
th { background: #f4f4f4; }
pre { background: #f8f8f8; padding: 1em; overflow-x: auto; font-size: 0.8em; }
.plot { margin: 1.5em 0; }
#fabricsim-errors:empty { display: none; }
#fabricsim-errors { color: #b00; }
"""

GUARD = """
window.fabricsimErrors = [];
window.addEventListener("error", function (e) {
  window.fabricsimErrors.push(String(e.message));
  var el = document.getElementById("fabricsim-errors");
  if (el) { el.textContent = window.fabricsimErrors.join("\\n"); }
});
"""

MARK = """
window.addEventListener("load", function () {
  setTimeout(function () {
    document.querySelectorAll(".plot > div").forEach(function (div) {
      if (div.querySelector(".main-svg")) { div.setAttribute("data-drawn", "yes"); }
    });
    document.body.setAttribute("data-plots-drawn", String(document.querySelectorAll("[data-drawn=yes]").length));
  }, 0);
});
"""


def report(path: str | Path, out: str | Path, partial: bool = False, **sweep_options: Any) -> Path:
    """Write the HTML report of a run or a sweep directory to ``out``; returns its path.
    ``partial``: report a sweep that was stopped before all its points (the page says so)."""
    d = Path(path)
    kind = check_result_dir(d, partial)
    if kind == "sweep":
        figs = sweep_figures(d, **sweep_options)
        points = pl.read_parquet(d / "points.parquet")
        spec = d / "sweep.toml"
        inputs = spec.read_text() if spec.exists() else "(no sweep.toml in the directory)"
        note = partial_note(d)
        title = f"fabricsim sweep: {d.name} ({f'partial: {note}' if note else f'{points.height} points'})"
        keep = [c for c in [*sweep_axes(points, d), *POINT_COLUMNS] if c in points.columns]
        keep += [c for c in points.columns if c.startswith("job.") and c not in keep]
        note = f"<p>{len(keep)} of the {points.width - 1} columns of points.parquet; times in us.</p>"
        tables = "<h2>Points</h2>" + note + _table(_readable(points.select("point", *keep)))
    else:
        figs = run_figures(d)
        doc = json.loads((d / "summary.json").read_text())
        scenario = d / "scenario.toml"
        inputs = scenario.read_text() if scenario.exists() else "(no scenario.toml in the directory)"
        title = f"fabricsim run: {d.name}"
        tables = "<h2>Summary</h2>" + _table(_summary(doc["summary"])) + "<h2>Accounting</h2>" + _table(_summary(doc["accounting"]))
        if (d / "jobs.parquet").exists():
            jobs = pl.read_parquet(d / "jobs.parquet")
            tables += "<h2>Jobs</h2><p>Mean over completed iterations; times in us.</p>" + _table(_readable(job_table(jobs)))
            tables += "<h3>Iterations</h3>" + _table(_readable(jobs.drop("job")))
        if (d / "buckets.parquet").exists():
            tables += "<h2>Slowdown by size</h2>" + _table(pl.read_parquet(d / "buckets.parquet"))
    body = f"""{tables}
<h2>Plots</h2>
{_plots(figs)}
<h2>{"Sweep spec" if kind == "sweep" else "Scenario"}</h2>
<pre>{html.escape(inputs)}</pre>"""
    return _write(out, _page(title, body))


def _plots(figs: list[Figure], prefix: str = "") -> str:
    import plotly.io as pio

    plots = []
    for fig in figs:
        div = pio.to_html(_plotly_figure(fig), full_html=False, include_plotlyjs=False, div_id=f"plot-{prefix}{fig.name}", validate=True)
        plots.append(f'<section class="plot">{div}</section>')
    return "".join(plots)


def _page(title: str, body: str) -> str:
    import plotly.offline

    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{STYLE}</style>
<script>{GUARD}</script>
<script>{plotly.offline.get_plotlyjs()}</script>
</head><body>
<h1>{html.escape(title)}</h1>
<pre id="fabricsim-errors"></pre>
{body}
<script>{MARK}</script>
</body></html>
"""


def _write(out: str | Path, page: str) -> Path:
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page)
    return target


def reproduction_report(results: list[tuple[Any, pl.DataFrame, Path, list[Figure]]], out: str | Path, quick: bool = False) -> Path:
    """One page for ``fabricsim reproduce``: the verdicts of every experiment run, then per
    experiment its claims, its tables, its sweep's plots and its models' plots.

    ``results``: (experiment, claims, experiment directory, its figures) per experiment run
    (the figures as :func:`fabricsim.reproduce.draw` returned them: computed once for the
    files and the page).
    """
    from ..reproduce import headline, tables

    head = headline(pl.concat([c for _, c, _, _ in results]))
    sections = [f"<p>{len(results)} experiments{' (quick)' if quick else ''}: {html.escape(head)}.</p>"]
    for exp, claims, d, figs in results:
        part = [
            f'<h2 id="{exp.name}">{html.escape(exp.name)}</h2>',
            f"<p><b>{html.escape(exp.reference)}</b>. {html.escape(exp.summary)}</p>",
        ]
        part.append(_table(claims.drop("experiment")))
        if is_sweep(d):
            points = pl.read_parquet(d / "points.parquet")
            for title, frame in tables(exp, points, d):
                part.append(f"<h3>{html.escape(title)}</h3>" + _table(frame))
        part.append(_plots(figs, prefix=f"{exp.name}-"))
        sections.append("\n".join(part))
    title = "fabricsim reproduce: the papers' claims" + (" (quick)" if quick else "")
    return _write(out, _page(title, "\n".join(sections)))
