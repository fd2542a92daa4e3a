"""The exact tests against independent computations: scipy (a test-only dependency) and brute force.

- the sign test and McNemar's test against ``scipy.stats.binomtest(k, n, 0.5)``;
- the signed-rank test against ``scipy.stats.wilcoxon(method="exact")`` where scipy's exact
  distribution applies (no zeros, no tied magnitudes), and elsewhere against a brute-force
  enumeration of every sign assignment over scipy's ``rankdata`` mid-ranks;
- Fisher's exact test against ``scipy.stats.fisher_exact`` over a grid of tables, and the Wilson
  interval against ``binomtest(...).proportion_ci(method="wilson")``.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from scipy import stats

from pytest_skill_eval.decision import fisher_exact, mcnemar_exact, sign_test, signed_rank_exact
from pytest_skill_eval.stats import wilson_interval


def test_sign_test_matches_scipy_binomtest_over_a_grid() -> None:
    for n in range(0, 41):
        for k in range(n + 1):
            expected = 1.0 if n == 0 else stats.binomtest(k, n, 0.5).pvalue
            assert sign_test(k, n - k) == pytest.approx(expected, rel=1e-12, abs=1e-300), (k, n)


def test_mcnemar_is_the_binomial_test_of_the_discordant_pairs() -> None:
    for fail_to_pass, pass_to_fail in itertools.product(range(0, 26), repeat=2):
        n = fail_to_pass + pass_to_fail
        expected = 1.0 if n == 0 else stats.binomtest(fail_to_pass, n, 0.5).pvalue
        assert mcnemar_exact(fail_to_pass, pass_to_fail) == pytest.approx(expected, rel=1e-12)


def test_the_issues_example_and_the_extremes() -> None:
    assert mcnemar_exact(3, 1) == 0.625  # 3 fail-to-pass, 1 pass-to-fail: p = 10/16, shown as 0.62
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(9, 0) == 2 / 2**9
    assert sign_test(5, 5) == 1.0
    with pytest.raises(ValueError, match="at least 0, found -1 positive"):
        sign_test(-1, 3)


def test_signed_rank_matches_scipy_exact_without_zeros_or_ties() -> None:
    rng = random.Random(20261203)
    for n in range(1, 19):
        for _ in range(6):
            magnitudes = rng.sample(range(1, 200), n)  # distinct: no tied magnitudes
            differences = [m if rng.random() < 0.5 else -m for m in magnitudes]
            expected = stats.wilcoxon(differences, method="exact").pvalue
            got = signed_rank_exact(differences)
            assert got.p_value == pytest.approx(expected, rel=1e-12), differences
            assert got.statistic == sum(stats.rankdata([abs(d) for d in differences])[i]
                                        for i, d in enumerate(differences) if d > 0)


def brute_force_signed_rank(differences: list[Fraction]) -> float:
    """Every sign assignment over scipy's mid-ranks of the non-zero magnitudes, counted."""
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return 1.0
    ranks = [Fraction(r).limit_denominator(2) for r in stats.rankdata([float(abs(d)) for d in nonzero])]
    observed = sum((r for r, d in zip(ranks, nonzero, strict=True) if d > 0), Fraction(0))
    mean = sum(ranks, Fraction(0)) / 2
    extreme = 0
    for signs in itertools.product((0, 1), repeat=len(ranks)):
        t = sum((r for r, s in zip(ranks, signs, strict=True) if s), Fraction(0))
        extreme += abs(t - mean) >= abs(observed - mean)
    return float(extreme / 2 ** len(ranks))


def test_signed_rank_with_ties_and_zeros_matches_brute_force_enumeration() -> None:
    rng = random.Random(7)
    for _ in range(150):
        n = rng.randint(1, 12)
        trials = rng.choice([1, 2, 3, 5, 10])
        # rate differences of n cases with few trials: many zeros and tied magnitudes
        differences = [Fraction(rng.randint(-trials, trials), trials) for _ in range(n)]
        assert signed_rank_exact(differences).p_value == pytest.approx(brute_force_signed_rank(differences),
                                                                       rel=1e-12), differences


def test_signed_rank_of_single_runs_is_the_sign_test() -> None:
    # with N = 1 every difference is -1, 0 or +1: one tie block, so the signed-rank test is McNemar's
    for up, down, ties in itertools.product(range(8), range(8), range(3)):
        differences = [1] * up + [-1] * down + [0] * ties
        result = signed_rank_exact(differences)
        assert result.p_value == pytest.approx(mcnemar_exact(up, down), rel=1e-12)
        assert (result.n, result.zeros) == (up + down, ties)
        # every magnitude ties at the mid-rank (n + 1) / 2; with nothing ranked T+ is 0
        assert result.statistic == Fraction(up * (up + down + 1), 2)


def test_signed_rank_uses_exact_values() -> None:
    # 3/10 - 1/10 and 1/5 are the same magnitude as fractions; as floats they would not tie
    assert 0.3 - 0.1 != 0.2
    a = signed_rank_exact([Fraction(3, 10) - Fraction(1, 10), Fraction(-1, 5), Fraction(1, 2)])
    assert a.statistic == Fraction(3) + Fraction(3, 2)  # 1/2 has rank 3; the tie shares 1.5 and 1.5
    assert signed_rank_exact([]).p_value == 1.0


def test_fisher_matches_scipy_over_a_grid() -> None:
    for a, b, c, d in itertools.product(range(0, 7), repeat=4):
        expected = stats.fisher_exact([[a, b], [c, d]]).pvalue
        assert fisher_exact(a, b, c, d) == pytest.approx(expected, rel=1e-9), (a, b, c, d)
    rng = random.Random(3)
    for _ in range(200):
        table = [rng.randint(0, 40) for _ in range(4)]
        expected = stats.fisher_exact([table[:2], table[2:]]).pvalue
        assert fisher_exact(*table) == pytest.approx(expected, rel=1e-9), table


def test_wilson_interval_matches_scipy_over_a_grid() -> None:
    # the interval every rate and false-flip rate is shown with
    for n in range(1, 41):
        for k in range(n + 1):
            interval = wilson_interval(k, n)
            expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
            assert interval is not None
            assert (interval.low, interval.high) == pytest.approx((expected.low, expected.high), rel=1e-9, abs=1e-12)
