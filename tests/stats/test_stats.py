"""The trial statistics against published reference values.

Fisher's exact test: R's ``fisher.test`` tea-tasting example (Agresti 1990, p. 61:
``matrix(c(3, 1, 1, 3), 2)``, p = 0.4857) and scipy's ``fisher_exact`` documentation
example (``[[6, 2], [1, 4]]``, p = 0.1026); the other rows are scipy 1.17's
``scipy.stats.fisher_exact`` and ``binomtest(...).proportion_ci(method="wilson")`` values,
computed once and written down (scipy is not a dependency).
"""

from __future__ import annotations

import itertools

import pytest

from pytest_skill_eval.stats import fisher_exact, wilson_interval

FISHER = [
    ((3, 1, 1, 3), 0.48571428571428565),
    ((6, 2, 1, 4), 0.10256410256410256),
    ((3, 7, 9, 1), 0.019766611097880443),  # 3/10 -> 9/10, the example: p = 0.02
    ((0, 10, 10, 0), 1.082508822446903e-05),
    ((10, 0, 10, 0), 1.0),
    ((1, 9, 11, 3), 0.0027594561852200836),
    ((7, 13, 18, 2), 0.0007716281353656214),
    ((5, 0, 0, 5), 0.007936507936507938),
    ((2, 8, 2, 8), 1.0),
    ((6, 14, 18, 2), 0.00024436175715374824),
]

WILSON = [
    ((0, 10), (0.0, 0.27753279986288926)),
    ((3, 10), (0.10779126740630102, 0.6032218525388546)),
    ((9, 10), (0.5958499732047615, 0.9821237869049271)),
    ((10, 10), (0.7224672001371109, 1.0)),
    ((1, 1), (0.20654931437723745, 1.0)),
    ((17, 20), (0.6395811352592431, 0.9476312541037835)),
    ((50, 100), (0.4038315303659956, 0.5961684696340044)),
]


@pytest.mark.parametrize(("table", "p"), FISHER)
def test_fisher_exact_matches_the_reference_values(table: tuple[int, int, int, int], p: float) -> None:
    assert fisher_exact(*table) == pytest.approx(p, rel=1e-12, abs=1e-15)


def test_fisher_exact_is_symmetric_and_a_probability() -> None:
    for a, b, c, d in itertools.product(range(5), repeat=4):
        p = fisher_exact(a, b, c, d)
        assert 0.0 < p <= 1.0
        assert p == pytest.approx(fisher_exact(c, d, a, b))  # the rows swapped
        assert p == pytest.approx(fisher_exact(b, a, d, c))  # the columns swapped


def test_fisher_exact_of_nothing_and_of_bad_counts() -> None:
    assert fisher_exact(0, 0, 0, 0) == 1.0
    with pytest.raises(ValueError, match="at least 0"):
        fisher_exact(-1, 0, 0, 0)


@pytest.mark.parametrize(("counts", "bounds"), WILSON)
def test_wilson_interval_matches_the_reference_values(counts: tuple[int, int], bounds: tuple[float, float]) -> None:
    interval = wilson_interval(*counts)
    assert interval is not None
    assert (interval.low, interval.high) == pytest.approx(bounds, rel=1e-12, abs=1e-15)


def test_wilson_interval_contains_the_rate_and_stays_in_the_unit_interval() -> None:
    for n in range(1, 30):
        for k in range(n + 1):
            interval = wilson_interval(k, n)
            assert interval is not None
            assert 0.0 <= interval.low <= k / n <= interval.high <= 1.0


def test_wilson_interval_without_trials_is_unavailable() -> None:
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="0 <= successes <= trials, found 3 of 2"):
        wilson_interval(3, 2)
