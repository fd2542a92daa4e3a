"""A stored grade.json reads back only when every field has its type; otherwise it says which."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_skill_eval.grading.results import (
    ComparisonResult,
    ExpectationResult,
    GradeError,
    GroupGrade,
)

EXPECTATION = {"id": "e", "kind": "path", "variant": "candidate", "status": "fail", "expected": "a exists",
               "observed": "a does not exist", "locations": ["final workspace a"], "error": None}
COMPARISON = {"id": "c", "baseline": "b", "candidate": "e", "transition": "pass-to-fail", "reason": None}
ERROR = {"scope": "expectation", "owner": "e", "variant": "candidate", "message": "m"}
GRADE = {"group_id": "g", "state": "grade-error", "expectations": [EXPECTATION], "comparisons": [COMPARISON],
         "errors": [ERROR]}


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = {**base, **changes}
    return {k: v for k, v in out.items() if v is not REMOVE}


REMOVE = object()


def test_a_stored_grade_reads_back() -> None:
    grade = GroupGrade.from_json(json.loads(json.dumps(GRADE)))
    assert grade.to_json() == GRADE
    assert grade.expectations[0] == ExpectationResult("e", "path", "candidate", "fail", "a exists", "a does not exist",
                                                      ("final workspace a",), None)
    assert grade.comparisons[0] == ComparisonResult("c", "b", "e", "pass-to-fail", None)
    assert grade.errors[0] == GradeError("expectation", "e", "candidate", "m")


def test_optional_parts_default() -> None:
    grade = GroupGrade.from_json({"group_id": "g", "state": "graded"})
    assert (grade.expectations, grade.comparisons, grade.errors) == ((), (), ())
    e = ExpectationResult.from_json(with_(EXPECTATION, locations=REMOVE, error=REMOVE))
    assert (e.locations, e.error) == ((), None)
    c = ComparisonResult.from_json(with_(COMPARISON, baseline=REMOVE, reason=REMOVE))
    assert (c.baseline, c.reason) == (None, None)


@pytest.mark.parametrize(("cls", "data", "message"), [
    (ExpectationResult, with_(EXPECTATION, id=3), "id: expected a string, found number 3"),
    (ExpectationResult, with_(EXPECTATION, kind=None), "kind: expected a string, found null"),
    (ExpectationResult, with_(EXPECTATION, variant=["candidate"]), 'variant: expected a string, found array ["candidate"]'),
    (ExpectationResult, with_(EXPECTATION, expected={"a": 1}), 'expected: expected a string, found object {"a":1}'),
    (ExpectationResult, with_(EXPECTATION, observed=True), "observed: expected a string, found boolean true"),
    (ExpectationResult, with_(EXPECTATION, observed=REMOVE), "observed: expected a string, found nothing"),
    (ExpectationResult, with_(EXPECTATION, status=REMOVE),
     "status: expected one of pass, fail, grade-error, not-graded, found nothing"),
    (ExpectationResult, with_(EXPECTATION, status=["pass"]),
     "status: ['pass'] is not valid. Valid values: pass, fail, grade-error, not-graded"),
    (ExpectationResult, with_(EXPECTATION, locations="final workspace a"),
     'locations: expected an array of strings, found string "final workspace a"'),
    (ExpectationResult, with_(EXPECTATION, locations=["ok", 2]), "locations/1: expected a string, found number 2"),
    (ExpectationResult, with_(EXPECTATION, error=1), "error: expected a string or null, found number 1"),
    (ComparisonResult, with_(COMPARISON, id=None), "id: expected a string, found null"),
    (ComparisonResult, with_(COMPARISON, baseline=1), "baseline: expected a string or null, found number 1"),
    (ComparisonResult, with_(COMPARISON, candidate=[]), "candidate: expected a string or null, found array []"),
    (ComparisonResult, with_(COMPARISON, reason=False), "reason: expected a string or null, found boolean false"),
    (GradeError, with_(ERROR, message=None), "message: expected a string, found null"),
    (GradeError, with_(ERROR, owner=7), "owner: expected a string or null, found number 7"),
    (GradeError, with_(ERROR, variant={}), "variant: expected a string or null, found object {}"),
    (GroupGrade, with_(GRADE, group_id=1), "group_id: expected a string, found number 1"),
    (GroupGrade, with_(GRADE, expectations={"e": EXPECTATION}),
     ('expectations: expected an array of objects, found object '
     '{"e":{"error":null,"expected":"a exists","id":"e","kind":"path","locations":["f…')),
    (GroupGrade, with_(GRADE, comparisons="none"), 'comparisons: expected an array of objects, found string "none"'),
    (GroupGrade, with_(GRADE, errors=[ERROR, "boom"]), 'errors/1: expected an object, found string "boom"'),
    (GroupGrade, with_(GRADE, expectations=[with_(EXPECTATION, id=None)]),
     "expectations/0/id: expected a string, found null"),
    (GroupGrade, with_(GRADE, comparisons=[COMPARISON, with_(COMPARISON, transition="worse")]),
     ("comparisons/1/transition: 'worse' is not valid. Valid values: pass-to-pass, fail-to-pass, pass-to-fail, "
     "fail-to-fail, not-comparable")),
])
def test_wrong_field_types_are_rejected_with_the_field_named(cls: Any, data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        cls.from_json(data)
    assert str(info.value) == message


@pytest.mark.parametrize("document", [[], "grade", None, 3])
def test_a_grade_that_is_not_an_object_is_rejected(document: Any) -> None:
    with pytest.raises(ValueError, match=r"^grade: expected an object, found "):
        GroupGrade.from_json(document)


def test_a_value_json_cannot_hold_is_named_by_its_python_type() -> None:
    with pytest.raises(ValueError) as info:
        ExpectationResult.from_json(with_(EXPECTATION, id=(1, 2)))
    assert str(info.value) == "id: expected a string, found tuple [1,2]"
