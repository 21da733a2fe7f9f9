"""The docs tell the truth: every scenario field is documented, the algorithm page is fresh."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import fabricsim
from fabricsim import Scenario

ROOT = Path(__file__).resolve().parent.parent


def leaf_keys(table: dict, prefix: str = "") -> list[str]:
    keys = []
    for k, v in table.items():
        if isinstance(v, dict):
            keys += leaf_keys(v, f"{prefix}{k}.")
        else:
            keys.append(f"{prefix}{k}")
    return keys


def test_every_filled_scenario_field_is_in_the_reference():
    doc = (ROOT / "docs" / "scenario.md").read_text()
    for wl in ({"kind": "permutation"}, {"kind": "incast", "senders": 3}):
        for key in leaf_keys(Scenario({"workload": wl}).filled()):
            name = key.split(".")[-1]
            assert f"`{name}`" in doc or f"`{key.split('.', 1)[-1]}`" in doc, key


def test_every_registered_name_is_documented():
    docs = (ROOT / "docs" / "scenario.md").read_text() + (ROOT / "docs" / "algorithms.md").read_text()
    for row in fabricsim.registry():
        name = row["name"]
        assert f"`{name}`" in docs or f'"{name}"' in docs, row


def _tool(name: str):  # type: ignore[no-untyped-def]
    """A script of tools/ as a module (registered, so that its dataclasses find it)."""
    import sys

    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules[name] = gen
    spec.loader.exec_module(gen)
    return gen


def test_algorithms_page_is_generated_from_the_sources():
    gen = _tool("gen_algorithms_doc")
    assert (ROOT / "docs" / "algorithms.md").read_text() == gen.render(), "run: python3 tools/gen_algorithms_doc.py > docs/algorithms.md"


def test_outputs_section_is_generated_from_the_declared_columns():
    gen = _tool("gen_outputs_doc")
    page = (ROOT / "docs" / "scenario.md").read_text()
    assert page == gen.render(page), "run: python3 tools/gen_outputs_doc.py"


def _gen_kinds():  # type: ignore[no-untyped-def]
    return _tool("gen_kinds_doc")


def test_kind_tables_are_generated_from_the_registry():
    page = (ROOT / "docs" / "scenario.md").read_text()
    assert page == _gen_kinds().render(page), "run: python3 tools/gen_kinds_doc.py"


def test_a_new_load_balancer_and_parameter_reach_the_reference_without_editing_it(monkeypatch):
    """What a new `lb/x.rs` with `INFO` and a declared `Config` gives the core (a registry row, its
    parameters, its defaults in a filled scenario) is all the reference needs: the generated
    page gains its row, and an existing kind's new parameter appears in its row."""
    gen = _gen_kinds()
    real = gen._core

    class Core:
        @staticmethod
        def registry():  # type: ignore[no-untyped-def]
            return [*real.registry(), ("lb", "zigzag", "alternate between two EVs", "a new paper")]

        @staticmethod
        def parameters():  # type: ignore[no-untyped-def]
            return [
                *real.parameters(),
                ("lb", "zigzag", "period", "Packets sent on one EV before the other.", None),
                ("lb", "ecmp", "salt", "A new parameter of an old kind.", None),
            ]

        @staticmethod
        def validate(text: str) -> str:
            import json

            scenario = json.loads(text)
            kind = scenario.get("lb", {}).get("kind")
            if kind == "zigzag":
                return json.dumps({"lb": {"kind": "zigzag", "period": 16}})
            filled = json.loads(real.validate(text))
            if kind == "ecmp":
                filled["lb"]["salt"] = 7
            return json.dumps(filled)

    monkeypatch.setattr(gen, "_core", Core)
    page = (ROOT / "docs" / "scenario.md").read_text()
    new = gen.render(page)
    assert "| `zigzag` | alternate between two EVs | `period` (`16`): Packets sent on one EV before the other. |" in new
    assert "`salt` (`7`): A new parameter of an old kind." in new
    assert new.replace("zigzag", "") != page and "zigzag" not in page


