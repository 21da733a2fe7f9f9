"""Generate docs/algorithms.md from the doc comments of the algorithm files.

Each load balancer (crates/fabricsim-core/src/lb/*.rs) and the congestion controls
(host/cc.rs) open with a `//!` comment: paper, section, parameters, defaults, state. This
script concatenates them; tests/test_docs.py fails when the committed page is stale.

    python3 tools/gen_algorithms_doc.py > docs/algorithms.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "crates" / "fabricsim-core" / "src"

HEADER = """# Algorithms

Generated from the doc comments of the algorithm files by `tools/gen_algorithms_doc.py`;
edit those, not this page. `fabricsim list` shows the same names with one-line summaries.
Papers are cited by name and section: ARCANE (recycled entropies, the REPS family), PRIME
(pseudo-random round-robin MP-EV spraying), MPRDMA (NSDI 2018), the China Mobile slides on AI
fabric load balancing, NVIDIA's Spectrum adaptive routing post and Juniper's "To spray or not
to spray". How they compare on the papers'
128-host fabric, against the reference simulator: [comparison.md](comparison.md).
"""


def module_doc(path: Path) -> str:
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("//!"):
            lines.append(line[4:] if line.startswith("//! ") else line[3:])
        elif lines:
            break
    return "\n".join(lines).strip()


def registered_name(path: Path) -> str:
    """The `name` of the file's `INFO` (what a scenario writes), or the file's stem."""
    m = re.search(r'pub const INFO: AlgorithmInfo = AlgorithmInfo \{[^}]*?name: "([^"]+)"', path.read_text(), re.S)
    return m.group(1) if m else path.stem


def folder(rel: str) -> list[str]:
    """One section per file of a folder, in file order: each is one registered kind (what the
    kinds share lives in the folder's `support/`, and tests/test_docs.py checks that every file
    registers its name)."""
    return [section(f"{rel}/{p.name}", f"`{registered_name(p)}`") for p in sorted((SRC / rel).glob("*.rs")) if p.name != "mod.rs"]


def section(rel: str, heading: str | None = None) -> str:
    path = SRC / rel
    head = f"### {heading}\n\n" if heading else ""
    return f"{head}_Source: `crates/fabricsim-core/src/{rel}`_\n\n{module_doc(path)}\n"


def render() -> str:
    parts = [HEADER, "## Host load balancers (`[lb] kind`)\n"]
    parts += folder("lb")
    parts.append(section("lb/support/mpev.rs", "The MP-EV generator (shared by `prime`, `co_prime`, `round_robin`)"))
    parts.append(section("lb/support/walk.rs", 'The scrambled round robin (shared by `ops` with `order = "cycle"` and `bitmap`)'))
    parts.append("## Switch next-hop rules (`[switch] routing`)\n")
    parts.append(section("switch/routing/mod.rs"))
    parts += folder("switch/routing")
    parts.append("## Egress queues\n")
    parts.append(section("switch/mod.rs"))
    parts.append("## Transports (`[transport] kind`)\n")
    parts.append(section("host/transport/mod.rs"))
    parts += folder("host/transport")
    parts.append("## Congestion control (`[transport] cc`)\n")
    parts.append(section("host/cc/mod.rs"))
    parts += folder("host/cc")
    parts.append("## Faults (`[[faults]] kind`)\n")
    parts.append(section("faults/mod.rs"))
    parts += folder("faults")
    parts.append(section("faults/support/timeline.rs", "The timeline of changes"))
    parts.append(section("faults/support/link.rs", "What a fault leaves on a link"))
    parts.append("## Collectives (`[[jobs]] algorithm`)\n")
    parts.append(section("workload/support/job.rs", "Jobs (`[[jobs]]`)"))
    parts.append(section("workload/support/deps.rs", "Dependencies"))
    parts.append(section("workload/collective/mod.rs", "Sizes and bus bandwidth"))
    parts += folder("workload/collective")
    parts.append(section("workload/collective/support/expand.rs", "One collective for a trace importer"))
    parts.append("## Training iterations (`[[jobs]] model`)\n")
    parts.append(section("workload/training/mod.rs", "The iteration"))
    parts.append(section("workload/training/model.rs", "Model shapes and costs"))
    parts.append("## Scale-up networks (`topology.scale_up_rate`)\n")
    parts.append(section("host/nic/scale_up.rs"))
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(render())
