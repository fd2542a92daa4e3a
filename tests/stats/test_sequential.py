"""The group-sequential sign test: spending, boundaries and type-I error, against independent computations.

scipy gives the normal quantiles and the binomial test; the boundaries are checked by
brute-force enumeration of every sign sequence; the type-I error with identical arms is
computed exactly over every discordance history and by a seeded simulation of whole trial
sequences (with a counterpart, testing at a nominal alpha after every trial, that must exceed
alpha, so the simulation can tell the designs apart).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from pytest_skill_eval.decision.sequential import (
    Look,
    boundaries,
    futile,
    look_points,
    obf_spending,
    sequential_looks,
)

ALPHA = 0.05


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
@pytest.mark.parametrize("t", [0.05, 0.2, 0.4, 0.5, 0.6, 0.8, 0.99, 1.0])
def test_obf_spending_matches_scipy(alpha: float, t: float) -> None:
    expected = 2 - 2 * sps.norm.cdf(sps.norm.ppf(1 - alpha / 2) / math.sqrt(t))
    assert obf_spending(t, alpha) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert obf_spending(0.0, alpha) == 0.0


def test_spending_is_increasing_and_spends_alpha_at_the_end() -> None:
    values = [obf_spending(t / 100, ALPHA) for t in range(1, 101)]
    assert values == sorted(values)
    assert values[-1] == ALPHA


@pytest.mark.parametrize(("planned", "looks", "expected"), [
    (20, 5, (4, 8, 12, 16, 20)),
    (10, 5, (2, 4, 6, 8, 10)),
    (7, 5, (2, 4, 6, 7)),
    (3, 5, (2, 3)),
    (1, 5, (1,)),
    (21, 4, (6, 12, 16, 21)),
])
def test_look_points(planned: int, looks: int, expected: tuple[int, ...]) -> None:
    points = look_points(planned, looks)
    assert points == expected
    assert points[-1] == planned and all(n % 2 == 0 for n in points[:-1])


def brute_force(discordant: list[int], bounds: list[int]) -> Fraction:
    """P(|S_j| >= c_j at some look) for a fair +-1 walk, by enumerating every sign sequence."""
    m = discordant[-1]
    crossed = 0
    for signs in itertools.product((1, -1), repeat=m):
        sums = np.cumsum(signs) if m else np.zeros(0, dtype=int)
        if any(abs(int(sums[k - 1]) if k else 0) >= c for k, c in zip(discordant, bounds, strict=True)):
            crossed += 1
    return Fraction(crossed, 1 << m)


@pytest.mark.parametrize("discordant", [[2, 5, 8, 10, 14], [0, 3, 3, 9, 12], [6, 6, 11, 15, 16], [4, 8, 12]])
def test_boundaries_spend_what_brute_force_counts_and_no_more(discordant: list[int]) -> None:
    fractions = [(j + 1) / len(discordant) for j in range(len(discordant))]
    found = boundaries(discordant, fractions, ALPHA)
    bounds = [c for c, _ in found]
    for j in range(len(discordant)):
        spent = brute_force(discordant[: j + 1], bounds[: j + 1])
        assert spent == found[j][1]
        assert spent <= Fraction(obf_spending(fractions[j], ALPHA))
        # stated as a value S can take (the parity of m, at most m), or m + 1: unreachable
        assert (discordant[j] - bounds[j]) % 2 == 0 and bounds[j] <= discordant[j] or bounds[j] == discordant[j] + 1
        # minimal: the next value |S| can take below it would spend more than the allowance
        below = bounds[j] - 2 if bounds[j] <= discordant[j] else discordant[j]
        if below >= 1:
            lower = brute_force(discordant[: j + 1], [*bounds[:j], below])
            assert lower > Fraction(obf_spending(fractions[j], ALPHA))


def exact_type_one(planned: int, rate: float, looks: int = 5) -> float:
    """The design's exact type-I error with identical arms at *rate*, summed over every discordance history."""
    points = look_points(planned, looks)
    q = 2 * rate * (1 - rate)
    blocks = [b - a for a, b in zip((0, *points), points, strict=False)]
    total = 0.0
    for increments in itertools.product(*(range(b + 1) for b in blocks)):
        probability = math.prod(sps.binom.pmf(d, b, q) for d, b in zip(increments, blocks, strict=True))
        discordant = list(itertools.accumulate(increments))
        total += probability * float(boundaries(discordant, [n / planned for n in points], ALPHA)[-1][1])
    return total


