"""Chakra execution traces (``file = "x.et"`` for ``x.0.et``, ``x.1.et``, ...): read as messages,
compute tasks and collectives expanded by fabricsim's algorithms, with the writer the tests use
to make them (the protobuf wire format of Chakra's public schema, written by hand; no trace is
downloaded from elsewhere)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from fabricsim import Scenario, run
from fabricsim.errors import ScenarioError
from fabricsim.io.chakra import read_chakra

# NodeType and CollectiveCommType of Chakra's et_def.proto
METADATA, MEM_LOAD, COMP, SEND, RECV, COLL = 1, 2, 4, 5, 6, 7
ALL_REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, BARRIER = 0, 2, 5, 6, 9


def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1  # negative int32/int64 values take 10 bytes, as protobuf writes them
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _attr(name: str, value: Any) -> bytes:
    """An AttributeProto as Chakra's converters write it: comm_type and comm_size as int64_val,
    comm_src, comm_dst and comm_tag as int32_val, pg_name as string_val."""
    if isinstance(value, bool):
        return _field(1, name) + _field(27, int(value))
    if isinstance(value, str):
        return _field(1, name) + _field(29, value)
    return _field(1, name) + _field(7 if name in ("comm_src", "comm_dst", "comm_tag") else 9, value)


def node(id: int, type: int, deps: tuple[int, ...] = (), us: int = 0, name: str = "", **attrs: Any) -> bytes:
    """A Node message: its data dependencies packed, as protobuf writes a repeated uint64."""
    out = _field(1, id) + _field(2, name or f"node{id}") + _field(3, type)
    if deps:
        out += _field(5, b"".join(_varint(d) for d in deps))
    if us:
        out += _field(7, us)
    out += b"".join(_field(10, _attr(k, v)) for k, v in attrs.items())
    return out


def write_trace(prefix: Path, ranks: list[list[bytes]], compress: bool = False) -> None:
    """``prefix.R.et`` per rank: a GlobalMetadata, then its nodes, each length-delimited."""
    for r, nodes in enumerate(ranks):
        data = b"".join(_varint(len(m)) + m for m in [_field(1, "0.0.4"), *nodes])
        path = prefix.with_name(f"{prefix.name}.{r}.et")
        path.write_bytes(gzip.compress(data, mtime=0) if compress else data)


def write_training_step(prefix: Path, n: int, size: int) -> None:
    """A data-parallel step on ``n`` ranks: forward (20 us) and backward (40 us) compute, an
    allreduce of the gradients (``size`` bytes per rank) once backward is done, then the
    optimizer (5 us)."""
    step = [
        node(0, COMP, us=20, name="forward"),
        node(1, COMP, (0,), us=40, name="backward"),
        node(2, COLL, (1,), name="allreduce", comm_type=ALL_REDUCE, comm_size=size),
        node(3, COMP, (2,), us=5, name="optimizer"),
    ]
    write_trace(prefix, [step] * n)


FABRIC = {
    "seed": 1,
    "topology": {"hosts": 128, "radix": 16, "link_latency": "1us", "switch_latency": "0ns"},
    "transport": {"ack_every": 1024},
}


def flows(file: str, **more: Any) -> dict[str, Any]:
    return FABRIC | {"workload": {"kind": "flows", "file": file} | more}


@pytest.mark.parametrize("compress", [False, True])
def test_a_traced_allreduce_takes_the_native_ring_jobs_time(tmp_path: Path, compress: bool):
    # the collective node is expanded by fabricsim's ring: the same messages and times as the
    # native job, to the picosecond (plain and gzip files read alike)
    write_trace(tmp_path / "ar", [[node(7, COLL, comm_type=ALL_REDUCE, comm_size=2 << 20)]] * 8, compress)
    traced = run(Scenario(flows("ar.et"), tmp_path))
    native = run(
        Scenario(FABRIC | {"jobs": [{"costs": "none", "protocol": "simple", "collective": "allreduce", "size": "2MiB", "ranks": 8}]})
    )
    assert traced.complete and native.complete
    assert traced.flows.height == native.flows.height == 8 * 14
    assert traced.flows["end_ps"].max() == native.jobs["jct_ps"][0]
    assert sorted(traced.flows["fct_ps"].to_list()) == sorted(native.flows["fct_ps"].to_list())


def test_a_traced_broadcast_pipelines_its_chunks_as_the_native_job(tmp_path: Path):
    """Issue 61: a traced ring broadcast lost its pipelining: on a connection per message rank
    0 sent its 8 chunks at once, interleaved (132.0 us for 1 MiB on 8 ranks). A Chakra trace is
    NCCL's, so its messages take long-lived queue pairs as a job's do: the native job's time."""
    write_trace(tmp_path / "bc", [[node(0, COLL, comm_type=BROADCAST, comm_size=1 << 20)]] * 8)
    traced = run(Scenario(flows("bc.et"), tmp_path))
    native = run(
        Scenario(FABRIC | {"jobs": [{"costs": "none", "protocol": "simple", "collective": "broadcast", "size": "1MiB", "ranks": 8}]})
    )
    assert traced.scenario["transport"]["connections"] == "per_pair"
    assert traced.flows["end_ps"].max() == native.jobs["jct_ps"][0]
    # a connection per message, asked for, is kept
    own = run(Scenario(flows("bc.et") | {"transport": {"ack_every": 1024, "connections": "per_message"}}, tmp_path))
    assert own.scenario["transport"]["connections"] == "per_message" and own.flows["end_ps"].max() > native.jobs["jct_ps"][0]


