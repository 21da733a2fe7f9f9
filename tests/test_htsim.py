"""htsim's traffic: its permutation generator, pair for pair, and its connection-matrix files."""

from __future__ import annotations

from pathlib import Path

import pytest
from fabricsim import Scenario, run
from fabricsim.errors import ScenarioError
from fabricsim.io.htsim import permutation, read_connection_matrix, write_connection_matrix
from fabricsim.reproduce.experiment import _folder


def test_permutation_is_a_derangement_and_repeats_by_seed():
    pairs = permutation(1024, 13)
    assert sorted(s for s, _ in pairs) == list(range(1024))
    assert sorted(d for _, d in pairs) == list(range(1024))
    assert all(s != d for s, d in pairs)
    assert pairs == permutation(1024, 13)
    assert pairs != permutation(1024, 14)


def test_the_shipped_matrix_is_the_generators():
    flows = read_connection_matrix(_folder() / "data" / "htsim_perm_1024_seed13.cm")
    assert [(f["src"], f["dst"]) for f in flows] == permutation(1024, 13)
    assert {f["size"] for f in flows} == {"8388608B"} and {f["start"] for f in flows} == {"0ps"}
    assert [f["id"] for f in flows] == list(range(1, 1025))


def test_a_matrix_runs_as_the_same_flows_given_inline(tmp_path: Path):
    write_connection_matrix(tmp_path / "perm.cm", 16, permutation(16, 3), 65536, start_ps=2_500_000)
    base = {"seed": 1, "topology": {"hosts": 16, "radix": 8}, "lb": {"kind": "ops"}}
    from_file = run(Scenario(base | {"workload": {"kind": "flows", "file": "perm.cm"}}, tmp_path)).flows
    inline = [{"id": i + 1, "src": s, "dst": d, "size": "64KiB", "start": "2.5us"} for i, (s, d) in enumerate(permutation(16, 3))]
    given = run(Scenario(base | {"workload": {"kind": "flows", "flows": inline}})).flows
    assert from_file["fct_ps"].to_list() == given["fct_ps"].to_list()
    assert from_file["start_ps"].min() == 2_500_000
    # the same file named .tm, as the reference simulator's own scripts name it (it was read as CSV)
    (tmp_path / "perm.tm").write_text((tmp_path / "perm.cm").read_text())
    as_tm = run(Scenario(base | {"workload": {"kind": "flows", "file": "perm.tm"}}, tmp_path)).flows
    assert as_tm["fct_ps"].to_list() == given["fct_ps"].to_list()


# two connections, the second started by trigger 1, which the first's receipt activates
_TWO = "Nodes 4\nTriggers 1\nConnections 2\n0->1 start 0 size 65536 recv_done_trigger 1\n1->2 size 65536 trigger 1\n"


def test_triggers_and_messages_are_read_as_htsim_reads_them(tmp_path: Path):
    base = {"seed": 1, "topology": {"hosts": 128, "radix": 16, "link_latency": "1us", "switch_latency": "0ns"}}
    (tmp_path / "chain.cm").write_text(_TWO + "trigger id 1 oneshot\n")
    assert read_connection_matrix(tmp_path / "chain.cm")[1] == {"src": 1, "dst": 2, "size": "65536B", "start": "0ps", "after": [0]}
    r = run(Scenario(base | {"workload": {"kind": "flows", "file": "chain.cm"}}, tmp_path))
    # host 1 received the first: its trigger fires the second at once
    assert r.flows["ready_ps"][1] == r.flows["end_ps"][0]
    # a barrier fires once every connection activating it was received
    (tmp_path / "barrier.cm").write_text(
        "Nodes 4\nTriggers 1\nConnections 3\n0->1 start 0 size 100 recv_done_trigger 7\n2->1 start 0 size 100 recv_done_trigger 7\n"
        "1->3 size 100 trigger 7\ntrigger id 7 barrier count 2\n"
    )
    assert read_connection_matrix(tmp_path / "barrier.cm")[2]["after"] == [0, 1]
    # `msg` (with or without its number): a file for htsim's -conn_reuse, whose starts are whole
    # microseconds; the connections' ids name htsim's connections, not fabricsim's entries
    (tmp_path / "reuse.cm").write_text("Nodes 4\nConnections 2\n0->1 id 1 msg 1 start 5 size 100\n0->1 id 1 msg start 7.9 size 100\n")
    assert read_connection_matrix(tmp_path / "reuse.cm") == [
        {"src": 0, "dst": 1, "size": "100B", "start": "5000000ps"},
        {"src": 0, "dst": 1, "size": "100B", "start": "7000000ps"},
    ]


