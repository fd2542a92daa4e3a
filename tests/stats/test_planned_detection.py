"""Issue 29's proof of planning: on the stochastic stand-in, the N that ``skill-eval plan``
plans detects the documented effect in at least the planned share of seeded repetitions.

The draws are the stand-in's own: each arm of each trial draws its choice from
:class:`~pytest_skill_eval.scripted.replies.Arm`'s seeded generator, as each pi process of a
trials run does, with the weights a script gives. The test is Fisher's exact test at alpha,
read from scipy (independent of the plugin's own rejection region).
"""

from __future__ import annotations

import math

import pytest
from scipy.stats import fisher_exact

from pytest_skill_eval.decision.power import trials_for_power
from pytest_skill_eval.scripted.replies import Arm

REPETITIONS = 300


def passes(seed: str, variant: str, trial: int, weights: list[int]) -> bool:
    """The stand-in's seeded draw for one arm of one trial chose the first (passing) alternative."""
    generator = Arm(seed, "planned-group", variant, trial).generator(1, "/turns/0/rules/0")
    return generator.choices([0, 1], weights=weights)[0] == 0


def detected_share(n: int, baseline: list[int], candidate: list[int], alpha: float) -> float:
    found = 0
    for r in range(REPETITIONS):
        seed = f"plan-{r}"
        b = sum(passes(seed, "baseline", t, baseline) for t in range(1, n + 1))
        c = sum(passes(seed, "candidate", t, candidate) for t in range(1, n + 1))
        found += fisher_exact([[b, n - b], [c, n - c]]).pvalue <= alpha
    return found / REPETITIONS


@pytest.mark.parametrize(("baseline", "candidate", "effect"), [
    ([3, 7], [5, 5], 0.2),   # the default minimum effect, at the trials example's baseline rate 0.3
    ([5, 5], [9, 1], 0.4),
])
def test_the_planned_n_detects_the_effect_in_at_least_the_planned_share(
        baseline: list[int], candidate: list[int], effect: float) -> None:
    rate = baseline[0] / sum(baseline)
    plan = trials_for_power(effect, power=0.8, alpha=0.05, baseline_rate=rate)
    share = detected_share(plan.trials, baseline, candidate, 0.05)
    # the planned power is exact; the share is a binomial estimate of it (3 standard errors)
    assert share >= plan.power - 3 * math.sqrt(plan.power * (1 - plan.power) / REPETITIONS)
    # and the plan is not wasteful: a third of its trials detects the effect clearly less often
    assert detected_share(max(1, plan.trials // 3), baseline, candidate, 0.05) < plan.power - 0.15

