"""Generate docs/algorithms.md from the doc comments of the algorithm files.

Each load balancer (crates/fabricsim-core/src/lb/*.rs) and the congestion controls
(host/cc.rs) open with a `//!` comment: paper, section, parameters, defaults, state. This
script concatenates them; tests/test_docs.py fails when the committed page is stale.

    python3 tools/gen_algorithms_doc.py > docs/algorithms.md
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "crates" / "fabricsim-core" / "src"

HEADER = """# Algorithms

Generated from the doc comments of the algorithm files by `tools/gen_algorithms_doc.py`;
edit those, not this page. `fabricsim list` shows the same names with one-line summaries.
Papers: ../shared/papers (ARCANE = 003, PRIME = 000).
"""


def module_doc(path: Path) -> str:
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("//!"):
            lines.append(line[4:] if line.startswith("//! ") else line[3:])
        elif lines:
            break
    return "\n".join(lines).strip()


def render() -> str:
    parts = [HEADER, "## Host load balancers (`[lb] kind`)\n"]
    for path in sorted((SRC / "lb").glob("*.rs")):
        if path.name == "mod.rs":
            continue
        parts.append(f"### `{path.stem}`\n\n_Source: `crates/fabricsim-core/src/lb/{path.name}`_\n\n{module_doc(path)}\n")
    parts.append("## Congestion control (`[transport] cc`)\n")
    parts.append(f"_Source: `crates/fabricsim-core/src/host/cc.rs`_\n\n{module_doc(SRC / 'host' / 'cc.rs')}\n")
    parts.append("## Switch next-hop rule (`[switch] routing`)\n")
    parts.append(f"_Source: `crates/fabricsim-core/src/switch/mod.rs`_\n\n{module_doc(SRC / 'switch' / 'mod.rs')}\n")
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(render())
