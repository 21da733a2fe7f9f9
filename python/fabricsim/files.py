"""Reading the files a user brings (scenarios, flow lists, traces, CDFs), bounded so that no
file can take the machine: a FIFO would block the read forever, a device such as ``/dev/zero``
never ends, a large file or a small gzip that inflates to gigabytes fills the memory. Each is
refused before it is read, naming the field and what is allowed.
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

from .errors import scenario_error

__all__ = ["MAX_INPUT_BYTES", "MAX_TEXT_BYTES", "check_input", "read_input", "read_text"]

#: The most bytes of a flow list, a trace rank's file (inflated) or any other data file: about
#: 8 M rows of a flows CSV, several times what a 32 768-host permutation takes. What is read is
#: parsed into objects many times its size, so more would not fit a workstation's memory.
MAX_INPUT_BYTES = 512 << 20
#: The most bytes of a TOML file (a scenario, a sweep, an experiment): they are written by hand.
MAX_TEXT_BYTES = 16 << 20


def check_input(path: Path, field: str, what: str, limit: int = MAX_INPUT_BYTES) -> None:
    """Refuses ``path`` before a reader opens it, unless it is a regular file of at most ``limit``
    bytes (``what`` names it in messages, ``field`` is the scenario field it came from)."""
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
        raise scenario_error(field, f"{where!r} has {st.st_size:,} bytes; allowed: at most {limit:,} for {what}")


def read_input(path: Path, field: str, what: str, limit: int = MAX_INPUT_BYTES, gzip: bool = False) -> bytes:
    """The bytes of ``path``, checked by :func:`check_input` first, inflated if ``gzip`` and it is
    gzip: refused as a :class:`ScenarioError` when it inflates beyond ``limit`` or cannot be
    read."""
    check_input(path, field, what, limit)
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
            raise scenario_error(field, f"{where!r} inflates to more than {limit:,} bytes; allowed: at most {limit:,} for {what}")
        data = b"".join(parts)
    return data


def read_text(path: Path, field: str, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of ``path`` (:func:`read_input`), refused naming the field unless it is UTF-8."""
    try:
        return read_input(path, field, what, limit).decode("utf-8")
    except UnicodeDecodeError as e:
        raise scenario_error(field, f"cannot read {str(path)!r}: not UTF-8 text ({e})") from None
