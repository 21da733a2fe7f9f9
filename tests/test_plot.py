"""`fabricsim plot`: every plot of a run and of a sweep is written, as PNG and SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import fabricsim
import pytest
from conftest import fabric
from fabricsim.errors import ScenarioError
from fabricsim.plot import plot_dir
from fabricsim.sweep import Sweep, run_sweep


def check(files, names):
    assert sorted({f.stem for f in files}) == sorted(names)
    for f in files:
        data = f.read_bytes()
        if f.suffix == ".png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, f
        else:
            root = ET.fromstring(data)
            assert root.tag.endswith("svg")
            # something was drawn: paths beyond the axes' frame
            assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 10, f


def test_a_run_with_samples_and_jobs_gets_every_plot(tmp_path):
    sc = fabricsim.Scenario(fabric(kind="permutation", size="256KiB"))
    sc = sc.set("lb.kind", "ops").set("samples.every", "2us").set("samples.ports", ["leaf*"])
    sc = sc.set("jobs", [{"collective": "allreduce", "size": "1MiB", "ranks": 8, "iterations": 3}])
    fabricsim.run(sc).write(tmp_path / "run")
    files = plot_dir(tmp_path / "run", tmp_path / "plots")
    check(files, ["fct_cdf", "jct", "reorder", "queues", "utilization"])


def test_a_sweep_gets_cdf_slowdown_and_line_plots(tmp_path):
    sw = Sweep.from_dict(
        {
            "base": fabric(kind="permutation"),
            "seeds": [1, 2],
            "grid": {"lb.kind": ["ecmp", "prime"], "workload.size": ["64KiB", "256KiB"]},
        }
    )
    run_sweep(sw, tmp_path / "sw", workers=1)
    files = plot_dir(tmp_path / "sw", x="workload.size", line="lb.kind", metric="p99_fct_ns")
    # 64 KiB and 256 KiB messages are in two size buckets: one CDF each
    check(files, ["slowdown_cdf_lt100KB", "slowdown_cdf_100KB-1MB", "slowdown", "sweep_p99_fct_ns"])
    assert all(f.parent == tmp_path / "sw" / "plots" for f in files)
    with pytest.raises(ScenarioError) as e:
        plot_dir(tmp_path / "sw", metric="nope")
    assert e.value.field == "--metric"
    with pytest.raises(ScenarioError) as e:
        plot_dir(tmp_path / "sw", x="topology.hosts")
    assert e.value.field == "--x" and "lb.kind" in e.value.message
    # the seed, or any column of points.parquet, can be the x axis
    files = plot_dir(tmp_path / "sw", x="seed", line="lb.kind", metric="max_fct_ns")
    check(files, ["slowdown_cdf_lt100KB", "slowdown_cdf_100KB-1MB", "slowdown", "sweep_max_fct_ns"])
    with pytest.raises(ScenarioError):
        plot_dir(tmp_path)


def test_figures_read_as_a_person_expects(tmp_path):
    """Units scaled, sizes to scale, categories unjoined, one-iteration jobs shown, no warnings."""
    import warnings

    from fabricsim.plot.figures import CDF_POINTS, run_figures, sweep_figures

    base = fabric(kind="permutation") | {"jobs": [{"name": "dp", "collective": "allreduce", "size": "1MiB", "ranks": 8}]}
    sw = Sweep.from_dict({"base": base, "seeds": [1, 2], "grid": {"lb.kind": ["ecmp", "ops"], "workload.size": ["64KiB", "1MiB"]}})
    run_sweep(sw, tmp_path / "sw", workers=1)
    figs = {f.name: f for f in sweep_figures(tmp_path / "sw", x="workload.size", line="lb.kind")}
    # with jobs, the job's answer is the default metric, in us not ns
    line = figs["sweep_max_jct_ns"]
    assert line.kind == "lines" and line.ylabel == "max JCT (us)"
    assert all(10 < y < 10_000 for s in line.series for y in s.y)
    # a size axis is drawn to scale and labelled as written
    assert line.x == [65536.0, 1048576.0] and line.xticks == ["64KiB", "1MiB"] and line.xlog
    assert figs["slowdown"].ylabel == "JCT slowdown"
    # a categorical x: dots with error bars, never joined
    cat = {f.name: f for f in sweep_figures(tmp_path / "sw", x="lb.kind", line="workload.size", metric="p99_fct_ns")}
    assert cat["sweep_p99_fct_ns"].kind == "points" and cat["sweep_p99_fct_ns"].series[0].x == ["ecmp", "ops"]
    # messages of different sizes are not pooled into one CDF: one per size bucket
    assert {"slowdown_cdf_lt100KB", "slowdown_cdf_100KB-1MB", "slowdown_cdf_1-10MB"} <= set(figs)
    assert all(len(s.x) <= CDF_POINTS + 1 for f in figs.values() if f.kind == "cdf" for s in f.series)
    # a run with one job iteration shows its JCT beside the ideal
    fabricsim.run(fabricsim.Scenario(base).set("workload.size", "64KiB")).write(tmp_path / "run")
    jct = {f.name: f for f in run_figures(tmp_path / "run")}["jct"]
    assert jct.series[0].x == ["dp"] and jct.series[0].y[0] > jct.series[1].y[0] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(plot_dir(tmp_path / "run", tmp_path / "p1"), ["fct_cdf", "jct", "reorder"])
        plot_dir(tmp_path / "sw", tmp_path / "p2", x="lb.kind", line="workload.size")


def test_a_job_named_like_tex_is_plotted_as_text(tmp_path):
    # matplotlib parsed "$...$" in labels as TeX and failed on a job named "$\frac{$"
    sc = fabricsim.Scenario(fabric(kind="permutation", size="64KiB"))
    sc = sc.set("jobs", [{"name": "$\\frac{$", "collective": "allreduce", "size": "256KiB", "ranks": 4, "iterations": 2}])
    fabricsim.run(sc).write(tmp_path / "run")
    check(plot_dir(tmp_path / "run", tmp_path / "plots"), ["fct_cdf", "jct", "reorder"])


def test_an_interrupted_sweep_is_refused_not_plotted_as_whole(tmp_path):
    # a sweep stopped early keeps the points it finished (to resume); plot and report used to
    # draw them with no word that the others were missing
    import polars as pl
    from fabricsim.cli import app
    from typer.testing import CliRunner

    spec = {"base": fabric(kind="permutation", size="16KiB"), "grid": {"lb.kind": ["ecmp", "ops"]}, "seeds": [1, 2]}
    run_sweep(Sweep.from_dict(spec), tmp_path / "sw", workers=1)
    assert plot_dir(tmp_path / "sw")
    pl.read_parquet(tmp_path / "sw" / "points.parquet").head(3).write_parquet(tmp_path / "sw" / "points.parquet")
    with pytest.raises(ScenarioError, match="3 of its 4 points done"):
        plot_dir(tmp_path / "sw")
    for command in (["plot", str(tmp_path / "sw")], ["report", str(tmp_path / "sw"), "-o", str(tmp_path / "r.html")]):
        r = CliRunner().invoke(app, command)
        assert r.exit_code == 2 and "3 of its 4 points done" in r.output and "--partial" in r.output, (command, r.output)
    # asked for, a partial sweep is drawn, and every figure and the page say how much of it
    from fabricsim.plot.figures import sweep_figures

    assert all(f.title.endswith("[partial sweep: 3 of its 4 points]") for f in sweep_figures(tmp_path / "sw"))
    for command in (
        ["plot", str(tmp_path / "sw"), "--partial"],
        ["report", str(tmp_path / "sw"), "-o", str(tmp_path / "r.html"), "--partial"],
    ):
        r = CliRunner().invoke(app, command)
        assert r.exit_code == 0, (command, r.output)
    assert "partial: 3 of its 4 points" in (tmp_path / "r.html").read_text()


def test_no_varied_axis_is_pooled_silently(tmp_path):
    """A sweep of three varied axes (issue 51 item 3): the metric's series and the CDFs name a
    value of every axis but x, so ECMP with and without a fault are two lines, not one box."""
    from fabricsim.plot.figures import sweep_figures

    sw = Sweep.from_dict(
        {
            "base": fabric(kind="permutation", size="64KiB"),
            "seeds": [1, 2],
            "grid": {
                "lb.kind": ["ecmp", "ops"],
                "faults": {"none": [], "leaf0 down": [{"kind": "link_down", "link": "leaf0:up0", "start": "1us"}]},
            },
        }
    )
    run_sweep(sw, tmp_path / "sw", workers=1)
    figs = {f.name: f for f in sweep_figures(tmp_path / "sw", x="seed")}
    labels = [s.label for s in figs["sweep_max_fct_ns"].series]
    assert len(labels) == 4 and all(label.startswith("lb.kind=") and ", faults=" in label for label in labels), labels
    assert figs["slowdown"].xlabel == "lb.kind, faults" and len(figs["slowdown"].series) == 4
    assert all(len(f.series) == 4 for f in figs.values() if f.kind == "cdf")
    # one axis alone keeps its plain label
    one = {f.name: f for f in sweep_figures(tmp_path / "sw", x="faults", line="lb.kind")}
    assert [s.label for s in one["sweep_max_fct_ns"].series] == ["lb.kind=ecmp", "lb.kind=ops"]


def test_log_axes_read_as_plain_numbers_at_one_two_and_five_over_a_short_span():
    """Issue 68: log-scale PNGs showed raw "$\\mathdefault{10^{-3}}$" tick labels (TeX is never
    parsed here: labels are the user's text), and a sweep's 1-30 axis was labelled at 1 and 10."""
    from fabricsim.plot import draw
    from fabricsim.plot.figures import Figure, Series

    def labels(fig: Figure, axis: str) -> list[str]:
        f = draw(fig)
        f.canvas.draw()
        ax = f.axes[0]
        ticks = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
        lo, hi = sorted(ax.get_ylim() if axis == "y" else ax.get_xlim())
        values = ax.get_yticks() if axis == "y" else ax.get_xticks()
        return [t.get_text() for t, v in zip(ticks, values, strict=True) if lo <= v <= hi and t.get_text()]

    wide = Figure("w", "lines", "t", "x", "y", [Series("a", [1.0, 2.0, 3.0], [1e-4, 1e-2, 1.0])], ylog=True)
    said = labels(wide, "y")
    assert said and not any("$" in t or "mathdefault" in t for t in said), said
    assert {"0.001", "0.01", "0.1"} <= set(said), said
    short = Figure("s", "lines", "t", "x", "y", [Series("a", [1.0, 30.0], [1.0, 2.0])], xlog=True)
    assert {"1", "2", "5", "10", "20"} <= set(labels(short, "x")), labels(short, "x")
    # sixteen named x values (ARCANE Fig. 16's EVS sizes) are turned, not run into one another
    powers = [f"2^{k}" for k in range(1, 17)]
    f = draw(Figure("p", "lines", "t", "EVS size", "y", [Series("a", powers, [1.0 / k for k in range(1, 17)])], ylog=True))
    turned = f.axes[0].get_xticklabels()
    assert [t.get_text() for t in turned] == powers and all(t.get_rotation() == 45 for t in turned)


def test_lines_that_coincide_still_show_each_series():
    """Issue 68: OPS's line was drawn under ARCANE's (the same solid line): each series now has
    its own dash and marker, the later markers smaller."""
    from fabricsim.plot import draw
    from fabricsim.plot.figures import Figure, Series

    same = [Series(lb, [1.0, 2.0], [50.0, 190.0]) for lb in ("ecmp", "ops", "arcane", "prime")]
    lines = draw(Figure("f", "lines", "t", "x", "y", same)).axes[0].get_lines()
    styles = [(ln.get_linestyle(), ln.get_marker()) for ln in lines]
    assert len(set(styles)) == 4, styles
    sizes = [ln.get_markersize() for ln in lines]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1], sizes
