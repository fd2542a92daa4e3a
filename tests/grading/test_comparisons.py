"""Comparison pairs: every transition, not-comparable reasons, and malformed pairs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pytest_skill_eval.definitions.model import VariantName
from pytest_skill_eval.grading import ComparisonResult, GradeError
from pytest_skill_eval.grading.results import Transition
from pytest_skill_eval.observation import RunObservation

from .builders import grade, observation, read, turn

READ = observation(turns=[turn(1, calls=[read("c1", "/run/skills/1/SKILL.md")]), turn(2), turn(3)])
NOT_READ = observation(turns=[turn(1), turn(2), turn(3)])


def pair(expect: str = "never", comparison: str = "target-read", **extra: Any) -> list[dict[str, Any]]:
    return [
        {"id": "b", "kind": "skill-read", "variant": "baseline", "expect": expect, "comparison": comparison, **extra},
        {"id": "c", "kind": "skill-read", "variant": "candidate", "expect": expect, "comparison": comparison, **extra},
    ]


def as_variant(obs: RunObservation, name: VariantName) -> RunObservation:
    return replace(obs, variant=name)


@pytest.mark.parametrize(
    ("baseline", "candidate", "transition"),
    [
        (NOT_READ, NOT_READ, "pass-to-pass"),
        (READ, NOT_READ, "fail-to-pass"),
        (NOT_READ, READ, "pass-to-fail"),
        (READ, READ, "fail-to-fail"),
    ],
)
def test_transitions(baseline: Any, candidate: Any, transition: Transition) -> None:
    result = grade(pair(), {"baseline": as_variant(baseline, "baseline"), "candidate": candidate})
    assert result.comparisons == (ComparisonResult("target-read", "b", "c", transition, None),)
    assert result.state == "graded"
    assert result.errors == ()


@pytest.mark.parametrize(
    ("observations", "reason"),
    [
        ({"candidate": NOT_READ}, "baseline not-observed"),
        ({"baseline": as_variant(NOT_READ, "baseline"), "candidate": observation(state="not-selected")},
         "candidate not-selected"),
        ({"baseline": observation("baseline", state="invalid"), "candidate": observation(state="cancelled")},
         "baseline invalid; candidate cancelled"),
        ({"baseline": observation("baseline", state="infrastructure-failed"), "candidate": NOT_READ},
         "baseline infrastructure-failed"),
    ],
)
def test_not_comparable_when_a_side_was_not_graded(observations: dict[VariantName, RunObservation], reason: str) -> None:
    result = grade(pair(), observations)
    assert result.comparisons == (ComparisonResult("target-read", "b", "c", "not-comparable", reason),)
    assert result.state == "graded"


def test_not_comparable_when_a_side_is_a_grade_error() -> None:
    observations: dict[VariantName, RunObservation] = {"baseline": as_variant(NOT_READ, "baseline"),
                                                       "candidate": observation(target_file=None)}
    result = grade(pair(), observations)
    assert result.comparisons == (ComparisonResult("target-read", "b", "c", "not-comparable", "candidate grade-error"),)
    assert result.state == "grade-error"
    assert [e.scope for e in result.errors] == ["expectation"]


def both() -> dict[VariantName, RunObservation]:
    return {"baseline": as_variant(NOT_READ, "baseline"), "candidate": NOT_READ}


@pytest.mark.parametrize(
    ("expectations", "baseline_id", "candidate_id", "problem"),
    [
        (pair()[:1], "b", None, 'expected exactly one baseline and one candidate expectation, found only baseline "b"'),
        (pair() + [{**pair()[1], "id": "c2"}], "b", None,
         'expected exactly one baseline and one candidate expectation, found baseline "b", candidate "c" and '
         'candidate "c2"'),
        ([pair()[0], {**pair()[0], "id": "b2"}], None, None,
         'expected exactly one baseline and one candidate expectation, found baseline "b" and baseline "b2"'),
        ([pair()[0], {"id": "c", "kind": "response-text", "variant": "candidate", "expect": "contains", "value": "x",
                      "comparison": "target-read"}], "b", "c",
         'baseline "b" is a "skill-read" expectation but candidate "c" is a "response-text" expectation'),
        ([pair()[0], {**pair("on-turn")[1], "turn": 1}], "b", "c",
         'baseline "b" and candidate "c" must check the same predicate but differ in expect, turn'),
    ],
    ids=["one-side-only", "two-candidates", "two-baselines", "different-kinds", "different-predicates"],
)
def test_malformed_pairs_are_comparison_errors(
    expectations: list[dict[str, Any]], baseline_id: str | None, candidate_id: str | None, problem: str
) -> None:
    result = grade(expectations, both())
    assert result.comparisons == (
        ComparisonResult("target-read", baseline_id, candidate_id, "not-comparable", f"comparison grade-error: {problem}"),
    )
    assert result.errors == (GradeError("comparison", "target-read", None, f'comparison "target-read": {problem}'),)
    assert result.state == "grade-error"


def test_json_values_in_predicates_compare_as_json() -> None:
    base = {"id": "b", "kind": "json", "variant": "baseline", "expect": "field-equals", "path": "r.json",
            "pointer": "/n", "value": 1, "comparison": "n"}
    cand = {**base, "id": "c", "variant": "candidate", "value": 1.0}
    final = {"r.json": b'{"n": 1}'}
    result = grade([base, cand], {"baseline": observation("baseline", final=final), "candidate": observation(final=final)})
    assert result.comparisons == (ComparisonResult("n", "b", "c", "pass-to-pass", None),)


def test_comparisons_follow_first_appearance_and_expectations_without_one_are_left_out() -> None:
    expectations = [
        *pair(comparison="zeta"),
        {"id": "solo", "kind": "response-text", "variant": "candidate", "expect": "contains", "value": ""},
        *[{**e, "id": e["id"] + "2"} for e in pair(comparison="alpha")],
    ]
    result = grade(expectations, both())
    assert [c.id for c in result.comparisons] == ["zeta", "alpha"]


# --- compare_expectations directly: members the loader would never build ---------------------

def member(eid: Any, variant: Any, raw: Any = None, status: str = "pass") -> tuple[Any, Any]:
    from pytest_skill_eval.definitions.model import Expectation
    from pytest_skill_eval.grading import ExpectationResult

    raw = {"kind": "path", "expect": "exists", "path": "a"} if raw is None else raw
    e = Expectation(id=eid, kind="path", variant=variant, expect="exists", comparison="cmp", turn=None,
                    pointer="/expectations/0", raw=raw)
    return e, ExpectationResult(str(eid), "path", str(variant), status, "x", "y")  # type: ignore[arg-type]


def problem_of(*members: tuple[Any, Any]) -> str | None:
    from pytest_skill_eval.grading.comparisons import compare_expectations

    _, errors = compare_expectations(list(members), {"baseline": "complete", "candidate": "complete"})
    return errors[0].message if errors else None


def test_a_member_of_neither_variant_breaks_the_pair() -> None:
    assert problem_of(member("b", "baseline"), member("x", "both")) == (
        'comparison "cmp": expected exactly one baseline and one candidate expectation, found baseline "b" and '
        'both "x"')
    assert problem_of(member("b", "baseline"), member("c", "candidate"), member("x", "both")) == (
        'comparison "cmp": expected exactly one baseline and one candidate expectation, found baseline "b", '
        'candidate "c" and both "x"')


def test_labels_of_non_string_variants_are_json() -> None:
    assert problem_of(member("b", "baseline"), member("n", None)) == (
        'comparison "cmp": expected exactly one baseline and one candidate expectation, found baseline "b" and '
        'null "n"')
    assert problem_of(member("b", "baseline"), member(7, 3)) == (
        'comparison "cmp": expected exactly one baseline and one candidate expectation, found baseline "b" and 3 "7"')


def test_a_raw_that_is_not_an_object_differs_in_shape() -> None:
    assert problem_of(member("b", "baseline"), member("c", "candidate", raw=["path"])) == (
        'comparison "cmp": baseline "b" and candidate "c" must check the same predicate but differ in shape '
        "(not both objects)")
    assert problem_of(member("b", "baseline", raw="x"), member("c", "candidate")) is not None


def test_a_side_whose_run_state_is_unknown_is_not_observed() -> None:
    from pytest_skill_eval.grading.comparisons import compare_expectations

    comparisons, _ = compare_expectations([member("b", "baseline", status="not-graded"), member("c", "candidate")], {})
    assert [(c.transition, c.reason) for c in comparisons] == [("not-comparable", "baseline not-observed")]


def test_a_malformed_pair_does_not_stop_the_pairs_after_it() -> None:
    expectations = [*pair("never", "first")[:1], *pair("never", "second")]
    result = grade(expectations, both())
    assert [(c.id, c.transition) for c in result.comparisons] == [("first", "not-comparable"), ("second", "pass-to-pass")]
