"""[[jobs]] from Python and the CLI: tables, files, the compare table's JCT columns."""

from __future__ import annotations

from pathlib import Path

import fabricsim
import polars as pl
import pytest
from fabricsim.cli import app
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
SMALL = {
    "topology": {"hosts": 32, "radix": 8, "link_latency": "1us", "switch_latency": "0ns"},
    "jobs": [{"name": "dp", "collective": "allreduce", "size": "1MiB", "ranks": 8, "iterations": 2, "compute": "3us"}],
}


def test_jobs_tables_and_files(tmp_path):
    r = fabricsim.run(SMALL)
    assert r.complete
    assert r.jobs is not None and r.jobs.height == 2
    assert r.jobs["name"].to_list() == ["dp", "dp"]
    assert (r.jobs["jct_ps"] >= r.jobs["ideal_jct_ps"]).all()
    assert r.steps is not None and r.steps.height == 2 * 14
    assert r.summary["max_jct_ns"] == pytest.approx(r.jobs["jct_ps"].max() / 1e3)
    # only the job's messages: no default permutation
    assert r.flows.height == 2 * 14 * 8
    r.write(tmp_path)
    assert pl.read_parquet(tmp_path / "jobs.parquet").equals(r.jobs)
    assert pl.read_parquet(tmp_path / "steps.parquet").height == 28
    # a run without jobs writes no jobs file
    plain = fabricsim.run({"topology": SMALL["topology"], "workload": {"kind": "permutation", "size": "64KiB"}})
    assert plain.jobs is not None and plain.jobs.height == 0 and plain.summary["max_jct_ns"] is None
    plain.write(tmp_path)
    assert not (tmp_path / "jobs.parquet").exists()


def test_compare_shows_jct_columns_only_with_jobs(tmp_path):
    runner = CliRunner()
    path = tmp_path / "s.toml"
    path.write_text(fabricsim.Scenario(SMALL).to_toml())
    r = runner.invoke(app, ["compare", str(path), "--lb", "ecmp,ops", "-q"])
    assert r.exit_code == 0, r.output
    assert "max JCT" in r.stdout and "dp: allreduce 1MiB" in r.stdout
    r = runner.invoke(app, ["compare", str(ROOT / "scenarios" / "permutation_128.toml"), "--set", "workload.size=64KiB", "-q"])
    assert r.exit_code == 0 and "JCT" not in r.stdout


@pytest.mark.parametrize("name", ["allreduce_ring_128", "alltoall_128", "jobs_and_background"])
def test_shipped_job_scenarios_run_the_collectives_they_describe(name):
    """Each shipped job scenario, at 64 KiB per rank, completes with the messages its
    collectives make (a ring allreduce: 2 (n-1) steps of n messages; an alltoall: n (n-1))
    and every ring iteration at or above its ideal."""
    s = fabricsim.load(ROOT / "scenarios" / f"{name}.toml").set("jobs[*].size", "64KiB")
    jobs = s.filled()["jobs"]
    r = fabricsim.run(s)
    assert r.complete, name
    expected = 0
    for job in jobs:
        n, iterations = job["ranks"], job["iterations"]
        expected += iterations * (2 * (n - 1) * n if job["collective"] == "allreduce" else n * (n - 1))
    # a permutation beside them: one message per host, ahead of the jobs' in the flows table
    background = s.filled()["topology"]["hosts"] if "workload" in s.data else 0
    assert r.flows.height == background + expected, (name, r.flows.height, background, expected)
    assert r.jobs.height == sum(j["iterations"] for j in jobs)
    # where a rank has one message out at a time (the ring), the ideal is a lower bound
    ring = r.jobs.filter(pl.col("collective") == "allreduce")
    assert (ring["jct_ps"] >= ring["ideal_jct_ps"]).all(), name


