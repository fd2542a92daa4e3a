"""Exact power and planning against independent computations.

Fisher's power is checked against the sum of scipy's binomial pmf over the rejection region
found with scipy's own ``fisher_exact``, over a grid of trial counts and rates, and against
a seeded simulation; the sign test's power over cases against brute-force enumeration of
every case outcome with scipy's ``binomtest``; the plan against those independent powers.
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest
from scipy import stats

from pytest_skill_eval.decision import CaseCounts, comparison_power, fisher_power, sign_test_power, suite_power
from pytest_skill_eval.decision import trials_for_power as plan
from pytest_skill_eval.decision.power import (
    RATE_SLACK,
    alternatives,
    binomial_pmf,
    fisher_rejection_region,
    least_favourable_rates,
    sign_probabilities,
    sign_test_critical,
)


@cache
def scipy_fisher_p(x: int, n_base: int, y: int, n_cand: int) -> float:
    return float(stats.fisher_exact([[x, n_base - x], [y, n_cand - y]]).pvalue)


def scipy_rejects(x: int, n_base: int, y: int, n_cand: int, alpha: float) -> bool:
    return scipy_fisher_p(x, n_base, y, n_cand) <= alpha


def scipy_fisher_power(n_base: int, n_cand: int, p_base: float, p_cand: float, alpha: float) -> float:
    pmf_base = stats.binom.pmf(range(n_base + 1), n_base, p_base)
    pmf_cand = stats.binom.pmf(range(n_cand + 1), n_cand, p_cand)
    return math.fsum(float(pmf_base[x] * pmf_cand[y]) for x in range(n_base + 1) for y in range(n_cand + 1)
                     if scipy_rejects(x, n_base, y, n_cand, alpha))


def test_binomial_pmf_matches_scipy() -> None:
    for n in (0, 1, 5, 30, 400):
        for p in (0.0, 0.03, 0.5, 0.77, 1.0):
            assert binomial_pmf(n, p) == pytest.approx(list(stats.binom.pmf(range(n + 1), n, p)), rel=1e-9, abs=1e-300)


def test_the_rejection_region_is_the_tables_scipys_fisher_test_rejects() -> None:
    for n_base, n_cand in [*itertools.product(range(0, 9), repeat=2), (15, 12), (20, 20)]:
        for alpha in (0.05, 0.01):
            region = fisher_rejection_region(n_base, n_cand, alpha)
            for x in range(n_base + 1):
                expected = [y for y in range(n_cand + 1) if scipy_rejects(x, n_base, y, n_cand, alpha)]
                assert list(region[x]) == expected, (n_base, n_cand, alpha, x)


def test_a_p_value_equal_to_alpha_rejects() -> None:
    # n_b = n_c = 3 with 3 passes in all: the tables 0/3 -> 3/3 and 3/3 -> 0/3 have p = 2/20 = 0.1
    assert stats.fisher_exact([[0, 3], [3, 0]]).pvalue == pytest.approx(0.1)
    region = fisher_rejection_region(3, 3, 0.1)
    assert (region[0], region[3]) == ((3,), (0,))
    assert fisher_power(3, 3, 0.0, 1.0, 0.1) == 1.0


def test_fisher_power_matches_scipys_pmf_summed_over_scipys_rejection_region() -> None:
    for n_base, n_cand in ((5, 5), (10, 10), (10, 8), (20, 20), (7, 13), (30, 25)):
        for p_base, p_cand in ((0.5, 0.5), (0.3, 0.9), (0.9, 0.2), (0.4, 0.6), (0.0, 0.5), (1.0, 0.8)):
            expected = scipy_fisher_power(n_base, n_cand, p_base, p_cand, 0.05)
            assert fisher_power(n_base, n_cand, p_base, p_cand, 0.05) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_fisher_power_agrees_with_a_seeded_simulation() -> None:
    rng = np.random.default_rng(28)
    draws = 20_000
    for n, p_base, p_cand in ((30, 0.4, 0.8), (20, 0.9, 0.5)):
        xs, ys = rng.binomial(n, p_base, draws), rng.binomial(n, p_cand, draws)
        rejected = sum(scipy_rejects(int(x), n, int(y), n, 0.05) for x, y in zip(xs, ys, strict=True)) / draws
        power = fisher_power(n, n, p_base, p_cand, 0.05)
        assert abs(rejected - power) <= 4 * math.sqrt(power * (1 - power) / draws)


def test_identical_arms_reject_at_most_alpha_and_comparison_power_takes_the_weaker_direction() -> None:
    for n in (1, 5, 10, 25):
        for p in (0.1, 0.5, 0.8):
            assert fisher_power(n, n, p, p, 0.05) <= 0.05
    assert alternatives(0.5, 0.2) == pytest.approx((0.3, 0.7))
    assert alternatives(0.9, 0.2) == pytest.approx((0.7,))  # 1.1 is not a rate
    assert alternatives(0.8, 0.2) == pytest.approx((0.6, 1.0))  # 0.8 + 0.2 in floats is a hair over 1
    assert alternatives(0.8, 0.2)[1] == 1.0
    assert comparison_power(20, 20, 0.5, 0.2, 0.05) == min(fisher_power(20, 20, 0.5, 0.3, 0.05),
                                                           fisher_power(20, 20, 0.5, 0.7, 0.05))
    assert comparison_power(1, 1, 0.0, 0.2, 0.05) == 0.0  # one trial per arm can never be significant


def test_sign_probabilities_match_an_outer_product_of_scipy_pmfs() -> None:
    for n_base, n_cand, p_base, p_cand in ((1, 1, 0.3, 0.5), (10, 10, 0.4, 0.6), (10, 7, 0.5, 0.5), (3, 9, 0.9, 0.1)):
        joint = np.outer(stats.binom.pmf(range(n_base + 1), n_base, p_base),
                         stats.binom.pmf(range(n_cand + 1), n_cand, p_cand))
        d = np.subtract.outer(-np.arange(n_base + 1) / n_base, -np.arange(n_cand + 1) / n_cand)  # y/nc - x/nb
        higher, lower = sign_probabilities(n_base, n_cand, p_base, p_cand)
        assert higher == pytest.approx(joint[d > 1e-12].sum(), rel=1e-9)
        assert lower == pytest.approx(joint[d < -1e-12].sum(), rel=1e-9)


def test_sign_test_power_matches_brute_force_enumeration_with_binomtest() -> None:
    cases = [(0.5, 0.1), (0.3, 0.3), (0.7, 0.0), (0.2, 0.5), (0.6, 0.2), (0.45, 0.05)]
    for m in range(1, len(cases) + 1):
        expected = 0.0
        for outcome in itertools.product((1, -1, 0), repeat=m):
            probability = math.prod(c[0] if o == 1 else c[1] if o == -1 else 1 - c[0] - c[1]
                                    for c, o in zip(cases, outcome, strict=False))
            up, down = outcome.count(1), outcome.count(-1)
            if up + down and stats.binomtest(up, up + down, 0.5).pvalue <= 0.2:
                expected += probability
        assert sign_test_power(cases[:m], 0.2) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert [sign_test_critical(n, 0.05) for n in (5, 6, 8, 10, 20)] == [-1, 0, 0, 1, 5]


def test_suite_power_of_a_saturated_suite_looks_only_for_regressions() -> None:
    # every baseline passed: only the candidate dropping to 0.8 is an alternative; at N = 1 each
    # case is then pass-to-fail with probability 0.2, otherwise a tie
    cases = [CaseCounts(1, 1, 1)] * 30
    assert suite_power(cases, 0.2, 0.05) == pytest.approx(sign_test_power([(0.0, 0.2)] * 30, 0.05), rel=1e-12)
    assert suite_power([], 0.2, 0.05) == 0.0


def test_suite_power_of_mixed_rates_is_the_weaker_of_both_directions() -> None:
    cases = [CaseCounts(5, 5, 1), CaseCounts(5, 5, 4), CaseCounts(5, 5, 5)] * 6
    up = sign_test_power([sign_probabilities(5, 5, c.base_rate, min(1.0, c.base_rate + 0.3)) for c in cases], 0.05)
    down = sign_test_power([sign_probabilities(5, 5, c.base_rate, max(0.0, c.base_rate - 0.3)) for c in cases], 0.05)
    assert suite_power(cases, 0.3, 0.05) == pytest.approx(min(up, down), rel=1e-12)


def test_plan_is_the_smallest_n_that_reaches_the_power_by_an_independent_computation() -> None:
    found = plan(0.4, power=0.8, alpha=0.05, baseline_rate=0.5)
    def independent(n: int) -> float:
        return min(scipy_fisher_power(n, n, 0.5, 0.1, 0.05), scipy_fisher_power(n, n, 0.5, 0.9, 0.05))
    assert independent(found.trials) >= 0.8
    assert all(independent(n) < 0.8 for n in range(1, found.trials))
    assert found.power == pytest.approx(independent(found.trials), rel=1e-9)
    assert found.baseline_rate == 0.5


def test_the_least_favourable_baseline_straddles_one_half() -> None:
    effect = 0.3
    found = plan(effect)  # power 0.8, alpha 0.05 by default
    assert found.baseline_rate in (pytest.approx((1 - effect) / 2), pytest.approx((1 + effect) / 2))
    assert found.power >= 0.8
    # independently: at that n the rate reaches the power in its weaker direction
    n, rate = found.trials, found.baseline_rate
    assert min(scipy_fisher_power(n, n, rate, rate - effect, 0.05),
               scipy_fisher_power(n, n, rate, rate + effect, 0.05)) == pytest.approx(found.power, rel=1e-9)
    # the least favourable rate needs at least as many trials as any particular rate
    for other in (0.05, 0.2, 0.5, 0.7, 0.95):
        assert plan(effect, baseline_rate=other).trials <= n
    assert (1 - effect) / 2 in least_favourable_rates(effect)


def test_the_default_plan() -> None:
    # D = 0.2 at power 0.8 and alpha 0.05: 102 trials per arm, least favourable at 0.4 (against 0.6)
    found = plan(0.2)
    assert found.trials == 102
    assert found.baseline_rate == pytest.approx(0.4)
    assert comparison_power(101, 101, 0.4, 0.2, 0.05) < 0.8 <= found.power


def test_plan_refuses_what_cannot_be_planned() -> None:
    with pytest.raises(ValueError, match="minimum effect: expected a rate difference above 0 and at most 0.5, found 0.7"):
        plan(0.7)
    with pytest.raises(ValueError, match="power: expected a number strictly between 0 and 1, found 1"):
        plan(0.2, power=1)
    with pytest.raises(ValueError, match="no number of trials up to 5 per arm reaches power 0.8"):
        plan(0.2, max_trials=5)


def test_the_least_favourable_search_grid() -> None:
    # every 0.01 and the two rates straddling one half, (1 - D) / 2 and (1 + D) / 2 (off the grid for D = 0.15)
    rates = least_favourable_rates(0.15)
    assert len(rates) == 103
    assert list(rates) == pytest.approx(sorted([i / 100 for i in range(101)] + [0.425, 0.575]), abs=1e-15)
    assert least_favourable_rates(0.2) == tuple(i / 100 for i in range(101))  # 0.4 and 0.6 are on the grid


def test_power_refuses_what_it_cannot_compute() -> None:
    for n_base, n_cand in ((0, 3), (3, 0)):
        with pytest.raises(ValueError, match=f"expected at least one graded trial per arm, found {n_base} and {n_cand}"):
            sign_probabilities(n_base, n_cand, 0.5, 0.5)
    with pytest.raises(ValueError, match="^alpha: expected a number strictly between 0 and 1, found 0$"):
        plan(0.2, alpha=0)


def test_a_suite_at_its_floor_cannot_fall() -> None:
    # every baseline failed: the drop direction is clamped to the same rate (no case can fall, power 0),
    # even when the effect is so small that the drop stays inside [0, 1] up to rounding
    floor = [CaseCounts(1, 1, 0)] * 10
    assert alternatives(0.0, 1e-13) == (0.0, 1e-13)
    assert suite_power(floor, 1e-13, 0.05) == 0.0
    # only the rise is an alternative: no case falls, so 6 or more rises (p <= 2 / 2^6) reject
    assert suite_power(floor, 0.2, 0.05) == pytest.approx(stats.binom.sf(5, 10, 0.2), rel=1e-9)


def test_powers_are_probabilities_even_where_rounding_sums_past_one() -> None:
    # the pmfs are computed in logs: summed over a rejection region that holds nearly all the mass,
    # they come to a hair above 1 (1 + 3.5e-14 and 1 + 4e-16 here); the power is capped at 1
    assert fisher_power(50, 50, 0.95, 0.05, 0.05) == 1.0
    assert fisher_power(50, 50, 0.95, 0.05, 0.05) == pytest.approx(
        scipy_fisher_power(50, 50, 0.95, 0.05, 0.05), rel=1e-12)
    assert sign_test_power([(0.9, 0.01)] * 50, 0.05) == 1.0


def test_alternatives_stay_inside_zero_and_one_with_the_rounding_slack() -> None:
    assert alternatives(0.2, 0.2) == (0.0, 0.4)
    assert alternatives(0.5, 0.5) == (0.0, 1.0)
    # a shift exactly RATE_SLACK outside [0, 1] counts as the end itself
    assert alternatives(0.0, RATE_SLACK) == (0.0, RATE_SLACK)
    assert alternatives(1.0, RATE_SLACK) == (1.0 - RATE_SLACK, 1.0)
    assert alternatives(0.0, 0.3) == (0.3,) and alternatives(1.0, 0.3) == (0.7,)
    with pytest.raises(ValueError, match=r"^baseline rate: expected a rate from 0 to 1, found 1\.5$"):
        alternatives(1.5, 0.2)
    with pytest.raises(ValueError, match="^minimum effect: expected a rate difference above 0 and at most 0.5, found 0$"):
        alternatives(0.5, 0)
    with pytest.raises(ValueError, match=r"^rate: expected a rate from 0 to 1, found 1\.5$"):
        binomial_pmf(3, 1.5)
    with pytest.raises(ValueError, match="^expected a number of trials of at least 0, found -1$"):
        binomial_pmf(-1, 0.5)
    for bad in (1.0, 1.5):
        with pytest.raises(ValueError, match=f"^alpha: expected a number strictly between 0 and 1, found {bad}$"):
            fisher_rejection_region(3, 3, bad)


def test_the_plan_is_inclusive_at_its_limits() -> None:
    found = plan(0.4, power=0.8, alpha=0.05, baseline_rate=0.5)
    n = found.trials
    assert 1 < n and found.power >= 0.8
    # a power exactly reached counts; so does the last n allowed
    assert plan(0.4, power=found.power, alpha=0.05, baseline_rate=0.5).trials == n
    assert plan(0.4, power=0.8, alpha=0.05, baseline_rate=0.5, max_trials=n).trials == n
    with pytest.raises(ValueError, match=f"no number of trials up to {n - 1} per arm"):
        plan(0.4, power=0.8, alpha=0.05, baseline_rate=0.5, max_trials=n - 1)
