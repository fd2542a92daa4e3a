"""Deterministic grading: pure functions from observed run evidence to a group's grade.

    grading
    ├── results      ExpectationResult, ComparisonResult, GradeError, GroupGrade (+ JSON)
    ├── checks       one frozen, tagged check type per kind; Check is their union
    ├── shapes       kind-specific validation of raw expectations into checks (check_expectation),
    │                against schemas/expectation.schema.json plus the group-dependent rules
    ├── kinds        the nine expectation kinds: dispatch to expected sentences and judges
    │   ├── turns      skill-read, resource-read, response-text, tool-call, context-text
    │   ├── workspace  path, changed-paths, file-text, json
    │   └── judging    JudgeVerdict and the evidence views every judge shares
    ├── jsonvalue    strict JSON parsing, RFC 6901 pointers, JSON equality
    ├── comparisons  baseline/candidate pairs and their transitions
    └── group        grade_group: the total entry point

Nothing here does I/O: grading reads a :class:`~pytest_skill_eval.observation.RunObservation`
built from persisted evidence, so a stored result can be re-graded without the agent.
See ``docs/grading.md`` for the user reference.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_skill_eval.grading.group import grade_expectation, grade_group
    from pytest_skill_eval.grading.results import (
        EXPECTATION_STATUSES,
        TRANSITIONS,
        ComparisonResult,
        ExpectationResult,
        GradeError,
        GroupGrade,
    )
    from pytest_skill_eval.grading.shapes import EXPECTS, KINDS, check_expectation

#: where each public name lives; imported on first use, so a reader of ``grading.results``
#: (the policy, the evidence records) does not load every expectation kind
_PUBLIC = {
    "grade_expectation": "group", "grade_group": "group",
    "EXPECTATION_STATUSES": "results", "TRANSITIONS": "results", "ComparisonResult": "results",
    "ExpectationResult": "results", "GradeError": "results", "GroupGrade": "results",
    "EXPECTS": "shapes", "KINDS": "shapes", "check_expectation": "shapes",
}

__all__ = [
    "EXPECTATION_STATUSES",
    "EXPECTS",
    "KINDS",
    "TRANSITIONS",
    "ComparisonResult",
    "ExpectationResult",
    "GradeError",
    "GroupGrade",
    "check_expectation",
    "grade_expectation",
    "grade_group",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_skill_eval.grading' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pytest_skill_eval.grading.{module}"), name)
    globals()[name] = value
    return value
