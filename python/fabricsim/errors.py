"""Exceptions of fabricsim.

:class:`ScenarioError` is created by the native module, so the core and the Python layer
raise the same type. It is a ``ValueError`` with two attributes: ``field``, the dotted path
(``"switch.ecn.kmin"``, ``"workload.flows[3].dst"``), and ``message``, the value given and
what is allowed. It is raised before any simulation starts.
"""

from __future__ import annotations

from ._core import ScenarioError

__all__ = ["ScenarioError", "scenario_error"]


def scenario_error(field: str, message: str) -> ScenarioError:
    """A :class:`ScenarioError` for ``field`` raised by the Python layer (files, CLI options).

    Examples
    --------
    >>> e = scenario_error("--lb", "got ''; expected names such as ecmp,ops")
    >>> e.field, str(e)
    ('--lb', "--lb: got ''; expected names such as ecmp,ops")
    """
    err = ScenarioError(f"{field}: {message}")
    err.field = field
    err.message = message
    return err
