"""Kind-specific shape checks: exact messages, and malformed expectations become grade-errors."""

from __future__ import annotations

import dataclasses
import re
import typing
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_skill_eval import jsonpointer, schemas
from pytest_skill_eval.grading import check_expectation
from pytest_skill_eval.grading.checks import CHECK_TYPES
from pytest_skill_eval.grading.shapes import COMMON_FIELDS, EXPECTS, KIND_FIELDS, KINDS

from .builders import expectation, grade_one, group

KIND_LIST = (
    '"skill-read", "resource-read", "path", "changed-paths", "file-text", "json", "response-text", '
    '"tool-call", "context-text"'
)
WORKSPACE_PATH = 'a relative workspace path (slash-separated, without ".", ".." or empty segments)'

VALID: list[dict[str, Any]] = [
    {"kind": "skill-read", "expect": "never"},
    {"kind": "skill-read", "expect": "on-turn", "turn": 1},
    {"kind": "resource-read", "expect": "read", "resource": "workspace", "path": "a/b.md"},
    {"kind": "resource-read", "expect": "not-read", "resource": "skill", "index": 1, "path": "SKILL.md", "turn": 2},
    {"kind": "resource-read", "expect": "read", "resource": "context", "index": 0, "path": "."},
    {"kind": "path", "expect": "exists", "path": "result.json", "turn": 2},
    {"kind": "changed-paths", "expect": "equals", "paths": []},
    {"kind": "changed-paths", "expect": "excludes", "paths": ["a", "b/c"]},
    {"kind": "file-text", "expect": "equals", "path": "a", "value": ""},
    {"kind": "json", "expect": "available", "path": "a.json"},
    {"kind": "json", "expect": "field-equals", "path": "a.json", "pointer": "", "value": None},
    {"kind": "json", "expect": "field-absent", "path": "a.json", "pointer": "/a~0~1/0"},
    {"kind": "response-text", "expect": "contains", "value": "x", "turn": 3},
    {"kind": "tool-call", "expect": "called", "tool": "write", "argumentContains": [], "argumentNotContains": ["x"]},
    {"kind": "context-text", "expect": "contains", "value": "x", "surface": "provider-context", "request": "first"},
    {"kind": "context-text", "expect": "equals", "value": "x", "request": 3, "comparison": "a-b-1"},
    {"kind": "context-text", "expect": "equals", "value": "x", "request": 2.0},
    {"kind": "resource-read", "expect": "read", "resource": "skill", "index": 1.0, "path": "SKILL.md"},
]


@pytest.mark.parametrize("raw", VALID, ids=[f"{i}-{r['kind']}-{r['expect']}" for i, r in enumerate(VALID)])
def test_valid_expectations_have_no_problems(raw: dict[str, Any]) -> None:
    raw = {"id": "e", "variant": "candidate", **raw}
    assert check_expectation(group([raw]), expectation(raw)) == []


