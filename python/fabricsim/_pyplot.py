"""matplotlib's pyplot as fabricsim draws with it (no display; labels as text): for every
module that draws (a figure, a topology), which imports nothing of the package."""

from __future__ import annotations

from typing import Any


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    # labels are the user's names (a job called "$\\frac{$"): text, never TeX to parse
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt
