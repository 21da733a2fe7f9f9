"""docs/validation.md quotes what tools/validation.py gives."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> Any:
    """tools/validation.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location("validation", ROOT / "tools" / "validation.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules["validation"] = tool
    spec.loader.exec_module(tool)
    return tool


def test_the_validation_page_quotes_the_tool() -> None:
    tool = _tool()
    page = (ROOT / "docs" / "validation.md").read_text()
    rows = tool.rows()
    assert len(rows) == 2 + len(tool.HGX_H100_RING)
    for row in rows:
        assert row in page, row


def test_fabricsim_moves_the_nominal_rate_and_the_hgx_h100_about_82_percent_of_it() -> None:
    tool = _tool()
    # the page's own number: 741.34 GB/s both ways at 2 GiB on 8 GPUs
    gpus, size, measured, _ = tool.HGX_H100_RING[-1]
    assert abs(tool.busbw(gpus, size, measured) - 370.67) < 0.01
    ours = tool.ring_on_one_server(gpus, size, costs=False)
    assert 449.0 < tool.busbw(gpus, size, ours) < 450.0
    assert 0.82 < ours / measured < 0.83