BAD: list[tuple[str, dict[str, Any], dict[str, Any], list[str]]] = [
    ("unknown-kind", {"kind": "file-exists", "expect": "x"}, {},
     [f'/expectations/0/kind: expected one of {KIND_LIST}, found "file-exists" (did you mean "file-text"?)']),
    ("bad-expect", {"kind": "path", "expect": "present", "path": "a"}, {},
     ['/expectations/0/expect: expected one of "exists", "absent", found "present"']),
    ("missing-expect", {"kind": "response-text", "value": "x"}, {},
     ['/expectations/0/expect: expected one of "contains", "not-contains", "equals", found nothing']),
    ("bad-variant", {"kind": "path", "expect": "exists", "path": "a", "variant": "both"}, {},
     ['/expectations/0/variant: expected one of "baseline", "candidate", found "both"']),
    ("bad-comparison", {"kind": "path", "expect": "exists", "path": "a", "comparison": "Bad--id"}, {},
     ['/expectations/0/comparison: expected a comparison ID (lowercase letters, digits and single hyphens, '
      'at most 64 characters), found "Bad--id"']),
    ("timed-skill-read-without-turn", {"kind": "skill-read", "expect": "by-turn"}, {},
     ['/expectations/0/turn: expected a turn from 1 to 3 for expect "by-turn", found nothing']),
    ("never-with-turn", {"kind": "skill-read", "expect": "never", "turn": 2}, {},
     ['/expectations/0/turn: expected no turn with expect "never", found 2']),
    ("turn-too-large", {"kind": "response-text", "expect": "contains", "value": "x", "turn": 4}, {},
     ["/expectations/0/turn: expected a turn from 1 to 3, found 4"]),
    ("turn-zero", {"kind": "skill-read", "expect": "on-turn", "turn": 0}, {},
     ["/expectations/0/turn: expected a turn from 1 to 3, found 0"]),
    ("turn-bool", {"kind": "skill-read", "expect": "on-turn", "turn": True}, {},
     ["/expectations/0/turn: expected a turn from 1 to 3, found true"]),
    ("turn-string", {"kind": "skill-read", "expect": "on-turn", "turn": "1"}, {},
     ['/expectations/0/turn: expected a turn from 1 to 3, found "1"']),
    ("turn-fraction", {"kind": "skill-read", "expect": "on-turn", "turn": 1.5}, {},
     ["/expectations/0/turn: expected a turn from 1 to 3, found 1.5"]),
    ("single-turn-input", {"kind": "skill-read", "expect": "on-turn", "turn": 2}, {"prompts": ("only",)},
     ["/expectations/0/turn: expected turn 1 (the input has one turn), found 2"]),
    ("turn-on-description-group", {"kind": "path", "expect": "exists", "path": "a", "turn": 1}, {"type": "description"},
     ["/expectations/0/turn: expected no turn on a description group (only skill-read takes a turn there), found 1"]),
    ("target-null", {"kind": "skill-read", "expect": "never", "variant": "baseline"}, {"baseline_target": None},
     ['/expectations/0/variant: expected a variant with a target skill, found "baseline (its target is null)"']),
    ("resource-missing", {"kind": "resource-read", "expect": "read", "path": "a"}, {},
     ['/expectations/0/resource: expected one of "workspace", "skill", "context", found nothing']),
    ("workspace-with-index", {"kind": "resource-read", "expect": "read", "resource": "workspace", "index": 0, "path": "a"},
     {}, ['/expectations/0/index: expected no index for resource "workspace", found 0']),
    ("skill-without-index", {"kind": "resource-read", "expect": "read", "resource": "skill", "path": "a"}, {},
     ["/expectations/0/index: expected an index into the 2 declared skills of candidate, found nothing"]),
    ("context-index-out-of-range", {"kind": "resource-read", "expect": "read", "resource": "context", "index": 2,
                                    "path": "a"}, {},
     ["/expectations/0/index: expected an index into the 2 declared context items of candidate, found 2"]),
    ("resource-path-escapes", {"kind": "resource-read", "expect": "read", "resource": "skill", "index": 0,
                               "path": "../x"}, {},
     ['/expectations/0/path: expected a relative path inside the skill resource, found "../x"']),
    ("dot-only-for-context", {"kind": "resource-read", "expect": "read", "resource": "workspace", "path": "."}, {},
     ['/expectations/0/path: expected a relative path inside the workspace resource, found "."']),
    ("path-absolute", {"kind": "path", "expect": "exists", "path": "/etc/passwd"}, {},
     [f'/expectations/0/path: expected {WORKSPACE_PATH}, found "/etc/passwd"']),
    ("path-dot-segment", {"kind": "path", "expect": "exists", "path": "./a"}, {},
     [f'/expectations/0/path: expected {WORKSPACE_PATH}, found "./a"']),
    ("path-empty-segment", {"kind": "path", "expect": "exists", "path": "a//b"}, {},
     [f'/expectations/0/path: expected {WORKSPACE_PATH}, found "a//b"']),
    ("path-empty", {"kind": "path", "expect": "exists", "path": ""}, {},
     [f'/expectations/0/path: expected {WORKSPACE_PATH}, found ""']),
    ("path-missing", {"kind": "path", "expect": "exists"}, {},
     [f"/expectations/0/path: expected {WORKSPACE_PATH}, found nothing"]),
    ("path-nul", {"kind": "path", "expect": "exists", "path": "a\x00b"}, {},
     [f'/expectations/0/path: expected {WORKSPACE_PATH}, found "a\\u0000b"']),
    ("path-dot-dot", {"kind": "path", "expect": "exists", "path": "a/../b"}, {},
     [f'/expectations/0/path: expected {WORKSPACE_PATH}, found "a/../b"']),
    ("path-trailing-slash", {"kind": "path", "expect": "exists", "path": "a/"}, {},
     [f'/expectations/0/path: expected {WORKSPACE_PATH}, found "a/"']),
    ("path-number", {"kind": "path", "expect": "exists", "path": 1}, {},
     [f"/expectations/0/path: expected {WORKSPACE_PATH}, found 1"]),
    ("file-text-path-nul", {"kind": "file-text", "expect": "contains", "path": "\x00", "value": "x"}, {},
     [f'/expectations/0/path: expected {WORKSPACE_PATH}, found "\\u0000"']),
    ("resource-path-nul", {"kind": "resource-read", "expect": "read", "resource": "workspace", "path": "a\x00"}, {},
     ['/expectations/0/path: expected a relative path inside the workspace resource, found "a\\u0000"']),
    ("paths-nul", {"kind": "changed-paths", "expect": "excludes", "paths": ["ok", "b\x00"]}, {},
     [f'/expectations/0/paths/1: expected {WORKSPACE_PATH}, found "b\\u0000"']),
    ("paths-not-array", {"kind": "changed-paths", "expect": "equals", "paths": "a"}, {},
     ['/expectations/0/paths: expected an array of relative workspace paths, found "a"']),
    ("paths-duplicate-and-bad", {"kind": "changed-paths", "expect": "excludes", "paths": ["a", 3, "a"]}, {},
     [f"/expectations/0/paths/1: expected {WORKSPACE_PATH}, found 3",
      '/expectations/0/paths/2: expected a path not listed before, found "a"']),
    ("file-text-value-missing", {"kind": "file-text", "expect": "contains", "path": "a"}, {},
     ["/expectations/0/value: expected a string, found nothing"]),
    ("file-text-value-number", {"kind": "file-text", "expect": "contains", "path": "a", "value": 3}, {},
     ["/expectations/0/value: expected a string, found 3"]),
    ("json-pointer-missing", {"kind": "json", "expect": "field-present", "path": "a"}, {},
     ['/expectations/0/pointer: expected a JSON Pointer ("" or starting with "/", with "~" only as ~0 or ~1), '
      "found nothing"]),
    ("json-pointer-no-slash", {"kind": "json", "expect": "field-absent", "path": "a", "pointer": "a"}, {},
     ['/expectations/0/pointer: expected a JSON Pointer ("" or starting with "/", with "~" only as ~0 or ~1), '
      'found "a"']),
    ("json-pointer-bad-escape", {"kind": "json", "expect": "field-absent", "path": "a", "pointer": "/a~2"}, {},
     ['/expectations/0/pointer: expected a JSON Pointer ("" or starting with "/", with "~" only as ~0 or ~1), '
      'found "/a~2"']),
    ("json-pointer-forbidden", {"kind": "json", "expect": "valid", "path": "a", "pointer": "/a"}, {},
     ['/expectations/0/pointer: expected no pointer with expect "valid", found "/a"']),
    ("json-value-missing", {"kind": "json", "expect": "field-equals", "path": "a", "pointer": "/a"}, {},
     ["/expectations/0/value: expected a JSON value to compare with (null is allowed), found nothing"]),
    ("json-value-forbidden", {"kind": "json", "expect": "field-present", "path": "a", "pointer": "/a", "value": 1}, {},
     ['/expectations/0/value: expected no value with expect "field-present", found 1']),
    ("response-value-missing", {"kind": "response-text", "expect": "equals"}, {},
     ["/expectations/0/value: expected a string, found nothing"]),
    ("tool-missing", {"kind": "tool-call", "expect": "called"}, {},
     ["/expectations/0/tool: expected a tool name, found nothing"]),
    ("tool-empty", {"kind": "tool-call", "expect": "called", "tool": ""}, {},
     ['/expectations/0/tool: expected a tool name, found ""']),
    ("argument-filter-not-array", {"kind": "tool-call", "expect": "called", "tool": "write", "argumentContains": "x"},
     {}, ['/expectations/0/argumentContains: expected an array of strings, found "x"']),
    ("argument-filter-item", {"kind": "tool-call", "expect": "called", "tool": "write", "argumentNotContains": [1]},
     {}, ["/expectations/0/argumentNotContains/0: expected a string, found 1"]),
    ("surface-bad", {"kind": "context-text", "expect": "contains", "value": "x", "surface": "prompt"}, {},
     ['/expectations/0/surface: expected one of "system-prompt", "provider-context", found "prompt"']),
    ("request-zero", {"kind": "context-text", "expect": "contains", "value": "x", "request": 0}, {},
     ['/expectations/0/request: expected "first", "last" or a positive request number, found 0']),
    ("request-word", {"kind": "context-text", "expect": "contains", "value": "x", "request": "middle"}, {},
     ['/expectations/0/request: expected "first", "last" or a positive request number, found "middle"']),
    ("unknown-field", {"kind": "path", "expect": "exists", "path": "a", "value": "x"}, {},
     ["/expectations/0/value: expected no such field on a path expectation (its fields: comparison, expect, id, "
      'kind, path, turn, variant), found "x"']),
    ("unknown-field-escaped", {"kind": "skill-read", "expect": "never", "a/b": 1}, {},
     ["/expectations/0/a~1b: expected no such field on a skill-read expectation (its fields: comparison, expect, "
      "id, kind, turn, variant), found 1"]),
    ("several-problems-in-order", {"kind": "tool-call", "expect": "calls", "turn": 9, "argumentContains": [2]}, {},
     ['/expectations/0/expect: expected one of "called", "succeeded", "failed", "not-called", found "calls"',
      "/expectations/0/turn: expected a turn from 1 to 3, found 9",
      "/expectations/0/tool: expected a tool name, found nothing",
      "/expectations/0/argumentContains/0: expected a string, found 2"]),
]