@pytest.mark.parametrize(
    "text, field, message",
    [
        ("Nodes 4\nConnections 1\n0->1 id 1 size 100 trigger 3\n", "workload.file[line 3]", "trigger 3 is not declared"),
        ("Nodes 4\nConnections 1\n0->1 start 0 size 100 prio 2\n", "workload.file[line 3].prio", "sender priority"),
        (
            "Nodes 4\nConnections 1\n0->1 id 1 msg start 0 size 100 send_done_trigger 2\n",
            "workload.file[line 3].send_done_trigger",
            "SentLast",
        ),
        ("Nodes 4\nConnections 1\n0->1 start 0 size 100 rate 2\n", "workload.file[line 3].rate", "allowed: id, msg, start"),
        (f"{_TWO}trigger id 1 multishot\n", "workload.file[line 6]", "multishot"),
        (f"{_TWO}trigger id 1 barrier count 2\n", "workload.file[line 6]", "1 connection(s) activate it"),
        ("Nodes 4\nTriggers 1\nConnections 1\n0->1 size 1 start 0 trigger 1\ntrigger id 1 oneshot\n", "workload.file[line 4]", "both"),
        ("Nodes 4\nConnections 2\n0->1 start 0 size 100\n", "workload.file", "declares Connections 2 but lists 1"),
        ("Nodes 4\nConnections 1\n0->9 start 0 size 100\n", "workload.file[line 3].dst", "below Nodes 4"),
        ("Nodes 4\nConnections 1\n0->1 start 0\n", "workload.file[line 3]", "no size"),
        ("Nodes 4\nConnections 1\n0->1 start -5 size 100\n", "workload.file[line 3].start", "picoseconds >= 0"),
        ("Nodes 4\nConnections 1\n0->1 start 0 size 1e3\n", "workload.file[line 3].size", "a whole number"),
        ("Nodes 4\nTriggers 1\nConnections 1\n0->1 start 0 size 100\n", "workload.file", "declares Triggers 1 but lists 0"),
        ("Nodes 4\nConnections 1\nflow 0 1\n", "workload.file[line 3]", "allowed: Nodes, Connections"),
        ("# nothing\n", "workload.file", "lists no connections"),
    ],
)
def test_a_bad_matrix_is_refused_naming_the_line(tmp_path: Path, text: str, field: str, message: str):
    (tmp_path / "bad.cm").write_text(text)
    with pytest.raises(ScenarioError) as e:
        Scenario({"workload": {"kind": "flows", "file": "bad.cm"}}, tmp_path).validate()
    assert e.value.field == field and message in str(e.value)


def test_an_experiment_reads_its_files_from_its_own_folder(tmp_path: Path):
    from fabricsim.reproduce import load

    write_connection_matrix(tmp_path / "perm.cm", 16, permutation(16, 5), 4096)
    (tmp_path / "mine.toml").write_text(
        'name = "mine"\nsource = "arcane"\n[sweep]\nseeds = [1, 2]\n[sweep.base]\n'
        'topology = { hosts = 16, radix = 8 }\nworkload = { kind = "flows", file = "perm.cm" }\n'
        '[[claims]]\nkind = "own"\nclaim = "c"\nmetric = "max_slowdown"\nexpect = "above"\nbaseline = 0.5\n'
    )
    spec = load(tmp_path / "mine.toml").spec()
    assert spec is not None
    spec.validate()


def test_send_done_triggers_run_the_references_serial_alltoall_as_htsim_does(tmp_path: Path):
    """Issue 61: every trigger matrix of the reference's (gen_serial_alltoall.py) uses
    send_done_trigger, which was refused. htsim's UecSrc fires it once the source holds every
    ACK: the next connection from that source starts then, its final ACK's flight after the
    receipt."""
    lines = ["Nodes 4", "Connections 3", "Triggers 2"]
    lines += ["0->1 id 1 start 0 size 100000 send_done_trigger 1", "0->2 id 2 trigger 1 size 100000 send_done_trigger 2"]
    lines += ["0->3 id 3 trigger 2 size 100000", "trigger id 1 oneshot", "trigger id 2 oneshot"]
    (tmp_path / "serial.cm").write_text("\n".join(lines) + "\n")
    entries = read_connection_matrix(tmp_path / "serial.cm")
    assert [e.get("after") for e in entries] == [None, [0], [1]]
    r = run(Scenario({"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "flows", "file": "serial.cm"}}, tmp_path))
    ready, end = r.flows["ready_ps"].to_list(), r.flows["end_ps"].to_list()
    # the receipt, then the final ACK back to the source: one flight under one leaf, the same
    # for both (hosts 0-3 share a leaf)
    assert ready[1] > end[0] and ready[1] - end[0] == ready[2] - end[1]


def test_a_conn_reuse_matrix_sends_a_connections_messages_through_it(tmp_path: Path):
    """Issue 61: a file for htsim's -conn_reuse ran a connection per line, where htsim sends
    the messages of one connection id through it in turn: per_pair connections are that."""
    lines = ["Nodes 4", "Connections 3", "0->1 id 1 msg 1 start 0 size 200000", "0->1 id 1 msg 2 start 0 size 200000"]
    (tmp_path / "reuse.cm").write_text("\n".join([*lines, "2->3 id 2 msg 1 start 0 size 100000"]) + "\n")
    r = run(Scenario({"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "flows", "file": "reuse.cm"}}, tmp_path))
    assert r.scenario["transport"]["connections"] == "per_pair"
    # the second message of connection 1 goes after the first (on one connection in turn), not
    # beside it: it sends its first packet once the first has sent its last
    first = r.flows["first_send_ps"].to_list()
    assert first[1] > first[0] and r.complete
    # two ids between the same hosts would be one connection here: refused by line
    (tmp_path / "two.cm").write_text("Nodes 4\nConnections 2\n0->1 id 1 msg 1 start 0 size 100\n0->1 id 2 msg 1 start 0 size 100\n")
    with pytest.raises(ScenarioError) as e:
        Scenario({"workload": {"kind": "flows", "file": "two.cm"}}, tmp_path).validate()
    assert e.value.field == "workload.file[line 4].id" and "one connection id a pair" in str(e.value)
