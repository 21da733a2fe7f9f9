"""One exception hierarchy (fabricsim.errors) for the core and the Python layer, each kind also
the builtin a caller expects, and the CLI's exit codes taken from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fabricsim
import pytest
import typer
from fabricsim import ArgumentError, FabricsimError, InternalError, MissingDependency, ScenarioError, SpecError, _core
from fabricsim.cli.common import _guard

SMALL = {"topology": {"hosts": 16, "radix": 8}}


def test_the_core_raises_the_packages_scenario_error():
    with pytest.raises(ScenarioError) as e:
        _core.validate('{"topology": {"hosts": 3}}')
    assert type(e.value) is ScenarioError and isinstance(e.value, FabricsimError) and isinstance(e.value, ValueError)
    assert e.value.field == "topology.hosts" and "got 3" in e.value.message
    assert str(e.value).startswith("topology.hosts: ")


def test_a_spent_simulation_raises_an_internal_error():
    sim = _core.Simulation(fabricsim.Scenario(SMALL).to_json(), 1)
    sim.step(1 << 40)
    sim.results()
    with pytest.raises(InternalError, match="results were taken"):
        sim.results()
    with pytest.raises(RuntimeError):  # as before the hierarchy
        sim.results()


@pytest.mark.parametrize(
    "call, kind, name",
    [
        (lambda: fabricsim.run(5), ArgumentError, "scenario"),
        (lambda: fabricsim.run([SMALL]), ArgumentError, "scenario"),
        (lambda: fabricsim.run(SMALL, progress=3), ArgumentError, "progress"),
        (lambda: fabricsim.run(SMALL, threads="x"), ScenarioError, "threads"),
        (lambda: fabricsim.Scenario("x.toml"), ArgumentError, "data"),
        (lambda: fabricsim.Scenario(SMALL, base_dir=3), ArgumentError, "base_dir"),
        (lambda: fabricsim.load(None), ArgumentError, "path"),
        (lambda: fabricsim.Scenario.load(3.5), ArgumentError, "path"),
        (lambda: fabricsim.run({"topology": {"hosts": 3}}), ScenarioError, "topology.hosts"),
    ],
)
def test_hostile_api_calls_raise_the_documented_kind(call: Any, kind: type[FabricsimError], name: str):
    with pytest.raises(kind) as e:
        call()
    assert str(e.value).startswith(name), str(e.value)
    # every kind is also the builtin a caller would catch
    assert isinstance(e.value, TypeError if kind is ArgumentError else ValueError)


def test_a_scenario_nested_too_deeply_is_refused_not_a_recursion_error():
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"a": deep}
    with pytest.raises(ScenarioError, match="nested too deeply"):
        fabricsim.Scenario(deep)


def test_a_sweep_files_error_is_a_spec_error(tmp_path: Path):
    from fabricsim.sweep import Sweep

    (tmp_path / "s.toml").write_text('[sweep]\nseeds = [1]\n[sweep.grid]\n"lb.kind" = []\n')
    with pytest.raises(SpecError) as e:
        Sweep.load(tmp_path / "s.toml")
    assert isinstance(e.value, ScenarioError)


@pytest.mark.parametrize(
    "error, code",
    [
        (ScenarioError("x: bad", "x", "bad"), 2),
        (SpecError("sweep.grid: bad", "sweep.grid", "bad"), 2),
        (ArgumentError("scenario: got 5"), 2),
        (MissingDependency("--ray: Ray is not installed"), 4),
    ],
)
def test_the_cli_takes_its_exit_code_from_the_class(error: FabricsimError, code: int):
    def fails() -> None:
        raise error

    with pytest.raises(typer.Exit) as e:
        _guard(fails)()
    assert e.value.exit_code == code == error.exit_code