def test_a_trace_whose_compute_costs_nothing_is_warned_of(tmp_path: Path):
    """Issue 61: a trace whose compute nodes carry no duration finished in 0 us without a word."""
    write_trace(tmp_path / "free", [[node(0, COMP, us=0, name="forward"), node(1, COMP, (0,), us=0, name="backward")]] * 2)
    s = Scenario(flows("free.et"), tmp_path)
    assert any("compute tasks all take no time" in w for w in s.warnings()), s.warnings()
    write_training_step(tmp_path / "step", 4, 1 << 20)
    assert not any("take no time" in w for w in Scenario(flows("step.et"), tmp_path).warnings())


def test_compute_nodes_are_delays_around_the_collective(tmp_path: Path):
    write_training_step(tmp_path / "step", 4, 1 << 20)
    entries = read_chakra(tmp_path / "step.et")
    r = run(Scenario(flows("step.et"), tmp_path))
    assert r.complete and r.flows.height == 4 * 6, "a 4-rank ring: 6 steps of 4 messages"
    ready = r.flows["ready_ps"].to_list()
    # a rank's first step waits for its backward pass: 20 + 40 us after the start
    assert sorted(ready)[:4] == [60_000_000] * 4
    # each rank's optimizer waits for its part of the allreduce: a compute task of 5 us
    optimizers = [e for e in entries if e.get("delay") == "5us"]
    assert len(optimizers) == 4 and all(len(e["after"]) == 1 for e in optimizers)


def test_a_ranks_compute_nodes_run_one_at_a_time_as_in_astra_sim(tmp_path: Path):
    # two independent 10 us GPU compute nodes, and a send after the second: ASTRA-sim's
    # HardwareResource runs one GPU compute node at a time, so the send leaves at 20 us; a CPU
    # node (is_cpu_op) runs beside them
    def send_after(second: dict[str, Any]) -> int:
        write_trace(
            tmp_path / "hw",
            [
                [node(0, COMP, us=10), node(1, COMP, us=10, **second), node(2, SEND, (1,), comm_dst=1, comm_size=4096)],
                [node(0, RECV, comm_src=0, comm_size=4096)],
            ],
        )
        r = run(Scenario(flows("hw.et"), tmp_path))
        assert r.complete
        return int(r.flows["ready_ps"][0])

    assert send_after({}) == 20_000_000
    assert send_after({"is_cpu_op": True}) == 10_000_000


