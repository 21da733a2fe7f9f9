"""GOAL schedules (``file = "x.goal"``): read as messages and compute tasks, with the writer the
tests use to make them (no schedule is downloaded from elsewhere)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fabricsim import Scenario, run
from fabricsim.errors import ScenarioError
from fabricsim.io.goal import read_goal


def write_ring_allreduce(path: Path, n: int, size: int) -> None:
    """A ring allreduce of ``size`` bytes per rank on ``n`` ranks, as fabricsim's ``ring``
    runs it: in step s rank r sends its chunk to r+1 once its receive of step s-1 is done
    (NCCL's ring: not its own send; 2(n-1) steps of size/n; ``size`` a multiple of n)."""
    lines = [f"num_ranks {n}", ""]
    for r in range(n):
        lines.append(f"rank {r} {{")
        for s in range(2 * (n - 1)):
            lines.append(f"s{s}: send {size // n}b to {(r + 1) % n} tag {s}")
            lines.append(f"r{s}: recv {size // n}b from {(r - 1) % n} tag {s}")
            if s:
                lines.append(f"s{s} requires r{s - 1}")
        lines += ["}", ""]
    path.write_text("\n".join(lines))


FABRIC = {
    "seed": 1,
    "topology": {"hosts": 128, "radix": 16, "link_latency": "1us", "switch_latency": "0ns"},
    "transport": {"ack_every": 1024},
}


def test_a_goal_ring_allreduce_takes_the_native_ring_jobs_time(tmp_path: Path):
    # 8 ranks under one leaf, ACKs only at a message's end: both run at their ideal, so the
    # schedule's last message ends when the native job's iteration does, to the picosecond
    write_ring_allreduce(tmp_path / "ring.goal", 8, 2 << 20)
    goal = run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "ring.goal"}}, tmp_path))
    native = run(
        Scenario(FABRIC | {"jobs": [{"costs": "none", "protocol": "simple", "collective": "allreduce", "size": "2MiB", "ranks": 8}]})
    )
    assert goal.complete and native.complete
    assert goal.flows.height == native.flows.height == 8 * 14
    assert goal.flows["end_ps"].max() == native.jobs["jct_ps"][0]
    assert sorted(goal.flows["fct_ps"].to_list()) == sorted(native.flows["fct_ps"].to_list())


def test_calc_is_a_compute_task_between_messages(tmp_path: Path):
    (tmp_path / "chain.goal").write_text(
        "num_ranks 2\n"
        "rank 0 {\n"
        "a: send 4096b to 1\n"
        "c: calc 5000 // 5 us\n"
        "b: send 4096b to 1 tag 1\n"
        "c requires a\n"
        "b requires c\n"
        "}\n"
        "/* rank 1 receives both */\n"
        "rank 1 {\n"
        "x: recv 4096b from 0\n"
        "y: recv 4096b from 0 tag 1\n"
        "}\n"
    )
    entries = read_goal(tmp_path / "chain.goal")
    assert [e["size"] for e in entries] == ["4096B", "4096B", "0B"]
    assert entries[2] == {"id": 2, "src": 0, "dst": 0, "size": "0B", "delay": "5000ns", "cpu": 0, "after": [0]}
    r = run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "chain.goal"}}, tmp_path))
    assert r.flows.height == 2, "the compute task is not a row"
    ready, end = r.flows["ready_ps"].to_list(), r.flows["end_ps"].to_list()
    # rank 0 hears that its first send is done by the final ACK (64 B over two 1 us links at
    # 400 Gb/s), then computes 5 us
    ack = 2 * (1_000_000 + 1_280)
    assert ready[1] == end[0] + ack + 5_000_000