def test_allowed_lists_name_every_registered_kind():
    """The fields whose values are registered names list them all, and nothing else."""
    page = (ROOT / "docs" / "scenario.md").read_text()
    registered: dict[str, set[str]] = {}
    for row in fabricsim.registry():
        registered.setdefault(row["category"], set()).add(row["name"])

    def cell(section: str, field: str, column: int) -> str:
        body = page.split(f"## `{section}`", 1)[1].split("\n## ", 1)[0]
        row = next(line for line in body.splitlines() if line.startswith(f"| `{field}` |"))
        return row.split(" | ")[column]

    import re

    def names(text: str) -> set[str]:
        return set(re.findall(r'[`"]([a-z_]+)[`"]', text))

    assert names(cell("[transport]", "kind", 1)) == registered["transport"]
    assert names(cell("[transport]", "cc", 1)) == registered["cc"]
    assert names(cell("[transport]", "loss_detection", 1)) == registered["loss_detection"] | {"rto"}
    assert names(cell("[topology]", "kind", 1)) == registered["topology"]
    assert names(cell("[[jobs]]", "algorithm", 1)) == registered["collective"] | {"auto"}
    assert registered["routing"] <= names(cell("[switch]", "routing", 3))


def test_a_new_cc_transport_topology_or_collective_reaches_the_allowed_lists_without_a_hand_edit():
    """The allowed-names cells are generated from the core's declarations, which list the
    registered names (issue 50): a kind injected into a field's schema appears in its field's
    cell, and the committed page is what the generator writes."""
    gen = _tool("gen_fields_doc")
    page = (ROOT / "docs" / "scenario.md").read_text()
    assert gen.render(page) == page, "docs/scenario.md is stale: python3 tools/gen_fields_doc.py"
    for definition, section, field in (
        ("CcKind", "[transport]", "cc"),
        ("TransportKind", "[transport]", "kind"),
        ("TopologyConfig", "[topology]", "kind"),
        ("AlgorithmChoice", "[[jobs]]", "algorithm"),
    ):
        schema = fabricsim.schema()
        names = schema["$defs"][definition]
        if "anyOf" in names:  # a tagged table: a kind is one of its tables
            names["anyOf"].append({"type": "object", "properties": {"kind": {"const": "zigzag"}}})
        else:
            names["oneOf"].append({"const": "zigzag"})
        new = gen.render(page, schema)
        body = new.split(f"## `{section}`", 1)[1].split("\n## ", 1)[0]
        row = next(line for line in body.splitlines() if line.startswith(f"| `{field}` |"))
        assert '`"zigzag"`' in row.split(" | ")[1], row


def test_every_file_of_a_kind_folder_is_a_registered_kind():
    """Helpers live in a folder's `support/`: the generated pages read every other file of a
    kind folder as a kind."""
    gen = _tool("gen_algorithms_doc")
    src = ROOT / "crates" / "fabricsim-core" / "src"
    folders = {
        "lb": "lb",
        "faults": "fault",
        "workload": "workload",
        "workload/collective": "collective",
        "switch/routing": "routing",
        "host/cc": "cc",
        "host/transport": "transport",
        "topology/generators": "topology",
    }
    for folder, category in folders.items():
        names = {row["name"] for row in fabricsim.registry() if row["category"] == category}
        files = [p for p in sorted((src / folder).glob("*.rs")) if p.name != "mod.rs"]
        assert files
        for path in files:
            assert gen.registered_name(path) in names, f"{folder}/{path.name} is not a registered {category}: move it to support/"


def _compare_blocks(page: str) -> list[tuple[str, list[str]]]:
    """The ``fabricsim compare`` blocks of a page, as tools/refresh_doc_blocks.py finds them:
    (command, the lines the page shows)."""
    import re

    lines, out = page.split("\n"), []
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            end = lines.index("```", i + 1)
            body = lines[i + 1 : end]
            named = re.search(r"`(fabricsim compare [^`]+)` \(real output\):", lines[i - 2] if i >= 2 else "")
            if body and body[0].startswith(("$ fabricsim compare ", "$ fabricsim topology ")):
                out.append((body[0][2:], body[1:]))
            elif named:
                out.append((named.group(1), body))
            i = end + 1
            continue
        i += 1
    return out


#: A compare block of the pages whose scenario is expected to make more events than this is not
#: re-run by the test suite (tools/refresh_doc_blocks.py re-runs it).
MAX_TESTED_EVENTS = 100_000_000