def test_sends_and_receives_are_matched_messages(tmp_path: Path):
    write_trace(
        tmp_path / "p2p",
        [
            [node(0, COMP, us=10), node(1, SEND, (0,), comm_dst=1, comm_size=4096, comm_tag=3)],
            [node(5, RECV, comm_src=0, comm_size=4096, comm_tag=3), node(6, SEND, (5,), comm_dst=0, comm_size=8192)],
        ],
    )
    # rank 0 never receives rank 1's reply: refused; with the receive it runs
    with pytest.raises(ScenarioError, match="send without a matching receive"):
        read_chakra(tmp_path / "p2p.et")
    write_trace(
        tmp_path / "p2p",
        [
            [node(0, COMP, us=10), node(1, SEND, (0,), comm_dst=1, comm_size=4096, comm_tag=3), node(2, RECV, comm_src=1, comm_size=8192)],
            [node(5, RECV, comm_src=0, comm_size=4096, comm_tag=3), node(6, SEND, (5,), comm_dst=0, comm_size=8192)],
        ],
    )
    r = run(Scenario(flows("p2p.et"), tmp_path))
    assert r.complete and r.flows["bytes"].to_list() == [4096, 8192]
    ready, end = r.flows["ready_ps"].to_list(), r.flows["end_ps"].to_list()
    assert ready[0] == 10_000_000, "the send waits for the 10 us compute node"
    assert ready[1] == end[0], "rank 1 replies once it has received: it knows at once"


def test_process_groups_keep_collectives_apart(tmp_path: Path):
    ranks = [[node(0, COLL, comm_type=ALL_GATHER, comm_size=1 << 16, pg_name=str(r % 2))] for r in range(8)]
    write_trace(tmp_path / "pg", ranks)
    (tmp_path / "groups.json").write_text('{"0": [0, 2, 4, 6], "1": [1, 3, 5, 7]}')
    r = run(Scenario(flows("pg.et", comm_groups="groups.json", algorithm="ring"), tmp_path))
    assert r.complete and r.flows.height == 2 * 4 * 3
    assert all(s % 2 == d % 2 for s, d in zip(r.flows["src"], r.flows["dst"], strict=True)), "no message crosses groups"


@pytest.mark.parametrize("n", [4, 8, 16])
@pytest.mark.parametrize("comm", ["ALL_REDUCE", "REDUCE_SCATTER", "ALL_GATHER", "ALL_TO_ALL"])
def test_collectives_move_the_bytes_astra_sim_moves(tmp_path: Path, comm: str, n: int):
    # ASTRA-sim's ring (Ring.cc): an all-reduce of data_size D sends 2 (n-1) messages of D/n
    # per rank, a reduce-scatter (n-1) of D/n, an all-gather (n-1) of D (its size is each
    # rank's input: final_data_size = D n); its direct all-to-all (n-1) of D/n
    size = 1 << 20
    code = {"ALL_REDUCE": 0, "ALL_GATHER": 2, "ALL_TO_ALL": 6, "REDUCE_SCATTER": 7}[comm]
    write_trace(tmp_path / "m", [[node(0, COLL, comm_type=code, comm_size=size)] for _ in range(n)])
    r = run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "m.et"}}, tmp_path))
    per_rank = {"ALL_REDUCE": 2 * (n - 1) * size // n, "REDUCE_SCATTER": (n - 1) * size // n, "ALL_GATHER": (n - 1) * size}
    per_rank["ALL_TO_ALL"] = (n - 1) * size // n
    sent = r.flows.group_by("src").agg(pl.col("bytes").sum())["bytes"].to_list()
    assert r.complete and sent == [per_rank[comm]] * n, (comm, n, sent)


def test_a_compute_node_given_by_its_flops_takes_them_at_the_gpus_rate(tmp_path: Path):
    # ASTRA-sim's LLM generator writes compute nodes with num_ops and no duration_micros:
    # 2.5e12 FLOPs at 500 TFLOP/s take 5 ms, before rank 0's send
    ranks = [
        [node(0, COMP, num_ops=2_500_000_000_000), node(1, SEND, deps=(0,), comm_dst=1, comm_size=4096, comm_tag=0)],
        [node(0, RECV, comm_src=0, comm_size=4096, comm_tag=0)],
    ]
    write_trace(tmp_path / "ops", ranks)
    r = run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "ops.et", "gpu_tflops": 500}}, tmp_path))
    assert r.complete and r.flows["ready_ps"].to_list() == [5_000_000_000]
    # without a rate it is refused, naming the node: never 0 us without a word
    with pytest.raises(ScenarioError) as e:
        run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "ops.et"}}, tmp_path))
    assert e.value.field == "workload.file[rank 0, node 0]" and "workload.gpu_tflops" in str(e.value)
    # a time beyond the longest duration (100 000 s) is refused naming the node, not an
    # overflow or an entry of the converted list: 2.5e12 FLOPs at 1e-5 TFLOP/s take 250 000 s,
    # at 1e-300 an infinity
    for slow in (1e-5, 1e-300):
        with pytest.raises(ScenarioError) as e:
            run(Scenario(FABRIC | {"workload": {"kind": "flows", "file": "ops.et", "gpu_tflops": slow}}, tmp_path))
        assert e.value.field == "workload.file[rank 0, node 0]" and "at most 100000 s" in str(e.value), str(e.value)
    for bad in (0, -1, float("inf"), "fast", True):
        with pytest.raises(ScenarioError) as e:
            Scenario(FABRIC | {"workload": {"kind": "flows", "file": "ops.et", "gpu_tflops": bad}}, tmp_path).validate()
        assert e.value.field == "workload.gpu_tflops"


