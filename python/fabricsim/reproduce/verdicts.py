"""How a claim of the reproduction suite is judged (``fabricsim reproduce``, docs/reproduction.md).

**Verdicts, seed by seed** (one rule for every claim; the seeds' values are the smallest and the
largest seed's, ``lo`` and ``hi``, and every seed lies between them; the **seeds' spread** is
``hi - lo``, and a difference no larger than it is not told apart from the seed):

- a number: **matches** when every seed is within the tolerance of the source's number (or the
  mean is, and the seeds' spread is no wider than the tolerance band); **differs** when every seed
  is outside the band on one side, or **same direction, different size** when moreover every seed
  is on the source's side of the pivot, the mean is further from the pivot than the seeds'
  spread, and every seed has at least half the source's effect (``(value - pivot) / (number -
  pivot) >= 0.5``: a document's "up to 1.25x" is not reproduced by 1.01x); **inconclusive**
  otherwise: some seeds inside the band and some outside, or seeds on both sides of it;
- a direction: **differs** when no seed is on the expected side of the pivot (a seed at the pivot
  is on neither side: "identical" contradicts "faster"), **inconclusive** when the seeds are on
  both sides or when every seed is on the expected side but the mean's distance from the pivot is
  no larger than the seeds' spread; otherwise **matches**, unless the claim's words carry a size
  (``words``: "much better", "significantly", "far below"; :data:`WORDS` gives each its size,
  a share of the pivot) and some seed falls short of it: then **same direction, different size**.
  A paper claim whose quote has one of those words names it in ``words``, or says in
  ``words_why`` why it does not size this comparison (it qualifies another clause).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .claims import Claim

__all__ = ["DIFFERS", "DIRECTION", "INCONCLUSIVE", "LEAST_EFFECT", "MATCHES", "VERDICTS", "WORDS", "judge"]

MATCHES, DIRECTION, DIFFERS, INCONCLUSIVE = "matches", "same direction, different size", "differs", "inconclusive"
VERDICTS = (MATCHES, DIRECTION, INCONCLUSIVE, DIFFERS)

#: The size a word of a claim carries, as a share of the pivot a direction must clear (a ratio below
#: ``1 - size`` or above ``1 + size``). fabricsim's reading: no document puts a number on its
#: words. A word of degree ("much", "significantly", "clearly") asks for a tenth; a word of
#: extremes ("far", "drastically", "dramatic") for half (2x faster, or half the queue).
WORDS = {
    "much": 0.1,
    "significantly": 0.1,
    "significant": 0.1,
    "clearly": 0.1,
    "clear": 0.1,
    "notably": 0.1,
    "notable": 0.1,
    "sizable": 0.1,
    "considerably": 0.1,
    "far": 0.5,
    "drastically": 0.5,
    "dramatic": 0.5,
}
#: The least share of a document's effect a size may have and still be in its direction.
LEAST_EFFECT = 0.5


def judge(c: Claim, value: float, lo: float, hi: float, ref: float | None) -> str:
    """The verdict of a claim whose value is ``value`` (mean over seeds, seeds within
    ``lo``..``hi``) against the source's ``ref`` (None for a direction), seed by seed (see the
    module: every seed lies between ``lo`` and ``hi``, and each scale is linear in the value)."""
    pivot = c.pivot()
    spread = hi - lo
    if ref is None:
        assert pivot is not None
        sign = 1 if c.expect == "above" else -1
        worst, best = sorted(((lo - pivot) * sign, (hi - pivot) * sign))
        if best <= 0:
            return DIFFERS  # no seed on the expected side (at the pivot is on neither side)
        if worst <= 0 or (value - pivot) * sign <= spread:
            return INCONCLUSIVE  # seeds on both sides, or a gap the seeds' spread covers
        if worst <= c.margin * abs(pivot):
            return DIRECTION  # every seed on the side, not every seed by the size the words carry
        return MATCHES
    tol = c.tolerance
    low, high = sorted((c.error(lo, ref), c.error(hi, ref)))
    if -tol <= low and high <= tol:
        return MATCHES  # every seed within the tolerance
    if abs(c.error(value, ref)) <= tol and high - low <= 2 * tol:
        return MATCHES  # the mean within it, the seeds' spread no wider than the band
    if low > tol or high < -tol:
        # every seed outside the band, on one side: in the source's direction only beyond the
        # seeds' spread and with at least half its effect
        if pivot is not None and ref != pivot and abs(value - pivot) > spread:
            least = min((lo - pivot) / (ref - pivot), (hi - pivot) / (ref - pivot))
            if least >= LEAST_EFFECT:
                return DIRECTION
        return DIFFERS
    return INCONCLUSIVE
