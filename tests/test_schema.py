"""Options declared once: the scenario's JSON schema and docs/scenario.md's field tables come from
the core's declarations, agree with what the core accepts and refuses, and are current."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import fabricsim
import jsonschema
import pytest
from fabricsim import Scenario, ScenarioError, _core

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "docs" / "scenario.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = fabricsim.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _gen_fields():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_fields_doc", ROOT / "tools" / "gen_fields_doc.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen_fields_doc"] = gen
    spec.loader.exec_module(gen)
    return gen


def test_the_shipped_schema_is_the_cores_and_the_command_prints_it():
    assert json.loads(SCHEMA_FILE.read_text()) == fabricsim.schema(), "run: fabricsim schema -o docs/scenario.schema.json"
    out = subprocess.run([sys.executable, "-m", "fabricsim", "schema"], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == fabricsim.schema()


def test_every_shipped_and_golden_scenario_fits_the_schema(validator):
    files = sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "crates" / "fabricsim-core" / "tests" / "golden").glob("*.toml"))
    assert len(files) > 40
    for f in files:
        errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(tomllib.loads(f.read_text()))]
        assert not errors, (f.name, errors)


def test_every_filled_scenario_fits_the_schema(validator):
    """What the core writes back (every default filled in) fits: the schema's names, units and
    kinds are the core's."""
    entries: list[dict[str, Any]] = [{}]
    for table, kind, _, _, _ in _core.parameters():
        entry: dict[str, Any] = {"kind": kind}
        for t, k, n, _, ex in _core.parameters():
            if (t, k) == (table, kind) and ex is not None:
                entry[n] = json.loads(ex)
            if (t, k, n) == (table, kind, "link") and "links" not in entry:
                entry["link"] = "leaf0:up0"
        if table == "topology" and kind != "fat_tree":
            continue  # their required shapes are checked by the golden scenarios
        entries.append({"faults": [entry]} if table == "faults" else {table: entry})
    for e in entries:
        filled = json.loads(_core.validate(json.dumps(e)))
        errors = [f"{list(x.absolute_path)}: {x.message[:200]}" for x in validator.iter_errors(filled)]
        assert not errors, (e, errors)


@pytest.mark.parametrize(
    "bad",
    [
        {"topology": ["fat_tree", 2, 16]},
        {"lb": {"kind": "nope"}},
        {"lb": {"kind": "ecmp", "bogus": 1}},
        {"transport": {"mtu": 4096}},
        {"transport": {"rto": "often"}},
        {"switch": {"routing": "spray2"}},
        {"switch": {"buffer": {"alpha": 1.0}}},
        {"stop": {"max_time": "5 parsecs"}},
        {"jobs": [["allreduce"]]},
        {"faults": [{"kind": "flap", "link": "leaf0:up0"}]},
        {"mixed": {"class": 1}},
        {"sead": 3},
    ],
)
def test_what_the_schema_refuses_the_core_refuses(validator, bad):
    """The schema is no looser than an editor needs (each of these it flags) and no stricter than
    the core (each the core refuses too)."""
    assert not validator.is_valid(bad), bad
    with pytest.raises(ScenarioError):
        Scenario(copy.deepcopy(bad)).validate()


def test_field_tables_are_generated_from_the_declarations():
    page = (ROOT / "docs" / "scenario.md").read_text()
    assert page == _gen_fields().render(page), "run: python3 tools/gen_fields_doc.py"


def test_a_new_field_reaches_the_reference_without_editing_it():
    """A field declared on a config struct (its doc comment, its default) gains its row."""
    gen = _gen_fields()
    schema = fabricsim.schema()
    schema["$defs"]["StopConfig"]["properties"]["max_packets"] = {
        "type": "integer",
        "default": 7,
        "description": "A new guard:\nthe packets a run may send.",
    }
    page = (ROOT / "docs" / "scenario.md").read_text()
    new = gen.render(page, schema)
    assert "| `max_packets` | integer | `7` | A new guard: the packets a run may send. |" in new
    assert "max_packets" not in page