@pytest.mark.parametrize(("raw", "options", "messages"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_malformed_expectation_messages(raw: dict[str, Any], options: dict[str, Any], messages: list[str]) -> None:
    raw = {"id": "e", "variant": "candidate", **raw}
    assert check_expectation(group([raw], **options), expectation(raw)) == messages
    result = grade_one(raw, **options)
    assert result.status == "grade-error"
    assert result.error == "; ".join(messages)
    assert result.observed == "not judged: the expectation is malformed"


def test_non_object_expectation() -> None:
    assert check_expectation(group(), expectation(["x"], 3)) == ['/expectations/3: expected an expectation object, found ["x"]']


def test_malformed_expectation_is_grade_error_even_when_its_variant_did_not_run() -> None:
    result = grade_one({"kind": "path", "expect": "exists"}, obs=None)
    assert result.status == "grade-error"


def test_an_unknown_resource_and_a_bad_path_are_both_reported() -> None:
    raw = {"id": "e", "variant": "candidate", "kind": "resource-read", "expect": "read", "resource": "disk",
           "path": "../x"}
    assert check_expectation(group([raw]), expectation(raw)) == [
        '/expectations/0/resource: expected one of "workspace", "skill", "context", found "disk"',
        '/expectations/0/path: expected a relative path inside the selected resource, found "../x"',
    ]


def test_resource_indexes_count_skills_and_context_separately() -> None:
    import dataclasses

    g = group()
    g = dataclasses.replace(g, candidate=dataclasses.replace(g.candidate, skills=("a", "b", "c"), context=("x",)))

    def problems(resource: str, index: int) -> list[str]:
        raw = {"id": "e", "variant": "candidate", "kind": "resource-read", "expect": "read", "resource": resource,
               "index": index, "path": "f.md"}
        return check_expectation(g, expectation(raw))

    assert problems("skill", 2) == []
    assert problems("context", 0) == []
    assert problems("context", 1) == [
        "/expectations/0/index: expected an index into the 1 declared context items of candidate, found 1"]
    assert problems("skill", 3) == [
        "/expectations/0/index: expected an index into the 3 declared skills of candidate, found 3"]


@pytest.mark.parametrize(("length", "ok"), [(64, True), (65, False)])
def test_comparison_ids_up_to_64_characters(length: int, ok: bool) -> None:
    raw = {"id": "e", "variant": "candidate", "kind": "path", "expect": "exists", "path": "a", "comparison": "a" * length}
    assert (check_expectation(group([raw]), expectation(raw)) == []) is ok


def test_an_unknown_kind_gets_no_kind_specific_turn_rule() -> None:
    raw = {"id": "e", "variant": "candidate", "kind": "file-exists", "expect": "x", "turn": 1}
    assert check_expectation(group([raw], type="description"), expectation(raw)) == [
        f'/expectations/0/kind: expected one of {KIND_LIST}, found "file-exists" (did you mean "file-text"?)']


def test_a_bad_variant_with_a_skill_resource_is_reported_not_raised() -> None:
    raw = {"id": "e", "variant": "both", "kind": "resource-read", "expect": "read", "resource": "skill", "index": 0,
           "path": "SKILL.md"}
    assert check_expectation(group([raw]), expectation(raw)) == [
        '/expectations/0/variant: expected one of "baseline", "candidate", found "both"']


# --- expectation.schema.json: the shapes JSON Schema can state ----------------------------------

def _schema_problems(raw: dict[str, Any], definition: str | None = None) -> list[str]:
    return [f"{p.pointer}: {p.message}" for p in schemas.problems("expectation", raw, definition)]


def test_the_expectation_schema_agrees_with_the_kind_tables() -> None:
    schema = schemas.schema("expectation")
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "urn:pytest-skill-eval:schema:expectation:1"
    defs = schema["$defs"]
    assert tuple(defs["common"]["properties"]["kind"]["enum"]) == KINDS
    for kind in KINDS:
        assert tuple(defs[kind]["properties"]["expect"]["enum"]) == EXPECTS[kind]
        branches = [b for rule in defs[kind].get("allOf", ()) for b in (rule.get("then", {}), rule.get("else", {}))]
        declared = set(defs[kind]["properties"]).union(*(b.get("properties", {}) for b in branches))
        assert declared - {"expect"} == set(KIND_FIELDS[kind])


@pytest.mark.parametrize("raw", VALID + [b[1] for b in BAD],
                         ids=[f"valid-{i}" for i in range(len(VALID))] + [b[0] for b in BAD])
def test_the_whole_schema_finds_what_grading_finds_with_common_and_the_kind(raw: dict[str, Any]) -> None:
    raw = {"id": "e", "variant": "candidate", **raw}
    parts = _schema_problems(raw, "common") + (_schema_problems(raw, raw["kind"]) if raw["kind"] in KINDS else [])
    assert sorted(_schema_problems(raw)) == sorted(parts)


def _relative(value: str) -> bool:
    """The relative-path rule as it was written by hand before the schema stated it."""
    if value == "" or value.startswith("/") or "\x00" in value:
        return False
    return all(segment not in ("", ".", "..") for segment in value.split("/"))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="/.a\n\x00~-", max_size=7))
