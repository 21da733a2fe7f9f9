"""Re-run the `fabricsim compare` and `fabricsim reproduce` blocks of a Markdown page and
paste their real output.

Usage: python3 tools/refresh_doc_blocks.py docs/workloads.md README.md

Every fenced block whose first line is ``$ fabricsim compare ...`` or ``$ fabricsim topology ...``
is re-run (with
COLUMNS=160) and its output replaces the block's body. A fence preceded by a line naming the
command in backquotes (``\\`fabricsim compare ...\\` (real output):``) is re-run likewise.
Between ``<!-- fabricsim reproduce ... -->`` and ``<!-- end -->`` goes the Markdown that
command prints (its runs are kept in ``out/reproduce``, so a second refresh reruns nothing).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

FENCE = "```"
#: The commands whose blocks are re-run.
RERUN = ("$ fabricsim compare ", "$ fabricsim topology ")
END = "<!-- end -->"


def run(command: str) -> str:
    args = shlex.split(command)
    env = os.environ | {"COLUMNS": "160"}
    out = subprocess.run([sys.executable, "-m", "fabricsim", *args[1:]], capture_output=True, text=True, env=env, check=True)
    return out.stdout.rstrip("\n")


def refresh(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        marker = re.fullmatch(r"<!-- (fabricsim reproduce [^>]+) -->", line)
        if marker:
            end = lines.index(END, i + 1)
            out.extend(["", run(marker.group(1) + " --no-report"), ""])
            out.append(END)
            i = end + 1
            continue
        if line.startswith(FENCE):
            end = lines.index(FENCE, i + 1)
            body = lines[i + 1 : end]
            named = re.search(r"`(fabricsim compare [^`]+)` \(real output\):", lines[i - 2] if i >= 2 else "")
            if line == FENCE and body and body[0].startswith(RERUN):
                out.extend([body[0], *run(body[0][2:]).split("\n")])
            elif line == FENCE and named:
                out.extend(run(named.group(1)).split("\n"))
            else:
                out.extend(body)
            out.append(FENCE)
            i = end + 1
            continue
        i += 1
    return "\n".join(out)


def main() -> None:
    for path in sys.argv[1:]:
        with open(path) as f:
            text = f.read()
        new = refresh(text)
        with open(path, "w") as f:
            f.write(new)
        print(f"refreshed {path}")


if __name__ == "__main__":
    main()