def test_the_pages_compare_outputs_are_what_compare_prints():
    # every "real output" of `fabricsim compare` in the README and docs/workloads.md, re-run:
    # the same table but for the wall-time column (the machine's), so no number on those
    # pages can drift from the runs it shows (tools/refresh_doc_blocks.py pastes them)
    import re
    import shlex

    from fabricsim import Scenario

    refresh = _tool("refresh_doc_blocks")
    wall = re.compile(r"│\s*[0-9.]+ │$")
    pages = ("README.md", "docs/workloads.md", "docs/topologies.md")
    blocks = [b for page in pages for b in _compare_blocks((ROOT / page).read_text())]
    assert len(blocks) >= 5
    for command, shown in blocks:
        # a block of a scenario too long for the suite (docs/workloads.md's 1024-host question:
        # 250 M events a load balancer) is re-run by tools/refresh_doc_blocks.py alone
        path = next((a for a in shlex.split(command) if a.endswith(".toml")), None)
        if path is not None and Scenario.load(ROOT / path).estimate()[0] > MAX_TESTED_EVENTS:
            continue
        printed = refresh.run(command).split("\n")
        assert [wall.sub("│ wall │", s) for s in printed] == [wall.sub("│ wall │", s) for s in shown], command


def test_the_several_nics_sentence_is_its_blocks():
    """docs/topologies.md's two NICs a GPU against one of twice the rate: the sentence's times and
    percentages are the max JCT column of the two blocks it compares (re-run above)."""
    import re

    page = (ROOT / "docs" / "topologies.md").read_text()
    blocks = dict(_compare_blocks(page))
    base = "fabricsim compare scenarios/alltoall_rails_64.toml --lb ecmp,ops"

    def jct(command: str) -> dict[str, float]:
        rows = [r.split("│") for r in blocks[command] if r.startswith("│ ecmp") or r.startswith("│ ops")][:2]
        return {r[1].strip(): float(r[3].strip()) for r in rows}

    one, two = jct(base), jct(base + " -s topology.nics_per_gpu=2 -s topology.link_rate=200Gbps")
    said = re.search(r"\((\S+) us with ECMP, (\S+) with OPS.*?takes (\S+) % longer with ECMP and\s+(\S+) % with OPS", page, re.S)
    assert said is not None
    assert [float(x) for x in said.groups()[:2]] == [one["ecmp"], one["ops"]], said.groups()
    assert [float(x) for x in said.groups()[2:]] == [round(100 * (two[k] / one[k] - 1), 1) for k in ("ecmp", "ops")], (one, two)


def test_the_repositorys_sweep_specs_are_valid():
    """experiments/*.toml (the sweeps the README and docs cite by name): each loads and every
    point is a scenario the core accepts, so a renamed field or scenario breaks here, not when a
    reader runs it."""
    from fabricsim.sweep import Sweep

    specs = sorted((ROOT / "experiments").glob("*.toml"))
    assert len(specs) >= 3
    for path in specs:
        points = Sweep.load(path).validate()
        assert points, path


def test_the_readmes_counts_are_the_repositorys():
    """The numbers the README's layout states: the golden scenarios it says the test guards."""
    import re

    readme = (ROOT / "README.md").read_text()
    goldens = len(list((ROOT / "crates" / "fabricsim-core" / "tests" / "golden").glob("*.toml")))
    stated = re.search(r"golden results of (\d+) fixed scenarios", readme)
    assert stated is not None and int(stated.group(1)) == goldens, (stated and stated.group(0), goldens)


def test_the_native_modules_stub_matches_the_module():
    """python/fabricsim/_core.pyi against the built module, by mypy's stubtest (issue 50): a
    function added, removed or given other parameters without the stub fails here."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "fabricsim._core"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_the_pages_count_the_experiments_there_are():
    """'N experiments' in the README and docs/reproduction.md is the suite's count (it read 34
    and 46 while the suite grew)."""
    import re

    from fabricsim.reproduce import experiments

    n = len(experiments())
    for page in ("README.md", "docs/reproduction.md"):
        said = [int(m) for m in re.findall(r"(\d+) experiments", (ROOT / page).read_text())]
        assert said and all(k == n for k in said), (page, said, n)


def _llama(preset: str, gpus: int, parallel: dict[str, int]) -> Scenario:
    """A training step on `gpus` GPUs, 8 a server with rails, as docs/workloads.md's "A step out
    of reach" and docs/scenario.md's least time state it."""
    topology = {"hosts": gpus, "radix": 64, "nics_per_server": 8, "rails": True, "scale_up_rate": "7200Gbps", "scale_up_latency": "300ns"}
    job = {"name": preset, "ranks": gpus, "model": {"preset": preset}, "parallel": parallel | {"gpu_tflops": 400}}
    return Scenario({"seed": 1, "topology": topology, "lb": {"kind": "ops"}, "jobs": [job], "stop": {"max_time": "60s"}})