def test_the_schema_patterns_are_the_hand_written_rules(text: str) -> None:
    base = {"id": "e", "variant": "candidate"}
    path = {**base, "kind": "path", "expect": "exists", "path": text}
    assert (_schema_problems(path, "path") == []) == _relative(text)
    context = {**base, "kind": "resource-read", "expect": "read", "resource": "context", "index": 0, "path": text}
    assert (_schema_problems(context, "resource-read") == []) == (_relative(text) or text == ".")
    pointer = {**base, "kind": "json", "expect": "field-present", "path": "a", "pointer": text}
    assert (_schema_problems(pointer, "json") == []) == (jsonpointer.parse(text) is not None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="az09-\nA", max_size=6) | st.sampled_from(["a" * 64, "a" * 65, "a-" * 32 + "b"]))
def test_the_comparison_pattern_is_the_id_rule(text: str) -> None:
    raw = {"id": "e", "variant": "candidate", "kind": "path", "expect": "exists", "path": "a", "comparison": text}
    valid = len(text) <= 64 and re.fullmatch(r"[a-z](?:[a-z0-9]|-(?=[a-z0-9]))*", text) is not None
    assert (_schema_problems(raw, "common") == []) == valid


def test_grade_errors_show_found_values_as_json_and_missing_fields_as_nothing() -> None:
    # the schema's x-found annotation: definitions and scripts keep their own wording
    raw = {"id": "e", "variant": "candidate", "kind": "tool-call", "expect": "called", "argumentContains": {"a": [1]}}
    assert check_expectation(group([raw]), expectation(raw)) == [
        "/expectations/0/tool: expected a tool name, found nothing",
        '/expectations/0/argumentContains: expected an array of strings, found {"a":[1]}',
    ]
    assert [p.message for p in schemas.problems("script", {"schema": "skill-eval-script/1"})] == [
        'expected a non-empty array of turns, found no "turns" field']


#: a definition field stored under another name in its check, and check fields derived from others
_STORED_AS = {"argumentContains": "contains", "argumentNotContains": "not_contains"}
_DERIVED = {"json": {"tokens"}}


def test_each_check_type_is_its_kinds_row_of_the_tables() -> None:
    """The kind tables here are the one registry: the check types (grading/checks) and the
    schema (test above) are checked against them, so a kind added in one place only fails."""
    assert tuple(CHECK_TYPES) == KINDS
    for kind, check_type in CHECK_TYPES.items():
        hints = typing.get_type_hints(check_type)
        fields = {f.name: f for f in dataclasses.fields(check_type)}
        assert fields["kind"].default == kind
        assert typing.get_args(hints["expect"]) == EXPECTS[kind]
        own = set(fields) - {"kind", "expect", "variant", "turn"}
        assert own == {_STORED_AS.get(name, name) for name in KIND_FIELDS[kind]} | _DERIVED.get(kind, set()), kind
    assert set(COMMON_FIELDS) - {"id", "comparison"} == {"kind", "expect", "variant", "turn"}
