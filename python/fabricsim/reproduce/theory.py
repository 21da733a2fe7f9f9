"""Balls-into-bins models of packet spraying (ARCANE sec. 5, App. B, App. C, App. D.1).

Theory beside simulation: the reproduction suite (``fabricsim reproduce``) compares these
models with the papers' statements and with what the simulator measures on the same fabric.

* :func:`evs_imbalance` -- App. B / D.1, Fig. 16: each flow's EVs hash onto a switch's
  uplinks like balls thrown into bins; the *load imbalance* is the fullest bin over the
  average, minus one. Few EVs per flow give a large imbalance, 65536 EVs almost none.
  Optionally each flow's packets pick among its EVs at random (as OPS does), the second
  stage the paper's model leaves out; it sets the floor a simulation with finite messages
  sees.
* :func:`ops_queues` -- sec. 5.1, Fig. 13: batched balls-into-bins. Each step every
  non-empty bin (an output port) serves one ball, then about ``lam * n`` balls (packets)
  arrive, each into a bin chosen uniformly at random (oblivious spraying). At ``lam`` near
  1 the fullest queue keeps growing, faster for more bins.
* :func:`recycled_queues` -- sec. 5.2, Fig. 14, Theorem 5.1: recycled balls-into-bins. ``b * n``
  colors (EVs) are cycled through in batches of ``n``; a ball leaving a bin with at most
  ``tau`` balls makes its color remember that bin (the EV came back unmarked), one leaving a
  fuller bin makes it forget (marked); a color that remembers a bin throws there, the others
  at random. The queues converge below ``tau``. With ``ack_ratio = k`` only one departure in
  ``k`` reports back (ACK coalescing, App. D.1, Fig. 17); a color whose ball was not reported
  forgets its bin, as ARCANE only reuses EVs an ACK returned.

:func:`evaluate` runs a model from a claim's ``theory = {model = ..., ...}`` table and gives
one number; :func:`figures` gives the models' plots (drawn by ``fabricsim plot`` and the
reproduction report).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import scenario_error
from ..plot.figures import Figure, Series

#: The most numbers a model may hold (rounds x bins, trials x switches x ports): 80 MB.
MAX_CELLS = 10_000_000

__all__ = ["FIGURES", "MODELS", "evaluate", "evs_imbalance", "figure", "ops_queues", "recycled_queues"]


def evs_imbalance(
    flows: int,
    evs: int,
    ports: int,
    trials: int = 200,
    seed: int = 1,
    packets: int | None = None,
    switches: int = 1,
    cross: float = 1.0,
) -> np.ndarray:
    """Load imbalance of ``flows`` x ``evs`` EVs hashed onto ``ports`` uplinks, per trial.

    Each flow's EVs land on uniformly random ports (the hash of a distinct header with each
    EV). Without ``packets`` a port's load is the number of EVs on it (the paper's model);
    with ``packets``, each flow sends that many packets on EVs picked at random, and a port's
    load is its packets. The imbalance is ``max load / mean load - 1``, the largest over
    ``switches`` independent switches. ``cross``: the chance that a flow uses the uplinks at all
    (in a permutation, that its destination is under another leaf), drawn per switch and
    flow. Returns ``trials`` values.

    >>> bool(evs_imbalance(32, 65536, 32).mean() < 0.01 < 0.10 < evs_imbalance(32, 128, 32).mean())
    True
    """
    for name, value in (("flows", flows), ("evs", evs), ("ports", ports), ("trials", trials), ("switches", switches)):
        if not isinstance(value, int) or value < 1:
            raise scenario_error(f"theory: {name}", f"got {value!r}; allowed: an integer >= 1")
    if trials * switches * ports > MAX_CELLS:
        raise scenario_error("theory: trials", f"got {trials} x {switches} switches x {ports} ports; allowed: at most {MAX_CELLS:,} cells")
    rng = np.random.default_rng(seed)
    draws = trials * switches
    p = np.full(ports, 1.0 / ports)
    if not 0.0 < cross <= 1.0:
        raise scenario_error("theory: cross", f"got {cross!r}; allowed: 0 < cross <= 1")
    load = np.zeros((draws, ports))
    for _ in range(flows):
        crosses = rng.random(draws) < cross if cross < 1.0 else np.ones(draws, dtype=bool)
        evs_on = rng.multinomial(evs, p, size=draws)
        if packets is not None:
            evs_on = np.array([rng.multinomial(packets, row / evs) for row in evs_on])
        load += evs_on * crosses[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        imbalance = np.nan_to_num(load.max(axis=1) / load.mean(axis=1) - 1.0)
    return np.asarray(imbalance.reshape(trials, switches).max(axis=1))


def ops_queues(n: int, rounds: int, lam: float = 1.0, seed: int = 1) -> np.ndarray:
    """Queue lengths of batched balls-into-bins with uniform random throws, ``rounds x n``.

    Each step every non-empty bin serves one ball, then each of ``n`` sources throws a ball
    with probability ``lam`` into a bin chosen uniformly at random; the row is the queues
    after the throws.

    >>> q = ops_queues(8, 2000, lam=1.0)
    >>> q.shape, bool(q[-1].sum() >= q[0].sum())
    ((2000, 8), True)
    """
    _check_queues(n, rounds)
    if not 0.0 < lam <= 1.0:
        raise scenario_error("theory: lam", f"got {lam!r}; allowed: 0 < lam <= 1")
    rng = np.random.default_rng(seed)
    q = np.zeros(n, dtype=np.int64)
    out = np.empty((rounds, n), dtype=np.int64)
    for t in range(rounds):
        q = np.maximum(q - 1, 0)
        arrivals = rng.binomial(n, lam) if lam < 1.0 else n
        q += np.bincount(rng.integers(0, n, size=arrivals), minlength=n)
        out[t] = q
    return out


def recycled_queues(n: int, rounds: int, b: float | None = None, tau: int | None = None, ack_ratio: int = 1, seed: int = 1) -> np.ndarray:
    """Queue lengths of recycled balls-into-bins (Theorem 5.1), ``rounds x n``.

    ``b`` (colors per bin) defaults to the theorem's ``2.4 ln n``, ``tau`` to ``4 ln n``
    (both rounded up). Every step serves one ball per non-empty bin (its color remembers the
    bin if the bin held at most ``tau`` balls and the departure is reported, else forgets),
    then throws the next batch of ``n`` colors: to the remembered bin, or uniformly at random.

    >>> q = recycled_queues(16, 3000)
    >>> int(q[1500:].max()) < 3 * math.ceil(4 * math.log(16)) < int(ops_queues(16, 3000)[1500:].max())
    True
    """
    _check_queues(n, rounds)
    if not isinstance(ack_ratio, int) or ack_ratio < 1:
        raise scenario_error("theory: ack_ratio", f"got {ack_ratio!r}; allowed: an integer >= 1")
    b = b if b is not None else math.ceil(2.4 * math.log(n))
    tau = tau if tau is not None else math.ceil(4 * math.log(n))
    colors = max(n, math.ceil(b * n))
    rng = np.random.default_rng(seed)
    bins: list[deque[int]] = [deque() for _ in range(n)]
    remember = [-1] * colors
    out = np.empty((rounds, n), dtype=np.int64)
    served = 0
    nxt = 0
    for t in range(rounds):
        for i, q in enumerate(bins):
            if not q:
                continue
            full = len(q)
            c = q.popleft()
            served += 1
            if served % ack_ratio != 0 or full > tau:
                remember[c] = -1
            elif remember[c] == -1:
                remember[c] = i
        randoms = rng.integers(0, n, size=n)
        for j in range(n):
            c = (nxt + j) % colors
            target = remember[c] if remember[c] >= 0 else int(randoms[j])
            bins[target].append(c)
        nxt = (nxt + n) % colors
        out[t] = [len(q) for q in bins]
    return out


def _check_queues(n: int, rounds: int) -> None:
    for name, value in (("n", n), ("rounds", rounds)):
        if not isinstance(value, int) or value < 2:
            raise scenario_error(f"theory: {name}", f"got {value!r}; allowed: an integer >= 2")
    if n * rounds > MAX_CELLS:
        raise scenario_error("theory: rounds", f"got {rounds} rounds x {n} bins; allowed: at most {MAX_CELLS:,} cells")


def _max_queue(policy: str = "ops", tail: float = 0.5, **kw: Any) -> float:
    """The fullest queue over the last ``tail`` of the rounds."""
    if policy == "ops":
        q = ops_queues(**kw)
    elif policy == "recycled":
        q = recycled_queues(**kw)
    else:
        raise scenario_error("theory: policy", f"got {policy!r}; allowed: ops, recycled")
    start = int(len(q) * (1 - tail))
    return float(q[start:].max())


def _imbalance(stat: str = "mean", **kw: Any) -> float:
    values = evs_imbalance(**kw)
    if stat == "mean":
        return float(values.mean())
    if stat == "p99":
        return float(np.quantile(values, 0.99))
    raise scenario_error("theory: stat", f"got {stat!r}; allowed: mean, p99")


#: The models a claim can name, with what each returns.
MODELS: dict[str, tuple[Callable[..., float], str]] = {
    "evs_imbalance": (_imbalance, "load imbalance of EVs hashed onto uplinks (mean over trials)"),
    "max_queue": (_max_queue, "fullest queue over the last half of the rounds (balls)"),
}


def evaluate(spec: dict[str, Any], where: str = "theory") -> float:
    """One number from a model: ``{"model": "evs_imbalance", "flows": 32, ...}``.

    >>> evaluate({"model": "max_queue", "policy": "recycled", "n": 16, "rounds": 2000})
    21.0
    """
    args = dict(spec)
    name = args.pop("model", None)
    if name not in MODELS:
        raise scenario_error(f"{where}: model", f"got {name!r}; allowed: {', '.join(MODELS)}")
    try:
        return MODELS[name][0](**args)
    except TypeError as e:
        raise scenario_error(where, f"{name}: {e}") from None


# ---- figures ---------------------------------------------------------------------------------


def _fullest(q: np.ndarray, points: int = 400) -> tuple[list[int], list[float]]:
    """The fullest queue per round, thinned to about ``points`` points (each the max of its span)."""
    fullest = q.max(axis=1)
    step = max(1, len(fullest) // points)
    xs = list(range(0, len(fullest), step))
    return [x + 1 for x in xs], [float(fullest[x : x + step].max()) for x in xs]


def _fig_growth(ns: list[int] = [8, 16, 32, 64], rounds: int = 10000, lam: float = 0.99, seed: int = 1) -> Figure:  # noqa: B006
    series = [Series(f"OPS, n={n}", *_fullest(ops_queues(n, rounds, lam, seed))) for n in ns]
    return Figure(
        "theory_ops_growth",
        "lines",
        f"Batched balls-into-bins, OPS at load {lam} (ARCANE Fig. 13)",
        "round",
        "fullest queue (balls)",
        series,
    )


def _fig_recycled(n: int = 16, rounds: int = 2000, seed: int = 1, ack_ratios: list[int] = [1]) -> Figure:  # noqa: B006
    tau = math.ceil(4 * math.log(n))
    series = [Series(f"OPS, n={n}", *_fullest(ops_queues(n, rounds, 1.0, seed)))]
    for k in ack_ratios:
        label = "recycled" if k == 1 else f"recycled, {k}:1 ACKs"
        series.append(Series(label, *_fullest(recycled_queues(n, rounds, ack_ratio=k, seed=seed))))
    series.append(Series(f"tau = {tau}", [1, rounds], [float(tau), float(tau)]))
    title = "Recycled vs oblivious balls-into-bins at full load" + (
        " with ACK coalescing (ARCANE Fig. 17)" if len(ack_ratios) > 1 else " (ARCANE Fig. 14)"
    )
    return Figure(
        "theory_recycled" if len(ack_ratios) == 1 else "theory_ack_ratio", "lines", title, "round", "fullest queue (balls)", series
    )


def _fig_imbalance(flows: list[int] = [1, 32], ports: int = 32, bits: list[int] = list(range(1, 17)), trials: int = 100) -> Figure:  # noqa: B006
    series = []
    for f in flows:
        ys = [float(evs_imbalance(f, 2**b, ports, trials=trials).mean()) for b in bits]
        series.append(Series(f"{f} flow{'s' if f > 1 else ''}", [f"2^{b}" for b in bits], ys))
    return Figure(
        "theory_evs_imbalance",
        "lines",
        f"Load imbalance of EVs on {ports} uplinks (ARCANE App. D.1, Fig. 16)",
        "EVS size",
        "load imbalance (max / mean - 1)",
        series,
        ylog=True,
    )


#: The model figures an experiment can ask for (``[[theory_figures]] figure = ...``).
FIGURES: dict[str, Callable[..., Figure]] = {"ops_growth": _fig_growth, "recycled": _fig_recycled, "evs_imbalance": _fig_imbalance}


def figure(spec: dict[str, Any], where: str = "theory_figures") -> Figure:
    """A model figure: ``{"figure": "ops_growth", "ns": [8, 16]}``."""
    args = dict(spec)
    name = args.pop("figure", None)
    if name not in FIGURES:
        raise scenario_error(f"{where}: figure", f"got {name!r}; allowed: {', '.join(FIGURES)}")
    try:
        return FIGURES[name](**args)
    except TypeError as e:
        raise scenario_error(where, f"{name}: {e}") from None