def test_a_trace_from_a_cdf_file_and_its_buckets(tmp_path):
    (tmp_path / "sizes.txt").write_text("# size cumulative%\n0 0\n50000 50\n2000000 100\n")
    (tmp_path / "s.toml").write_text(
        '[topology]\nhosts = 32\nradix = 8\n[workload]\nkind = "trace"\ncdf = "sizes.txt"\nload = 0.4\nduration = "100us"\n'
    )
    s = fabricsim.load(tmp_path / "s.toml")
    r = fabricsim.run(s)
    assert r.complete and r.flows.height > 50
    assert r.buckets is not None and r.buckets["messages"].sum() == r.flows.height
    assert r.buckets["messages"][3] == 0  # nothing above 10 MB in this CDF
    assert r.flows["bytes"].max() <= 2_000_000
    # a file that is not a CDF is refused at its field
    (tmp_path / "bad.txt").write_text("0 0\nten 100\n")
    (tmp_path / "s.toml").write_text('[workload]\nkind = "trace"\ncdf = "bad.txt"\nload = 0.4\nduration = "10us"\n')
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.load(tmp_path / "s.toml").validate()
    assert e.value.field == "workload.cdf"


ONE_OUT = [("allreduce", "ring"), ("allreduce", "halving_doubling"), ("reduce_scatter", "ring"), ("broadcast", "ring")]


@pytest.mark.parametrize(("collective", "algorithm"), ONE_OUT)
def test_where_a_rank_has_one_message_out_the_ideal_jct_is_a_lower_bound(collective, algorithm):
    # docs/workloads.md: a lower bound where each rank sends one message at a time, on 2 and 3
    # tiers, any size and placement (where ranks send several at once it is a reference only)
    for hosts, radix, tiers in [(16, 8, 2), (16, 4, 3)]:
        for size in ["1B", "100KiB"]:
            for placement in ["packed", "spread", "random"]:
                job = {"collective": collective, "algorithm": algorithm, "size": size, "ranks": 4, "placement": placement}
                r = fabricsim.run({"topology": {"hosts": hosts, "radix": radix, "tiers": tiers}, "jobs": [job]})
                low = r.jobs.filter(pl.col("jct_ps") < pl.col("ideal_jct_ps"))
                assert r.jobs.height == 1 and low.height == 0, (hosts, tiers, size, placement, r.jobs)


def test_the_nonblocking_reference_is_the_same_run_on_one_switch():
    from fabricsim import _core
    from fabricsim.reference import reference_scenario

    def job(placement: str, topo: dict) -> dict:
        return {
            "seed": 3,
            "topology": topo | {"link_latency": "1us", "switch_latency": "0ns"},
            "lb": {"kind": "ecmp"},
            "jobs": [{"collective": "allreduce", "size": "1MiB", "ranks": 8, "placement": placement}],
        }

    two_tier = {"hosts": 64, "radix": 16}
    # a job under one leaf crosses one switch on either fabric: it costs nothing
    packed = fabricsim.run(job("packed", two_tier), reference="nonblocking")
    assert packed.jobs["fabric_cost"].to_list() == [1.0] and packed.summary["max_fabric_cost"] == 1.0
    # spread over the leaves its messages cross three switches and collide under ECMP
    spread = fabricsim.run(job("spread", two_tier), reference="nonblocking")
    assert spread.summary["max_fabric_cost"] > 1.0 and spread.summary["reference"] == "nonblocking"
    # the reference is the same scenario on one switch: its hosts, jobs on the same hosts, the
    # scenario's own BDP in bytes (buffers and windows are not sized by the shorter path)
    sim = _core.Simulation(fabricsim.Scenario(job("spread", two_tier)).to_json(), 1)
    ref = reference_scenario(sim, Path.cwd()).data
    assert ref["topology"]["radix"] == 65 and ref["topology"]["oversubscription"] == 64
    assert ref["jobs"][0]["hosts"] == sim.job_hosts[0] and "faults" not in ref
    assert ref["switch"]["buffer"] == f"{sim.bdp_bytes}B"
    assert ref["transport"]["init_cwnd"] == f"{sim.bdp_bytes}B"
    # a fabric that is already one leaf is its own reference, to the picosecond
    one_leaf = fabricsim.run(job("spread", {"hosts": 8, "radix": 16}), reference="nonblocking")
    assert one_leaf.jobs["jct_ps"].to_list() == one_leaf.jobs["nonblocking_jct_ps"].to_list()
    # refused: an unknown reference, and a run without jobs
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.run(job("packed", two_tier), reference="fat")
    assert e.value.field == "reference"
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.run({"topology": two_tier, "workload": {"kind": "permutation", "size": "4KiB"}}, reference="nonblocking")
    assert e.value.field == "reference"
    result = CliRunner().invoke(app, ["compare", str(ROOT / "scenarios" / "allreduce_ring_128.toml"), "--lb", "ecmp,ops", "-q"])
    assert result.exit_code == 0 and "non-bloc" not in result.output