def test_tensor_size_is_timed_at_the_memory_bandwidth_as_astra_sims_roofline(tmp_path: Path):
    # 1e12 FLOPs at 500 TFLOP/s take 2 ms; moving 10 GB at 3.35 TB/s takes 2.985 ms: the
    # roofline takes the longer. Without a bandwidth, tensor_size is not timed
    ranks = [
        [
            node(0, COMP, num_ops=10**12, tensor_size=10 * 10**9),
            node(1, MEM_LOAD, tensor_size=335 * 10**7),
            node(2, SEND, deps=(0, 1), comm_dst=1, comm_size=4096, comm_tag=0),
        ],
        [node(0, RECV, comm_src=0, comm_size=4096, comm_tag=0)],
    ]
    write_trace(tmp_path / "roof", ranks)
    wl = {"kind": "flows", "file": "roof.et", "gpu_tflops": 500}
    r = run(Scenario(FABRIC | {"workload": wl | {"gpu_memory_tb_per_s": 3.35}}, tmp_path))
    assert r.complete and r.flows["ready_ps"].to_list() == [round(10 * 10**9 / 3.35)]
    r = run(Scenario(FABRIC | {"workload": wl}, tmp_path))
    assert r.flows["ready_ps"].to_list() == [2 * 10**9]
    for bad in (0, -1, float("nan"), "fast"):
        with pytest.raises(ScenarioError) as e:
            Scenario(FABRIC | {"workload": wl | {"gpu_memory_tb_per_s": bad}}, tmp_path).validate()
        assert e.value.field == "workload.gpu_memory_tb_per_s"


def test_a_group_of_one_rank_is_accepted_and_moves_nothing(tmp_path: Path):
    # ASTRA-sim's generators write a group per dimension, of one rank where a dimension has size 1
    ranks = [
        [
            node(0, COLL, comm_type=ALL_REDUCE, comm_size=1 << 16, pg_name=f"solo{r}"),
            node(1, COLL, comm_type=ALL_REDUCE, comm_size=1 << 16, deps=(0,)),
        ]
        for r in range(4)
    ]
    write_trace(tmp_path / "g", ranks)
    (tmp_path / "groups.json").write_text(json.dumps({f"solo{r}": [r] for r in range(4)}))
    r = run(Scenario(flows("g.et", comm_groups="groups.json"), tmp_path))
    assert r.complete and r.flows.height == 4 * 6, "only the 4-rank allreduce moves bytes: 6 ring steps of 4 messages"


def _bad(tmp_path: Path, ranks: list[list[bytes]]) -> None:
    write_trace(tmp_path / "bad", ranks)