@pytest.mark.parametrize("rate", [0.05, 0.2, 0.5, 0.8])
def test_exact_type_one_error_with_identical_arms_is_at_most_alpha(rate: float) -> None:
    error = exact_type_one(20, rate)
    assert error <= ALPHA


@functools.cache
def sign_p(k: int, n: int) -> float:
    return float(sps.binomtest(k, n, 0.5).pvalue)


def simulate(rng: np.random.Generator, planned: int, rates: tuple[float, float], missing: float) -> tuple[bool, bool, int]:
    """One group's pairs: whether the design rejected, whether a naive test at alpha after every trial did, trials used."""
    base = rng.random(planned) < rates[0]
    cand = rng.random(planned) < rates[1]
    lost = rng.random(planned) < missing
    pairs = tuple(None if gone else (int(c) - int(b)) for b, c, gone in zip(base, cand, lost, strict=True))
    found = sequential_looks(pairs, planned, ALPHA)  # type: ignore[arg-type]
    last = found[-1]
    naive = False
    for n in range(1, planned + 1):
        h = sum(1 for p in pairs[:n] if p == 1)
        lo = sum(1 for p in pairs[:n] if p == -1)
        if h + lo and sign_p(h, h + lo) <= ALPHA:
            naive = True
    return last.decision in ("better", "worse"), naive, last.trials


def test_simulated_type_one_error_with_identical_arms_is_at_most_alpha_and_naive_looks_exceed_it() -> None:
    rng = np.random.default_rng(2901)
    replicates = 1500
    rejected = naive = 0
    for _ in range(replicates):
        rate = rng.uniform(0.2, 0.8)
        design, looked, _ = simulate(rng, 40, (rate, rate), 0.1)
        rejected += design
        naive += looked
    se = math.sqrt(ALPHA * (1 - ALPHA) / replicates)
    assert rejected / replicates <= ALPHA + 3 * se
    assert naive / replicates > ALPHA + 3 * se


def test_a_clear_difference_stops_early() -> None:
    rng = np.random.default_rng(2902)
    used = [simulate(rng, 20, (0.1, 0.9), 0.0)[2] for _ in range(200)]
    assert sum(used) / len(used) < 16


def test_look_reports_its_nominal_p_values_as_scipy_does() -> None:
    look = Look(2, 8, 20, 7, 0, 7, 0.001, 0.0015, "better")
    assert look.p_value == pytest.approx(sps.binomtest(7, 7, 0.5).pvalue)
    assert look.boundary_p == pytest.approx(sps.binomtest(7, 7, 0.5).pvalue)
    unreachable = Look(1, 4, 20, 3, 0, 4, 0.0, 0.00001, "continue")
    assert unreachable.boundary_p is None


def test_futility_only_when_no_later_look_can_reach_alpha() -> None:
    # 4 remaining pairs: at best 4 more in the lead, 4-0: p = 0.125 > alpha
    assert futile(0, 0, 4, ALPHA)
    # 5 remaining: 5-0 gives p = 0.0625; 6 gives 0.03125
    assert futile(0, 0, 5, ALPHA)
    assert not futile(0, 0, 6, ALPHA)
    assert not futile(3, 0, 3, ALPHA)
    for higher, lower, remaining in itertools.product(range(6), range(6), range(8)):
        reachable = any(higher + lower + a and sps.binomtest(max(higher, lower) + a, higher + lower + a, 0.5).pvalue
                        <= ALPHA for a in range(remaining + 1))
        assert futile(higher, lower, remaining, ALPHA) == (not reachable)


def test_sequential_looks_stop_at_the_deciding_look() -> None:
    pairs = (1,) * 12 + (0,) * 8
    found = sequential_looks(pairs, 20, ALPHA)  # type: ignore[arg-type]
    assert [look.decision for look in found][-1] == "better"
    assert found[-1].trials < 20
    assert all(look.decision == "continue" for look in found[:-1])
    ties = sequential_looks((0,) * 20, 20, ALPHA)
    assert ties[-1].decision == "futile" and ties[-1].trials == 16


