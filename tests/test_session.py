"""fabricsim.Session: messages sent into a running run, completions polled (docs/embedding.md)."""

from __future__ import annotations

import fabricsim
import pytest

FABRIC = {"seed": 1, "topology": {"hosts": 128, "radix": 16, "link_latency": "1us", "switch_latency": "0ns"}}


def drive_ring(session: fabricsim.Session, hosts: list[int], size: int) -> int:
    """A ring allreduce of ``size`` bytes over ``hosts`` driven step by step: each rank sends
    step s + 1 to the next the instant it has received step s. Returns the last completion."""
    n = len(hosts)
    for rank in range(n):
        session.send(hosts[rank], hosts[(rank + 1) % n], size // n, at=0, tag=(rank, 0))
    last = 0
    while session.run_until_completion() == "running":
        done = session.completions()
        if not done:
            break
        for c in done:
            rank, step = c.tag
            last = max(last, c.end_ps)
            nxt = (rank + 1) % n
            if step + 1 < 2 * (n - 1):
                session.send(hosts[nxt], hosts[(nxt + 1) % n], size // n, tag=(nxt, step + 1))
    return last


@pytest.mark.parametrize("threads", [1, 2])
def test_a_ring_allreduce_driven_step_by_step_gives_the_native_rings_jct_to_the_picosecond(threads: int) -> None:
    hosts = [0, 16, 32, 48, 64, 80, 96, 112]
    size = 2 << 20
    native = fabricsim.run(
        FABRIC
        | {
            "jobs": [
                {"costs": "none", "protocol": "simple", "collective": "allreduce", "algorithm": "ring", "size": f"{size}B", "hosts": hosts}
            ]
        }
    )
    jct = native.jobs["jct_ps"][0]
    s = fabricsim.Session(FABRIC | {"transport": {"connections": "per_pair"}}, threads=threads)
    assert s.threads == threads
    assert drive_ring(s, hosts, size) == jct
    r = s.results()
    assert len(r.flows) == 2 * 7 * 8 and r.flows["completed"].all()


@pytest.mark.parametrize("lb", ["ecmp", "ops", "prime"])
def test_messages_sent_while_it_runs_give_the_tables_of_the_same_messages_given_up_front(lb: str) -> None:
    # each message draws from its own stream: ops and prime, which draw when built and while
    # they send, give the closed run's tables too
    flows = [(0, 64, 512 << 10, 0), (1, 65, 256 << 10, 0), (1, 66, 64 << 10, 0), (2, 64, 256 << 10, 3_000_000), (64, 0, 1 << 20, 4_000_000)]
    fabric = FABRIC | {"lb": {"kind": lb}}
    up_front = fabric | {
        "workload": {"kind": "flows", "flows": [{"src": s, "dst": d, "size": f"{b}B", "start": f"{t}ps"} for s, d, b, t in flows]}
    }
    expected = fabricsim.run(up_front, threads=1).flows
    session = fabricsim.Session(fabric, threads=2)
    for src, dst, size, at in flows:
        session.run_until(max(at - 1, 0))
        session.send(src, dst, size, at=at)
    session.run_until(10**9)
    assert session.results().flows.equals(expected)


def test_a_lone_message_meets_its_ideal_fct_exactly_and_its_tag_comes_back() -> None:
    s = fabricsim.Session(FABRIC)
    assert s.run_until(2_000_000) == "running" and s.now == 2_000_000
    assert s.next_event_time() is None or s.next_event_time() > 2_000_000
    m = s.send(5, 77, 1 << 20, at=3_000_000, tag={"layer": 3})
    assert s.run_until_completion() == "running"
    (c,) = s.completions()
    flows = s.results().flows
    assert (c.id, c.tag, c.start_ps, c.end_ps) == (m, {"layer": 3}, 3_000_000, s.now)
    assert c.fct_ps == flows["ideal_fct_ps"][0] == flows["fct_ps"][0]
    assert s.completions() == []


def test_a_session_with_a_workload_runs_it_and_takes_more() -> None:
    s = fabricsim.Session(FABRIC | {"workload": {"kind": "flows", "flows": [{"src": 0, "dst": 9, "size": "64KiB"}]}})
    s.send(1, 10, 64 << 10)
    s.run_until(10**9)
    assert [c.id for c in s.completions()] == [0, 1]


def test_a_call_the_session_cannot_take_is_refused_naming_the_argument() -> None:
    s = fabricsim.Session(FABRIC)
    s.run_until(1000)
    for args, field in [((128, 1, 1), "src"), ((0, 0, 1), "dst"), ((0, 1, 0), "bytes")]:
        with pytest.raises(fabricsim.ScenarioError) as e:
            s.send(*args)
        assert e.value.field == field
    with pytest.raises(fabricsim.ScenarioError) as e:
        s.send(0, 1, 1, at=999)
    assert e.value.field == "at"
    with pytest.raises(fabricsim.ScenarioError) as e:
        s.run_until(10)
    assert e.value.field == "t"
    with pytest.raises(fabricsim.ArgumentError):
        s.send(0, 1, "1MiB")  # type: ignore[arg-type]
    with pytest.raises(fabricsim.ScenarioError):
        fabricsim.Session(FABRIC | {"topology": {"hosts": 0}})


def test_same_calls_give_the_same_results_on_any_thread_count() -> None:
    def calls(threads: int) -> list[tuple[int, int, int]]:
        s = fabricsim.Session(FABRIC | {"lb": {"kind": "ops"}}, threads=threads)
        for k in range(16):
            s.send(k, 127 - k, 256 << 10, at=k * 500_000)
        out = []
        while s.run_until_completion() == "running":
            done = s.completions()
            if not done:
                break
            for c in done:
                out.append((c.id, c.end_ps, c.fct_ps))
                if c.id < 40:
                    s.send(c.id % 64, 64 + (c.id * 7) % 64, 128 << 10, tag=c.id)
        return out

    assert calls(1) == calls(2)


def test_the_embedding_pages_example_prints_what_the_page_shows() -> None:
    # docs/embedding.md's example, run as written: its output is the page's "Real output" block
    import contextlib
    import io
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "embedding.md").read_text()
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    shown = page.split("Real output:\n\n```\n", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/embedding.md", "exec"), {})
    assert out.getvalue() == shown


def test_a_send_a_closed_run_would_stripe_is_refused_naming_src() -> None:
    s = fabricsim.Session({"topology": {"kind": "multi_plane", "hosts": 16, "radix": 8}})
    with pytest.raises(fabricsim.ScenarioError) as e:
        s.send(0, 9, 4096)
    assert e.value.field == "src" and "plane" in str(e.value)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_message_sent_with_after_is_released_as_the_same_flows_after(threads: int) -> None:
    """``send(..., after=[ids])`` waits as a flows list's ``after`` does: the receiver of 0
    goes on at once, its sender at the final ACK, a third host at the notice."""
    flows = [
        {"src": 0, "dst": 64, "size": "256KiB"},
        {"src": 64, "dst": 2, "size": "64KiB", "after": [0]},
        {"src": 0, "dst": 3, "size": "64KiB", "after": [0]},
        {"src": 5, "dst": 70, "size": "64KiB", "after": [0]},
    ]
    closed = fabricsim.run(FABRIC | {"workload": {"kind": "flows", "flows": flows}}, threads=threads).flows
    s = fabricsim.Session(FABRIC, threads=threads)
    first = s.send(0, 64, 256 << 10, at=0)
    ids = [s.send(f["src"], f["dst"], 64 << 10, at=0, after=[first], tag=i) for i, f in enumerate(flows[1:])]
    assert ids == [1, 2, 3]
    s.run_until(10**9)
    done = {c.id: c for c in s.completions()}
    assert [done[i].start_ps for i in ids] == closed["ready_ps"].to_list()[1:]
    assert [done[i].end_ps for i in ids] == closed["end_ps"].to_list()[1:]
    assert [done[i].tag for i in ids] == [0, 1, 2]


def test_after_names_a_message_the_session_has() -> None:
    s = fabricsim.Session(FABRIC)
    with pytest.raises(fabricsim.ScenarioError, match="after"):
        s.send(0, 1, 10, after=[0])
    with pytest.raises(fabricsim.ArgumentError, match="after"):
        s.send(0, 1, 10, after=["x"])  # type: ignore[list-item]
    with pytest.raises(fabricsim.ArgumentError, match="after"):
        s.send(0, 1, 10, after=3)  # type: ignore[arg-type]
