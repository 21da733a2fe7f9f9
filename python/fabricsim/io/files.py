"""Reading the files a user brings (scenarios, flow lists, traces, CDFs), bounded so that no
file can take the machine: a FIFO would block the read forever, a device such as ``/dev/zero``
never ends, a large file or a small gzip that inflates to gigabytes fills the memory. Each is
refused before it is read, naming the field and what is allowed.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import stat
import tomllib
import zlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import scenario_error

__all__ = ["MAX_INPUT_BYTES", "MAX_TEXT_BYTES", "check_input", "memory_budget", "read_input", "read_text", "size_bytes"]

#: The most bytes of a flow list, a trace rank's file (inflated) or any other data file: about
#: 8 M rows of a flows CSV, several times what a 32 768-host permutation takes. What is read is
#: parsed into objects many times its size, so more would not fit a workstation's memory.
MAX_INPUT_BYTES = 512 << 20
#: The most bytes of a TOML file (a scenario, a sweep, an experiment): they are written by hand.
MAX_TEXT_BYTES = 16 << 20


#: Memory that reading a file may take per byte of it, at most: parsed into rows, objects and the
#: core's messages (a 34 MB flows CSV of 2 M rows peaks at 3 GB over its whole run).
MEMORY_PER_INPUT_BYTE = 64
_BUDGET: ContextVar[int | None] = ContextVar("fabricsim_read_budget", default=None)


def size_bytes(text: object) -> int | None:
    """A size as a scenario writes it (``"8GiB"``, ``"512MB"``, ``"4096B"``) in bytes, read by the
    core's own rules (``_core.quantity``); None for anything else (the core refuses it with its
    own words where a field needs one).

    >>> size_bytes("1.5MB"), size_bytes("8GiB"), size_bytes("auto"), size_bytes("1TiB"), size_bytes("2TiB")
    (1500000, 8589934592, None, 1099511627776, None)
    """
    if not isinstance(text, str):
        return None
    try:
        return _core.quantity("size", text)
    except ValueError:
        return None


@contextlib.contextmanager
def memory_budget(max_memory: int | None) -> Iterator[None]:
    """While it lasts, every file is read only up to ``max_memory`` / :data:`MEMORY_PER_INPUT_BYTE`
    bytes (a scenario's ``stop.max_memory``), below each reader's own limit: a file that would
    take more memory to read than the run may have is refused before it is read."""
    token = _BUDGET.set(max_memory)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _bound(limit: int) -> tuple[int, str]:
    """``limit`` or, lower, what the memory budget allows, with the words that say why."""
    budget = _BUDGET.get()
    if budget is not None and budget // MEMORY_PER_INPUT_BYTE < limit:
        return budget // MEMORY_PER_INPUT_BYTE, f" (stop.max_memory, {budget:,} bytes, / {MEMORY_PER_INPUT_BYTE}: what reading it may take)"
    return limit, ""


def check_input(path: Path, field: str, what: str, limit: int = MAX_INPUT_BYTES) -> None:
    """Refuses ``path`` before a reader opens it, unless it is a regular file of at most ``limit``
    bytes, or less under a :func:`memory_budget` (``what`` names it in messages, ``field`` is the
    scenario field it came from)."""
    limit, why = _bound(limit)
    where = str(path)
    try:
        st = os.stat(path)
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        raise scenario_error(field, f"cannot read {where!r}: {getattr(e, 'strerror', None) or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise scenario_error(field, f"{where!r} is a directory; expected {what}")
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a file"
        )
        raise scenario_error(field, f"{where!r} is {kind}; expected {what}: a regular file (it is read whole, before the run)")
    if st.st_size > limit:
        raise scenario_error(field, f"{where!r} has {st.st_size:,} bytes; allowed: at most {limit:,} for {what}{why}")


def read_input(path: Path, field: str, what: str, limit: int = MAX_INPUT_BYTES, gzip: bool = False) -> bytes:
    """The bytes of ``path``, checked by :func:`check_input` first, inflated if ``gzip`` and it is
    gzip: refused as a :class:`ScenarioError` when it inflates beyond ``limit`` or cannot be
    read."""
    check_input(path, field, what, limit)
    limit, why = _bound(limit)
    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise scenario_error(field, f"cannot read {where!r}: {e.strerror or e}") from None
    if gzip and data[:2] == b"\x1f\x8b":
        parts: list[bytes] = []
        left, rest = limit + 1, data
        while rest and left > 0:  # a gzip file may hold several members, one after another
            inflater = zlib.decompressobj(wbits=31)
            try:
                part = inflater.decompress(rest, left)
            except zlib.error as e:
                raise scenario_error(field, f"cannot read {where!r}: a broken gzip stream ({e})") from None
            parts.append(part)
            left -= len(part)
            if left > 0 and not inflater.eof:
                raise scenario_error(field, f"cannot read {where!r}: the gzip stream ends early")
            rest = inflater.unused_data
        if left <= 0:
            raise scenario_error(field, f"{where!r} inflates to more than {limit:,} bytes; allowed: at most {limit:,} for {what}{why}")
        data = b"".join(parts)
    return data


def read_text(path: Path, field: str, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of ``path`` (:func:`read_input`), refused naming the field unless it is UTF-8."""
    try:
        return read_input(path, field, what, limit).decode("utf-8")
    except UnicodeDecodeError as e:
        raise scenario_error(field, f"cannot read {str(path)!r}: not UTF-8 text ({e})") from None


#: The most digits of a number in a file (GOAL, htsim, a graph's cost): u64's 20 less one, so
#: that a sum of two stays exact (and far below the 4 300 past which int() raises a traceback).
MAX_DIGITS = 19

#: The deepest nesting a structured file (JSON, YAML) may have: far beyond any real topology or
#: trace (InfraGraph nests devices about 6 deep), well below Python's recursion limit.
MAX_NESTING = 64


def check_shape(data: Any, field: str, where: str, written: int) -> None:
    """Refuses parsed JSON/YAML ``data`` read from ``written`` characters of the file ``where``
    that nests deeper than :data:`MAX_NESTING`, or whose aliases (YAML's anchors, shared when
    parsed) expand it to more items than four a character written plus 10 000: every item a
    file writes takes a character at least, so only aliases can pass that, and a few lines of
    them (a "billion laughs") expand to more than any reader can hold. Walks each shared
    container once, without recursion; the refusal names the file and the place."""
    limit = 4 * written + 10_000
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, int, tuple[Any, ...], bool]] = [(data, 0, (), False)]
    while stack:
        node, depth, path, done = stack.pop()
        children = list(node.values()) if isinstance(node, dict) else node
        if done:
            size = 1 + sum(sizes.get(id(c), 1) for c in children)
            sizes[id(node)] = size
            if size > limit:
                why = "its aliases repeat it beyond what the file writes"
                allowed = f"at most {limit:,} (4 a character written, plus 10 000)"
                raise scenario_error(field, f"{where}: {_place(path)} expands to more than {limit:,} items ({why}); allowed: {allowed}")
            continue
        if depth > MAX_NESTING:
            raise scenario_error(field, f"{where}: {_place(path)} is nested {depth} deep; allowed: at most {MAX_NESTING}")
        if id(node) in sizes:
            continue
        stack.append((node, depth, path, True))
        keys = node.keys() if isinstance(node, dict) else range(len(node))
        for k, c in zip(keys, children, strict=True):
            if isinstance(c, dict | list) and id(c) not in sizes:
                stack.append((c, depth + 1, (*path, k), False))