def _least(s: Scenario) -> str:
    """A scenario's least time as the docs write it ("3.730 s"), from the warning a 1 ns stop gets."""
    import re

    said = [w for w in s.set("stop.max_time", "1ns").warnings() if "least time" in w]
    found = re.search(r"takes \(([\d.]+)([a-z]+):", said[0])
    assert found is not None, said
    return f"{found[1]} {found[2]}"


def test_the_step_cutting_table_and_the_least_time_are_what_the_estimate_says():
    """docs/workloads.md's "what to cut" table (events, memory, least time of each cut of a
    Llama 3 70B step) and docs/scenario.md's Llama 3 405B least time, from the survey itself."""
    base = _llama("llama3-70b", 1024, {"tp": 8, "pp": 4, "dp": 32, "micro_batches": 8})
    cuts = {
        "as given (80 layers, 8 micro-batches, DP 32)": base,
        "`model.layers = 8`": base.set("jobs[0].model.layers", 8),
        "`parallel.micro_batches = 2`": base.set("jobs[0].parallel.micro_batches", 2),
        "`parallel.dp = 4` (`ranks = 128`)": base.set("jobs[0].parallel.dp", 4).set("jobs[0].ranks", 128),
        "`model.seq = 1024`": base.set("jobs[0].model.seq", 1024),
        "layers 8 and DP 4": base.set("jobs[0].model.layers", 8).set("jobs[0].parallel.dp", 4).set("jobs[0].ranks", 128),
    }
    page = (ROOT / "docs" / "workloads.md").read_text()
    for name, s in cuts.items():
        events, memory = s.estimate()
        row = f"| {name} | {events / 1e9:,.1f} G | {memory / 2**30:.2f} GiB | {_least(s)} |"
        assert row in page, row
    step = _llama("llama3-405b", 1024, {"tp": 8, "pp": 16, "dp": 8, "micro_batches": 16})
    assert f"16 micro-batches at 400 TFLOPS: {_least(step)})" in (ROOT / "docs" / "scenario.md").read_text(), _least(step)


def test_the_8192_gpu_step_s_estimate_is_what_scenario_md_says():
    """docs/scenario.md's memory estimates of the 8 192-GPU Llama 3 405B step (what
    `stop.max_memory` it needs with every flows column, and with the six `fabricsim run`
    keeps), and docs/scale.md's row of it, from the survey itself (a few seconds each, under
    100 MB)."""
    from fabricsim.cli.common import SUMMARY_FLOW_COLUMNS

    step = _llama("llama3-405b", 8192, {"tp": 8, "pp": 16, "dp": 64, "micro_batches": 16}).set("topology.radix", 128)
    page = " ".join((ROOT / "docs" / "scenario.md").read_text().split())
    _, memory = step.set("stop.max_memory", "64GiB").estimate()
    said = f"radix 128: {memory / 2**30:.1f} GiB with every column of the flows table"
    assert said in page, said
    events, six = step.set("stop.max_memory", "64GiB").estimate(SUMMARY_FLOW_COLUMNS)
    said = f"{six / 2**30:.1f} GiB with the six columns `fabricsim run` keeps"
    assert said in page, said
    said = f"| 8 192 (64, 2 tiers) | {events / 1e9:.1f} G | {six / 2**30:.1f} GiB |"
    assert said in (ROOT / "docs" / "scale.md").read_text(), said


