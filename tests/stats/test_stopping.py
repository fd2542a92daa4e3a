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

from pytest_skill_eval.decision.sequential import Look, sequential_looks
from pytest_skill_eval.decision.stopping import (
    ComparisonCounts,
    ExpectationCounts,
    StopCheck,
    StopRule,
    below,
    check_stop,
    comparison_fixed,
    expectation_fixed,
    look_reason,
    regression_verdict,
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


def regression(bp: int, bg: int, cp: int, cg: int, alpha: float = ALPHA) -> bool | None:
    if not (bg and cg):
        return None
    return cp / cg < bp / bg and float(sps.fisher_exact([[bp, bg - bp], [cp, cg - cp]]).pvalue) < alpha


def test_comparison_fixed_matches_every_completion() -> None:
    cache: dict[tuple[int, int, int, int], bool | None] = {}
    for bg, cg, remaining in itertools.product(range(6), range(6), range(3)):
        for bp, cp in itertools.product(range(bg + 1), range(cg + 1)):
            verdicts = set()
            for (b_p, b_g), (c_p, c_g) in itertools.product(completions(bp, bg, remaining), completions(cp, cg, remaining)):
                key = (b_p, b_g, c_p, c_g)
                if key not in cache:
                    cache[key] = regression(*key)
                verdicts.add(cache[key])
            counts = ComparisonCounts("c", bp, bg, cp, cg, judged=True)
            assert comparison_fixed(counts, remaining, ALPHA) == (len(verdicts) == 1), (bp, bg, cp, cg, remaining)
            # a comparison regression does not judge: only whether it can be compared must be fixed
            unjudged = ComparisonCounts("c", bp, bg, cp, cg, judged=False)
            assert comparison_fixed(unjudged, remaining, ALPHA) == (len({v is None for v in verdicts}) == 1)


def test_curtailment_tries_every_completion_not_only_the_extremes() -> None:
    # Fisher's p is not monotone in the counts: 9/10 -> 11/17 with 2 trials to go (alpha 0.1) is no
    # regression at any extreme completion, but 11/12 -> 11/18 (both baseline trials pass, one
    # candidate trial fails and the other is not graded) has p = 0.099 (found by searching every
    # table up to 18 graded trials per arm)
    extremes = itertools.product([(9, 12), (11, 12), (9, 10)], [(11, 19), (13, 19), (11, 17)])  # all fail, all pass, none graded
    assert not any(regression(bp, bg, cp, cg, 0.1) for (bp, bg), (cp, cg) in extremes)
    assert regression(11, 12, 11, 18, 0.1) is True
    every = {regression(*b, *c, 0.1) for b, c in itertools.product(completions(9, 10, 2), completions(11, 17, 2))}
    assert every == {False, True}
    assert not comparison_fixed(ComparisonCounts("c", 9, 10, 11, 17, True), 2, 0.1)


def test_the_policy_verdicts_stopping_predicts() -> None:
    # regression: the candidate's rate lower and Fisher's p strictly below alpha (trial_policy's test);
    # 3/3 -> 0/3 has p = 2 / C(6, 3) = 0.1
    assert sps.fisher_exact([[3, 0], [0, 3]]).pvalue == pytest.approx(0.1, rel=1e-12)
    assert regression_verdict(3, 3, 0, 3, 0.1) is False
    assert regression_verdict(3, 3, 0, 3, float(np.nextafter(0.1, 1.0))) is True
    assert regression_verdict(0, 3, 3, 3, 0.5) is False  # higher is never a regression
    assert regression_verdict(0, 0, 1, 1, 0.5) is None and regression_verdict(1, 1, 0, 0, 0.5) is None
    assert below(0, 0, 1.0) is None and below(2, 3, 1.0) is True and below(3, 3, 1.0) is False
    # which expectations a stop rule's policy judges, and whether it judges comparisons
    for fail_on, baseline, candidate, comparisons in (("candidate", False, True, False), ("any", True, True, False),
                                                      ("regression", False, False, True)):
        rule = StopRule("curtail", fail_on=fail_on)
        assert (rule.judges_expectation("baseline"), rule.judges_expectation("candidate")) == (baseline, candidate)
        assert rule.judges_comparisons == comparisons
    with pytest.raises(ValueError, match="stop: expected one of off, curtail, sequential, found 'sometimes'"):
        StopRule("sometimes")  # type: ignore[arg-type]


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


def test_every_stop_check_says_where_it_stands() -> None:
    fixed = [ExpectationCounts("c", 0, 9, True)]  # failed under pass rate 1: decided
    open_ = [ExpectationCounts("c", 3, 3, True)]
    assert check_stop("curtail", ran=9, planned=10, expectations=fixed, comparisons=[], pass_rate=1.0, alpha=ALPHA) == \
        StopCheck("curtail", 9, 10, True, "no remaining trial can change a verdict")
    assert check_stop("sequential", ran=10, planned=10, expectations=open_, comparisons=[], pass_rate=1.0, alpha=ALPHA) == \
        StopCheck("sequential", 10, 10, False, "ran every planned trial")
    assert check_stop("curtail", ran=3, planned=10, expectations=open_, comparisons=[], pass_rate=1.0, alpha=ALPHA) == \
        StopCheck("curtail", 3, 10, False, "expectation c is not decided yet")
    undecided = ComparisonCounts("cmp", 2, 3, 1, 3, True)
    assert check_stop("curtail", ran=3, planned=10, expectations=fixed, comparisons=[undecided], pass_rate=1.0, alpha=ALPHA) == \
        StopCheck("curtail", 3, 10, False, "comparison cmp is not decided yet")
    # sequential: no comparison, expectations decided
    assert check_stop("sequential", ran=3, planned=10, expectations=fixed, comparisons=[], pass_rate=1.0, alpha=ALPHA) == \
        StopCheck("sequential", 3, 10, True, "no remaining trial can change a verdict")
    # before the first look (after 4 of 20 trials)
    early = ComparisonCounts("cmp", 0, 1, 1, 1, False, (1,))
    assert check_stop("sequential", ran=1, planned=20, expectations=fixed, comparisons=[early], pass_rate=1.0, alpha=ALPHA) == \
        StopCheck("sequential", 1, 20, False, "comparison cmp: no look yet", (("cmp", ()),))
    # at the first look, 3 lower of 4: |S| = 3 and the boundary 4 is out of reach of 3 discordant pairs
    going = ComparisonCounts("cmp", 3, 4, 0, 4, False, (-1, -1, -1, 0))
    looks = sequential_looks(going.pairs, 20, ALPHA)
    assert [(k.higher, k.lower, k.boundary, k.decision) for k in looks] == [(0, 3, 4, "continue")]
    assert check_stop("sequential", ran=4, planned=20, expectations=fixed, comparisons=[going], pass_rate=1.0, alpha=ALPHA) == \
        StopCheck("sequential", 4, 20, False, "comparison cmp: not decided at look 1 after 4 trials (|S| = 3, boundary 4)",
                  (("cmp", looks),))
    # two comparisons decided: both reasons, in order; two looks instead of five look at 10 of 20 trials
    up = ComparisonCounts("up", 0, 10, 10, 10, False, (1,) * 10)
    down = ComparisonCounts("down", 10, 10, 0, 10, False, (-1,) * 10)
    both = check_stop("sequential", ran=10, planned=20, expectations=fixed, comparisons=[up, down], looks=2, pass_rate=1.0, alpha=ALPHA)
    p = sps.binomtest(10, 10, 0.5).pvalue  # the boundary at the look is |S| = 10 itself
    assert both == StopCheck("sequential", 10, 20, True, f"comparison up: candidate better, p = {p:.2g} <= {p:.2g}; "
                             f"comparison down: candidate worse, p = {p:.2g} <= {p:.2g}",
                             (("up", sequential_looks(up.pairs, 20, ALPHA, 2)), ("down", sequential_looks(down.pairs, 20, ALPHA, 2))))
    assert [len(looks) for _, looks in both.looks] == [1, 1]


def test_look_reasons() -> None:
    worse = sequential_looks((-1,) * 12, 20, ALPHA)[-1]
    # crossed at 12 lower of 12 against a boundary of |S| >= 10 (11 lower of 12 or more)
    assert (worse.decision, worse.boundary) == ("worse", 10)
    assert worse.boundary_p == pytest.approx(sps.binomtest(1, 12, 0.5).pvalue, rel=1e-12)
    assert look_reason("x", worse) == (f"comparison x: candidate worse, p = {sps.binomtest(0, 12, 0.5).pvalue:.2g} "
                                       f"<= {sps.binomtest(1, 12, 0.5).pvalue:.2g}")
    futile = sequential_looks((0,) * 16, 20, ALPHA)[-1]
    assert look_reason("x", futile) == "comparison x: futile (0 higher, 0 lower: no remaining trial can reach the boundary)"
    last = Look(5, 20, 20, 9, 5, 10, 0.04, ALPHA, "not significant")
    assert look_reason("x", last) == f"comparison x: not significant, p = {sps.binomtest(9, 14, 0.5).pvalue:.2g}"
