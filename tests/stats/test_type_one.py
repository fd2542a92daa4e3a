"""Type-I error by simulation: with identical arms the decision rejects at most alpha.

Seeded, a few seconds in all. Each bound is alpha plus three Monte Carlo standard errors,
sqrt(alpha (1 - alpha) / R) for R simulated suites; each claim also has a counterpart that
must exceed alpha (no adjustment, unbalanced arms), so the simulation can tell the rules apart.
"""

from __future__ import annotations

import math

import numpy as np

from pytest_skill_eval.decision import ComparisonEvidence, DecisionRules, decide, sign_test

ALPHA = 0.05


def bound(replicates: int) -> float:
    return ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / replicates)


def identical_arms(rng: np.random.Generator, cases: int, planned: int, missing: float,
                   rates: tuple[float, float] = (0.05, 0.95)) -> list[ComparisonEvidence]:
    """Each case at its own true rate, both arms drawing from it; trials missing at random."""
    found = []
    for i in range(cases):
        rate = rng.uniform(*rates)
        arms = []
        for _ in range(2):
            passed = rng.random(planned) < rate
            lost = rng.random(planned) < missing
            arms.append(tuple(None if gone else bool(ok) for ok, gone in zip(passed, lost, strict=True)))
        found.append(ComparisonEvidence(f"c{i}", arms[0], arms[1]))
    return found


def test_single_runs_suite_test_rejects_at_most_alpha() -> None:
    rng = np.random.default_rng(2801)
    replicates = 1000
    rejected = sum(decide(identical_arms(rng, 20, 1, 0.0)).decision in ("better", "worse") for _ in range(replicates))
    assert rejected / replicates <= bound(replicates)


def test_trials_suite_test_and_holm_regression_policy_reject_at_most_alpha() -> None:
    rng = np.random.default_rng(2802)
    replicates = 300
    suite = holm_regressions = any_unadjusted = 0
    for _ in range(replicates):
        cases = identical_arms(rng, 12, 20, 0.1, rates=(0.2, 0.8))
        decision = decide(cases)
        suite += decision.decision in ("better", "worse")
        holm_regressions += bool(decision.regressions)
        none = decide(cases, DecisionRules(adjustment="none"))
        any_unadjusted += any(c.decision in ("better", "worse") for c in none.comparisons)
    assert suite / replicates <= bound(replicates)
    # the family-wise error of the regression policy: any comparison wrongly called worse
    assert holm_regressions / replicates <= bound(replicates)
    # without the adjustment, 12 comparisons at alpha each flag something far more often
    assert any_unadjusted / replicates > 2 * ALPHA


def test_unequal_graded_counts_are_balanced_before_the_sign_test() -> None:
    # every candidate arm lost one of its 10 trials and the rates are low: over all graded
    # trials 0/9 and 0/10 tie, but 1/9 beats 1/10, so the sign of the full-rate difference
    # leans one way under identical arms; the balanced difference does not
    rng = np.random.default_rng(2803)
    replicates = 1000
    balanced = full = 0
    for _ in range(replicates):
        cases = []
        for i, case in enumerate(identical_arms(rng, 50, 10, 0.0, rates=(0.1, 0.1))):
            candidate = list(case.candidate)
            candidate[int(rng.integers(10))] = None
            cases.append(ComparisonEvidence(f"c{i}", case.baseline, tuple(candidate)))
        for differences, count in (([c.balanced_difference for c in cases], "balanced"),
                                   ([c.difference for c in cases], "full")):
            up = sum(1 for d in differences if d is not None and d > 0)
            down = sum(1 for d in differences if d is not None and d < 0)
            if sign_test(up, down) <= ALPHA:
                if count == "balanced":
                    balanced += 1
                else:
                    full += 1
    assert balanced / replicates <= bound(replicates)
    assert full / replicates > bound(replicates)  # what the balancing prevents (about 0.13 here)