def test_the_scale_pages_figures_that_do_not_depend_on_the_machine_are_the_cores():
    """docs/scale.md's events and memory of the 1 024- and 8 192-GPU Llama 3 405B steps (their
    survey with the six columns `fabricsim run` keeps), and the 256-GPU GPT-3 XL step's events and
    step times under each packet size, with two iterations and with fewer layers (seven runs,
    about 30 s on two threads). Its walls, peaks and the larger steps' surveys are measurements, with commands."""
    import fabricsim
    from fabricsim.cli.common import SUMMARY_FLOW_COLUMNS

    page = (ROOT / "docs" / "scale.md").read_text()
    lines = page.splitlines()

    def row(start: str) -> str:
        return next(line for line in lines if line.startswith(start))

    # the 8 192-GPU row: test_the_8192_gpu_step_s_estimate_is_what_scenario_md_says
    step = _llama("llama3-405b", 1024, {"tp": 8, "pp": 16, "dp": 8, "micro_batches": 16}).set("topology.radix", 128)
    events, memory = step.set("stop.max_memory", "64GiB").estimate(SUMMARY_FLOW_COLUMNS)
    said = f"| {events / 1e9:.1f} G | {memory / 2**30:.2f} GiB |"
    assert said in row("| 1 024 ("), said

    base = Scenario.load(ROOT / "scenarios" / "training_dense_256.toml")
    runs = {}
    for key, s in (
        ("4160B", base),
        ("8256B", base.set("transport.mtu", "8256B")),
        ("16448B", base.set("transport.mtu", "16448B")),
        ("twice", base.set("jobs[0].iterations", 2)),
        *((f"layers {n}", base.set("jobs[0].model.layers", n)) for n in (4, 8, 12)),
    ):
        r = fabricsim.run(s, threads=2, flow_columns=["bytes"])
        runs[key] = (r.summary["events"], list(r.jobs["jct_ps"]), list(r.jobs["ideal_jct_ps"]))
    events, (jct,), (ideal,) = runs["4160B"]
    assert f"| 256 | {events / 1e6:.1f} M | 1 |" in page
    assert f"| {jct / 1e9:.3f} ms (ideal {ideal / 1e9:.3f} ms) |" in row("| 256 |")
    assert f"| {events / 1e6:.1f} M |" in row("| the default:") and f"| {jct / 1e9:.3f} ms |" in row("| the default:")
    for key in ("8256B", "16448B"):
        e, (j,), _ = runs[key]
        said = f"| {e / 1e6:.1f} M |"
        assert said in row(f'| `transport.mtu = "{key}"`'), said
        said = f"| {j / 1e9:.3f} ms | {(j / jct - 1) * 100:.2f} % |"
        assert said in row(f'| `transport.mtu = "{key}"`'), said
    e, its, _ = runs["twice"]
    assert its == [jct, jct], "the page says the second iteration equals the first to the picosecond"
    assert f"| {e / 1e6:.1f} M |" in row("| `iterations = 2`")
    # fewer layers: the step time multiplied up to the model's 24, and two sizes' line
    layers = {n: runs[f"layers {n}"] for n in (4, 8, 12)}
    for n, (e, (j,), _) in layers.items():
        said = f"| {e / 1e6:.1f} M |"
        assert said in row(f"| `model.layers = {n}`"), said
        said = f"| {j * 24 // n / 1e9:.3f} ms ({j / 1e9:.3f} x {24 // n}) | {(j * 24 / n / jct - 1) * 100:+.2f} % |"
        assert said in row(f"| `model.layers = {n}`"), said
    for a, b in ((4, 8), (8, 12)):
        (ea, (ja,), _), (eb, (jb,), _) = layers[a], layers[b]
        line = ja + (jb - ja) * (24 - a) / (b - a)
        said = f"| {(ea + eb) / 1e6:.1f} M |"
        assert said in row(f"| `model.layers` {a} and {b}"), said
        said = f"| {line / 1e9:.3f} ms | {(line / jct - 1) * 100:+.2f} % |"
        assert said in row(f"| `model.layers` {a} and {b}"), said


def test_the_estimates_workloads_md_quotes_are_what_compare_says():
    """docs/workloads.md quotes the line `fabricsim compare` says before each run of two
    scenarios (their survey with the flows columns compare keeps without --out)."""
    from fabricsim.cli.common import SUMMARY_FLOW_COLUMNS, _estimate

    page = " ".join((ROOT / "docs" / "workloads.md").read_text().split())
    for name, lb in (("websearch_allreduce_1024", "ecmp"), ("llama2_70b_rails_512", "arcane")):
        s = Scenario.load(ROOT / "scenarios" / f"{name}.toml").with_lb(lb)
        said = _estimate(name, *s.estimate(SUMMARY_FLOW_COLUMNS), "max_wall" in s.data.get("stop", {}))
        quoted = said.split(": ", 1)[1].split("; stop.max_wall")[0]
        assert quoted in page, quoted


def test_every_cited_section_of_a_page_exists():
    """A citation of a page's section (`docs/performance.md, "Stalls on copies"`) in the code or
    the docs names a heading that page has, or a paragraph's bold lead (`**Exactness.**`): a page
    rewritten keeps what is cited of it."""
    import re

    cited = re.compile(r'docs/([\w-]+)\.md, "([^"]+)"')
    joined = re.compile(r"\s*\n\s*(?:///|//!|//|#:?)?\s*")
    lead = re.compile(r"^(?:- )?\*\*([^*]+)\*\*")
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "crates").rglob("*.rs"), *(ROOT / "python").rglob("*.py")]
    headings: dict[str, list[str]] = {}
    missing = []
    seen = 0
    for f in files:
        text = joined.sub(" ", f.read_text())
        for page, title in cited.findall(text):
            path = ROOT / "docs" / f"{page}.md"
            if page not in headings:
                lines = path.read_text().splitlines() if path.exists() else []
                headings[page] = [h.lstrip("#").strip() for h in lines if h.startswith("#")]
                headings[page] += [m.group(1).strip() for h in lines if (m := lead.match(h))]
            seen += 1
            title = title.rstrip(".")
            if not any(h == title or h.startswith(title) for h in headings[page]):
                missing.append(f"{f.relative_to(ROOT)}: docs/{page}.md, {title!r}")
    assert seen >= 5, seen
    assert not missing, missing


