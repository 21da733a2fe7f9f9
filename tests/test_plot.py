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
    check(files, ["fct_cdf", "jct_cdf", "reorder", "queues", "utilization"])


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
    check(files, ["fct_cdf", "slowdown", "sweep_p99_fct_ns"])
    assert all(f.parent == tmp_path / "sw" / "plots" for f in files)
    with pytest.raises(ScenarioError) as e:
        plot_dir(tmp_path / "sw", metric="nope")
    assert e.value.field == "--metric"
    with pytest.raises(ScenarioError) as e:
        plot_dir(tmp_path / "sw", x="topology.hosts")
    assert e.value.field == "--x" and "lb.kind" in e.value.message
    # the seed, or any column of points.parquet, can be the x axis
    files = plot_dir(tmp_path / "sw", x="seed", line="lb.kind", metric="max_fct_ns")
    check(files, ["fct_cdf", "slowdown", "sweep_max_fct_ns"])
    with pytest.raises(ScenarioError):
        plot_dir(tmp_path)