@pytest.mark.parametrize(
    "ranks, field, message",
    [
        ([[node(1, COMP, (9,), us=1)]], "workload.file[rank 0, node 1]", "depends on node 9"),
        ([[node(1, COLL, comm_type=BARRIER, comm_size=0)]] * 2, "workload.file[rank 0, node 1]", "BARRIER is not supported"),
        (
            [[node(1, COLL, comm_type=ALL_REDUCE, comm_size=8)], [node(1, COLL, comm_type=ALL_REDUCE, comm_size=16)]],
            "[rank 1, node 1]",
            "comm_size 16",
        ),
        ([[node(1, COLL, comm_type=ALL_REDUCE, comm_size=8)], [node(0, METADATA)]], "workload.file[rank 1]", "issues 0 collectives"),
        (
            [[node(1, SEND, comm_dst=1, comm_size=8)], [node(2, RECV, comm_src=0, comm_size=9)]],
            "[rank 1, node 2]",
            "does not match its send's size",
        ),
        ([[node(1, SEND, comm_dst=0, comm_size=8)]], "[rank 0, node 1]", "another rank"),
        ([[node(1, SEND, comm_size=8)]], "[rank 0, node 1]", "comm_dst missing"),
        ([[node(1, 0)]], "[rank 0, node 1]", "INVALID_NODE"),
        ([[node(1, COMP, us=1), node(1, COMP, us=1)]], "[rank 0, node 1]", "twice"),
        (
            [
                [node(1, RECV, comm_src=1, comm_size=8), node(2, SEND, (1,), comm_dst=1, comm_size=8)],
                [node(1, RECV, comm_src=0, comm_size=8), node(2, SEND, (1,), comm_dst=0, comm_size=8)],
            ],
            "workload.file[rank",
            "cycle",
        ),
        ([[node(1, COLL, comm_type=ALL_TO_ALL, comm_size=8, pg_name="x")]], "[rank 0, node 1]", "not in workload.comm_groups"),
    ],
)
def test_a_bad_trace_is_refused_naming_the_rank_and_node(tmp_path: Path, ranks: list[list[bytes]], field: str, message: str):
    _bad(tmp_path, ranks)
    with pytest.raises(ScenarioError) as e:
        Scenario({"workload": {"kind": "flows", "file": "bad.et"}}, tmp_path).validate()
    assert field in e.value.field and message in str(e.value), str(e.value)


def test_files_that_are_not_traces_are_refused(tmp_path: Path):
    def refused(field: str, message: str, **more: Any) -> None:
        with pytest.raises(ScenarioError) as e:
            Scenario({"workload": {"kind": "flows", "file": "t.et"} | more}, tmp_path).validate()
        assert e.value.field == field and message in str(e.value), str(e.value)

    refused("workload.file", "found no t.0.et")
    (tmp_path / "t.0.et").write_bytes(b"\x05\x0a\x03")  # a 5-byte message in 2 bytes
    refused("workload.file[rank 0]", "past the end of the file")
    (tmp_path / "t.0.et").write_bytes(b"\x02\x0b\x00")  # wire type 3 (a group)
    refused("workload.file[rank 0]", "wire type 3")
    write_trace(tmp_path / "t", [[]])
    refused("workload.file[rank 0]", "holds no node")
    write_trace(tmp_path / "t", [[node(0, COLL, comm_type=ALL_REDUCE, comm_size=8)]] * 2)
    refused("workload.algorithm", "allowed: ring", algorithm="rings")
    (tmp_path / "g.json").write_text('{"a": [0, 5]}')
    refused("workload.comm_groups.a", "rank 5", comm_groups="g.json")
    with pytest.raises(ScenarioError) as e:
        Scenario(FABRIC | {"workload": {"kind": "flows", "flows": [{"src": 0, "dst": 1, "size": "1B"}], "algorithm": "ring"}}).validate()
    assert e.value.field == "workload.algorithm" and "Chakra" in str(e.value)


def test_the_shipped_trace_is_the_writers(tmp_path: Path):
    write_training_step(tmp_path / "step_8", 8, 8 << 20)
    shipped = Path(__file__).parent.parent / "scenarios" / "chakra"
    for r in range(8):
        assert (shipped / f"step_8.{r}.et").read_bytes() == (tmp_path / f"step_8.{r}.et").read_bytes()
    assert not (shipped / "step_8.8.et").exists()