def test_operations_on_one_cpu_run_one_at_a_time_as_loggopsim_runs_them(tmp_path: Path):
    # LogGOPSim's probe: two independent 10 us calcs on rank 0's CPU 0, then a send that
    # requires the second. LogGOPSim runs the calcs back to back and sends at 20 us; on two
    # CPUs they overlap and the send leaves at 10 us
    def probe(second_cpu: int) -> int:
        (tmp_path / "probe.goal").write_text(
            "num_ranks 2\n"
            "rank 0 {\n"
            "a: calc 10000\n"
            f"b: calc 10000 cpu {second_cpu}\n"
            f"s: send 4096b to 1 cpu {second_cpu}\n"
            "s requires b\n"
            "}\n"
            "rank 1 {\n"
            "r: recv 4096b from 0\n"
            "}\n"
        )
        r = run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "probe.goal"}}, tmp_path))
        assert r.complete
        return int(r.flows["ready_ps"][0])

    assert probe(0) == 20_000_000
    assert probe(1) == 10_000_000
    # the ideal holds the CPU's entries one at a time (issue 61: it let them overlap, so both
    # ideals were 10 us and the send's flight): on one CPU at least both calcs, 20 us
    ideals = {}
    for cpu in (0, 1):
        probe(cpu)
        r = run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "probe.goal"}}, tmp_path))
        ideals[cpu] = int(r.jobs["ideal_jct_ps"][0])
        assert int(r.jobs["jct_ps"][0]) >= ideals[cpu]
    assert ideals[0] >= 20_000_000 > ideals[1], ideals
    # a message arriving while its receiver's CPU computes completes its recv when the CPU
    # frees: rank 1 computes 50 us from 0 and a send that requires the recv leaves after it
    (tmp_path / "absorb.goal").write_text(
        "num_ranks 3\n"
        "rank 0 {\n"
        "send 4096b to 1\n"
        "}\n"
        "rank 1 {\n"
        "c: calc 50000\n"
        "r: recv 4096b from 0\n"
        "s: send 4096b to 2\n"
        "s requires r\n"
        "}\n"
        "rank 2 {\n"
        "recv 4096b from 1\n"
        "}\n"
    )
    r = run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "absorb.goal"}}, tmp_path))
    ready, end = r.flows["ready_ps"].to_list(), r.flows["end_ps"].to_list()
    assert end[0] < 50_000_000 and ready[1] == 50_000_000


@pytest.mark.parametrize(
    "text, field, message",
    [
        ("num_ranks 2\nrank 0 {\nsend 8b to 1\n}\nrank 1 {\n}\n", "workload.file[line 3]", "send without a matching recv"),
        ("num_ranks 1\nrank 0 {\ncalc 5 cpu 65536\n}\n", "workload.file[line 3]", "allowed: 0 to 65535"),
        ("num_ranks 1000000000000\n", "workload.file[line 1]", "allowed: 1 to 16777216"),
        ("num_ranks 2\nrank 0 {\na: send 8b to 1\na requires b\n}\nrank 1 {\nrecv 8b from 0\n}\n", "workload.file[line 4]", "label b"),
        ("num_ranks 2\nrank 0 {\nsend 8b to 1 tag -1\n}\n", "workload.file[line 3]", "wildcard"),
        ("num_ranks 2\nrank 0 {\nsend 8b to 5\n}\n", "workload.file[line 3]", "0 to num_ranks - 1"),
        ("num_ranks 2\nrank 0 {\nsend 8b to 1\n", "workload.file", "closing } is missing"),
        ("num_ranks 1\nrank 0 {\na: calc 1\nb: calc 1\na requires b\nb requires a\n}\n", "workload.file[line", "cycle"),
        ("num_ranks 1\nrank 0 {\nput 8b to 1\n}\n", "workload.file[line 3]", "allowed: [label:] send"),
        ("rank 0 {\n}\n", "workload.file[line 1]", "num_ranks N first"),
    ],
)
def test_a_bad_schedule_is_refused_naming_the_line(tmp_path: Path, text: str, field: str, message: str):
    (tmp_path / "bad.goal").write_text(text)
    with pytest.raises(ScenarioError) as e:
        Scenario({"workload": {"kind": "flows", "file": "bad.goal"}}, tmp_path).validate()
    assert e.value.field.startswith(field) and message in str(e.value), str(e.value)


def test_the_shipped_schedule_is_the_writers(tmp_path: Path):
    write_ring_allreduce(tmp_path / "ring.goal", 8, 2 << 20)
    shipped = Path(__file__).parent.parent / "scenarios" / "goal_ring_allreduce_8.goal"
    assert shipped.read_text() == (tmp_path / "ring.goal").read_text()
