"""A run's summary, typed: the keys the core declares (``fabricsim._core.columns()["summary"]``,
docs/scenario.md's Summary table) and those the front end adds. ``Results.summary`` is a
:class:`Summary`, so ``r.summary["max_slowdown"]`` is known to be a float or None and a
misspelt key is a type error; a test keeps the declaration equal to the core's.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["FRONT_END_KEYS", "Summary"]


class Summary(TypedDict, total=False):
    """The summary of a run (``summary.json``'s ``summary``, :attr:`fabricsim.Results.summary`).

    The core's keys first (every run has them), then the front end's (where it says so)."""

    status: str
    stop_reason: str
    stop_detail: str
    flows: int
    completed: int
    max_fct_ns: float | None
    mean_fct_ns: float | None
    p99_fct_ns: float | None
    max_slowdown: float | None
    mean_slowdown: float | None
    max_jct_ns: float | None
    mean_jct_ns: float | None
    max_jct_slowdown: float | None
    data_packets: int
    retransmits: int
    trims: int
    drops: int
    control_drops: int
    pfc_frames: int
    ecn_marks: int
    max_queue_bytes: int
    events: int
    wall_s: float
    sim_time_ns: float
    lb_state_bytes: int
    base_rtt_ns: float
    bdp_bytes: int
    offered_load: float | None
    achieved_load: float | None
    payload_efficiency: float
    line_goodput_gbps: float
    warnings: list[str]
    #: The front end's: the threads the run used ...
    threads: int
    #: ... why fewer than asked, where that happened ...
    thread_note: str
    #: ... the windows an auto run ran on one thread ...
    solo_windows: int
    #: ... the process's peak memory, MB (``fabricsim.run``) ...
    peak_rss_mb: float
    #: ... and, with ``reference="nonblocking"``, the reference and the largest fabric cost.
    reference: str
    max_fabric_cost: float | None


#: The keys the front end adds to the core's.
FRONT_END_KEYS = ("threads", "thread_note", "solo_windows", "peak_rss_mb", "reference", "max_fabric_cost")
