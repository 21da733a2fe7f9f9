"""Re-run the `fabricsim compare` and `fabricsim reproduce` blocks of a Markdown page and
paste their real output.

Usage: python3 tools/refresh_doc_blocks.py docs/workloads.md README.md

Every fenced block whose first line is ``$ fabricsim compare ...`` or ``$ fabricsim topology ...``
is re-run (with
COLUMNS=160) and its output replaces the block's body. A fence preceded by a line naming the
command in backquotes (``\\`fabricsim compare ...\\` (real output):``) is re-run likewise.
Between ``<!-- fabricsim reproduce ... -->`` and ``<!-- end -->`` goes the Markdown that
command prints (its runs are kept in ``out/reproduce``, so a second refresh reruns nothing).

``--reproduce-only`` leaves the compare and topology blocks as they are (a page's long runs);
``--allow-other-version`` passes that flag to the reproduce blocks, so that tables are judged
from runs an earlier build of fabricsim made (after a rebuild that changed no result they
refuse otherwise; a run missing from the cache is then made by this build, beside them).
"""

from __future__ import annotations

import argparse
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


def refresh(text: str, reproduce_only: bool = False, reproduce_flags: str = "") -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        marker = re.fullmatch(r"<!-- (fabricsim reproduce [^>]+) -->", line)
        if marker:
            end = lines.index(END, i + 1)
            out.extend(["", run(marker.group(1) + " --no-report" + reproduce_flags), ""])
            out.append(END)
            i = end + 1
            continue
        if line.startswith(FENCE):
            end = lines.index(FENCE, i + 1)
            body = lines[i + 1 : end]
            named = re.search(r"`(fabricsim compare [^`]+)` \(real output\):", lines[i - 2] if i >= 2 else "")
            if reproduce_only:
                out.extend(body)
            elif line == FENCE and body and body[0].startswith(RERUN):
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
    parser = argparse.ArgumentParser(description="Re-run a Markdown page's fabricsim blocks and paste their output.")
    parser.add_argument("pages", nargs="+")
    parser.add_argument("--reproduce-only", action="store_true", help="leave the compare and topology blocks alone")
    parser.add_argument("--allow-other-version", action="store_true", help="judge reproduce blocks from an earlier build's runs")
    args = parser.parse_args()
    flags = " --allow-other-version" if args.allow_other_version else ""
    for path in args.pages:
        with open(path) as f:
            text = f.read()
        new = refresh(text, args.reproduce_only, flags)
        with open(path, "w") as f:
            f.write(new)
        print(f"refreshed {path}")


if __name__ == "__main__":
    main()
