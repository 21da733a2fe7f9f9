"""What the core made of scenario texts, kept: its readings (:class:`fabricsim._core.Parsed`, a
scenario read from its JSON once for its check, its survey and its build) and its surveys (the
warnings and the estimate). A run reads its scenario once: ``fabricsim run`` and ``compare``
survey a scenario, then build its run from the same reading; a sweep checks its points twice
and estimates them from one survey each.

Both are keyed by the text's digest (the text is :meth:`fabricsim.Scenario.to_json`'s), so a
scenario changed in any way is read again.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Sequence

from . import _core

__all__ = ["PARSED_KEPT", "PARSED_TEXT_KEPT", "SURVEYS_KEPT", "parsed", "survey", "take"]

#: Makes a refusal raised inside it name the file a scenario's list came from
#: (:meth:`fabricsim.Scenario.naming_files`).
Naming = Callable[[], contextlib.AbstractContextManager[None]]

#: Scenarios whose warnings and estimate :func:`survey` keeps (a few hundred bytes each).
SURVEYS_KEPT = 4096
_SURVEYS: dict[bytes, tuple[tuple[str, ...], tuple[int, int]]] = {}
#: The key of each scenario text's latest survey in :data:`_SURVEYS` (its warnings).
_LATEST: dict[bytes, bytes] = {}

#: The latest scenario texts the core read, by digest: each reading and its text's length,
#: the most recent last.
_PARSED: dict[bytes, tuple[_core.Parsed, int]] = {}
#: Readings kept, and the most text they may have been read from together (a reading of 2 M
#: flows holds hundreds of MB: only the latest is kept then).
PARSED_KEPT = 8
PARSED_TEXT_KEPT = 16 << 20


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def parsed(text: str, naming: Naming) -> _core.Parsed:
    """The core's reading of the scenario ``text``, read once for its survey and its build: the
    latest readings are kept (:data:`PARSED_KEPT`, at most :data:`PARSED_TEXT_KEPT` bytes of
    text between them, the latest always) until a build takes one (:func:`take`): ``compare``
    surveys each load balancer's scenario before it builds the first."""
    digest = _digest(text)
    found = _PARSED.pop(digest, None)
    if found is None:
        with naming():
            found = (_core.Parsed(text), len(text))
    _PARSED[digest] = found  # most recent last
    while len(_PARSED) > 1 and (len(_PARSED) > PARSED_KEPT or sum(n for _, n in _PARSED.values()) > PARSED_TEXT_KEPT):
        del _PARSED[next(iter(_PARSED))]
    return found[0]


def take(text: str, naming: Naming) -> _core.Parsed:
    """:func:`parsed`, taken for a build, which uses it up."""
    found = parsed(text, naming)
    _PARSED.pop(_digest(text), None)
    return found


def survey(text: str, flow_columns: Sequence[str] | None, any_columns: bool, naming: Naming) -> tuple[tuple[str, ...], tuple[int, int]]:
    """The core's warnings and estimate of the scenario ``text`` when a run keeps the flows
    table's ``flow_columns`` (all if None), kept per text and columns for the last
    :data:`SURVEYS_KEPT`. The warnings do not depend on the columns a run keeps:
    ``any_columns`` takes the latest survey of this text, whichever columns it counted."""
    digest = _digest(text)
    if any_columns and digest in _LATEST:
        return _SURVEYS.get(_LATEST[digest]) or survey(text, flow_columns, False, naming)
    columns = None if flow_columns is None else list(flow_columns)
    key = _digest(text + repr(columns))
    _LATEST[digest] = key
    found = _SURVEYS.pop(key, None)
    if found is None:
        with naming():
            warnings, events, memory = parsed(text, naming).survey(columns)
        found = (tuple(warnings), (events, memory))
    _SURVEYS[key] = found  # most recent last
    while len(_SURVEYS) > SURVEYS_KEPT:
        del _SURVEYS[next(iter(_SURVEYS))]
    while len(_LATEST) > SURVEYS_KEPT:
        del _LATEST[next(iter(_LATEST))]
    return found
