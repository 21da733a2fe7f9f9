"""A run driven from outside: send messages while it runs, poll what completed (docs/embedding.md).

>>> import fabricsim
>>> s = fabricsim.Session({"topology": {"hosts": 16, "radix": 8}})
>>> m = s.send(0, 9, 64 * 1024, tag="hello")
>>> s.run_until_completion()
'running'
>>> [(c.id, c.tag, c.fct_ps == s.results().flows["ideal_fct_ps"][0]) for c in s.completions()]
[(0, 'hello', True)]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from . import _core
from .errors import argument_error
from .results import Results
from .run import _scenario, parse_threads, peak_rss_mb
from .scenario import Scenario

__all__ = ["Completion", "Session"]

#: A time no session reaches (about 53 days in picoseconds): "until the next completion, however late".
FOREVER_PS = 2**62


class Completion(NamedTuple):
    """A message that completed: its id (:meth:`Session.send`'s, its row in the flows
    table), the tag it was sent with, when it was released and when its receiver had every
    byte (ps), and its FCT as the flows table gives it (from its first packet sent)."""

    id: int
    tag: Any
    start_ps: int
    end_ps: int
    fct_ps: int


def _natural(name: str, value: object, what: str = "an int, 0 or more") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise argument_error(name, value, what)
    return value


def _time(name: str, value: object) -> int:
    return _natural(name, value, "a time in picoseconds: an int, 0 or more")


class Session:
    """A fabric that takes messages while it runs and reports each completion as it happens.

    Built from a scenario like :func:`fabricsim.run`'s, which may have no workload (then the
    fabric is idle until a message is sent; a ``[workload]`` or ``[[jobs]]`` it has run as
    usual). Times are integer picoseconds. The same calls give the same results, bit for bit,
    on any number of threads; a message sent for a time after :attr:`now` starts exactly as the
    same message given up front in a ``flows`` workload would (the same fields, in the same
    order among its host's messages; for load balancers that draw at random while they send,
    as ``ops`` and ``prime``, see docs/embedding.md).

    Raises :class:`fabricsim.ScenarioError` for a scenario that cannot run, and for a call the
    session cannot take (naming the argument: a host that does not exist, a time in the past).
    """

    def __init__(
        self, scenario: Scenario | dict[str, Any] | str | os.PathLike[str] | None = None, threads: int | Literal["auto"] | None = 1
    ) -> None:
        sc = _scenario({} if scenario is None else scenario)
        with sc.naming_files():
            self._native = _core.Session(sc.to_json(), parse_threads(threads))
        self.scenario = sc
        self._tags: dict[int, Any] = {}

    def send(self, src: int, dst: int, bytes: int, at: int | None = None, tag: Any = None, after: Sequence[int] = ()) -> int:
        """Sends ``bytes`` from host ``src`` to host ``dst`` at ``at`` ps (``None``: now, the
        default); returns the message's id. ``tag`` comes back with its completion. ``after``:
        ids of messages (each crossing the fabric) it also waits for: it is released once
        ``src`` has heard that each completed, as a flows list's ``after`` (at once where
        ``src`` received it, at its final ACK where ``src`` sent it, by the receiver's notice
        elsewhere), and not before ``at`` (docs/embedding.md)."""
        args = (_natural("src", src), _natural("dst", dst), _natural("bytes", bytes))
        if isinstance(after, str) or not isinstance(after, Sequence):
            raise argument_error("after", after, "a list of message ids")
        waits = [_natural("after", a, "a message id: an int, 0 or more") for a in after]
        m = self._native.send(*args, None if at is None else _time("at", at), waits)
        if tag is not None:
            self._tags[m] = tag
        return m

    def run_until(self, t: int) -> str:
        """Runs every event at ``t`` ps or before; :attr:`now` is ``t`` afterwards unless the
        scenario's ``[stop]`` guards ended the session first. Returns ``"running"`` (it goes
        on) or ``"incomplete"`` (ended: :attr:`stop_reason` says why)."""
        return self._native.run_until(_time("t", t))

    def run_until_completion(self, limit: int = FOREVER_PS) -> str:
        """Runs until a message completes (every event of that instant included), or every
        event at ``limit`` ps or before if none does; :attr:`now` is then the completion's
        time (or ``limit``). Runs on one thread (exact: a window on several could pass the
        completion it must stop at)."""
        return self._native.run_until_completion(_time("limit", limit))

    def next_event_time(self) -> int | None:
        """The time of the next event (a packet's, a timer's, or the run's own checks) in ps,
        ``None`` when nothing is scheduled."""
        return self._native.next_event_time()

    @property
    def now(self) -> int:
        """The session's clock, ps: every event up to it ran."""
        return self._native.now_ps

    @property
    def status(self) -> str:
        """``"running"`` while it goes on; ``"incomplete"`` once a ``[stop]`` guard ended it."""
        return self._native.status

    @property
    def stop_reason(self) -> str:
        return self._native.stop_reason

    @property
    def threads(self) -> int:
        return self._native.threads

    @property
    def warnings(self) -> list[str]:
        return list(self._native.warnings)

    def completions(self) -> list[Completion]:
        """The messages completed since the last call, by time of completion, then id."""
        return [Completion(m, self._tags.pop(m, None), start, end, fct) for m, start, end, fct in self._native.completions()]

    def results(self) -> Results:
        """The results so far: the tables :func:`fabricsim.run` gives (the session goes on)."""
        return Results.from_native(self._native.results(), {"threads": self.threads, "peak_rss_mb": round(peak_rss_mb(), 1)})

    def __repr__(self) -> str:
        return f"Session(now={self.now} ps, {self.status})"
