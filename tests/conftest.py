from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def demo_path() -> Path:
    return ROOT / "scenarios" / "permutation_128.toml"


def fabric(**workload) -> dict:
    """The papers' 128-host fabric with 1 us links and no switch latency."""
    return {
        "seed": 1,
        "topology": {"hosts": 128, "radix": 16, "link_latency": "1us", "switch_latency": "0ns"},
        "workload": workload,
    }
