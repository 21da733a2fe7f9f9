"""Typed stub of the native module (crates/fabricsim-py); tests/test_docs.py checks it against
the module with mypy's stubtest."""

from collections.abc import Callable
from typing import final

__all__ = [
    "Parsed",
    "Session",
    "Simulation",
    "__commit__",
    "__version__",
    "available_cpus",
    "collective_messages",
    "columns",
    "parameters",
    "quantity",
    "registry",
    "schema",
    "survey",
    "topology",
    "validate",
]
__version__: str
__commit__: str | None

@final
class Parsed:
    """A scenario read from its JSON once, for its check, its survey and its build; building a
    :class:`Simulation` from it uses it up."""

    def __new__(cls, scenario_json: str) -> Parsed: ...
    def validate(self) -> str:
        """:func:`validate` of the scenario read once."""
    def survey(self, columns: list[str] | None = None) -> tuple[list[str], int, int]:
        """:func:`survey` of the scenario read once."""

@final
class Simulation:
    """A simulation being run. Raises ``fabricsim.errors.ScenarioError`` on a bad scenario."""

    def __new__(cls, scenario: str | Parsed, threads: int | None = 1, columns: list[str] | None = None) -> Simulation:
        """``scenario``: its JSON, or a :class:`Parsed` one (which the build uses up);
        ``threads``: the parallel engine's threads (the results do not depend on them);
        ``None``: chosen by the engine from the work and the CPUs available ("auto")."""
    @staticmethod
    def ranked(scenario: str | Parsed, ranks: int, rank: int, threads: int = 1, columns: list[str] | None = None) -> Simulation:
        """``scenario`` as rank ``rank`` of a run across ``ranks`` processes (:mod:`fabricsim.mpi`),
        each running its pieces on ``threads`` threads."""
    def run_ranked(
        self,
        allgather: Callable[[bytes], list[bytes]],
        alltoallv: Callable[[bytes, list[int]], tuple[bytes | bytearray, list[int]]],
    ) -> bool:
        """Run a rank's part to the end with the other ranks', then gather the results on rank 0;
        whether this rank holds them. The collectives are :func:`fabricsim._ranks.exchange`'s."""
    @property
    def threads(self) -> int:
        """The threads the run uses."""
    @property
    def windows(self) -> tuple[int, int]:
        """Windows run on every thread, and (an auto run) on one thread after a window with few events."""
    @property
    def window_profile(self) -> tuple[float, float, float]:
        """Where the parallel windows' wall went, in seconds: the driver's time in windows, and the
        worker threads' waits summed over them, between windows and within them (timings)."""
    @property
    def thread_note(self) -> str | None:
        """Why the run uses fewer threads than asked, if it does."""
    def step(self, budget: int) -> str:
        """Process at most ``budget`` events; returns "running", "complete" or "incomplete"."""
    @property
    def now_ps(self) -> int: ...
    @property
    def events(self) -> int: ...
    @property
    def flows_done(self) -> int: ...
    @property
    def flow_count(self) -> int: ...
    @property
    def max_time_ps(self) -> int: ...
    @property
    def bdp_bytes(self) -> int: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def expected_events(self) -> int:
        """The events the run is expected to make, roughly (data packets x 8 per tier)."""
    @property
    def memory_estimate(self) -> int:
        """The memory the run is estimated to need, bytes (checked against stop.max_memory)."""
    @property
    def job_hosts(self) -> list[list[int]]:
        """Each job's hosts in rank order (a trace's last: the hosts it touches)."""
    @property
    def status(self) -> str: ...
    def scenario_json(self) -> str: ...
    def results(self, columns: list[str] | None = None) -> dict[str, object]:
        """Take the results (once: the run's state is freed as they are built; a second call,
        or any other call afterwards, raises RuntimeError): {"flows", "ports", "reorder", "samples",
        "jobs", "steps", "buckets": {col: column}, "summary", "accounting", "scenario": JSON str}.
        A column is little-endian bytes, 8 per row (u64 or f64 as the declared type says), bytes of
        0/1 per row for a bool, a list for a string column (or, where a few values repeat, a
        code byte per row and the list of values), and (values, validity bytes) for one that may
        be null (``fabricsim.columns()`` declares each). ``columns``: the flows table's columns
        to make (all if None; a name it does not declare raises ScenarioError)."""

def quantity(kind: str, text: str) -> int:
    """A quantity as a scenario writes it, read by the core's rules: kind "size" (bytes),
    "duration" (picoseconds) or "rate" (bit/s); ValueError with the core's words otherwise."""

def validate(scenario_json: str) -> str:
    """Check a scenario without running it; returns it with every default filled in (JSON)."""

def topology(scenario_json: str, graph: bool) -> tuple[str, str | None]:
    """The scenario's fabric built once: its summary as a graph (hosts, switches, links,
    diameter, bisection) and, with ``graph``, the fabric written as ``topology.graph``; JSON."""

def survey(scenario_json: str, columns: list[str] | None = None) -> tuple[list[str], int, int]:
    """The scenario's warnings, expected events and memory estimate (bytes) from one resolve."""

def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask and cgroup CPU quota): what threads = "auto" uses at most."""

def registry() -> list[tuple[str, str, str, str]]:
    """(category, name, summary, reference) of everything a scenario can name."""

def parameters() -> list[tuple[str, str, str, str, str | None]]:
    """(table, kind, name, meaning, example or None) of every parameter of every kind of the lb, workload, faults and
    topology tables, read from each kind's declaration."""

def schema() -> str:
    """The JSON schema of a scenario (draft 2020-12), generated from the core's declarations."""

def columns() -> dict[str, list[tuple[str, str, str, str, str]]]:
    """The declared output columns: {table: [(name, type, unit, null_when, meaning)]}."""

def collective_messages(
    op: str,
    algorithm: str | None,
    hosts: list[int],
    per_server: int,
    size: int,
    max_connections: int | None,
    max_messages: int,
) -> tuple[list[tuple[int, int, int]], list[list[int]], list[list[int]]]:
    """One collective expanded by fabricsim's algorithms: the messages (src, dst, bytes), what
    each waits for (a message's index, or ``-1 - r`` for what rank r waits for before the
    collective) and, per rank, the messages that end its part. ``ValueError`` with the reason
    where the algorithm cannot run it or it makes more than ``max_messages``."""

@final
class Session:
    """A run driven from outside (fabricsim.session.Session wraps it). Times in ps."""

    def __new__(cls, scenario_json: str, threads: int | None = 1) -> Session: ...
    def send(self, src: int, dst: int, bytes: int, at: int | None = None, after: list[int] = ...) -> int:
        """Sends ``bytes`` from ``src`` to ``dst`` at ``at`` (None: now), once ``after`` are heard of; returns the message's id."""
    def run_until(self, t: int) -> str:
        """Runs every event at ``t`` or before, without the GIL."""
    def run_until_completion(self, limit: int) -> str:
        """Runs until a message completes, or every event at ``limit`` or before."""
    def next_event_time(self) -> int | None: ...
    @property
    def now_ps(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def stop_reason(self) -> str: ...
    @property
    def threads(self) -> int: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def max_time_ps(self) -> int: ...
    def completions(self) -> list[tuple[int, int, int, int]]:
        """(id, start, end, fct) of each message completed since the last call."""
    def results(self) -> dict[str, object]:
        """The results so far (the session goes on)."""
