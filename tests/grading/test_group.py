"""grade_group as a whole: not-graded states, totality, determinism, JSON round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from pytest_skill_eval.definitions.model import VariantName
from pytest_skill_eval.grading import (
    ComparisonResult,
    ExpectationResult,
    GradeError,
    GroupGrade,
    grade_group,
    kinds,
)
from pytest_skill_eval.grading import group as group_module
from pytest_skill_eval.observation import ContextRequest, RunObservation, RunState

from .builders import GroupType, call, grade, group, observation, read, turn

EXPECTATIONS = [
    {"id": "b-read", "kind": "skill-read", "variant": "baseline", "expect": "by-turn", "turn": 2, "comparison": "read"},
    {"id": "c-read", "kind": "skill-read", "variant": "candidate", "expect": "by-turn", "turn": 2, "comparison": "read"},
    {"id": "c-file", "kind": "file-text", "variant": "candidate", "expect": "contains", "path": "out.txt", "value": "ok",
     "turn": 2},
    {"id": "c-tool", "kind": "tool-call", "variant": "candidate", "expect": "succeeded", "tool": "write"},
]


def full_run(name: VariantName) -> RunObservation:
    return observation(
        name,
        turns=[
            turn(1, "start", [read("r1", "/run/skills/1/SKILL.md")]),
            turn(2, "done", [call("w1", "write", {"path": "out.txt", "content": "ok"})]),
            turn(3, "bye"),
        ],
        final={"out.txt": b"ok"},
        turn_files={2: {"out.txt": b"ok"}},
    )


@pytest.mark.parametrize("state", ["invalid", "infrastructure-failed", "cancelled", "not-selected"])
def test_expectations_of_a_run_that_is_not_complete_are_not_graded(state: RunState) -> None:
    result = grade(EXPECTATIONS, {"baseline": full_run("baseline"), "candidate": observation(state=state)})
    statuses = {e.id: (e.status, e.observed) for e in result.expectations}
    assert statuses == {
        "b-read": ("pass", "the target was first read on turn 1"),
        "c-read": ("not-graded", f"the candidate run is {state}"),
        "c-file": ("not-graded", f"the candidate run is {state}"),
        "c-tool": ("not-graded", f"the candidate run is {state}"),
    }
    assert result.comparisons == (ComparisonResult("read", "b-read", "c-read", "not-comparable", f"candidate {state}"),)
    assert result.state == "graded"


def test_a_missing_observation_is_not_graded() -> None:
    result = grade(EXPECTATIONS, {"candidate": full_run("candidate")})
    baseline = result.expectations[0]
    assert (baseline.status, baseline.observed, baseline.locations) == (
        "not-graded", "no baseline run was observed (not-observed)", ())
    assert baseline.expected == "the target skill skills/target is first read on or before turn 2"


def test_full_grade_json_shape() -> None:
    result = grade(EXPECTATIONS, {"baseline": full_run("baseline"), "candidate": full_run("candidate")})
    assert result.to_json() == {
        "group_id": "g",
        "state": "graded",
        "expectations": [
            {"id": "b-read", "kind": "skill-read", "variant": "baseline", "status": "pass",
             "expected": "the target skill skills/target is first read on or before turn 2",
             "observed": "the target was first read on turn 1", "locations": ["turn 1, tool call r1 (read)"],
             "error": None},
            {"id": "c-read", "kind": "skill-read", "variant": "candidate", "status": "pass",
             "expected": "the target skill skills/target is first read on or before turn 2",
             "observed": "the target was first read on turn 1", "locations": ["turn 1, tool call r1 (read)"],
             "error": None},
            {"id": "c-file", "kind": "file-text", "variant": "candidate", "status": "pass",
             "expected": 'out.txt contains "ok" after turn 2',
             "observed": "out.txt contains the text at line 1, column 1",
             "locations": ["workspace out.txt after turn 2"], "error": None},
            {"id": "c-tool", "kind": "tool-call", "variant": "candidate", "status": "pass",
             "expected": "a call to write succeeds",
             "observed": "1 matching call to write: 1 succeeded, 0 failed",
             "locations": ["turn 2, tool call w1 (write)"], "error": None},
        ],
        "comparisons": [
            {"id": "read", "baseline": "b-read", "candidate": "c-read", "transition": "pass-to-pass", "reason": None},
        ],
        "errors": [],
    }


def test_grade_errors_make_the_group_a_grade_error_and_are_listed_per_owner() -> None:
    expectations = [
        {"id": "bad", "kind": "path", "variant": "candidate", "expect": "exists"},
        {"id": "no-snapshot", "kind": "path", "variant": "baseline", "expect": "exists", "path": "a", "turn": 3},
    ]
    result = grade(expectations, {"baseline": full_run("baseline"), "candidate": full_run("candidate")})
    assert result.state == "grade-error"
    assert result.errors == (
        GradeError("expectation", "bad", "candidate",
                   '/expectations/0/path: expected a relative workspace path (slash-separated, without ".", ".." or '
                   "empty segments), found nothing"),
        GradeError("expectation", "no-snapshot", "baseline", "no workspace snapshot after turn 3 was recorded"),
    )


def test_an_observation_of_the_wrong_variant_is_a_group_error() -> None:
    result = grade([], {"baseline": full_run("candidate")})
    assert result.errors == (GradeError("group", "g", "baseline", "the baseline observation records the candidate variant"),)
    assert result.state == "grade-error"


def test_an_exception_inside_one_expectation_stays_in_that_expectation(monkeypatch: pytest.MonkeyPatch) -> None:
    real_judge = kinds.judge  # the judge the group module calls (imported there from kinds)

    def exploding_judge(check: Any, obs: Any, grp: Any) -> Any:
        if check.kind == "tool-call":
            raise ZeroDivisionError("boom")
        return real_judge(check, obs, grp)

    monkeypatch.setattr(group_module, "judge", exploding_judge)
    result = grade(EXPECTATIONS, {"baseline": full_run("baseline"), "candidate": full_run("candidate")})
    by_id = {e.id: e for e in result.expectations}
    assert by_id["c-tool"].status == "grade-error"
    assert by_id["c-tool"].error == "grading raised ZeroDivisionError: boom"
    assert by_id["c-file"].status == "pass"
    assert result.errors == (GradeError("expectation", "c-tool", "candidate", "grading raised ZeroDivisionError: boom"),)


def test_an_exception_outside_expectations_becomes_a_system_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def exploding(*args: Any) -> Any:
        raise RuntimeError("pairing broke")

    monkeypatch.setattr(group_module, "compare_expectations", exploding)
    result = grade(EXPECTATIONS, {})
    assert result == GroupGrade("g", "grade-error", errors=(GradeError("system", None, None,
                                                                        "grading raised RuntimeError: pairing broke"),))


def test_grading_is_deterministic() -> None:
    observations: dict[VariantName, RunObservation] = {"baseline": full_run("baseline"), "candidate": full_run("candidate")}
    first = grade(EXPECTATIONS, observations).to_json()
    assert all(grade(EXPECTATIONS, dict(reversed(observations.items()))).to_json() == first for _ in range(5))


def test_round_trip_through_json_text() -> None:
    result = grade(EXPECTATIONS + [{"id": "x", "kind": "nope", "variant": "candidate", "expect": "x"}],
                   {"candidate": full_run("candidate")})
    assert GroupGrade.from_json(json.loads(json.dumps(result.to_json()))) == result


@pytest.mark.parametrize(
    "value",
    [
        ExpectationResult("e", "path", "candidate", "fail", "a exists", "a does not exist", ("final workspace a",), None),
        ExpectationResult("e", "path", "baseline", "grade-error", "x", "y", (), "boom"),
        ComparisonResult("c", None, "e", "not-comparable", "comparison grade-error: x"),
        ComparisonResult("c", "a", "b", "fail-to-pass"),
        GradeError("comparison", "c", None, "m"),
        GradeError("system", None, None, "m"),
    ],
)
def test_result_values_round_trip(value: Any) -> None:
    assert type(value).from_json(value.to_json()) == value


@pytest.mark.parametrize(
    ("cls", "data", "message"),
    [
        (ExpectationResult, {"id": "e", "kind": "k", "variant": "v", "status": "ok", "expected": "", "observed": ""},
         "status: 'ok' is not valid. Valid values: pass, fail, grade-error, not-graded"),
        (ComparisonResult, {"id": "c", "baseline": None, "candidate": None, "transition": "better"},
         "transition: 'better' is not valid. Valid values: pass-to-pass, fail-to-pass, pass-to-fail, fail-to-fail, "
         "not-comparable"),
        (GradeError, {"scope": "file", "owner": None, "variant": None, "message": "m"},
         "scope: 'file' is not valid. Valid values: expectation, comparison, group, system"),
    ],
)
def test_from_json_rejects_unknown_values(cls: Any, data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        cls.from_json(data)
    assert str(info.value) == message


# --- no input makes grading raise -----------------------------------------------------

FIELD_NAMES = ["id", "kind", "variant", "expect", "comparison", "turn", "path", "paths", "value", "pointer",
               "resource", "index", "tool", "argumentContains", "argumentNotContains", "surface", "request"]
KIND_NAMES = ["skill-read", "resource-read", "path", "changed-paths", "file-text", "json", "response-text",
              "tool-call", "context-text"]
EXPECT_NAMES = ["never", "on-turn", "by-turn", "not-before-turn", "read", "not-read", "exists", "absent", "equals",
                "excludes", "contains", "not-contains", "available", "missing", "valid", "malformed",
                "field-present", "field-absent", "field-equals", "called", "succeeded", "failed", "not-called"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.floats() | st.text(max_size=8)
    | st.sampled_from(["", "/", "/a", "~", "a/b", "..", ".", "first", "last", "skill", "context", "workspace",
                       "system-prompt", "provider-context", "a.json", "out.txt", "write", "read"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
TEMPLATES: list[dict[str, Any]] = [
    {"kind": "skill-read", "expect": "on-turn", "turn": 1},
    {"kind": "resource-read", "expect": "read", "resource": "skill", "index": 1, "path": "SKILL.md", "turn": 2},
    {"kind": "path", "expect": "exists", "path": "a.json", "turn": 1},
    {"kind": "changed-paths", "expect": "equals", "paths": ["a.json"]},
    {"kind": "file-text", "expect": "contains", "path": "out.txt", "value": "x"},
    {"kind": "json", "expect": "field-equals", "path": "a.json", "pointer": "/a/0", "value": 1},
    {"kind": "response-text", "expect": "equals", "value": "b", "turn": 2},
    {"kind": "tool-call", "expect": "failed", "tool": "edit", "argumentContains": ["{}"]},
    {"kind": "context-text", "expect": "contains", "value": "s", "request": 1, "turn": 2},
]


@st.composite
def mutated_templates(draw: st.DrawFn) -> dict[str, Any]:
    """A valid expectation with a few fields replaced, removed or added: reaches the judges."""
    raw: dict[str, Any] = dict(draw(st.sampled_from(TEMPLATES)))
    raw["variant"] = draw(st.sampled_from(["baseline", "candidate"]))
    for name in draw(st.lists(st.sampled_from(FIELD_NAMES), max_size=2)):
        if draw(st.booleans()):
            raw[name] = draw(json_values)
        else:
            raw.pop(name, None)
    return raw


raw_expectations = st.one_of(
    mutated_templates(),
    json_values,
    st.fixed_dictionaries(
        {"kind": st.sampled_from(KIND_NAMES) | json_values, "expect": st.sampled_from(EXPECT_NAMES) | json_values},
        optional={name: json_values for name in FIELD_NAMES if name not in ("kind", "expect")},
    ),
)
observations = st.fixed_dictionaries(
    {},
    optional={
        "baseline": st.sampled_from(["complete", "invalid", "not-selected"]),
        "candidate": st.sampled_from(["complete", "cancelled"]),
    },
)


def garbage_run(variant: VariantName = "candidate", state: RunState = "complete") -> RunObservation:
    """A run whose evidence gives every kind something odd to look at."""
    return observation(
        variant,
        state=state,
        turns=[
            turn(1, "a", [read("r", "/run/skills/1/SKILL.md"), call("w", "write", {"path": "out.txt", "k": [1, None]})]),
            turn(2, "b", [call("e", "edit", {}, blocked=True)]),
        ],
        initial={"a.json": b"{}"},
        final={"a.json": b'{"a": [1]}', "out.txt": b"\xff"},
        turn_files={1: {"a.json": b"{"}},
        context=[ContextRequest(1, 1, "s", "p"), ContextRequest(2, 1, "s2", "p2")],
    )


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(raws=st.lists(raw_expectations, max_size=4), states=observations,
       group_type=st.sampled_from(["body", "description"]))
def test_garbage_expectations_never_raise(raws: list[Any], states: dict[VariantName, RunState],
                                          group_type: GroupType) -> None:
    for i, raw in enumerate(raws):
        if isinstance(raw, dict):
            raw.setdefault("id", f"e{i}")
    grp = group(raws, type=group_type, prompts=("one", "two"))
    runs = {name: garbage_run(name, state) for name, state in states.items()}
    result = grade_group(grp, runs)
    encoded = json.dumps(result.to_json())
    assert GroupGrade.from_json(json.loads(encoded)) == result
    assert grade_group(grp, runs).to_json() == result.to_json()
    assert (result.state == "grade-error") == bool(result.errors)
    assert len(result.expectations) == len(raws)


@pytest.mark.parametrize("status", ["pass", "fail", "grade-error", "not-graded"])
def test_generated_expectations_reach_every_status(status: str) -> None:
    """Guards the property test above against generating only malformed expectations."""

    def reaches(raw: Any) -> bool:
        runs: dict[VariantName, RunObservation] = {"baseline": garbage_run("baseline", "not-selected"),
                                                   "candidate": garbage_run()}
        raw = {**raw, "id": "e"} if isinstance(raw, dict) else raw
        return grade_group(group([raw], prompts=("one", "two")), runs).expectations[0].status == status

    find(raw_expectations, reaches, settings=settings(max_examples=2000, database=None))


# --- every result field of the unhappy paths ------------------------------------------------

def test_a_malformed_expectation_result_in_full() -> None:
    result = grade([{"id": "bad", "kind": "path", "variant": "candidate", "expect": "exists"}], {})
    assert result.expectations == (ExpectationResult(
        "bad", "path", "candidate", "grade-error", "unknown: the expectation is malformed",
        "not judged: the expectation is malformed", (),
        '/expectations/0/path: expected a relative workspace path (slash-separated, without ".", ".." or '
        "empty segments), found nothing"),)


@pytest.mark.parametrize("state", ["invalid", "cancelled"])
def test_a_not_graded_result_still_says_what_was_expected(state: RunState) -> None:
    result = grade([{"id": "p", "kind": "path", "variant": "candidate", "expect": "exists", "path": "a"}],
                   {"candidate": observation(state=state)})
    assert result.expectations == (ExpectationResult(
        "p", "path", "candidate", "not-graded", "a exists in the workspace at the end of the run",
        f"the candidate run is {state}"),)


def test_evidence_that_cannot_answer_keeps_the_expected_sentence() -> None:
    result = grade([{"id": "p", "kind": "path", "variant": "candidate", "expect": "exists", "path": "a", "turn": 2}],
                   {"candidate": observation()})
    assert result.expectations == (ExpectationResult(
        "p", "path", "candidate", "grade-error", "a exists in the workspace after turn 2",
        "not judged: the evidence cannot answer it", (), "no workspace snapshot after turn 2 was recorded"),)


def test_grading_that_raises_keeps_the_expected_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    def exploding(check: Any, obs: Any, grp: Any) -> Any:
        raise KeyError("k")

    monkeypatch.setattr(group_module, "judge", exploding)
    result = grade([{"id": "p", "kind": "path", "variant": "candidate", "expect": "absent", "path": "a"}],
                   {"candidate": observation()})
    assert result.expectations == (ExpectationResult(
        "p", "path", "candidate", "grade-error", "a does not exist in the workspace at the end of the run",
        "not judged: grading failed", (), "grading raised KeyError: 'k'"),)


def test_judge_gets_the_group(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    real = kinds.judge  # the judge the group module calls (imported there from kinds)

    def spy(check: Any, obs: Any, grp: Any) -> Any:
        seen.append(grp)
        return real(check, obs, grp)

    monkeypatch.setattr(group_module, "judge", spy)
    g = group([{"id": "p", "kind": "path", "variant": "candidate", "expect": "absent", "path": "a"}])
    group_module.grade_group(g, {"candidate": observation()})
    assert seen == [g]


def test_a_grade_error_without_a_message_is_still_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_skill_eval.errors import UnanswerableError

    def silent(check: Any, obs: Any, grp: Any) -> Any:
        raise UnanswerableError("")

    monkeypatch.setattr(group_module, "judge", silent)
    result = grade([{"id": "p", "kind": "path", "variant": "candidate", "expect": "absent", "path": "a"}],
                   {"candidate": observation()})
    assert result.errors == (GradeError("expectation", "p", "candidate", "grade-error"),)


def test_grading_something_that_is_not_a_group_is_a_system_error() -> None:
    result = group_module.grade_group(object(), {})  # type: ignore[arg-type]
    assert (result.group_id, result.state) == ("null", "grade-error")
    assert result.errors[0].scope == "system"
    assert result.errors[0].message.startswith("grading raised AttributeError: ")