@pytest.mark.parametrize(
    "topology, extra",
    [
        ({"hosts": 32, "radix": 16}, {"transport": {"mtu": "9KB"}}),
        ({"hosts": 32, "radix": 16}, {"switch": {"routing": ["ecmp"]}}),
        ({"kind": "multi_plane", "hosts": 32, "radix": 16}, {}),
        ({"kind": "multi_plane", "planes": 4, "hosts": 16, "radix": 8}, {"lb": {"kind": "ops"}}),
        (
            {
                "kind": "graph",
                "graph": {
                    "hosts": [{"name": f"h{i}"} for i in range(6)],
                    "switches": [{"name": "s"}, {"name": "t"}],
                    "links": [
                        {"a": "h0", "b": "s", "rate": "100Gbps"},
                        {"a": "h1", "b": "s", "rate": "400Gbps", "latency": "300ns"},
                        {"a": "h2", "b": "s"},
                        {"a": "h3", "b": "s", "rate": "200Gbps"},
                        {"a": "s", "b": "t"},
                        {"a": "h4", "b": "t"},
                        {"a": "h5", "b": "t"},
                    ],
                },
            },
            {},
        ),
        ({"kind": "dragonfly"}, {}),
        ({"kind": "rail_only", "hosts": 32, "radix": 16, "nics_per_server": 4, "scale_up_rate": "3600Gbps"}, {}),
    ],
    ids=["mtu-9KB", "routing-list", "multi-plane", "multi-plane-4-ops", "graph-mixed-rates", "dragonfly", "rail-only"],
)
def test_a_job_under_one_leaf_costs_exactly_one_on_every_fabric(topology, extra):
    """Issue 61: the reference refused a 9 KB MTU and a routing list, and put a multi-plane
    fabric's hosts (0.612) and a graph's hosts of mixed rates (0.946) on one port of the first
    host's rate, so a job that never left its leaf cost less than 1."""
    ranks = 2 if topology.get("kind") == "dragonfly" else 4
    s = {"seed": 3, "topology": topology, "lb": {"kind": "ecmp"}} | extra
    s["jobs"] = [{"collective": "allreduce", "size": "1MiB", "ranks": ranks, "placement": "packed"}]
    r = fabricsim.run(s, reference="nonblocking")
    assert r.jobs["fabric_cost"].to_list() == [1.0], r.jobs


def test_a_written_run_reads_back_whole(tmp_path):
    r = fabricsim.run(SMALL)
    r.write(tmp_path / "run")
    back = fabricsim.Results.read(tmp_path / "run")
    for name in ("flows", "ports", "reorder", "jobs", "steps", "buckets"):
        assert getattr(back, name).equals(getattr(r, name)), name
    # a table with no rows was not written: it comes back empty, with its columns
    assert back.samples is not None and back.samples.height == 0 and back.samples.columns == r.samples.columns
    assert back.summary == r.summary and back.accounting == r.accounting and back.scenario == r.scenario
    assert back.job_table().equals(r.job_table())
    with pytest.raises(fabricsim.ScenarioError, match=r"holds no summary\.json"):
        fabricsim.Results.read(tmp_path)


