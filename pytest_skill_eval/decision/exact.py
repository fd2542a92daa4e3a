"""Exact tests of paired and unpaired binary evidence (pure, exact on integers).

- :func:`sign_test`: the two-sided exact sign test of ``positive`` against ``negative``
  cases (ties are left out before it is called), the binomial test of B(n, 1/2).
- :func:`mcnemar_exact`: the exact two-sided McNemar test of paired binary outcomes, which
  is the sign test on the discordant pairs (McNemar 1947).
- :func:`signed_rank_exact`: the exact Wilcoxon signed-rank test (Wilcoxon 1945) with zeros
  dropped before ranking (Wilcoxon's treatment, the one the sign test shares) and tied
  magnitudes given their mid-ranks; the null distribution is the exact conditional one of
  the observed mid-ranks under random signs, enumerated, so ties never need a correction.
- :func:`fisher_exact` (from :mod:`pytest_skill_eval.stats`): Fisher's exact test of one
  comparison's 2x2 table of trial counts.

Every p-value is a ratio of integers converted to a float once, at the end, so tables that
are equally likely are never told apart by rounding. docs/statistics.md gives the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from pytest_skill_eval.stats import fisher_exact

__all__ = ["SignedRank", "fisher_exact", "mcnemar_exact", "sign_test", "signed_rank_exact"]


def sign_test(positive: int, negative: int) -> float:
    """Two-sided exact sign test: ``P(|K - n/2| >= |k - n/2|)`` for K ~ B(n, 1/2), n = positive + negative.

    The distribution is symmetric, so this is twice the smaller tail, capped at 1 (and the
    same as the two-sided binomial test of scipy's ``binomtest(k, n, 0.5)``). With no
    cases it is 1: nothing speaks against the null hypothesis.
    """
    if positive < 0 or negative < 0:
        raise ValueError(f"expected counts of at least 0, found {positive} positive and {negative} negative")
    n = positive + negative
    if n == 0:
        return 1.0
    k = min(positive, negative)
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, (2 * tail) / (1 << n))


def mcnemar_exact(fail_to_pass: int, pass_to_fail: int) -> float:
    """The exact two-sided McNemar test: the sign test on the discordant pairs (ties carry no information)."""
    return sign_test(fail_to_pass, pass_to_fail)


@dataclass(frozen=True, slots=True)
class SignedRank:
    """The signed-rank statistic and its exact two-sided p-value.

    ``statistic`` is T+, the sum of the (mid-)ranks of the positive differences; ``n`` the
    number of non-zero differences that were ranked, ``zeros`` the ones dropped.
    """

    statistic: Fraction
    n: int
    zeros: int
    p_value: float


def doubled_midranks(magnitudes: Sequence[Fraction]) -> list[int]:
    """Twice the mid-rank of each magnitude (1-based ranks; equal magnitudes share their mean rank).

    A tie block occupying ranks i..j has mid-rank (i + j) / 2, so twice it is the integer i + j.
    """
    order = sorted(range(len(magnitudes)), key=lambda i: magnitudes[i])
    doubled = [0] * len(magnitudes)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and magnitudes[order[end + 1]] == magnitudes[order[start]]:
            end += 1
        for position in range(start, end + 1):
            doubled[order[position]] = (start + 1) + (end + 1)
        start = end + 1
    return doubled


def subset_sum_counts(weights: Sequence[int]) -> list[int]:
    """``counts[s]``: how many of the 2^n subsets of *weights* sum to s (the sign-flip distribution)."""
    counts = [1]
    for w in weights:
        grown = counts + [0] * w
        for s, c in enumerate(counts):
            if c:
                grown[s + w] += c
        counts = grown
    return counts


def signed_rank_exact(differences: Sequence[Fraction | int]) -> SignedRank:
    """Exact two-sided Wilcoxon signed-rank test of paired *differences* (zeros dropped, ties at mid-ranks).

    Pass exact values (``Fraction`` or ``int``): ties are found by equality, and a float
    difference such as ``0.3 - 0.1`` would not tie with ``0.2``. Under the null hypothesis
    every difference is symmetric about 0, so given the magnitudes each sign is a fair coin:
    the p-value is the share of the 2^n sign assignments whose T+ lies at least as far from
    its mean n(n+1)/4 as the observed one. Enumerated on twice the ranks (integers), so it is
    exact with ties; it needs O(n^3) integer additions (n = 200 takes well under a second).
    """
    exact = [Fraction(d) for d in differences]
    nonzero = [d for d in exact if d != 0]
    zeros = len(exact) - len(nonzero)
    n = len(nonzero)
    if n == 0:
        return SignedRank(Fraction(0), 0, zeros, 1.0)
    doubled = doubled_midranks([abs(d) for d in nonzero])
    observed = sum(r for r, d in zip(doubled, nonzero, strict=True) if d > 0)
    total = n * (n + 1)  # the sum of every doubled rank
    counts = subset_sum_counts(doubled)
    distance = abs(2 * observed - total)
    extreme = sum(c for s, c in enumerate(counts) if c and abs(2 * s - total) >= distance)
    return SignedRank(Fraction(observed, 2), n, zeros, min(1.0, extreme / (1 << n)))
