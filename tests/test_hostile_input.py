"""Input a user can type that is not a scenario: refused with exit 2 and the field named,
before anything runs; never an internal error (exit 1)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import fabricsim
import polars as pl
import pytest
from fabricsim.cli import app
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

runner = CliRunner()
SMALL = ["--set", "topology.hosts=16", "--set", "topology.radix=8", "--set", "workload.size=64KiB", "-q"]


def run(*args: str):
    return runner.invoke(app, ["run", *args])


CASES = {
    # file contents -> text the error must contain (the field, and what was wrong)
    "datetime": (b"seed = 1979-05-27T07:32:00Z\n", "seed: got the TOML date/time"),
    "nested": (("x = " + "[" * 600 + "]" * 600 + "\n").encode(), "nested too deeply"),
    "binary": (b"seed = 1\n\xff\xfe\n", "not UTF-8"),
    "empty": (b"", "empty scenario"),
    "comments only": (b"# nothing here\n", "empty scenario"),
    "nan": (b"seed = nan\n", "seed: got nan; allowed: a finite number"),
    "inf": (b'[lb]\nkind = "ops"\nevs_size = inf\n', "lb.evs_size: got inf"),
    "deep table": (b"[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r]\nx = 1\n", "nested more than 16 levels"),
    "5001 digits": (b"seed = " + b"9" * 5001 + b"\n", "allowed: at most 4300 digits"),
    "routing": (b'[switch]\nrouting = "magic"\n', 'switch.routing: unknown "magic"; allowed: ecmp'),
    "zero rate": (b'[topology]\nlink_rate = "0Gbps"\n', "topology.link_rate"),
    "missing field": (b'[workload]\nkind = "incast"\n', "workload.senders: missing"),
    "huge duration": (b'[transport]\nrto = "18446744s"\n', "transport.rto: got 18446744s; allowed: at most 100000s"),
    "table as array": (b'topology = ["fat_tree", 2, 16, 8]\n', "topology: got an array; allowed: a table"),
    "no-break space": ('[topology]\nlink_rate = "400\u00a0Gbps"\n'.encode(), "topology.link_rate"),
}


@pytest.mark.parametrize("name", CASES)
def test_a_bad_file_is_refused_with_its_field(tmp_path: Path, name: str):
    content, expected = CASES[name]
    path = tmp_path / "s.toml"
    path.write_bytes(content)
    r = run(str(path), "-q")
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert expected in " ".join(r.output.split()), r.output


def test_a_directory_is_not_a_scenario(tmp_path: Path):
    r = run(str(tmp_path), "-q")
    assert r.exit_code == 2 and "is a directory" in r.output, r.output


def test_a_set_value_is_one_value(demo_path: Path):
    r = run(str(demo_path), "--set", "seed=1\nfoo = 2", "-q")
    assert r.exit_code == 2 and "--set" in r.output and "one value" in r.output, r.output


def test_an_empty_csv_cell_names_its_row_and_column(tmp_path: Path):
    (tmp_path / "flows.csv").write_text("src,dst,size\n0,9,1MiB\n1,10,\n")
    (tmp_path / "s.toml").write_text('[topology]\nhosts = 16\nradix = 8\n[workload]\nkind = "flows"\nfile = "flows.csv"\n')
    r = run(str(tmp_path / "s.toml"), "-q")
    assert r.exit_code == 2 and "workload.file[1].size" in r.output, r.output


@pytest.mark.parametrize("out", ["/proc/fabricsim-x", "/dev/null/x"])
def test_an_unwritable_out_is_refused_before_the_run(demo_path: Path, out: str):
    # 8 MiB x 128 hosts would take seconds: the refusal comes first
    r = run(str(demo_path), "--out", out, "-q")
    assert r.exit_code == 2 and "--out" in r.output and "cannot write" in r.output, r.output


def test_out_into_a_used_directory_leaves_nothing_of_the_earlier_run(demo_path: Path, tmp_path: Path):
    with_samples = [*SMALL, "--set", "samples.every=5us"]
    assert run(str(demo_path), *with_samples, "--out", str(tmp_path)).exit_code == 0
    assert (tmp_path / "samples.parquet").exists()
    assert run(str(demo_path), *SMALL, "--set", "seed=2", "--out", str(tmp_path)).exit_code == 0
    assert not (tmp_path / "samples.parquet").exists(), "a stale samples table from the first run"
    assert pl.read_parquet(tmp_path / "flows.parquet").height == 16


FLOW_FILES = {
    # a flows file the scenario names -> text the error must contain
    "flows.json": ("[" * 3000 + "]" * 3000, "nested too deeply"),
    "big.json": ('[{"src": ' + "9" * 5001 + ', "dst": 1, "size": "1KiB"}]', "4300 digits"),
    "superscript.cm": ("Nodes 16\nConnections 1\n0->1 id \u00b2 start 0 size 1000\n", "workload.file[line 3].id: got '\u00b2'"),
    "header.cm": ("Nodes 1\u00b2\nConnections 1\n0->1 start 0 size 1000\n", "workload.file[line 1].Nodes"),
}


@pytest.mark.parametrize("name", FLOW_FILES)
def test_a_bad_flows_file_is_refused_not_an_internal_error(tmp_path: Path, name: str):
    # these raised RecursionError or ValueError out of the readers: exit 1
    content, expected = FLOW_FILES[name]
    (tmp_path / name).write_text(content, encoding="utf-8")
    (tmp_path / "s.toml").write_text(f'[topology]\nhosts = 16\nradix = 8\n[workload]\nkind = "flows"\nfile = "{name}"\n')
    r = run(str(tmp_path / "s.toml"), "-q")
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert expected in " ".join(r.output.split()), r.output


def test_a_set_value_nested_too_deeply_is_refused(demo_path: Path):
    r = run(str(demo_path), "--set", "seed=" + "[" * 3000, "-q")
    assert r.exit_code == 2 and "--set" in r.output and "nested too deeply" in r.output, r.output


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b"base = 1\n\xff\n", "not UTF-8"), (("x = " + "{a = " * 2000 + "1" + "}" * 2000 + "\n").encode(), "nested too deeply")],
)
def test_sweep_and_experiment_files_share_the_scenarios_error_policy(tmp_path: Path, content: bytes, expected: str):
    from fabricsim import reproduce
    from fabricsim.errors import ScenarioError
    from fabricsim.sweep import Sweep

    (tmp_path / "x.toml").write_bytes(content)
    r = runner.invoke(app, ["sweep", str(tmp_path / "x.toml"), "-o", str(tmp_path / "out"), "-q"])
    assert r.exit_code == 2 and expected in " ".join(r.output.split()), r.output
    for load in (Sweep.load, reproduce.load):
        with pytest.raises(ScenarioError, match=expected):
            load(tmp_path / "x.toml")


def test_a_flows_file_and_a_different_flows_list_are_refused(tmp_path: Path):
    (tmp_path / "f.csv").write_text("src,dst,size\n0,1,1KiB\n")
    base = '[topology]\nhosts = 16\nradix = 8\n[workload]\nkind = "flows"\nfile = "f.csv"\n'
    (tmp_path / "differ.toml").write_text(base + 'flows = [{src = 0, dst = 2, size = "1KiB"}]\n')
    r = run(str(tmp_path / "differ.toml"), "-q")
    assert r.exit_code == 2 and "workload.file" in r.output and "differs" in r.output, r.output
    # a scenario as run keeps the file beside the flows it read: the two agree, and it runs again
    (tmp_path / "same.toml").write_text(base + 'flows = [{src = 0, dst = 1, size = "1KiB", start = "0ps", class = 0}]\n')
    r = run(str(tmp_path / "same.toml"), "-q")
    assert r.exit_code == 0, r.output


def test_the_importers_and_scenario_edits_raise_the_packages_errors(tmp_path: Path):
    # the Python calls of issue 50's hostile list that raised builtins: each now a
    # FabricsimError naming what was wrong (an ArgumentError is also a TypeError)
    from fabricsim import Scenario
    from fabricsim.errors import ArgumentError, ScenarioError
    from fabricsim.io.chakra import read_chakra
    from fabricsim.io.goal import read_goal
    from fabricsim.io.htsim import permutation, read_connection_matrix

    for call, kind, words in [
        (lambda: read_goal(None), ArgumentError, "a GOAL file's path"),  # type: ignore[arg-type]
        (lambda: read_chakra(5), ArgumentError, "a Chakra trace's path"),  # type: ignore[arg-type]
        (lambda: read_connection_matrix(None), ArgumentError, "connection matrix's path"),  # type: ignore[arg-type]
        (lambda: Scenario({}).set(5, 1), ArgumentError, "dotted field path"),  # type: ignore[arg-type]
        (lambda: Scenario.load("a\x00b.toml"), ScenarioError, "NUL"),
        (lambda: permutation(10**12, 1), ScenarioError, "2 to 16777216"),
    ]:
        with pytest.raises(kind, match=words):
            call()
    # a GOAL size in other scripts' digits is refused, not read as 10
    (tmp_path / "u.goal").write_text("num_ranks 2\nrank 0 {\nsend \u0661\u0660b to 1\n}\nrank 1 {\nrecv 10b from 0\n}\n")
    with pytest.raises(ScenarioError, match=r"line 3"):
        read_goal(tmp_path / "u.goal")


def test_inputs_that_would_take_the_machine_are_refused_before_they_are_read(tmp_path: Path):
    import gzip
    import os

    from fabricsim import Scenario
    from fabricsim.errors import ScenarioError
    from fabricsim.io.files import read_input

    # a device never ends, a FIFO blocks the read forever: both refused as not files
    with pytest.raises(ScenarioError, match="a device"):
        Scenario.load("/dev/zero")
    os.mkfifo(tmp_path / "pipe.csv")
    for name in ("pipe.csv",):
        with pytest.raises(ScenarioError, match="a FIFO"):
            Scenario({"workload": {"kind": "flows", "file": name}}, tmp_path).validate()
    (tmp_path / "zero.goal").symlink_to("/dev/zero")
    with pytest.raises(ScenarioError, match="a device"):
        Scenario({"workload": {"kind": "flows", "file": "zero.goal"}}, tmp_path).validate()
    # a small gzip that inflates beyond the limit, and a file over it
    (tmp_path / "bomb.gz").write_bytes(gzip.compress(bytes(2 << 20)))
    with pytest.raises(ScenarioError, match="inflates to more than 1,048,576 bytes"):
        read_input(tmp_path / "bomb.gz", "workload.file", "a test file", limit=1 << 20, gzip=True)
    assert len(read_input(tmp_path / "bomb.gz", "workload.file", "a test file", limit=4 << 20, gzip=True)) == 2 << 20
    with pytest.raises(ScenarioError, match="allowed: at most 1,000 for a test file"):
        read_input(tmp_path / "bomb.gz", "workload.file", "a test file", limit=1000)
    # a Chakra rank file of zero bytes (a gzip of them is tiny) is refused at its first empty
    # message, not parsed into an object per byte
    from fabricsim.io.chakra import read_chakra

    (tmp_path / "z.0.et").write_bytes(gzip.compress(b"\x02\x08\x01" + bytes(8 << 20)))
    with pytest.raises(ScenarioError, match="an empty message at byte 3"):
        read_chakra(tmp_path / "z.et")
    # two gzip members, one after the other, are one file
    (tmp_path / "two.gz").write_bytes(gzip.compress(b"ab") + gzip.compress(b"cd"))
    assert read_input(tmp_path / "two.gz", "workload.file", "a test file", gzip=True) == b"abcd"


def test_a_set_number_of_thousands_of_digits_is_refused(demo_path: Path):
    r = run(str(demo_path), "--set", "workload.size=" + "9" * 5001, "-q")
    assert r.exit_code == 2 and "at most 4300 digits" in r.output


# Python values that are no TOML/JSON value, keys that are no strings, and junk of every kind,
# given to the public API (issue 50 item 3): only the package's own errors come out.
_JUNK = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        st.binary(max_size=8),
        st.decimals(allow_nan=False),
        st.sets(st.integers(), max_size=3),
        st.builds(object),
        st.complex_numbers(),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(), st.tuples(st.integers())), inner, max_size=3),
    ),
    max_leaves=6,
)
_FIELDS = ["seed", "workload.size", "workload.file", "workload", "topology.hosts", "topology.file", "lb.kind", "jobs", "faults", "stop"]


@settings(max_examples=int(os.environ.get("FABRICSIM_FUZZ_EXAMPLES", "60")), deadline=None)
@given(field=st.sampled_from(_FIELDS), value=_JUNK)
def test_hostile_python_values_raise_only_the_packages_errors(field, value):
    from fabricsim.errors import FabricsimError
    from fabricsim.io.chakra import read_chakra
    from fabricsim.io.goal import read_goal
    from fabricsim.results import Results

    base = fabricsim.Scenario({"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}})
    calls = [
        lambda: base.set(field, value).validate(),
        lambda: fabricsim.Scenario({field.split(".")[0]: value}).validate(),
        lambda: fabricsim.Scenario(value),
        lambda: fabricsim.load(value),
        lambda: Results.read(value),
        lambda: read_goal(value),
        lambda: read_chakra(value),
    ]
    for call in calls:
        with contextlib.suppress(FabricsimError):
            call()


def test_a_message_the_core_refuses_is_named_by_its_row_in_the_file(tmp_path: Path):
    # the core names workload.flows[1]; a list read from a file is named by the file's row
    (tmp_path / "f.csv").write_text("src,dst,size\n0,1,1MiB\n1,2,banana\n")
    (tmp_path / "f.json").write_text('[{"src": 0, "dst": 1, "size": "1MiB"}, {"src": 1, "dst": 2, "size": "x"}]')
    for name, where in (("f.csv", "in row 2 of"), ("f.json", "in entry 1 of")):
        s = fabricsim.Scenario({"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "flows", "file": name}}, base_dir=tmp_path)
        for call in (s.validate, s.filled, lambda s=s: fabricsim.run(s)):
            with pytest.raises(fabricsim.ScenarioError) as e:
                call()
            assert e.value.field == "workload.file[1].size" and where in str(e.value) and name in str(e.value), str(e.value)


def test_a_file_that_would_take_more_memory_to_read_than_the_run_may_have_is_refused(tmp_path: Path):
    """Files are read up to stop.max_memory / 64 (issue 50 item 2): parsed, a byte of a flows
    file takes tens of bytes; the refusal names the file, the limit and why."""
    rows = "\n".join(f"{i % 16},{(i + 1) % 16},4KiB" for i in range(40_000))
    (tmp_path / "f.csv").write_text("src,dst,size\n" + rows + "\n")  # about 0.5 MB
    base = {"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "flows", "file": "f.csv"}}
    small = fabricsim.Scenario(base | {"stop": {"max_memory": "16MiB"}}, base_dir=tmp_path)
    with pytest.raises(fabricsim.ScenarioError) as e:
        small.validate()
    assert e.value.field == "workload.file" and "stop.max_memory" in str(e.value) and "262,144" in str(e.value), str(e.value)
    fabricsim.Scenario(base | {"stop": {"max_memory": "1GiB"}}, base_dir=tmp_path).validate()