def _place(path: tuple[Any, ...]) -> str:
    """A place in parsed data as ``devices[0].components`` (its first 8 steps)."""
    text = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path[:8]).lstrip(".")
    return (text + ("..." if len(path) > 8 else "")) or "the top"


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The table of a TOML file the user gives (``what``: "a scenario", "a sweep", "an
    experiment"), every failure a :class:`ScenarioError` naming the file: unreadable, a
    directory, not UTF-8, not TOML, nested too deeply. The one loader of every such file.
    """
    where = str(path)
    if "\x00" in where:
        raise scenario_error(where.replace("\x00", "\\x00"), f"a path with a NUL character; expected {what} file (TOML)")
    if path.is_dir():
        raise scenario_error(where, f"is a directory; expected {what} file (TOML)")
    raw = read_input(path, where, f"{what} file (TOML)", limit=MAX_TEXT_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise scenario_error(where, f"not UTF-8 text (byte {e.start}); {what} is a TOML text file") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise scenario_error(where, f"not valid TOML: {e}") from None
    except ValueError as e:  # an integer of thousands of digits: Python refuses to read it
        raise scenario_error(where, f"holds a number Python cannot read ({e}); allowed: at most 4300 digits") from None
    except RecursionError:
        raise scenario_error(where, f"nested too deeply to be {what}") from None


#: Deeper than any scenario table; deeper input is refused before it reaches the core.
MAX_DEPTH = 16


#: The types of a value that holds nothing to check (a float is checked to be finite).
_PLAIN = frozenset((str, int, bool, type(None)))


def _plain(node: Any, depth: int) -> bool:
    """Whether ``node`` holds only what :func:`check_values` accepts, by exact types (a subclass
    is left to it): one call a table or list, none a value, no field named."""
    if depth > MAX_DEPTH:
        return False
    if type(node) is dict:
        items: Any = node.items()
    elif type(node) is list:
        items = enumerate(node)
    else:
        return type(node) in _PLAIN or (type(node) is float and math.isfinite(node))
    for key, value in items:
        if type(key) is not str and type(node) is dict:
            return False
        t = type(value)
        if t in _PLAIN or (t is float and math.isfinite(value)):
            continue
        if not _plain(value, depth + 1):
            return False
    return True


def check_values(node: Any, where: str, depth: int = 0) -> None:
    """Refuse values no scenario field takes, naming the field: TOML dates and times, NaN and
    infinities (JSON cannot carry them), values that are not TOML/JSON (a set, bytes, a
    Decimal, a NumPy number, any object), keys that are not strings, and nesting deeper than
    any table. A tree of plain tables, lists and values passes in one walk that names no field
    (a list of 2 M flows took 9 s when every value's field was named on the way)."""
    if _plain(node, depth):
        return
    _check_naming(node, where, depth)


def _check_naming(node: Any, where: str, depth: int) -> None:
    """:func:`check_values`, naming each field as it goes: what raises the refusal."""
    field = where or "scenario"
    if depth > MAX_DEPTH:
        raise scenario_error(field, f"nested more than {MAX_DEPTH} levels deep; no scenario field is")
    if isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, str):
                raise scenario_error(field, f"has the key {key!r} ({type(key).__name__}); allowed: keys that are strings")
            _check_naming(value, f"{where}.{key}" if where else str(key), depth + 1)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_naming(value, f"{where}[{i}]", depth + 1)
    elif isinstance(node, datetime.date | datetime.time):
        when = node.isoformat()
        raise scenario_error(field, f'got the TOML date/time {when}; no scenario field is a date (durations are strings like "5us")')
    elif isinstance(node, float) and not math.isfinite(node):
        raise scenario_error(field, f"got {node}; allowed: a finite number")
    elif not isinstance(node, str | int | float | bool) and node is not None:
        kind = f"{type(node).__module__}.{type(node).__qualname__}".removeprefix("builtins.")
        hint = " (convert it with int() or float())" if hasattr(node, "__index__") or hasattr(node, "__float__") else ""
        raise scenario_error(field, f"got {node!r} of type {kind}; allowed: a TOML/JSON value: a string, number, bool, list or table{hint}")
