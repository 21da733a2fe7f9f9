"""Exceptions of fabricsim: one hierarchy, made here, for the core and the Python layer alike.

Every error fabricsim raises on purpose is a :class:`FabricsimError`, and each kind is also the
builtin exception a Python caller would expect, so ``except ValueError`` keeps working:

- :class:`ScenarioError` (a ``ValueError``): bad input, refused before any simulation starts:
  a scenario, a file it reads, a CLI option. ``field`` is the dotted path
  (``"switch.ecn.kmin"``, ``"workload.flows[3].dst"``), ``message`` the value given and what is
  allowed. The native core raises this same class (it imports it from here when it refuses).
- :class:`SpecError` (a ``ScenarioError``): a sweep or experiment file that cannot run.
- :class:`ArgumentError` (a ``TypeError``): a Python API call given the wrong kind of value
  (``fabricsim.run(5)``).
- :class:`MissingDependency` (an ``ImportError``): an optional package a feature needs is not
  installed (Ray for ``--ray``).
- :class:`InternalError` (a ``RuntimeError``): fabricsim's own fault or misuse of a spent object
  (a simulation's results taken twice).

The CLI maps them to exit codes (``exit_code``): 2 for bad input (scenario, spec, argument), 4
for a missing dependency, 1 for an internal error; any other exception is an internal error.
"""

from __future__ import annotations

import signal

__all__ = [
    "ArgumentError",
    "FabricsimError",
    "InternalError",
    "MissingDependency",
    "ScenarioError",
    "SpecError",
    "argument_error",
    "scenario_error",
    "spec_error",
]


class FabricsimError(Exception):
    """Every error fabricsim raises on purpose."""

    exit_code = 1


class ScenarioError(FabricsimError, ValueError):
    """Bad input: a scenario (or a file or option it came from) that cannot run. ``field`` is the
    dotted path, ``message`` the value given and what is allowed."""

    exit_code = 2

    def __init__(self, text: str = "", field: str = "", message: str = "") -> None:
        super().__init__(text)
        self.field = field
        self.message = message or text


class SpecError(ScenarioError):
    """A sweep or experiment file (or its options) that cannot run."""


class ArgumentError(FabricsimError, TypeError):
    """A Python API call given the wrong kind of value."""

    exit_code = 2


class MissingDependency(FabricsimError, ImportError):
    """An optional package that a feature needs is not installed."""

    exit_code = 4


class InternalError(FabricsimError, RuntimeError):
    """fabricsim's own fault, or a spent object used again."""

    exit_code = 1


class InterruptedAfterWrite(KeyboardInterrupt):
    """A signal that came while a run's results were being moved into place: they were, whole,
    into ``out_dir`` (a KeyboardInterrupt, so ``except Exception`` does not swallow it)."""

    def __init__(self, signum: int, out_dir: object) -> None:
        self.signum, self.out_dir = signum, out_dir
        super().__init__(f"{signal.Signals(signum).name} after the results were written to {out_dir}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def scenario_error(field: str, message: str) -> ScenarioError:
    """A :class:`ScenarioError` for ``field`` raised by the Python layer (files, CLI options).

    Examples
    --------
    >>> e = scenario_error("--lb", "got ''; expected names such as ecmp,ops")
    >>> e.field, str(e)
    ('--lb', "--lb: got ''; expected names such as ecmp,ops")
    """
    return ScenarioError(f"{field}: {message}", field, message)


def spec_error(field: str, message: str) -> SpecError:
    """A :class:`SpecError` for ``field`` of a sweep or experiment file."""
    return SpecError(f"{field}: {message}", field, message)


def argument_error(name: str, value: object, expected: str) -> ArgumentError:
    """An :class:`ArgumentError` for parameter ``name`` of a Python API call.

    >>> str(argument_error("scenario", 5, "a Scenario, a dict or the path of a TOML file"))
    'scenario: got 5 (int); expected a Scenario, a dict or the path of a TOML file'
    """
    return ArgumentError(f"{name}: got {value!r:.80} ({type(value).__name__}); expected {expected}")