def test_the_flows_table_tells_each_job_and_the_background_apart():
    """Each message's job, iteration and kind of traffic, and whether its path climbs above the
    leaf: the background's rows have no job; a training job's are tp, pp or dp; the traffic
    table's sums are the flows table's."""
    s = dict(SMALL, workload={"kind": "permutation", "size": "64KiB"})
    r = fabricsim.run(s)
    f = r.flows
    back, job = f.filter(pl.col("job").is_null()), f.filter(pl.col("job").is_not_null())
    assert back.height == 32 and set(back["traffic"]) == {"background"} and back["iteration"].null_count() == 32
    assert set(job["traffic"]) == {"allreduce"} and set(job["job"]) == {0} and set(job["iteration"]) == {0, 1}
    # 4 hosts per leaf: a pair under one leaf crosses 2 links, any other 4
    same_leaf = (pl.col("src") // 4) == (pl.col("dst") // 4)
    assert (f.filter(same_leaf)["path_links"] == 2).all() and (f.filter(~same_leaf)["path_links"] == 4).all()
    t = r.traffic_table()
    assert t["traffic"].to_list() == ["background", "allreduce"] and t["job"].to_list() == [None, 0]
    # issue 68: one identity for a job in every table, its index and its name
    assert t["name"].to_list() == [None, r.job_table()["name"][0]] and r.job_table()["job"].to_list() == [0]
    assert r.buckets_by_source().select("job", "name").rows() == t.select("job", "name").rows()
    # joined by the job column alone, no map by hand: the job's traffic and buckets beside its JCT
    joined = r.job_table().join(t, on="job", suffix="_t").join(r.buckets_by_source(), on="job", suffix="_b")
    assert joined.height >= 1 and set(joined["job"]) == {0} and (joined["name"] == joined["name_t"]).all()
    assert joined["jct_ns"].is_not_null().all() and joined["traffic"].to_list()[0] == "allreduce"
    assert t["messages"].sum() == f.height and t["bytes"].sum() == f["bytes"].sum()
    for row in t.iter_rows(named=True):
        rows = f.filter(pl.col("traffic") == row["traffic"])
        climbed = rows.filter(pl.col("path_links") >= 4)["bytes"].sum()
        assert row["above_leaf_share"] == pytest.approx(climbed / rows["bytes"].sum())
    # a training job's messages by kind; its GPUs of a server talk over the scale-up network
    train = fabricsim.load(ROOT / "scenarios" / "training_dense_256.toml")
    train = train.set("jobs[0].parallel.micro_batches", 1).set("jobs[0].model.layers", 4).set("jobs[0].iterations", 1)
    tf = fabricsim.run(train).flows
    assert set(tf["traffic"]) == {"tp", "pp", "dp"}
    assert (tf.filter(pl.col("scale_up"))["path_links"] == 0).all() and (tf.filter(~pl.col("scale_up"))["path_links"] >= 2).all()


def test_size_buckets_apart_for_each_source_add_up_to_the_pooled_ones():
    """Results.buckets_by_source: the papers' size buckets per job and the background; the
    sources' messages of a bucket add up to the pooled table's, and a source alone in a bucket
    has the pooled percentiles (the same nearest rank)."""
    s = dict(SMALL, workload={"kind": "permutation", "size": "2MiB"})
    r = fabricsim.run(s)
    by = r.buckets_by_source()
    # the ring's messages are 1 MiB / 8 = 128 KiB, the background's 2 MiB
    assert list(zip(by["traffic"], by["bucket"], by["messages"], strict=True)) == [
        ("background", "1-10MB", 32),
        ("allreduce", "100KB-1MB", 224),
    ]
    pooled = {row["bucket"]: row for row in r.buckets.iter_rows(named=True)}
    for bucket, group in by.group_by("bucket"):
        assert group["messages"].sum() == pooled[bucket[0]]["messages"]
        if group.height == 1:
            row = group.row(0, named=True)
            assert row["p99_slowdown"] == pooled[bucket[0]]["p99_slowdown"] and row["p50_slowdown"] == pooled[bucket[0]]["p50_slowdown"]
    back = by.filter(pl.col("job").is_null())
    assert back["messages"].sum() == r.flows.filter(pl.col("job").is_null()).height


def test_a_jobs_default_connections_follow_mptcps_subflows():
    """Issue 68: `lb.kind = "mptcp"` with one subflow keeps a job's default `per_pair` (it is a
    connection per message or pair as any other); with more, its subflows are connections of
    their own, so `per_message` (docs/scenario.md, `transport.connections`)."""
    base = {"topology": {"hosts": 16, "radix": 8}, "jobs": [{"collective": "allreduce", "size": "64KiB", "ranks": 4}]}
    for subflows, expected in ((1, "per_pair"), (8, "per_message")):
        s = fabricsim.Scenario(base | {"lb": {"kind": "mptcp", "subflows": subflows}})
        assert s.filled()["transport"]["connections"] == expected, subflows
    with pytest.raises(fabricsim.ScenarioError, match=r"transport\.connections"):
        fabricsim.Scenario(base | {"lb": {"kind": "mptcp"}, "transport": {"connections": "per_pair"}}).validate()


def test_the_costs_table_workloads_md_quotes_is_what_the_sweep_gives():
    """docs/workloads.md's "NCCL's protocols and latencies" tables: five of their rows re-run
    by the tool that made them (latency-bound sizes under LL, LL128's, Simple at line rate; over
    the fabric and over NVSwitch, where also NVLS and what auto runs)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("nccl_tests_sweep", ROOT / "tools" / "nccl_tests_sweep.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules["nccl_tests_sweep"] = tool
    spec.loader.exec_module(tool)
    page = (ROOT / "docs" / "workloads.md").read_text()
    for ranks, server, size in ((16, False, 8), (16, False, 4 << 20), (16, False, 256 << 20), (8, True, 8), (8, True, 32 << 20)):
        t0, bw0, _ = tool.point(ranks, size, "ring", server=server)
        t1, bw1, proto = tool.point(ranks, size, "ring", costs=True, server=server)
        row = f"| {tool._size(size)} | {t0:,.1f} | {bw0:.2f} | {t1:,.1f} | {bw1:.2f} | {proto} |"
        if server:
            # NVLS and what auto runs there ("NVLink SHARP")
            t2, bw2, _ = tool.point(ranks, size, "nvls", costs=True, server=True)
            _, _, picked = tool.point(ranks, size, "auto", costs=True, server=True)
            row += f" {t2:,.1f} | {bw2:.2f} | {picked} |"
        assert row in page, row


def test_the_training_schedules_tables_workloads_md_quotes():
    """docs/workloads.md's interleaved-schedule and context-parallelism tables (Llama 3 8B on 32
    GPUs) and the ablation with a vocabulary of 8, re-run."""
    page = " ".join((ROOT / "docs" / "workloads.md").read_text().split())
    topology = {"hosts": 32, "radix": 8, "nics_per_server": 8, "rails": True, "scale_up_rate": "7200Gbps"}

    def step(parallel: dict[str, int], model: object = "llama3-8b") -> fabricsim.Results:
        par = {**parallel, "micro_batches": 8, "gpu_tflops": 400}
        s = {"seed": 1, "topology": topology, "stop": {"max_time": "100s"}, "jobs": [{"model": model, "ranks": 32, "parallel": par}]}
        r = fabricsim.run(s)
        assert r.complete
        return r

    def ms(r: fabricsim.Results, column: str) -> str:
        return f"{r.jobs[column][0] / 1e9:.1f}"

    for vpp in (1, 2, 4, 8):
        r = step({"tp": 8, "pp": 4, "vpp": vpp})
        row = f"| {vpp} | {ms(r, 'compute_only_ps')} | {ms(r, 'jct_ps')} | {ms(r, 'exposed_comm_ps')} |"
        assert row in page, row
    # "NVLS in training jobs": the same step on NVLS (the tables' first row) and on the ring
    nvls = step({"tp": 8, "pp": 4})
    par = {"tp": 8, "pp": 4, "micro_batches": 8, "gpu_tflops": 400}
    ring_job = {"model": "llama3-8b", "ranks": 32, "algorithm": "ring", "parallel": par}
    ring = fabricsim.run({"seed": 1, "topology": topology, "stop": {"max_time": "100s"}, "jobs": [ring_job]})
    said = (
        f"the step takes {ms(nvls, 'jct_ps')} ms with it ({nvls.summary['events'] / 1e6:.2f} M events) "
        f'and {ms(ring, "jct_ps")} ms on the ring (`algorithm = "ring"`, {ring.summary["events"] / 1e6:.2f} M events)'
    )
    assert said in page, said
    ablation = [ms(step({"tp": 8, "pp": 4, "vpp": v}, {"preset": "llama3-8b", "vocab": 8}), "compute_only_ps") for v in (1, 2, 4, 8)]
    assert f"they are {ablation[0]}, {ablation[1]}, {ablation[2]} and {ablation[3]} ms" in page, ablation
    context = (
        ("tp 8, pp 4", {"tp": 8, "pp": 4}),
        ("tp 8, pp 4, vpp 2", {"tp": 8, "pp": 4, "vpp": 2}),
        ("tp 8, cp 2, pp 2", {"tp": 8, "cp": 2, "pp": 2}),
        ("tp 8, cp 2, pp 2, vpp 2", {"tp": 8, "cp": 2, "pp": 2, "vpp": 2}),
    )
    for label, parallel in context:
        r = step(parallel)
        steps = r.steps
        cp = steps.filter(steps["kind"] == "cp")["bytes"].sum() / 1e9
        kv = f"{cp:.1f} GB" if cp else "-"
        row = f"| {label} | {ms(r, 'compute_only_ps')} | {ms(r, 'jct_ps')} | {ms(r, 'exposed_comm_ps')} | {kv} |"
        assert row in page, row


def test_the_nvls_pieces_table_workloads_md_quotes() -> None:
    """docs/workloads.md's "NVLink SHARP" table of pieces a head: re-run."""
    page = (ROOT / "docs" / "workloads.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| time us |"))
    quoted = [float(x) for x in row.strip("|").split("|")[1:]]
    base = {"seed": 1, "topology": {"hosts": 8, "radix": 8, "nics_per_server": 8, "scale_up_rate": "3600Gbps"}}
    size = 64 << 20
    for pieces, want in zip([1, 2, 4, 8, 16, 32, 64], quoted, strict=True):
        job = {
            "collective": "allreduce",
            "algorithm": "nvls",
            "size": f"{size}B",
            "ranks": 8,
            "slice": f"{size // 8 // pieces}B",
            "costs": "none",
        }
        r = fabricsim.run(base | {"jobs": [job]})
        assert f"{r.jobs['jct_ps'][0] / 1e6:.1f}" == f"{want:.1f}", pieces


