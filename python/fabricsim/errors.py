"""Exceptions of fabricsim."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario that cannot run: names the field, the value and what is allowed.

    Raised before any simulation starts. ``field`` is the dotted path
    (``"switch.ecn.kmin"``, ``"workload.flows[3].dst"``); ``message`` says what was given and
    what is allowed.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