def reference_looks(pairs: tuple[int | None, ...], planned: int, alpha: float, looks: int) -> list[tuple[object, ...]]:
    """The design's looks restated from the module docstring: counts by hand, the spending by scipy,
    futility by scipy's binomial test; the boundaries are the ones checked by brute force above."""
    points = [n for n in look_points(planned, looks) if n <= len(pairs)]
    counted = [(pairs[:n].count(1), pairs[:n].count(-1)) for n in points]
    bounds = boundaries([h + lo for h, lo in counted], [n / planned for n in points], alpha)
    z = sps.norm.ppf(1 - alpha / 2)
    found: list[tuple[object, ...]] = []
    for j, (n, (h, lo), (c, spent)) in enumerate(zip(points, counted, bounds, strict=True), 1):
        lead, pairs_so_far = max(h, lo), h + lo
        if abs(h - lo) >= c:
            decision = "better" if h > lo else "worse"
        elif n == planned:
            decision = "not significant"
        elif all(pairs_so_far + a == 0 or sps.binomtest(lead + a, pairs_so_far + a, 0.5).pvalue > alpha
                 for a in range(planned - n + 1)):
            decision = "futile"
        else:
            decision = "continue"
        allowed = alpha if n == planned else 2 - 2 * sps.norm.cdf(z / math.sqrt(n / planned))
        found.append((j, n, planned, h, lo, c, float(spent), pytest.approx(allowed, rel=1e-9, abs=1e-15), decision))
        if decision != "continue":
            break
    return found


def test_sequential_looks_match_the_design_restated() -> None:
    rng = np.random.default_rng(2904)
    decisions: set[str] = set()
    for _ in range(120):
        planned = int(rng.choice([3, 8, 13, 20, 27]))
        looks, alpha = int(rng.choice([1, 2, 3, 4, 7])), float(rng.choice([0.05, 0.1, 0.2]))
        weights = rng.dirichlet([1, 1, 1, 0.3])  # higher, lower, tie, not graded
        outcomes: list[int | None] = [1, -1, 0, None]
        pairs = tuple(outcomes[i] for i in rng.choice(4, size=int(rng.integers(0, planned + 1)), p=weights))
        got = [(k.number, k.trials, k.planned, k.higher, k.lower, k.boundary, k.spent, k.allowed, k.decision)
               for k in sequential_looks(pairs, planned, alpha, looks)]
        assert got == reference_looks(pairs, planned, alpha, looks), (pairs, planned, alpha, looks)
        decisions.update(str(k[-1]) for k in got)
    assert decisions == {"continue", "better", "worse", "futile", "not significant"}
    with pytest.raises(ValueError, match="expected at most 4 trials, found 5"):
        sequential_looks((0,) * 5, 4, ALPHA)


def test_a_boundary_or_futility_at_exactly_alpha_counts_as_reaching_it() -> None:
    # alpha = 1/16 is the sign test's p of 5 of 5: one look of 5 discordant pairs spends exactly alpha at |S| = 5
    alpha = sps.binomtest(5, 5, 0.5).pvalue
    assert alpha == 0.0625
    assert boundaries([5], [1.0], alpha) == ((5, Fraction(1, 16)),)
    assert brute_force([5], [5]) == Fraction(1, 16)
    [look] = sequential_looks((1,) * 5, 5, alpha, looks=1)
    assert (look.boundary, look.decision) == (5, "better")
    # 5 more pairs all one way can still bring p to alpha: not futile; 4 cannot
    assert not futile(0, 0, 5, alpha) and futile(0, 0, 4, alpha)


def test_the_design_refuses_what_it_cannot_compute() -> None:
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match=f"alpha: expected a level between 0 and 1, found {bad!r}"):
            obf_spending(0.5, bad)
    with pytest.raises(ValueError, match="expected at least one planned trial and one look, found 0 and 5"):
        look_points(0, 5)
    with pytest.raises(ValueError, match="expected at least one planned trial and one look, found 4 and 0"):
        look_points(4, 0)
    assert look_points(5, 1) == (5,)
    with pytest.raises(ValueError, match="^expected one fraction per look$"):
        boundaries([1, 2], [1.0], ALPHA)
    for bad_counts in ([3, 2, 5], [-1, 2, 3], [-2]):
        with pytest.raises(ValueError, match=rf"expected non-decreasing discordant counts, found {re.escape(str(bad_counts))}"):
            boundaries(bad_counts, [1 / 3, 2 / 3, 1.0][-len(bad_counts):], ALPHA)