def test_the_typed_summary_is_the_cores_declared_one_and_the_front_ends():
    """`fabricsim.summary.Summary` (what `Results.summary` is typed as) names every summary key
    the core declares, with its type, in its order, then the front end's own keys, each of which
    docs/scenario.md names; and a run's summary has no key it does not declare."""
    import typing

    from fabricsim.summary import FRONT_END_KEYS, Summary

    declared = fabricsim._core.columns()["summary"]
    hints = typing.get_type_hints(Summary)
    python = {"str": str, "u64": int, "f64": float, "list[str]": list[str], "bool": bool}
    core = [name for name, *_ in declared]
    assert list(hints) == core + list(FRONT_END_KEYS)
    for name, ty, _unit, null_when, _ in declared:
        want = python[ty.lower()]
        assert hints[name] == (want | None if null_when else want), name
    doc = (ROOT / "docs" / "scenario.md").read_text()
    assert all(f"`{k}`" in doc for k in FRONT_END_KEYS), [k for k in FRONT_END_KEYS if f"`{k}`" not in doc]
    r = fabricsim.run(Scenario({"topology": {"hosts": 16, "radix": 8}, "workload": {"size": "64KiB"}}))
    assert set(r.summary) <= set(hints), set(r.summary) - set(hints)


def test_the_lossless_ethernet_runs_model_md_quotes_are_what_the_scenarios_give():
    """docs/model.md, "Lossless Ethernet": its head-of-line table and its deadlock ring, re-run
    from the shipped scenarios (a second each)."""
    page = (ROOT / "docs" / "model.md").read_text()

    def thousands(n: int) -> str:
        return f"{n:,}".replace(",", " ")

    def run(**fields: object) -> fabricsim.Results:
        s = fabricsim.load(str(ROOT / "scenarios" / "pfc_head_of_line.toml"))
        for dotted, value in fields.items():
            s = s.set(dotted.replace("__", "."), value)
        return fabricsim.run(s)

    rows = []
    for label, fields in [
        ('`"trim"`', {"switch__overflow": "trim"}),
        ('`"drop"`', {"switch__overflow": "drop"}),
        ('`"pfc"`', {}),
        ('`"pfc"`, `transport.rto = "4.294967296s"`', {"transport__rto": "4.294967296s"}),
    ]:
        r = run(**fields)
        slow = r.flows["slowdown"].to_list()
        innocent, incast = f"{slow[4]:.2f}", f"{min(slow[:4]):.2f}-{max(slow[:4]):.2f}"
        s = r.summary
        if s["trims"] or s["drops"]:
            lost = f"{thousands(s['trims'])} trims" if s["trims"] else f"{thousands(s['drops'])} drops"
            rows.append(f"| {label} | {innocent} | {incast} | {lost} | {s['pfc_frames']} |")
        elif "rto" in label:
            assert s["retransmits"] == 0
            rows.append(f"| {label} | **{innocent}** | {incast} | none, no retransmission | |")
        else:
            paused = dict(zip(r.ports["name"].to_list(), r.ports["paused_ps"].to_list(), strict=True))["A:up0"]
            rows.append(
                f"| {label} | **{innocent}** | {incast} | none | {s['pfc_frames']} (A's uplink paused {paused / 1e6:.0f} us of the run) |"
            )
    for row in rows:
        assert row in page, row
    ring = fabricsim.run(fabricsim.load(str(ROOT / "scenarios" / "pfc_deadlock_ring.toml"))).summary
    assert ring["stop_reason"].startswith("PFC deadlock")
    cycle = ring["stop_detail"].split("; ", 1)[1].split(", each")[0]
    quoted = f"`{cycle}`, at {ring['sim_time_ns'] / 1e6:.2f} ms of simulated time, {thousands(ring['events'])} events"
    assert " ".join(quoted.split()) in " ".join(page.split()), quoted
