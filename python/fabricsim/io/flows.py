"""Flow lists and flow-size distributions from files: CSV (built column by column in polars),
JSON, a GOAL schedule or an htsim connection matrix for ``[workload] file``, and a CDF for a
trace's ``cdf``; a bad cell is refused naming its row and column."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from .. import _core
from ..errors import scenario_error
from .files import check_input, read_input
from .formats import require

__all__ = ["BUILTIN_CDFS", "flow_csv_json", "read_cdf", "read_flow_json", "read_flows"]


def read_flows(path: Path) -> list[dict[str, Any]]:
    """A message list from a file: CSV with columns src, dst, size and optionally start,
    class, id, after (ids separated by ';' or spaces) and delay; or JSON (``.json``), a list
    of objects with the same keys; an htsim connection matrix (``.cm`` or ``.tm``, :mod:`fabricsim.io.htsim`); or
    a GOAL schedule (``.goal``, :mod:`fabricsim.io.goal`).
    Sizes, starts and delays are unit strings ("1MiB", "5us").
    A bad cell is refused with its row and column (``workload.file[ROW].COLUMN``)."""
    name = require("workload.file", path).name
    if name == "json":
        return read_flow_json(path)
    if name == "goal":
        from .goal import read_goal

        return read_goal(path)
    if name == "htsim":
        from .htsim import read_connection_matrix

        return read_connection_matrix(path)
    if name == "chakra":
        raise scenario_error("workload.file", f"{str(path)!r} is a Chakra trace: a scenario reads it, not as a flow list")
    flows: list[dict[str, Any]] = json.loads(flow_csv_json(path))
    return flows


def flow_csv_json(path: Path) -> str:
    """The flows of a CSV file as the JSON text of their list, checked and built column by
    column in polars: no Python object per row (a 2-million-row file took minutes and GBs as
    dicts). Bad cells are refused as :func:`read_flows` says."""
    import polars as pl

    check_input(path, "workload.file", "a flows file (CSV)")
    try:
        df = pl.read_csv(path, infer_schema_length=0)  # every column as text: units stay intact
    except (OSError, pl.exceptions.PolarsError) as e:
        raise scenario_error("workload.file", f"cannot read {str(path)!r}: {e}") from None
    missing = {"src", "dst", "size"} - set(df.columns)
    if missing:
        raise scenario_error(
            "workload.file", f"{path} lacks columns {sorted(missing)}; needs src, dst, size and optionally {', '.join(_OPTIONAL)}"
        )
    unknown = set(df.columns) - {"src", "dst", "size", *_OPTIONAL}
    if unknown:
        raise scenario_error(
            "workload.file", f"{path} has unknown columns {sorted(unknown)}; allowed: src, dst, size, {', '.join(_OPTIONAL)}"
        )
    # stripped text, an empty cell as null
    df = df.select(pl.col(c).str.strip_chars().replace("", None).alias(c) for c in df.columns)

    def first(mask: pl.Series) -> int | None:
        rows = mask.fill_null(False).arg_true()
        return int(rows[0]) if len(rows) else None

    for column in ("src", "dst", "size"):
        if (i := first(df[column].is_null())) is not None:
            raise scenario_error(
                f"workload.file[{i}].{column}", f"an empty cell in row {i + 1} of {path}; every row needs src, dst and size"
            )
    parts: list[pl.Expr] = []
    for column in ("src", "dst", "class", "id", "cpu"):
        if column not in df.columns:
            continue
        cells, ints = df[column], df[column].cast(pl.Int64, strict=False)
        if (i := first(cells.is_not_null() & (ints.is_null() | (ints < 0)))) is not None:
            _int_cell(str(cells[i]), path, i, column)  # raises, naming the cell
        parts.append(pl.when(ints.is_not_null()).then(pl.format(f',"{column}":{{}}', ints)).otherwise(pl.lit("")))
    for column in ("size", "start", "delay"):
        if column not in df.columns:
            continue
        cells = df[column]
        if (i := first(cells.str.contains(r"[\x00-\x1f]"))) is not None:
            raise scenario_error(f"workload.file[{i}].{column}", f"a control character in row {i + 1} of {path}")
        text = cells.str.replace_all("\\", "\\\\", literal=True).str.replace_all('"', '\\"', literal=True)
        parts.append(pl.when(cells.is_not_null()).then(pl.format(f',"{column}":"{{}}"', text)).otherwise(pl.lit("")))
    if "after" in df.columns:
        ids = df["after"].str.replace_all(";", " ").str.split(" ").list.eval(pl.element().filter(pl.element() != ""))
        as_ints = ids.list.eval(pl.element().cast(pl.Int64, strict=False))
        bad = (as_ints.list.eval(pl.element().is_null() | (pl.element() < 0)).list.any()) & df["after"].is_not_null()
        if (i := first(bad)) is not None:
            cell = next(a for a, n in zip(ids[i], as_ints[i], strict=True) if n is None or n < 0)
            _int_cell(str(cell), path, i, "after")  # raises, naming the cell
        joined = as_ints.list.eval(pl.element().cast(pl.Utf8)).list.join(",")
        parts.append(pl.when(df["after"].is_not_null()).then(pl.format(',"after":[{}]', joined)).otherwise(pl.lit("")))
    rows = df.select(pl.concat_str(parts).str.strip_chars_start(",").alias("row"))["row"]
    return "[" + str(("{" + rows + "}").str.join(",")[0]) + "]"


_OPTIONAL = ("start", "class", "id", "after", "delay", "cpu")

#: Flow-size distributions the core ships (``[workload] kind = "trace"``, ``cdf``).
BUILTIN_CDFS = ("websearch", "fb_hadoop")


def read_cdf(path: Path) -> list[list[float]]:
    """A flow-size CDF file: ``size_bytes cumulative_percent`` per line (``#`` comments)."""
    try:
        text = read_input(path, "workload.cdf", "a flow-size CDF file").decode("utf-8")
    except UnicodeDecodeError as e:
        raise scenario_error("workload.cdf", f"got {str(path)!r}: not websearch or fb_hadoop, and not a readable file ({e})") from None
    points = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#")[0].strip()
        if not line:
            continue
        try:
            size, pct = (float(x) for x in line.split())
        except ValueError:
            raise scenario_error(
                "workload.cdf", f"line {n} of {path}: {line!r} is not two numbers (size_bytes cumulative_percent)"
            ) from None
        points.append([size, pct])
    return points


def _int_cell(text: str, path: Path, row: int, column: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise scenario_error(
            f"workload.file[{row}].{column}", f"got {text!r} in row {row + 1} of {path}; allowed: a whole number"
        ) from None
    if value < 0:
        raise scenario_error(f"workload.file[{row}].{column}", f"got {value} in row {row + 1} of {path}; allowed: 0 or more")
    return value


def read_flow_json(path: Path) -> list[dict[str, Any]]:
    text = read_input(path, "workload.file", "a flows file (JSON)")
    try:
        data = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:  # ValueError: bad JSON, or an integer of thousands of digits
        raise scenario_error("workload.file", f"cannot read {str(path)!r} as JSON: {e}") from None
    except RecursionError:
        raise scenario_error("workload.file", f"{path} is nested too deeply to be a list of flows") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise scenario_error("workload.file", f"{path} must hold a JSON list of objects (src, dst, size, ...)")
    return data


def same_flows(a: list[Any], b: list[Any]) -> bool:
    """Whether two flow lists are the same once the core fills them in (units, defaults)."""

    def filled(flows: list[Any]) -> Any:
        return json.loads(_core.validate(json.dumps({"workload": {"kind": "flows", "flows": flows}})))["workload"]["flows"]

    try:
        return bool(filled(a) == filled(b))
    except ValueError:  # one of them is not a valid list: not the same
        return False
