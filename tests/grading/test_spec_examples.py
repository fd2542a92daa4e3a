"""The spec's own example expectations load through the real loader and are well-formed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.definitions.loading import load_group
from pytest_skill_eval.grading import check_expectation


def body_group(expectations: list[dict[str, Any]]) -> dict[str, Any]:
    variant = {
        "source": {"kind": "working-tree"},
        "skills": ["skills/support", "skills/target"],
        "target": 1,
        "context": ["context/contract.md"],
    }
    return {
        "schema_version": 1,
        "kind": "group",
        "id": "retained-artifact-behavior",
        "type": "body",
        "input": {"turns": ["Inspect the task and prepare the work.", "Complete it and write result.json."]},
        "fixture": "fixtures/task",
        "tools": ["read", "write", "edit"],
        "variants": {"baseline": variant, "candidate": variant},
        "expectations": expectations,
        "review_questions": [],
    }


SPEC_BODY_EXPECTATIONS: list[dict[str, Any]] = [
    {"id": "baseline-result", "kind": "path", "variant": "baseline", "path": "result.json", "turn": 2,
     "expect": "exists", "comparison": "result-exists"},
    {"id": "candidate-result", "kind": "path", "variant": "candidate", "path": "result.json", "turn": 2,
     "expect": "exists", "comparison": "result-exists"},
    {"id": "candidate-status", "kind": "json", "variant": "candidate", "path": "result.json", "turn": 2,
     "expect": "field-equals", "pointer": "/status", "value": "complete"},
    {"id": "candidate-changes", "kind": "changed-paths", "variant": "candidate", "turn": 2, "expect": "equals",
     "paths": ["result.json"]},
    {"id": "file-missing", "kind": "json", "variant": "candidate", "path": "missing.json", "expect": "missing"},
    {"id": "file-malformed", "kind": "json", "variant": "candidate", "path": "broken.json", "expect": "malformed"},
    {"id": "field-absent", "kind": "json", "variant": "candidate", "path": "result.json", "expect": "field-absent",
     "pointer": "/optional"},
    {"id": "field-null", "kind": "json", "variant": "candidate", "path": "result.json", "expect": "field-equals",
     "pointer": "/value", "value": None},
    {"id": "contract-read", "kind": "resource-read", "variant": "candidate", "resource": "context", "index": 0,
     "path": ".", "expect": "read", "turn": 1},
    {"id": "no-etc-writes", "kind": "tool-call", "variant": "candidate", "tool": "write", "expect": "not-called",
     "argumentContains": ["/etc"]},
    {"id": "prompt-has-contract", "kind": "context-text", "variant": "candidate", "expect": "contains",
     "value": "contract",
     "surface": "system-prompt", "request": "first", "turn": 1},
]


def test_spec_body_example_expectations_are_well_formed(tmp_path: Path) -> None:
    path = tmp_path / "group.json"
    path.write_text(json.dumps(body_group(SPEC_BODY_EXPECTATIONS)), encoding="utf-8")
    group = load_group(path, tmp_path)
    assert {e.id: check_expectation(group, e) for e in group.expectations} == {
        e["id"]: [] for e in SPEC_BODY_EXPECTATIONS
    }


@pytest.mark.parametrize(
    ("expectation", "problem"),
    [
        ({"id": "e", "kind": "path", "variant": "candidate", "expect": "exists", "path": "../out"},
         '/expectations/0/path: expected a relative workspace path (slash-separated, without ".", ".." or empty '
         'segments), found "../out"'),
        ({"id": "e", "kind": "json", "variant": "candidate", "expect": "valid", "path": "a.json", "value": 1},
         '/expectations/0/value: expected no value with expect "valid", found 1'),
    ],
)
def test_loaded_malformed_expectation_is_reported_at_grade_time(
    tmp_path: Path, expectation: dict[str, Any], problem: str
) -> None:
    path = tmp_path / "group.json"
    path.write_text(json.dumps(body_group([expectation])), encoding="utf-8")
    group = load_group(path, tmp_path)
    assert check_expectation(group, group.expectations[0]) == [problem]
