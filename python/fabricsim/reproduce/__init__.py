"""The source papers' experiments reproduced and judged (``fabricsim reproduce``): each
experiment a TOML file of ``fabricsim/experiments/`` (:mod:`.experiment`: its format, loading,
running and drawing), its claims and how a verdict is reached (:mod:`.claims`), the closed-form
models claims may be checked against (:mod:`.theory`), and the verdicts under the defaults a
document states or leaves open (:mod:`.sensitivity`)."""

from .claims import Claim, evaluate
from .experiment import (
    SOURCES,
    Experiment,
    draw,
    experiments,
    fabricsim_cell,
    figures,
    headline,
    load,
    markdown_claims,
    markdown_tables,
    run_experiment,
    tables,
)

__all__ = [
    "SOURCES",
    "Claim",
    "Experiment",
    "draw",
    "evaluate",
    "experiments",
    "fabricsim_cell",
    "figures",
    "headline",
    "load",
    "markdown_claims",
    "markdown_tables",
    "run_experiment",
    "tables",
]
