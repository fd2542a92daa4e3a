"""Curtailment against brute force, and the promise: a curtailed group's verdicts are the full run's.

The verdicts are computed here independently (the rates as the trials policy states them,
Fisher's test from scipy) over every completion of the remaining trials, or over whole
simulated trial sequences with the same draws cut at the stop.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from pytest_skill_eval.decision.stopping import (
    ComparisonCounts,
    ExpectationCounts,
    check_stop,
    comparison_fixed,
    expectation_fixed,
)

ALPHA = 0.05


def rate_verdict(passes: int, graded: int, pass_rate: float) -> bool | None:
    return None if graded == 0 else passes / graded < pass_rate


def completions(passes: int, graded: int, remaining: int) -> list[tuple[int, int]]:
    """Every (passes, graded) after *remaining* trials that each pass, fail or are not graded."""
    found = set()
    for outcomes in itertools.product("pfm", repeat=remaining):
        found.add((passes + outcomes.count("p"), graded + outcomes.count("p") + outcomes.count("f")))
    return sorted(found)


@pytest.mark.parametrize("pass_rate", [1.0, 0.8, 0.5, 0.3])
def test_expectation_fixed_matches_every_completion(pass_rate: float) -> None:
    for graded, remaining in itertools.product(range(7), range(5)):
        for passes in range(graded + 1):
            verdicts = {rate_verdict(p, g, pass_rate) for p, g in completions(passes, graded, remaining)}
            assert expectation_fixed(passes, graded, remaining, pass_rate) == (len(verdicts) == 1), \
                (passes, graded, remaining, pass_rate)


def test_a_failed_candidate_expectation_is_decided_under_pass_rate_one() -> None:
    assert expectation_fixed(2, 3, 17, 1.0)
    assert not expectation_fixed(3, 3, 17, 1.0)
    assert expectation_fixed(3, 3, 17, 1.0, judged=False)
    assert not expectation_fixed(0, 0, 17, 1.0, judged=False)


def regression(bp: int, bg: int, cp: int, cg: int) -> bool | None:
    if not (bg and cg):
        return None
    return cp / cg < bp / bg and float(sps.fisher_exact([[bp, bg - bp], [cp, cg - cp]]).pvalue) < ALPHA


def test_comparison_fixed_matches_every_completion() -> None:
    cache: dict[tuple[int, int, int, int], bool | None] = {}
    for bg, cg, remaining in itertools.product(range(1, 6), range(1, 6), range(3)):
        for bp, cp in itertools.product(range(bg + 1), range(cg + 1)):
            verdicts = set()
            for (b_p, b_g), (c_p, c_g) in itertools.product(completions(bp, bg, remaining), completions(cp, cg, remaining)):
                key = (b_p, b_g, c_p, c_g)
                if key not in cache:
                    cache[key] = regression(*key)
                verdicts.add(cache[key])
            counts = ComparisonCounts("c", bp, bg, cp, cg, judged=True)
            assert comparison_fixed(counts, remaining, ALPHA) == (len(verdicts) == 1), (bp, bg, cp, cg, remaining)


def group_counts(base: np.ndarray, cand: np.ndarray, fail_on: str) -> tuple[list[ExpectationCounts], list[ComparisonCounts]]:
    """Counts of one expectation per arm (None: not graded) and their comparison."""
    def arm(xs: np.ndarray) -> tuple[int, int]:
        graded = [x for x in xs if x >= 0]
        return sum(graded), len(graded)
    (bp, bg), (cp, cg) = arm(base), arm(cand)
    expectations = [ExpectationCounts("b", bp, bg, fail_on == "any"), ExpectationCounts("c", cp, cg, fail_on in ("any", "candidate"))]
    return expectations, [ComparisonCounts("cmp", bp, bg, cp, cg, fail_on == "regression")]


def verdicts(base: np.ndarray, cand: np.ndarray, pass_rate: float) -> tuple[object, ...]:
    (b_e, c_e), (cmp,) = group_counts(base, cand, "any")
    return (rate_verdict(b_e.passes, b_e.graded, pass_rate), rate_verdict(c_e.passes, c_e.graded, pass_rate),
            regression(cmp.baseline_passes, cmp.baseline_graded, cmp.candidate_passes, cmp.candidate_graded))


@pytest.mark.parametrize("fail_on", ["candidate", "any", "regression"])
def test_curtailed_verdicts_equal_the_full_runs_on_the_same_draws(fail_on: str) -> None:
    rng = np.random.default_rng(2903)
    planned, stopped_early = 12, 0
    for _ in range(150):
        rates = rng.uniform(0, 1, 2)
        pass_rate = float(rng.choice([1.0, 0.8, 0.5]))
        # 1 pass, 0 fail, -1 not graded
        draws = [np.where(rng.random(planned) < 0.1, -1, (rng.random(planned) < r).astype(int)) for r in rates]
        full = verdicts(draws[0], draws[1], pass_rate)
        for ran in range(1, planned + 1):
            expectations, comparisons = group_counts(draws[0][:ran], draws[1][:ran], fail_on)
            check = check_stop("curtail", ran=ran, planned=planned, expectations=expectations,
                               comparisons=comparisons, pass_rate=pass_rate, alpha=ALPHA)
            if check.stop:
                stopped_early += 1
                cut = verdicts(draws[0][:ran], draws[1][:ran], pass_rate)
                judged = {"candidate": [1], "any": [0, 1], "regression": [2]}[fail_on]
                assert [cut[i] for i in judged] == [full[i] for i in judged]
                # availability of every verdict is fixed too
                assert [v is None for v in cut] == [v is None for v in full]
                break
    assert stopped_early > 10


def test_off_never_stops_and_a_run_to_the_end_says_so() -> None:
    e = [ExpectationCounts("c", 0, 3, True)]
    assert not check_stop("off", ran=3, planned=10, expectations=e, comparisons=[], pass_rate=1.0, alpha=ALPHA).stop
    assert check_stop("curtail", ran=3, planned=10, expectations=e, comparisons=[], pass_rate=1.0, alpha=ALPHA).stop
    end = check_stop("curtail", ran=10, planned=10, expectations=e, comparisons=[], pass_rate=1.0, alpha=ALPHA)
    assert not end.stop and end.reason == "ran every planned trial"
    with pytest.raises(ValueError, match="stop: expected one of off, curtail, sequential"):
        check_stop("sometimes", ran=1, planned=2, expectations=e, comparisons=[], pass_rate=1.0, alpha=ALPHA)  # type: ignore[arg-type]


def test_sequential_stops_when_every_comparison_is_decided_and_expectations_are_fixed() -> None:
    pairs = (1,) * 12
    comparison = ComparisonCounts("cmp", 0, 12, 12, 12, False, pairs)  # type: ignore[arg-type]
    expectations = [ExpectationCounts("c", 12, 12, False), ExpectationCounts("b", 0, 12, False)]
    check = check_stop("sequential", ran=12, planned=20, expectations=expectations, comparisons=[comparison],
                       pass_rate=1.0, alpha=ALPHA)
    assert check.stop
    assert check.reason.startswith("comparison cmp: candidate better, p = ")
    # the judged candidate rate of 12/12 is not fixed under pass rate 1.0: the group goes on
    judged = [ExpectationCounts("c", 12, 12, True)]
    assert not check_stop("sequential", ran=12, planned=20, expectations=judged, comparisons=[comparison],
                          pass_rate=1.0, alpha=ALPHA).stop
