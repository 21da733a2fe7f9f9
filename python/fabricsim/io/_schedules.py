"""What the readers of per-rank schedules (GOAL, :mod:`fabricsim.io.goal`; Chakra,
:mod:`fabricsim.io.chakra`) share: sends matched with receives as MPI matches them, and an order
of operations that refuses a dependency cycle."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def match_in_order(
    sends: Mapping[K, Sequence[T]], recvs: Mapping[K, Sequence[T]], unmatched: Callable[[K, T], Exception]
) -> list[tuple[T, T]]:
    """The i-th send of each (source, destination, tag) key with the i-th receive of the same
    key, as MPI matches them; ``unmatched(key, op)`` is raised for the first operation of a key
    left without a partner."""
    pairs: list[tuple[T, T]] = []
    for key in sends.keys() | recvs.keys():
        s, r = sends.get(key, []), recvs.get(key, [])
        if len(s) != len(r):
            raise unmatched(key, (s if len(s) > len(r) else r)[min(len(s), len(r))])
        pairs.extend(zip(s, r, strict=True))
    return pairs


def topological(keys: Iterable[K], deps: Mapping[K, Sequence[K]], cycle: Callable[[K], Exception]) -> list[K]:
    """``keys`` in an order where each comes after every key it depends on (``deps``), by an
    iterative depth-first search (no recursion limit); ``cycle(key)`` is raised for a key on a
    cycle."""
    state: dict[K, int] = {}  # 1: on the path, 2: done
    out: list[K] = []
    for root in keys:
        if root in state:
            continue
        stack: list[tuple[K, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            key, i = stack[-1]
            if i < len(deps[key]):
                stack[-1] = (key, i + 1)
                nxt = deps[key][i]
                if state.get(nxt) == 1:
                    raise cycle(nxt)
                if nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, 0))
            else:
                state[key] = 2
                out.append(key)
                stack.pop()
    return out
