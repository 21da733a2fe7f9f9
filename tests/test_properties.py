"""Invariants over random scenarios (hypothesis): whatever the algorithm, transport, faults or
classes, every data packet is accounted for, completed flows received exactly their bytes,
nothing is faster than its ideal, no link is busier than 100 %, sampling changes nothing,
and a run is reproducible."""

from __future__ import annotations

import os
from typing import Any

import fabricsim
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

LBS = [r["name"] for r in fabricsim.registry() if r["category"] == "lb"]

faults = st.sampled_from(
    [
        [],
        [{"kind": "link_down", "link": "leaf0:up1", "start": "3us", "detection": "1us", "reconvergence": "5us"}],
        [{"kind": "link_down", "link": "spine1:down2", "start": "2us", "end": "9us"}],
        [{"kind": "degrade", "link": "leaf1:up0", "rate": "100Gbps"}],
        [{"kind": "random_loss", "link": "leaf2:up1", "probability": 0.02}],
        [{"kind": "delay", "link": "leaf0:up0", "extra": "2us"}],
        [
            {
                "kind": "flap",
                "link": "leaf3:up1",
                "down_for": "2us",
                "up_for": "3us",
                "end": "40us",
                "detection": "1us",
                "reconvergence": "1us",
            }
        ],
        [{"kind": "random_degrade", "links": "leaf_up", "fraction": 0.2, "rate": "200Gbps"}],
        [{"kind": "switch_down", "switch": "spine1", "start": "3us", "end": "12us", "detection": "1us", "reconvergence": "2us"}],
    ]
)


@st.composite
def scenarios(draw):
    hosts = 32
    lb = draw(st.sampled_from(LBS))
    transport = draw(st.sampled_from(["ooo", "gbn"]))
    s = {
        "seed": draw(st.integers(1, 1000)),
        "topology": {
            "hosts": hosts,
            "radix": 8,
            "link_latency": "1us",
            "switch_latency": draw(st.sampled_from(["0ns", "300ns"])),
            # equal rates, or uplinks slower than the host links (the ideal then uses them all)
            "tier_link_rates": draw(st.sampled_from([["400Gbps", "400Gbps"], ["400Gbps", "200Gbps"]])),
        },
        "switch": {
            "buffer": draw(st.sampled_from(["0.3bdp", "1bdp", {"shared": "4bdp", "alpha": 1.0}])),
            "ecn": {"kmin": "0.1bdp", "kmax": "0.25bdp"},
            "overflow": draw(st.sampled_from(["trim", "drop", "pfc"])),
            "routing": draw(st.sampled_from(["auto", "ecmp", "adaptive", "spray"])),
            "classes": 2,
            "scheduler": draw(st.sampled_from(["strict", "wrr"])),
        },
        "transport": {
            "kind": transport,
            "ack_every": draw(st.sampled_from([1, 4])),
            "ack_evs": draw(st.sampled_from(["trigger", "all"])),
            "rto": "20us",
            "loss_detection": "rto" if transport == "gbn" else draw(st.sampled_from(["rto", "path_id"])),
            "reorder_buffer": draw(st.sampled_from(["0B", "16KiB", "1MiB"])) if transport == "gbn" else "0B",
            "cc": draw(st.sampled_from(["dctcp", "nscc", "none", *(["dcqcn"] if transport == "gbn" else [])])),
        },
        "lb": {"kind": lb},
        "workload": draw(
            st.sampled_from(
                [
                    {"kind": "permutation", "size": "96KiB"},
                    {"kind": "incast", "senders": 6, "size": "64KiB", "class": 1},
                    {"kind": "tornado", "size": "40000B"},
                    {"kind": "trace", "cdf": "fb_hadoop", "load": 0.3, "duration": "20us"},
                ]
            )
        ),
        "faults": draw(faults),
        "stop": {"max_time": "20ms"},
    }
    if s["switch"]["overflow"] == "pfc" and s["switch"]["buffer"] == "0.3bdp":
        # a third of a BDP is less than a 1 us link's headroom: PFC's default xoff refuses it
        s["switch"]["buffer"] = "1bdp"
    if draw(st.booleans()):
        s["transport"]["rate_cap"] = "250Gbps"
    if transport == "ooo" and draw(st.booleans()):
        s["transport"]["reorder_limit"] = 4
    if draw(st.booleans()):
        # a job beside the workload: its messages follow the workload's in the flows table
        algorithm = draw(st.sampled_from(["ring", "halving_doubling", "tree"]))
        s["jobs"] = [{"collective": "allreduce", "algorithm": algorithm, "size": "64KiB", "ranks": 8, "placement": "spread"}]
        if s["transport"]["cc"] != "dcqcn" and lb != "mptcp":
            s["transport"]["connections"] = draw(st.sampled_from(["per_message", "per_pair"]))
    if draw(st.booleans()) and s["workload"]["kind"] != "trace":
        s["mixed"] = {"share": 0.25, "class": 1}
    if draw(st.booleans()):
        s["samples"] = {"every": draw(st.sampled_from(["50ns", "333ns", "2us"])), "ports": ["host*", "leaf0:*"]}
    return s


