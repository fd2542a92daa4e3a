"""The aggregate's details: the stored interval, several comparisons and errors, a comparison
whose side names no expectation, and errors an expectation owns."""

from __future__ import annotations

import pytest

from pytest_skill_eval.grading.aggregate import Trial, aggregate
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GradeError, GroupGrade
from pytest_skill_eval.stats import wilson_interval

RUNS = {"baseline": "complete", "candidate": "complete"}


def grade(*comparisons: ComparisonResult, errors: tuple[GradeError, ...] = (),
          statuses: tuple[str, str] = ("fail", "pass")) -> GroupGrade:
    expectations = (ExpectationResult("b", "path", "baseline", statuses[0], "e", "o"),  # type: ignore[arg-type]
                    ExpectationResult("c", "path", "candidate", statuses[1], "e", "o"))  # type: ignore[arg-type]
    return GroupGrade("g", "grade-error" if errors else "graded", expectations, comparisons, errors)


def test_the_stored_interval_is_wilsons_and_null_when_nothing_was_graded() -> None:
    a = aggregate("g", 3, [Trial(1, grade(), RUNS), Trial(2, grade(statuses=("pass", "not-graded")), RUNS)])
    b, c = (e.to_json() for e in a.expectations)
    interval = wilson_interval(1, 2)
    assert interval is not None and b["interval"] == [interval.low, interval.high] and b["rate"] == 0.5
    one = wilson_interval(1, 1)
    assert one is not None and c["interval"] == [one.low, one.high]
    none = aggregate("g", 1, [Trial(1, grade(statuses=("not-graded", "not-graded")), RUNS)])
    assert none.expectations[0].to_json()["interval"] is None


def test_every_comparison_and_every_distinct_error_is_kept_once() -> None:
    first = ComparisonResult("one", "b", "c", "fail-to-pass")
    second = ComparisonResult("two", "c", "b", "pass-to-fail")
    errors = (GradeError("group", "g", None, "first"), GradeError("group", "g", None, "second"))
    a = aggregate("g", 2, [Trial(n, grade(first, second, errors=errors), RUNS) for n in (1, 2)])
    assert [(c.id, c.transition) for c in a.comparisons] == [("one", "fail-to-pass"), ("two", "pass-to-fail")]
    assert a.errors == errors and a.state == "grade-error"


def test_an_error_an_expectation_owns_is_counted_on_the_expectation_only() -> None:
    owned = GradeError("expectation", "c", "candidate", "the file is not JSON")
    trials = [Trial(1, grade(errors=(owned,), statuses=("pass", "grade-error")), RUNS),
              Trial(2, grade(statuses=("pass", "pass")), RUNS)]
    a = aggregate("g", 2, trials)
    assert a.errors == () and a.state == "graded"
    assert (a.expectations[1].passes, a.expectations[1].grade_errors) == (1, 1)


@pytest.mark.parametrize(("reason", "stored"), [
    ("the baseline side names no expectation", "the baseline side names no expectation"),
    (None, "a side was graded in no trial"),
])
def test_a_side_without_an_expectation_is_never_graded(reason: str | None, stored: str) -> None:
    missing = ComparisonResult("cmp", None, "c", "not-comparable", reason)
    a = aggregate("g", 2, [Trial(n, grade(missing), RUNS) for n in (1, 2)])
    (cmp,) = a.comparisons
    assert (cmp.baseline_passes, cmp.baseline_graded, cmp.candidate_passes, cmp.candidate_graded) == (0, 0, 2, 2)
    assert cmp.transition == "not-comparable" and cmp.reason == stored and cmp.to_json()["reason"] == stored
    unknown = ComparisonResult("cmp", "nowhere", "c", "not-comparable")
    assert aggregate("g", 1, [Trial(1, grade(unknown), RUNS)]).comparisons[0].reason == "a side was graded in no trial"
    graded = aggregate("g", 1, [Trial(1, grade(ComparisonResult("cmp", "b", "c", "fail-to-pass", reason)), RUNS)])
    assert graded.comparisons[0].reason is None
