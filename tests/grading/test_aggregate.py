"""The aggregate of trials: counts, unavailable trials, transitions, intervals and flags."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pytest_skill_eval import codec
from pytest_skill_eval.errors import EvidenceError, MalformedGradeError
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


#: what ``aggregate.json`` holds for two trials, key for key and in order: the stored form the
#: evidence comparison pins (the rates, the interval as ``[low, high]`` and the test written
#: from their counts, the counts under ``trials``)
STORED = (
    '{"group_id": "g", "trials": {"planned": 3, "ran": 2}, "state": "graded", '
    '"runs": {"baseline": {"complete": 2}, "candidate": {"complete": 2}}, '
    '"expectations": [{"id": "b", "kind": "path", "variant": "baseline", "passes": 1, "fails": 1, "not_graded": 0, '
    '"grade_errors": 0, "rate": 0.5, "interval": [0.09453120573423074, 0.9054687942657693], "flaky": true}, '
    '{"id": "c", "kind": "path", "variant": "candidate", "passes": 2, "fails": 0, "not_graded": 0, '
    '"grade_errors": 0, "rate": 1.0, "interval": [0.34238022750665303, 1.0], "flaky": false}], '
    '"comparisons": [{"id": "cmp", "baseline": "b", "candidate": "c", "baseline_passes": 1, "baseline_graded": 2, '
    '"candidate_passes": 2, "candidate_graded": 2, "baseline_rate": 0.5, "candidate_rate": 1.0, "p_value": 1.0, '
    '"transition": "1/2 -> 2/2 (p=1)", "saturated": false, "reason": null}], "errors": []}'
)


def test_the_aggregate_is_stored_key_for_key_in_order() -> None:
    a = aggregate("g", 3, [trial(1, "fail", "pass"), trial(2, "pass", "pass")])
    assert json.dumps(a.to_json()) == STORED
    assert TrialGrade.from_json(json.loads(STORED)) == a


def test_an_expectation_graded_in_no_trial_stores_no_interval_and_a_reason_its_comparison() -> None:
    a = aggregate("g", 2, [trial(n, "not-graded", "pass", (GradeError("system", None, None, "m"),))
                           for n in (1, 2)])
    stored = a.to_json()
    assert stored["expectations"][0]["rate"] is None and stored["expectations"][0]["interval"] is None
    assert stored["comparisons"][0]["p_value"] is None
    assert stored["comparisons"][0]["reason"] == "a side was graded in no trial"
    assert stored["errors"] == [{"scope": "system", "owner": None, "variant": None, "message": "m"}]
    assert TrialGrade.from_json(json.loads(json.dumps(stored))) == a


def _stored() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(STORED)
    return loaded


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.__setitem__("group_id", 3), "/group_id: expected a string, found 3"),
    (lambda d: d["trials"].__setitem__("planned", "3"), '/trials/planned: expected an integer, found "3"'),
    (lambda d: d["trials"].pop("ran"), '/trials/ran: expected an integer, found no "ran" field'),
    (lambda d: d.pop("trials"), '/trials: expected an object, found no "trials" field'),
    (lambda d: d.__setitem__("trials", []), "/trials: expected an object, found an empty array"),
    (lambda d: d.pop("runs"), '/runs: expected an object, found no "runs" field'),
    (lambda d: d["runs"]["baseline"].__setitem__("complete", "2"),
     '/runs/baseline/complete: expected an integer, found "2"'),
    (lambda d: d["expectations"][0].pop("kind"), '/expectations/0/kind: expected a string, found no "kind" field'),
    (lambda d: d["expectations"][0].__setitem__("interval", [0.1]),
     "/expectations/0/interval: expected a [low, high] array of two numbers, or null, found an array"),
    (lambda d: d["expectations"][0].__setitem__("interval", [0.1, 0.2, 0.3]),
     "/expectations/0/interval: expected a [low, high] array of two numbers, or null, found an array"),
    (lambda d: d["expectations"][0].__setitem__("interval", [0.1, "x"]),
     '/expectations/0/interval/1: expected a number, found "x"'),
    (lambda d: d["expectations"][0].__setitem__("interval", "0.1-0.2"),
     '/expectations/0/interval: expected a [low, high] array of two numbers, or null, found "0.1-0.2"'),
    (lambda d: d["comparisons"][0].__setitem__("saturated", "no"),
     '/comparisons/0/saturated: expected true or false, found "no"'),
    (lambda d: d["errors"].append({"scope": "bogus", "owner": None, "variant": None, "message": "m"}),
     '/errors/0/scope: expected one of "expectation", "comparison", "group", "system", found "bogus"'),
    (lambda d: d.__setitem__("state", "nope"), '/state: expected one of "graded", "grade-error", found "nope"'),
])
def test_a_stored_aggregate_that_is_not_one_is_refused_where_it_is_wrong(
        change: Callable[[dict[str, Any]], object], message: str) -> None:
    data = _stored()
    change(data)
    with pytest.raises(EvidenceError) as info:
        parse_aggregate(data, "aggregate.json")
    assert str(info.value) == f"aggregate.json: {message}"


def test_the_codec_refuses_what_the_schema_would_as_a_second_line() -> None:
    """Read without its schema, a bad aggregate is still a located grade error, not a KeyError."""
    data = _stored()
    del data["trials"]["ran"]
    with pytest.raises(MalformedGradeError, match=r"^aggregate.json: trials/ran: expected an integer, found nothing$"):
        codec.from_json(TrialGrade, data, "aggregate.json")
    data = _stored()
    data["comparisons"][0]["saturated"] = "no"
    with pytest.raises(MalformedGradeError, match=r'^comparisons/0/saturated: expected a boolean, found string "no"$'):
        TrialGrade.from_json(data)
