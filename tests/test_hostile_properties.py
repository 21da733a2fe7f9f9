"""Hostile input as a property (hypothesis): one field of a small valid scenario replaced by
an arbitrary value (wrong type, out of range, junk text, NaN, huge numbers, tables, lists) or
an unknown key added. Whatever it is, the CLI exits 0, 2 or 3, never 1 (an internal error),
and a refusal names a field. The valid scenarios cover each feature: jobs with faults and
samples; a training iteration on GPU servers with a scale-up network and queue pairs; DCQCN
over Go-back-N with a reorder window, a shared buffer, a rate cap and a dead switch; NSCC
with a reorder limit, coalesced ACKs, an adaptive RTO and PRIME under a trace with mixed
classes. `make fuzz` runs it for 10 000 cases."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from fabricsim.cli import app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

runner = CliRunner()

BASE: dict[str, Any] = {
    "seed": 3,
    "topology": {"hosts": 16, "radix": 8, "link_rate": "400Gbps", "link_latency": "1us", "switch_latency": "0ns"},
    "switch": {"buffer": "1bdp", "ecn": {"kmin": "0.2bdp", "kmax": "0.8bdp"}, "routing": "auto", "classes": 1},
    "transport": {"mtu": "4160B", "header": "64B", "rto": "70us", "ack_every": 1},
    "lb": {"kind": "ops", "evs_size": 65536},
    "workload": {"kind": "permutation", "size": "64KiB"},
    "faults": [{"kind": "link_down", "link": "leaf0:up1", "start": "5us", "end": "50us"}],
    "samples": {"every": "5us", "ports": ["leaf0:up*"]},
    "jobs": [{"collective": "alltoall", "size": "64KiB", "ranks": 4, "max_connections": 2, "iterations": 2, "compute": "1us"}],
    # a small guard: a mutation that makes flows crawl (an RTO of 1 ps) ends quickly
    "stop": {"max_time": "2ms", "max_wall": "3s"},
}

TOPOLOGY = {"hosts": 16, "radix": 8, "link_rate": "400Gbps", "link_latency": "1us", "switch_latency": "0ns"}
GUARD = {"max_time": "2ms", "max_wall": "3s"}
TRAINING: dict[str, Any] = {
    "seed": 5,
    "topology": TOPOLOGY | {"nics_per_server": 4, "scale_up_rate": "3600Gbps", "rails": False},
    "jobs": [
        {
            "model": {"preset": "gpt3-1.3b", "layers": 2, "hidden": 256, "seq": 64, "vocab": 1000},
            "parallel": {"tp": 2, "pp": 2, "gpu_tflops": 200, "bucket": "64KiB"},
            "ranks": 8,
        }
    ],
    "transport": {"connections": "per_pair", "rate_cap": "300Gbps"},
    "stop": GUARD,
}
DCQCN: dict[str, Any] = {
    "seed": 4,
    "topology": TOPOLOGY,
    "switch": {"buffer": {"shared": "2bdp", "alpha": 1.0}},
    "transport": {"kind": "gbn", "cc": "dcqcn", "reorder_buffer": "16KiB", "rate_cap": "200Gbps"},
    "workload": {"kind": "incast", "senders": 4, "size": "64KiB"},
    "faults": [{"kind": "switch_down", "switch": "spine1", "start": "2us", "end": "30us", "detection": "1us", "reconvergence": "2us"}],
    "stop": GUARD,
}
TRACE: dict[str, Any] = {
    "seed": 6,
    "topology": TOPOLOGY,
    "switch": {"classes": 2, "scheduler": "wrr", "weights": [1, 3]},
    "transport": {"cc": "nscc", "reorder_limit": 8, "ack_every": 4, "ack_evs": "all", "rto": "adaptive"},
    "lb": {"kind": "prime"},
    "workload": {"kind": "trace", "cdf": "fb_hadoop", "load": 0.3, "duration": "50us"},
    "mixed": {"share": 0.2, "class": 1},
    "samples": {"every": "5us"},
    "stop": GUARD,
}
BASES = [BASE, TRAINING, DCQCN, TRACE]

PATHS = [
    "seed",
    "topology",
    "topology.hosts",
    "topology.radix",
    "topology.tiers",
    "topology.link_rate",
    "topology.link_latency",
    "topology.oversubscription",
    "topology.nics_per_server",
    "topology.rails",
    "switch.buffer",
    "switch.ecn.kmin",
    "switch.ecn.kmax",
    "switch.routing",
    "switch.classes",
    "switch.overflow",
    "transport.mtu",
    "transport.header",
    "transport.rto",
    "transport.ack_every",
    "transport.kind",
    "lb.kind",
    "lb.evs_size",
    "workload",
    "workload.kind",
    "workload.size",
    "faults",
    "samples.every",
    "samples.ports",
    "stop.max_time",
    "jobs",
    "jobs.0.collective",
    "jobs.0.algorithm",
    "jobs.0.size",
    "jobs.0.ranks",
    "jobs.0.hosts",
    "jobs.0.placement",
    "jobs.0.iterations",
    "jobs.0.compute",
    "jobs.0.max_connections",
    "jobs.0.model",
    "jobs.0.model.layers",
    "jobs.0.model.hidden",
    "jobs.0.model.preset",
    "jobs.0.parallel.tp",
    "jobs.0.parallel.pp",
    "jobs.0.parallel.dp",
    "jobs.0.parallel.micro_batches",
    "jobs.0.parallel.gpu_tflops",
    "jobs.0.parallel.bucket",
    "topology.scale_up_rate",
    "topology.scale_up_latency",
    "switch.buffer.shared",
    "switch.buffer.alpha",
    "switch.scheduler",
    "switch.weights",
    "transport.cc",
    "transport.rate_cap",
    "transport.reorder_buffer",
    "transport.reorder_limit",
    "transport.connections",
    "transport.ack_evs",
    "transport.rto_min",
    "transport.loss_detection",
    "workload.cdf",
    "workload.load",
    "workload.duration",
    "workload.senders",
    "mixed.share",
    "mixed.class",
    "faults.0.kind",
    "faults.0.switch",
    "faults.0.detection",
    "lb.p_ecn",
    "lb.decay_by",
]

UNITS = ["0ns", "-1us", "1ps", "100001s", "18446744s", "0B", "1MiB", "2000GiB", "0Gbps", "101Tbps", "0.5bdp", "auto", "magic", "", "1.5ps"]

values = st.one_of(
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(UNITS),
    st.booleans(),
    st.lists(st.integers(-5, 5), max_size=3),
    st.dictionaries(st.text(min_size=1, max_size=5), st.integers(0, 9), max_size=2),
)


def _set(data: dict[str, Any], dotted: str, value: Any) -> bool:
    """Sets `dotted` where its parents exist (a table, or a list with that entry); False where
    the scenario lacks them."""
    *parents, last = dotted.split(".")
    node: Any = data
    for key in parents:
        if isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        elif isinstance(node, dict) and isinstance(node.get(key), dict | list):
            node = node[key]
        else:
            return False
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            return False
        node[int(last)] = value
    else:
        node[last] = value
    return True


@st.composite
def hostile(draw: st.DrawFn) -> dict[str, Any]:
    s = copy.deepcopy(draw(st.sampled_from(BASES)))
    if draw(st.integers(0, 9)) == 0:
        table = draw(st.sampled_from([t for t in ("topology", "switch", "transport", "lb", "workload", "stop") if t in s]))
        s[table][draw(st.text(alphabet="abcdefghij_", min_size=1, max_size=8))] = draw(values)
    else:
        paths = [p for p in PATHS if _set(copy.deepcopy(s), p, None)]
        _set(s, draw(st.sampled_from(paths)), draw(values))
    return s


#: Cases per run: a few hundred in CI; `make fuzz` runs 10 000.
EXAMPLES = int(os.environ.get("FABRICSIM_FUZZ_EXAMPLES", "300"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(hostile())
def test_any_single_bad_field_exits_0_2_or_3_and_a_refusal_names_a_field(tmp_path: Path, scenario: dict[str, Any]) -> None:
    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps(scenario))
    r = runner.invoke(app, ["run", str(path), "-q", "--json"])
    assert r.exit_code in (0, 2, 3), f"{r.exit_code}: {r.output}\n{scenario}"
    if r.exit_code == 2:
        m = re.search(r"error: (\S.*?): \S", r.output)
        assert m and m.group(1) not in ("scenario", "internal"), f"a refusal names the field: {r.output}"
    else:
        summary = json.loads(r.stdout.splitlines()[0])["summary"]
        assert summary["status"] == ("complete" if r.exit_code == 0 else "incomplete")


@pytest.mark.parametrize("base", BASES, ids=["jobs", "training", "dcqcn", "trace"])
def test_every_base_scenario_runs_to_completion(tmp_path: Path, base: dict[str, Any]) -> None:
    """The scenarios the mutations start from are valid and complete: a refusal is the
    mutation's doing."""
    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps(base))
    r = runner.invoke(app, ["run", str(path), "-q", "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout.splitlines()[0])["summary"]
    assert summary["status"] == "complete" and summary["flows"] > 0
