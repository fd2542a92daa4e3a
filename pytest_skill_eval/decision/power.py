"""Exact power of the decision's tests, and trial planning (pure).

Power is computed by exact enumeration over binomial outcomes, never by a normal
approximation:

- :func:`fisher_power`: the probability that Fisher's exact test rejects at alpha when the
  baseline arm passes with probability p_b in n_b trials and the candidate arm with p_c in
  n_c trials: the sum of ``B(x; n_b, p_b) * B(y; n_c, p_c)`` over the tables (x, y) the test
  rejects (its rejection region, found table by table with the same integer arithmetic as
  :func:`pytest_skill_eval.stats.fisher_exact`).
- :func:`comparison_power`: the power to detect a rate difference D at an observed baseline
  rate: the smaller of the powers against p_b + D and p_b - D, over the directions that stay
  inside [0, 1].
- :func:`suite_power`: the power of the suite's sign test over cases, each case at its own
  arms' trial counts and observed baseline rate, every candidate rate moved by D in one
  direction (clamped to [0, 1]); the smaller over the directions the mean baseline rate admits.
- :func:`trials_for_power`: the smallest number of trials per arm whose Fisher test reaches
  power P against a difference D at a given baseline rate, or at the least favourable one.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from pytest_skill_eval.decision.exact import sign_test

__all__ = [
    "CaseCounts", "TrialPlan", "alternatives", "binomial_pmf", "comparison_power", "fisher_power",
    "fisher_rejection_region", "least_favourable_rates", "sign_probabilities", "sign_test_critical",
    "sign_test_power", "suite_power", "trials_for_power",
]

#: rates a hair outside [0, 1] from float arithmetic (0.8 + 0.2) count as inside
RATE_SLACK = 1e-12


def check_rate(name: str, rate: float) -> None:
    if not 0.0 <= rate <= 1.0:  # also refuses NaN
        raise ValueError(f"{name}: expected a rate from 0 to 1, found {rate!r}")


def check_level(name: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name}: expected a number strictly between 0 and 1, found {value!r}")


def check_effect(effect: float) -> None:
    if not 0.0 < effect <= 0.5:
        raise ValueError(f"minimum effect: expected a rate difference above 0 and at most 0.5, found {effect!r}")


def binomial_pmf(n: int, p: float) -> list[float]:
    """``[B(k; n, p) for k in 0..n]``, computed in logs so large n neither overflows nor underflows early."""
    if n < 0:
        raise ValueError(f"expected a number of trials of at least 0, found {n}")
    check_rate("rate", p)
    if p == 0.0 or p == 1.0:
        return [1.0 if k == (0 if p == 0.0 else n) else 0.0 for k in range(n + 1)]
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n = math.lgamma(n + 1)
    return [math.exp(log_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
            for k in range(n + 1)]


@lru_cache(maxsize=4096)
def fisher_rejection_region(n_base: int, n_cand: int, alpha: float) -> tuple[tuple[int, ...], ...]:
    """For each baseline pass count x (index), the candidate pass counts y at which Fisher's test rejects.

    Table by table, grouped by the total s = x + y (the test conditions on it): the
    hypergeometric weights of the margin's tables as exact integers, and the p-value of x is
    the share of the weights at most as large as its own: ``min(1, sum / C(n, s))``, the
    expression :func:`~pytest_skill_eval.stats.fisher_exact` evaluates, so both agree on
    every table. Rejects means p <= alpha.
    """
    if n_base < 0 or n_cand < 0:
        raise ValueError(f"expected trial counts of at least 0, found {n_base} and {n_cand}")
    check_level("alpha", alpha)
    rejected: list[list[int]] = [[] for _ in range(n_base + 1)]
    n = n_base + n_cand
    for s in range(n + 1):
        low, high = max(0, s - n_cand), min(n_base, s)
        weights = [math.comb(n_base, x) * math.comb(n_cand, s - x) for x in range(low, high + 1)]
        ordered = sorted(weights)
        cumulative = list(itertools.accumulate(ordered))
        total = math.comb(n, s)
        for x, w in zip(range(low, high + 1), weights, strict=True):
            at_most = cumulative[bisect.bisect_right(ordered, w) - 1]
            if min(1.0, at_most / total) <= alpha:
                rejected[x].append(s - x)
    return tuple(tuple(ys) for ys in rejected)


def fisher_power(n_base: int, n_cand: int, base_rate: float, cand_rate: float, alpha: float) -> float:
    """P(Fisher's exact test rejects at alpha) with n_b baseline trials at p_b and n_c candidate trials at p_c."""
    region = fisher_rejection_region(n_base, n_cand, alpha)
    pmf_base, pmf_cand = binomial_pmf(n_base, base_rate), binomial_pmf(n_cand, cand_rate)
    power = math.fsum(pmf_base[x] * math.fsum(pmf_cand[y] for y in ys) for x, ys in enumerate(region) if ys)
    return min(1.0, power)


def alternatives(base_rate: float, effect: float) -> tuple[float, ...]:
    """The candidate rates ``base_rate - effect`` and ``base_rate + effect`` that lie in [0, 1]."""
    check_rate("baseline rate", base_rate)
    check_effect(effect)
    found = []
    for shifted in (base_rate - effect, base_rate + effect):
        if -RATE_SLACK <= shifted <= 1.0 + RATE_SLACK:
            found.append(min(1.0, max(0.0, shifted)))
    return tuple(found)


def comparison_power(n_base: int, n_cand: int, base_rate: float, effect: float, alpha: float) -> float:
    """The power Fisher's test has to detect a rate difference *effect* at *base_rate*: the smaller direction.

    One direction always fits inside [0, 1], since the effect is at most 0.5.
    """
    return min(fisher_power(n_base, n_cand, base_rate, cand, alpha) for cand in alternatives(base_rate, effect))


# -- the suite's sign test ---------------------------------------------------------------

@lru_cache(maxsize=4096)
def sign_test_critical(n: int, alpha: float) -> int:
    """The largest k with ``sign_test(k, n - k) <= alpha`` (-1 when no split of n cases rejects)."""
    check_level("alpha", alpha)
    k = -1
    while k + 1 <= n // 2 and sign_test(k + 1, n - k - 1) <= alpha:
        k += 1
    return k


def sign_probabilities(n_base: int, n_cand: int, base_rate: float, cand_rate: float) -> tuple[float, float]:
    """``(P(d > 0), P(d < 0))`` for one case's rate difference d = Y/n_c - X/n_b, X ~ B(n_b, p_b), Y ~ B(n_c, p_c)."""
    if n_base < 1 or n_cand < 1:
        raise ValueError(f"expected at least one graded trial per arm, found {n_base} and {n_cand}")
    pmf_base, pmf_cand = binomial_pmf(n_base, base_rate), binomial_pmf(n_cand, cand_rate)
    higher = lower = 0.0
    for x, px in enumerate(pmf_base):
        for y, py in enumerate(pmf_cand):
            # compare y/n_c with x/n_b exactly, as integers
            if y * n_base > x * n_cand:
                higher += px * py
            elif y * n_base < x * n_cand:
                lower += px * py
    return higher, lower


def sign_test_power(cases: Sequence[tuple[float, float]], alpha: float) -> float:
    """P(the two-sided sign test over independent cases rejects at alpha), each case ``(P(+), P(-))``.

    The exact distribution of (positives, negatives) is built case by case (ties add to
    neither), then summed over the pairs the test rejects.
    """
    # dist[pos][neg] after i cases: row pos holds neg = 0 .. i - pos (the triangle pos + neg <= i)
    dist: list[list[float]] = [[1.0]]
    for plus, minus in cases:
        tie = max(0.0, 1.0 - plus - minus)
        zeros = [0.0] * (len(dist) + 1)
        grown = []
        for pos in range(len(dist) + 1):
            same = dist[pos] + [0.0] if pos < len(dist) else zeros[:1]  # this case a tie
            shifted = [0.0] + dist[pos] if pos < len(dist) else zeros[:1]  # this case negative
            below = dist[pos - 1] if pos else zeros[:len(same)]  # this case positive
            grown.append([t * tie + m * minus + b * plus for t, m, b in zip(same, shifted, below, strict=True)])
        dist = grown
    power = 0.0
    for pos, row in enumerate(dist):
        for neg, prob in enumerate(row):
            if prob and min(pos, neg) <= sign_test_critical(pos + neg, alpha):
                power += prob
    return min(1.0, power)


@dataclass(frozen=True, slots=True)
class CaseCounts:
    """What the suite's power needs of one case: each arm's graded trials and the baseline's passes."""

    baseline_graded: int
    candidate_graded: int
    baseline_passes: int

    @property
    def base_rate(self) -> float:
        return self.baseline_passes / self.baseline_graded


def suite_power(cases: Sequence[CaseCounts], effect: float, alpha: float) -> float:
    """The power of the suite's sign test to detect every case's candidate rate moving by *effect*.

    Each case keeps its own graded counts and observed baseline rate p_i; its candidate rate
    is p_i + D (or p_i - D), clamped to [0, 1] (a case at its ceiling cannot rise). The
    directions tried are the ones the cases' mean baseline rate admits; the power is the smaller.
    """
    check_effect(effect)
    if not cases:
        return 0.0
    mean = sum(c.base_rate for c in cases) / len(cases)
    powers = []
    for cand_mean in alternatives(min(1.0, max(0.0, mean)), effect):
        shift = effect if cand_mean > mean else -effect
        probabilities = [sign_probabilities(c.baseline_graded, c.candidate_graded, c.base_rate,
                                            min(1.0, max(0.0, c.base_rate + shift))) for c in cases]
        powers.append(sign_test_power(probabilities, alpha))
    return min(powers)


# -- planning ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TrialPlan:
    """The smallest trials per arm reaching the power, the baseline rate it was planned for, the power reached."""

    trials: int
    baseline_rate: float
    power: float


def least_favourable_rates(effect: float) -> tuple[float, ...]:
    """The baseline rates searched for the least favourable one: every 0.01, and (1 - D)/2, (1 + D)/2.

    The binomial variance p(1 - p) is largest at 1/2, so a difference D is hardest to see
    when the two rates straddle 1/2: p_b = (1 - D)/2 against p_c = (1 + D)/2 (or the mirror
    image). The search over the grid confirms it at the plan's n rather than trusting it.
    """
    grid = {round(i / 100, 2) for i in range(101)} | {(1 - effect) / 2, (1 + effect) / 2}
    return tuple(sorted(grid))


def trials_for_power(effect: float, *, power: float = 0.8, alpha: float = 0.05,
                     baseline_rate: float | None = None, max_trials: int = 2000) -> TrialPlan:
    """The smallest n (trials per arm, both arms alike) at which Fisher's exact test reaches *power*.

    With *baseline_rate* the power is :func:`comparison_power` at that rate; without it, the
    smallest over every rate of :func:`least_favourable_rates` (the least favourable baseline),
    and the plan names the rate that was least favourable. Exact power is not monotone in n
    (the test is discrete), so the answer is the first n that reaches the power; a larger n
    can fall just short again. Raises ValueError when no n up to *max_trials* reaches it.
    """
    check_effect(effect)
    check_level("power", power)
    check_level("alpha", alpha)
    rates = least_favourable_rates(effect) if baseline_rate is None else (baseline_rate,)
    probe = (1 - effect) / 2 if baseline_rate is None else baseline_rate
    for n in range(1, max_trials + 1):
        if comparison_power(n, n, probe, effect, alpha) < power:
            continue  # the likely least favourable rate first: cheap to rule n out
        worst_rate, worst = min(((p, comparison_power(n, n, p, effect, alpha)) for p in rates),
                                key=lambda pair: pair[1])
        if worst >= power:
            return TrialPlan(n, worst_rate, worst)
    raise ValueError(f"no number of trials up to {max_trials} per arm reaches power {power:g} "
                     f"for a difference of {effect:g} at alpha {alpha:g}")
