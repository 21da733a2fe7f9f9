"""`fabricsim report`: one self-contained HTML page whose plots draw in a headless browser."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import fabricsim
import pytest
from conftest import ROOT, fabric
from fabricsim.plot.figures import run_figures, sweep_figures
from fabricsim.plot.report import report
from fabricsim.sweep import Sweep, run_sweep

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser() -> str:
    found = next((b for b in map(shutil.which, BROWSERS) if b), None)
    if found is None:
        # CI installs Chromium from the system packages and sets this: there the test must run
        if os.environ.get("FABRICSIM_REQUIRE_BROWSER") == "1":
            pytest.fail("no headless Chromium found; .ci/run installs it")
        pytest.skip("no headless Chromium on this machine (apt-get install chromium)")
    return found


def render(html: Path, shot: Path) -> str:
    """The page's DOM after its scripts ran, and a screenshot of it."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=15000"]
    url = html.resolve().as_uri()
    dom = subprocess.run([browser(), *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True).stdout
    subprocess.run(
        [browser(), *flags, "--window-size=1200,2400", f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True
    )
    return dom


def artifact(name: str) -> Path:
    where = Path(os.environ.get("FABRICSIM_ARTIFACTS", ROOT / "out" / "test-artifacts"))
    where.mkdir(parents=True, exist_ok=True)
    return where / name


def check(page: Path, expected_plots: int, shot_name: str) -> None:
    text = page.read_text()
    # self-contained: plotly inlined, no script or stylesheet fetched
    assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', text)
    dom = render(page, artifact(shot_name))
    assert f'data-plots-drawn="{expected_plots}"' in dom, "a plot did not draw"
    assert '<pre id="fabricsim-errors"></pre>' in dom, re.search(r'<pre id="fabricsim-errors">(.*?)</pre>', dom, re.S)
    assert artifact(shot_name).stat().st_size > 20_000


def test_a_run_report_draws_every_plot(tmp_path):
    sc = fabricsim.Scenario(fabric(kind="permutation", size="256KiB")).set("lb.kind", "ops")
    sc = sc.set("samples.every", "2us").set("samples.ports", ["leaf*"])
    sc = sc.set("jobs", [{"collective": "allreduce", "size": "1MiB", "ranks": 8, "iterations": 3}])
    fabricsim.run(sc).write(tmp_path / "run")
    page = report(tmp_path / "run", tmp_path / "run.html")
    text = page.read_text()
    assert "<h2>Jobs</h2>" in text and "allreduce" in text and "[topology]" in text
    check(page, len(run_figures(tmp_path / "run")), "report_run.png")


def test_a_sweep_report_draws_every_plot(tmp_path):
    sw = Sweep.from_dict(
        {"base": fabric(kind="permutation"), "seeds": [1, 2], "grid": {"lb.kind": ["ecmp", "prime"], "workload.size": ["64KiB", "256KiB"]}}
    )
    run_sweep(sw, tmp_path / "sw", workers=1)
    page = report(tmp_path / "sw", tmp_path / "sw.html")
    assert "8 points" in page.read_text() and "[grid]" in page.read_text()
    check(page, len(sweep_figures(tmp_path / "sw")), "report_sweep.png")


def test_the_reproduction_report_draws_every_plot(tmp_path):
    from fabricsim.plot.report import reproduction_report
    from fabricsim.reproduce import draw, experiments, run_experiment

    suite = {e.name: e for e in experiments()}
    results = []
    for name in ("juniper-goodput", "arcane-fig16-evs-imbalance"):
        claims = run_experiment(suite[name], tmp_path, quick=True, workers=1, plots=False)
        d = tmp_path / f"{name}-quick"
        results.append((suite[name], claims, d, draw(suite[name], d)))
        assert list((d / "plots").glob("*.png")), "draw writes the figures it returns"
    page = reproduction_report(results, tmp_path / "report.html", quick=True)
    text = page.read_text()
    assert "2 experiments (quick)" in text and "97.66" in text and "Fig. 16" in text
    # the sweep's plots (one run per point: fct_cdf, slowdown, sweep line) and the model's plot
    expected = len(sweep_figures(tmp_path / "juniper-goodput-quick")) + len(suite["arcane-fig16-evs-imbalance"].theory_figures)
    check(page, expected, "report_reproduce.png")


def test_a_36_point_jobs_sweep_report_is_small_and_reads_well(tmp_path):
    # 36 points of a 128-rank all-to-all: 585 k messages, each point's CDF thinned
    base = fabric()
    base.pop("workload")
    base["jobs"] = [{"name": "moe", "collective": "alltoall", "size": "512KiB", "ranks": 128, "placement": "spread", "max_connections": 8}]
    grid = {"lb.kind": ["ecmp", "ops", "arcane", "prime"], "jobs[0].size": ["128KiB", "256KiB", "512KiB"]}
    sw = Sweep.from_dict({"base": base, "seeds": [1, 2, 3], "grid": grid})
    points = run_sweep(sw, tmp_path / "sw", workers=2)
    assert points.height == 36 and "job.moe.slowdown" in points.columns
    page = report(tmp_path / "sw", tmp_path / "sw.html")
    text = page.read_text()
    assert page.stat().st_size < 10_000_000, page.stat().st_size
    # numbers for reading: no exponent, no long digit runs, nulls as "-", never None
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", text)
    assert cells and not [c for c in cells if re.search(r"\de[+-]\d|\d\.\d{5,}|^None$", c)]
    assert "max_jct_us" in text.replace("<wbr>", "") and "job.moe.slowdown" in text.replace("<wbr>", "")
    check(page, len(sweep_figures(tmp_path / "sw")), "report_jobs_sweep.png")