#: Cases per run: 80 in CI; `make fuzz` runs more (FABRICSIM_PROPERTY_EXAMPLES).
EXAMPLES = int(os.environ.get("FABRICSIM_PROPERTY_EXAMPLES", "80"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_invariants_hold_in_any_scenario(s):
    r = fabricsim.run(s)
    a = r.accounting
    assert a["data_sent"] == a["data_delivered"] + a["data_trimmed"] + a["data_dropped"] + a["data_in_flight"]
    assert a["data_trimmed"] == a["headers_delivered"] + a["headers_dropped"] + a["headers_in_flight"]
    done = r.flows.filter(r.flows["completed"])
    assert (done["delivered_bytes"] == done["bytes"]).all()
    assert r.summary["completed"] == done.height
    # a run is complete exactly when every flow completed; otherwise a guard stopped it and says so
    if r.summary["status"] == "complete":
        assert r.summary["stop_reason"] == "all flows completed" and done.height == r.flows.height
    else:
        assert r.summary["status"] == "incomplete" and done.height < r.flows.height
        assert r.summary["stop_reason"].startswith(("stop.max_", "no progress", "no events", "PFC deadlock")), r.summary["stop_reason"]
    # lossless: nothing trimmed, and nothing dropped but by a fault (the headroom holds what a
    # PAUSE leaves on the way; docs/model.md, "Lossless Ethernet")
    if s["switch"]["overflow"] == "pfc":
        assert r.summary["trims"] == 0
        if not s["faults"]:
            assert r.summary["drops"] == 0, r.summary
    # nothing beats its ideal, the best the idle fabric allows (docs/model.md); nor does a
    # job's iteration (docs/workloads.md, "The ideal is a bound")
    assert (done["fct_ps"] >= done["ideal_fct_ps"]).all()
    if "jobs" in s:
        iters = r.jobs.filter(r.jobs["jct_ps"].is_not_null())
        assert (iters["jct_ps"] >= iters["ideal_jct_ps"]).all()
    # no link is busier than all the time, in the whole run or in any sampled interval
    assert r.ports["utilization"].is_between(0.0, 1.0).all()
    if "samples" in s:
        assert r.samples["utilization"].is_between(0.0, 1.0).all()
        # sampling only reads: the same run without it has the same results
        plain = fabricsim.run({k: v for k, v in s.items() if k != "samples"})
        assert plain.flows.equals(r.flows) and plain.ports.equals(r.ports)
        assert plain.summary["sim_time_ns"] == r.summary["sim_time_ns"]
    # reproducible
    assert fabricsim.run(s).flows.equals(r.flows)


@st.composite
def jobs(draw: st.DrawFn) -> dict[str, Any]:
    """A job alone on a fabric: a collective (every algorithm that runs it) at a size, a
    placement and a rank count, or a small training layout; with or without a rate cap, and
    an ACK per packet, per 4 or only at a message's end."""
    s: dict[str, Any] = {
        "seed": draw(st.integers(1, 1000)),
        "topology": {"hosts": 32, "radix": 8, "link_latency": draw(st.sampled_from(["1us", "300ns"])), "switch_latency": "0ns"},
        "transport": {"ack_every": draw(st.sampled_from([1, 4, 1024]))},
        "lb": {"kind": draw(st.sampled_from(["ecmp", "ops", "prime"]))},
        "stop": {"max_time": "50ms"},
    }
    if draw(st.booleans()):
        s["transport"]["rate_cap"] = draw(st.sampled_from(["100Gbps", "250Gbps"]))
    if draw(st.integers(0, 5)) == 0:
        # a trace: a random DAG of messages and compute tasks, some on CPUs (a GOAL schedule's)
        n = draw(st.integers(2, 24))
        flows = []
        for i in range(n):
            src = draw(st.integers(0, 31))
            after = sorted(set(draw(st.lists(st.integers(0, i - 1), max_size=3)))) if i else []
            entry: dict[str, Any] = {"src": src, "after": after}
            if draw(st.integers(0, 3)) == 0:
                entry |= {"dst": src, "size": "0B", "delay": f"{draw(st.integers(0, 20))}us"}
            else:
                dst = draw(st.integers(0, 30))
                entry |= {"dst": dst + (dst >= src), "size": draw(st.sampled_from(["1KiB", "64KiB", "1MiB"]))}
            if draw(st.booleans()):
                entry["cpu"] = draw(st.integers(0, 1))
            flows.append(entry)
        if all(not f["after"] for f in flows):
            flows[-1]["after"] = [0]
        s["workload"] = {"kind": "flows", "flows": flows}
        return s
    if draw(st.integers(0, 4)) == 0:
        s["topology"] |= {"nics_per_server": 4, "rails": draw(st.booleans()), "scale_up_rate": "1600Gbps"}
        tp, pp = draw(st.sampled_from([(1, 2), (2, 2), (4, 1), (2, 1)]))
        model = {"layers": 2 * pp, "hidden": 256, "seq": 128, "vocab": 1000, "kv_heads": 1, "heads": 4}
        par = {"tp": tp, "pp": pp, "micro_batches": draw(st.integers(1, 3)), "gpu_tflops": 50}
        par |= {"distributed_optimizer": draw(st.booleans()), "sequence_parallel": draw(st.booleans())}
        s["jobs"] = [{"ranks": 16, "model": model, "parallel": par}]
        return s
    op = draw(st.sampled_from(["allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast"]))
    algorithms = {"alltoall": ["direct"], "allreduce": ["ring", "halving_doubling", "tree"], "broadcast": ["ring"]}
    algorithm = draw(st.sampled_from(algorithms.get(op, ["ring", "halving_doubling"])))
    ranks = draw(st.sampled_from([2, 4, 8, 16]) if algorithm == "halving_doubling" else st.integers(2, 16))
    job = {"collective": op, "algorithm": algorithm, "ranks": ranks, "iterations": draw(st.integers(1, 2))}
    job |= {
        "size": draw(st.sampled_from(["1KiB", "24KiB", "100KiB", "1MiB"])),
        "placement": draw(st.sampled_from(["packed", "spread", "random"])),
    }
    if op == "alltoall":
        job["max_connections"] = draw(st.integers(1, ranks - 1))
    # NCCL's channels and slices, and its tuner's choice
    if draw(st.booleans()):
        job["channels"] = draw(st.integers(1, 3))
    if algorithm == "ring" and op != "broadcast" and draw(st.booleans()):
        job["slice"] = draw(st.sampled_from(["1KiB", "16KiB", "64KiB"]))
    if op == "allreduce" and draw(st.integers(0, 3)) == 0:
        job["algorithm"] = "auto"
    s["jobs"] = [job]
    return s


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs())
def test_no_iteration_or_message_beats_its_ideal(s):
    r = fabricsim.run(s)
    assert r.complete
    assert (r.flows["fct_ps"] >= r.flows["ideal_fct_ps"]).all()
    assert (r.jobs["jct_ps"] >= r.jobs["ideal_jct_ps"]).all(), r.jobs.select("jct_ps", "ideal_jct_ps")
    # and no step, nor a trace's rank, ends before its ideal end
    assert (r.steps["end_ps"] >= r.steps["ideal_end_ps"]).all(), r.steps.select("end_ps", "ideal_end_ps")
