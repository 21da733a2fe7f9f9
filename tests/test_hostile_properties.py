"""Hostile input as a property (hypothesis): one field of a small valid scenario replaced by
an arbitrary value (wrong type, out of range, junk text, NaN, huge numbers, tables, lists) or
an unknown key added. Whatever it is, the CLI exits 0, 2 or 3, never 1 (an internal error),
and a refusal names a field. `make fuzz` runs it for 10 000 cases."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

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


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node: Any = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


@st.composite
def hostile(draw: st.DrawFn) -> dict[str, Any]:
    s = copy.deepcopy(BASE)
    if draw(st.integers(0, 9)) == 0:
        table = draw(st.sampled_from(["topology", "switch", "transport", "lb", "workload", "stop"]))
        s[table][draw(st.text(alphabet="abcdefghij_", min_size=1, max_size=8))] = draw(values)
    else:
        _set(s, draw(st.sampled_from(PATHS)), draw(values))
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