def test_the_dense_training_steps_figures_the_pages_quote() -> None:
    """README's and docs/workloads.md's figures of `scenarios/training_dense_256.toml` (its
    steps table, its times with NCCL's costs and on the fabric alone, and the rails column of
    the load balancers' table: every load balancer takes the same time there), re-run (two runs,
    about 6 s on two threads)."""
    base = fabricsim.Scenario.load(ROOT / "scenarios" / "training_dense_256.toml")
    r = fabricsim.run(base, threads=2)
    raw = fabricsim.run(base.set("jobs[0].costs", "none").set("jobs[0].protocol", "simple"), threads=2)
    readme = " ".join((ROOT / "README.md").read_text().split())
    page = (ROOT / "docs" / "workloads.md").read_text()
    joined = " ".join(page.split())

    def ms(res: fabricsim.Results, column: str) -> str:
        return f"{res.jobs[column][0] / 1e9:.2f}"

    said = (
        f"the iteration takes {ms(r, 'jct_ps')} ms against {ms(r, 'ideal_jct_ps')} ideal and {ms(r, 'compute_only_ps')} of compute: "
        f"{ms(r, 'exposed_comm_ps')} ms of communication exposed"
    )
    assert said in readme, said
    added = (r.jobs["jct_ps"][0] - raw.jobs["jct_ps"][0]) / 1e9
    assert f"add {added:.1f} ms ({ms(raw, 'jct_ps')} ms on the fabric alone" in readme, added
    said = (
        f"The iteration takes {ms(r, 'jct_ps')} ms against an ideal of {ms(r, 'ideal_jct_ps')} ms "
        f"and {ms(r, 'compute_only_ps')} ms of compute: "
        f"{ms(r, 'exposed_comm_ps')} ms of communication is exposed"
    )
    assert said in joined, said
    said = f'`protocol = "simple"`: {ms(raw, "jct_ps")} ms, {ms(raw, "ideal_jct_ps")} ideal, {ms(raw, "exposed_comm_ps")} exposed'
    assert said in joined, said
    st = r.steps
    for i in range(len(st)):
        row = [str(st[c][i]) for c in ("kind", "messages", "bytes", "scale_up_bytes", "start_ps", "end_ps")]
        assert any(line.split() == row for line in page.splitlines()), row
    jct = f"{r.jobs['jct_ps'][0] / 1e6:,.1f}".replace(",", " ")
    assert f"| ecmp | {jct} |" in readme and f"| ecmp | {jct} |" in page, jct
