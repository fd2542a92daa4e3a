"""The aggregate of trials: counts, unavailable trials, transitions, intervals and flags."""

from __future__ import annotations

import json

import pytest

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence.reader import parse_aggregate
from pytest_skill_eval.grading.aggregate import Trial, TrialGrade, aggregate
from pytest_skill_eval.grading.results import (
    ComparisonResult,
    ExpectationResult,
    ExpectationStatus,
    GradeError,
    GroupGrade,
    Transition,
)


def trial(number: int, baseline: ExpectationStatus, candidate: ExpectationStatus,
          errors: tuple[GradeError, ...] = (), runs: dict[str, str] | None = None) -> Trial:
    expectations = (ExpectationResult("b", "path", "baseline", baseline, "e", "o"),
                    ExpectationResult("c", "path", "candidate", candidate, "e", "o"))
    graded = baseline in ("pass", "fail") and candidate in ("pass", "fail")
    transition: Transition = f"{baseline}-to-{candidate}" if graded else "not-comparable"  # type: ignore[assignment]
    grade = GroupGrade("g", "grade-error" if errors else "graded", expectations,
                       (ComparisonResult("cmp", "b", "c", transition),), errors)
    return Trial(number, grade, runs or {"baseline": "complete", "candidate": "complete"})


def test_rates_count_only_graded_trials_and_report_the_others_apart() -> None:
    trials = [trial(1, "fail", "pass"), trial(2, "pass", "pass"), trial(3, "fail", "fail"),
              trial(4, "not-graded", "pass", runs={"baseline": "infrastructure-failed", "candidate": "complete"}),
              trial(5, "fail", "grade-error")]
    a = aggregate("g", 6, trials)
    b, c = a.expectations
    assert (b.passes, b.fails, b.not_graded, b.grade_errors, b.graded) == (1, 3, 1, 0, 4)
    assert (c.passes, c.fails, c.not_graded, c.grade_errors, c.graded) == (3, 1, 0, 1, 4)
    assert b.rate == 0.25 and c.rate == 0.75 and b.flaky and c.flaky
    assert (a.planned, a.ran, a.state) == (6, 5, "graded")
    assert a.runs == {"baseline": {"complete": 4, "infrastructure-failed": 1}, "candidate": {"complete": 5}}
    (cmp,) = a.comparisons
    assert (cmp.baseline_passes, cmp.baseline_graded, cmp.candidate_passes, cmp.candidate_graded) == (1, 4, 3, 4)
    assert cmp.transition == "1/4 -> 3/4 (p=0.49)"
    assert cmp.saturated is False and cmp.regressed is False


@pytest.mark.parametrize(("sides", "word"), [
    (("fail", "pass"), "fail-to-pass"), (("pass", "pass"), "pass-to-pass"),
    (("pass", "fail"), "pass-to-fail"), (("fail", "fail"), "fail-to-fail"),
])
def test_unanimous_trials_keep_the_spec_word(sides: tuple[ExpectationStatus, ExpectationStatus], word: str) -> None:
    a = aggregate("g", 3, [trial(n, *sides) for n in (1, 2, 3)])
    assert a.comparisons[0].transition == word
    assert a.comparisons[0].saturated is (word in ("pass-to-pass", "fail-to-fail"))
    assert not any(e.flaky for e in a.expectations)


def test_a_side_graded_in_no_trial_is_not_comparable_and_unavailable() -> None:
    a = aggregate("g", 2, [trial(n, "not-graded", "pass") for n in (1, 2)])
    b = a.expectations[0]
    assert (b.rate, b.interval, b.counts()) == (None, None, "unavailable")
    assert a.comparisons[0].transition == "not-comparable" and a.comparisons[0].p_value is None
    assert a.state == "graded"  # missing is unavailable, not an error


def test_a_check_no_trial_could_answer_or_a_group_error_is_a_grade_error() -> None:
    never = aggregate("g", 2, [trial(n, "grade-error", "pass") for n in (1, 2)])
    assert never.state == "grade-error"
    group_error = GradeError("group", "g", None, "two comparisons share an id")
    with_error = aggregate("g", 2, [trial(1, "pass", "pass", (group_error,)), trial(2, "pass", "pass", (group_error,))])
    assert with_error.state == "grade-error" and with_error.errors == (group_error,)


def test_the_aggregate_round_trips_through_its_schema() -> None:
    a = aggregate("g", 3, [trial(1, "fail", "pass"), trial(2, "pass", "pass")])
    data = json.loads(json.dumps(a.to_json()))
    assert parse_aggregate(data, "aggregate.json") == a
    assert isinstance(a, TrialGrade)
    data["expectations"][0]["passes"] = -1
    with pytest.raises(EvidenceError, match=r"aggregate.json: /expectations/0/passes"):
        parse_aggregate(data, "aggregate.json")
