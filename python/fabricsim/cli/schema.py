"""`fabricsim schema`: the scenario's JSON schema, for editors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from .. import schema as scenario_schema
from .common import _guard, app, out


@app.command()
@_guard
def schema(
    output: Annotated[Path | None, typer.Option("--out", "-o", help="Write it to this file instead of printing it.")] = None,
) -> None:
    """Print the JSON schema of a scenario (draft 2020-12), generated from the core's declarations.

    Point an editor at it to check a scenario file as it is typed: Even Better TOML / taplo reads
    `#:schema ./scenario.schema.json` on a TOML file's first line; VS Code's `json.schemas` setting
    takes it for JSON scenarios. The core's own check stays the authority (a value can match the
    schema and still be refused, say a host id past the fabric's hosts).
    """
    text = json.dumps(scenario_schema(), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    output.write_text(text)
    out.print(f"wrote {output}")
