"""Statistics of repeated trials (pure): pass rates, their intervals, and the exact test.

Two functions, written out rather than taken from a statistics package so the plugin's
install stays light; both are exact arithmetic on integers where it matters, and the tests
check them against published reference values (R's ``fisher.test`` and ``binom`` examples,
scipy's documented ones).

- :func:`wilson_interval`: the Wilson score interval of a binomial proportion, the
  interval that stays inside [0, 1] and behaves at 0/n and n/n, where the normal
  approximation does not.
- :func:`fisher_exact`: the two-sided p-value of Fisher's exact test of a 2×2 table
  (baseline passes and fails against candidate passes and fails): the probability, given
  the margins, of a table at most as likely as the one observed. It conditions on both
  margins, so it is conservative for small trial counts; it never needs a large-sample
  approximation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from pytest_skill_eval.codec import Layout

#: the two-sided 95 % quantile of the standard normal distribution
Z_95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Interval:
    """A two-sided interval; stored as ``[low, high]`` wherever a record holds one."""

    STORED: ClassVar[Layout] = Layout(array=True)
    low: float
    high: float


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> Interval | None:
    """The Wilson score interval of *successes* in *trials* (None without trials)."""
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"expected 0 <= successes <= trials, found {successes} of {trials}")
    if trials == 0:
        return None
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = (z / (1 + z2 / trials)) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    # the bounds are exact at the ends: 0 successes has low 0, all successes high 1
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(low, high)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test of the table ``[[a, b], [c, d]]``.

    Rows are the two samples (baseline, candidate), columns the outcomes (pass, fail).
    Tables are compared by their exact hypergeometric probabilities as integers, so ties
    (equally likely tables, common with small counts) are never missed by rounding.
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"expected counts of at least 0, found {[[a, b], [c, d]]}")
    row1, row2, col1 = a + b, c + d, a + c
    n = row1 + row2
    if n == 0:
        return 1.0
    low, high = max(0, col1 - row2), min(row1, col1)

    def weight(x: int) -> int:
        return math.comb(row1, x) * math.comb(row2, col1 - x)

    observed = weight(a)
    at_most_as_likely = sum(w for x in range(low, high + 1) if (w := weight(x)) <= observed)
    return min(1.0, at_most_as_likely / math.comb(n, col1))
