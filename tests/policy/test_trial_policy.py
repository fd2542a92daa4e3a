"""The outcome policy over trials: pass rate, alpha, errors, words and entries."""

from __future__ import annotations

import pytest

from pytest_skill_eval.grading.aggregate import ComparisonRate, ExpectationRate, TrialGrade
from pytest_skill_eval.policy import FailOn, VariantState, Verdict, judge_trials
from pytest_skill_eval.summary_table import summary_table


def verdict(baseline: tuple[int, int], candidate: tuple[int, int], *, fail_on: FailOn = "candidate",
            pass_rate: float = 1.0, alpha: float = 0.05, states: tuple[str, str] = ("complete", "complete"),
            grade_state: str = "graded") -> Verdict:
    (bp, bf), (cp, cf) = baseline, candidate
    expectations = (ExpectationRate("b", "skill-read", "baseline", bp, bf, 0, 0),
                    ExpectationRate("c", "skill-read", "candidate", cp, cf, 0, 0))
    comparison = ComparisonRate("cmp", "b", "c", bp, bp + bf, cp, cp + cf, False)
    aggregate = TrialGrade("g", 10, 10, grade_state, expectations, (comparison,), (),  # type: ignore[arg-type]
                           {"baseline": {states[0]: 10}, "candidate": {states[1]: 10}})
    variants = (VariantState("baseline", states[0], None, "/g/trials/*/baseline"),
                VariantState("candidate", states[1], None, "/g/trials/*/candidate"))
    return judge_trials(variants, aggregate, group_id="g", position=1, group_state="complete", group_dir="/g",
                        fail_on=fail_on, pass_rate=pass_rate, alpha=alpha, result_id="r")


@pytest.mark.parametrize(("candidate", "pass_rate", "outcome"), [
    ((10, 0), 1.0, "passed"), ((9, 1), 1.0, "failed"), ((9, 1), 0.9, "passed"), ((8, 2), 0.9, "failed"),
])
def test_candidate_fails_below_the_pass_rate(candidate: tuple[int, int], pass_rate: float, outcome: str) -> None:
    assert verdict((3, 7), candidate, pass_rate=pass_rate).outcome == outcome


def test_a_baseline_rate_never_fails_the_candidate_policy_but_does_under_any() -> None:
    assert verdict((0, 10), (10, 0)).outcome == "passed"
    assert verdict((0, 10), (10, 0), fail_on="any").outcome == "failed"
    assert verdict((0, 10), (0, 10), fail_on="never").outcome == "passed"


@pytest.mark.parametrize(("baseline", "candidate", "alpha", "outcome"), [
    ((9, 1), (3, 7), 0.05, "failed"),   # p = 0.02: a regression
    ((9, 1), (3, 7), 0.01, "passed"),   # not at alpha 0.01
    ((6, 4), (5, 5), 0.05, "passed"),   # lower, but far from significant
    ((3, 7), (9, 1), 0.05, "passed"),   # significant, but an improvement
])
def test_regression_fails_a_significantly_lower_candidate_rate(baseline: tuple[int, int], candidate: tuple[int, int],
                                                               alpha: float, outcome: str) -> None:
    assert verdict(baseline, candidate, fail_on="regression", alpha=alpha).outcome == outcome


def test_errors_come_from_runs_that_never_completed_and_from_grade_errors() -> None:
    assert verdict((1, 1), (1, 1), states=("invalid", "complete")).outcome == "error"
    assert verdict((1, 1), (1, 1), states=("cancelled", "complete")).outcome == "error"
    assert verdict((1, 1), (1, 1), grade_state="grade-error").outcome == "error"
    assert verdict((1, 1), (1, 1), states=("not-selected", "complete"), pass_rate=0.5).outcome == "passed"


def test_words_lines_properties_and_entries_carry_rates_p_values_and_trials() -> None:
    v = verdict((3, 7), (9, 1), pass_rate=0.8)
    assert v.words() == "3/10 -> 9/10 (p=0.02) (10 trials)"
    assert "    candidate  9/10 (90 %, 95 % CI 60-98 %) [flaky] c (skill-read)" in v.detail_lines(indent="    ")
    props = dict(v.properties())
    assert props["skill_eval.comparison.cmp.p_value"] == "0.01977"
    assert props["skill_eval.trials"] == "10/10" and props["skill_eval.pass_rate"] == "0.8"
    entries = {e.name: e for e in v.entries()}
    assert entries["expectation:c"].outcome == "passed" and entries["comparison:cmp"].outcome == "passed"
    failing = verdict((3, 7), (9, 1))
    assert {e.name: e for e in failing.entries()}["expectation:c"].outcome == "failed"
    assert failing.headline() == "failed c (skill-read): passed 9/10, below 100 %"
    assert summary_table([("s::g", "passed", v)])[1].endswith("cmp: 3/10 -> 9/10 (p=0.02)")
