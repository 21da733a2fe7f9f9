"""The docs tell the truth: every scenario field is documented, the algorithm page is fresh."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import fabricsim
from fabricsim import Scenario

ROOT = Path(__file__).resolve().parent.parent


def leaf_keys(table: dict, prefix: str = "") -> list[str]:
    keys = []
    for k, v in table.items():
        if isinstance(v, dict):
            keys += leaf_keys(v, f"{prefix}{k}.")
        else:
            keys.append(f"{prefix}{k}")
    return keys


def test_every_filled_scenario_field_is_in_the_reference():
    doc = (ROOT / "docs" / "scenario.md").read_text()
    for wl in ({"kind": "permutation"}, {"kind": "incast", "senders": 3}):
        for key in leaf_keys(Scenario({"workload": wl}).filled()):
            name = key.split(".")[-1]
            assert f"`{name}`" in doc or f"`{key.split('.', 1)[-1]}`" in doc, key


def test_every_registered_name_is_documented():
    docs = (ROOT / "docs" / "scenario.md").read_text() + (ROOT / "docs" / "algorithms.md").read_text()
    for row in fabricsim.registry():
        name = row["name"]
        assert f"`{name}`" in docs or f'"{name}"' in docs, row


def test_algorithms_page_is_generated_from_the_sources():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "tools" / "gen_algorithms_doc.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (ROOT / "docs" / "algorithms.md").read_text() == gen.render(), "run: python3 tools/gen_algorithms_doc.py > docs/algorithms.md"


def test_outputs_section_is_generated_from_the_declared_columns():
    spec = importlib.util.spec_from_file_location("gen_outputs", ROOT / "tools" / "gen_outputs_doc.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    page = (ROOT / "docs" / "scenario.md").read_text()
    assert page == gen.render(page), "run: python3 tools/gen_outputs_doc.py"
