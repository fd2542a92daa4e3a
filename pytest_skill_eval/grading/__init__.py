"""Deterministic grading: pure functions from observed run evidence to a group's grade.

    grading
    ├── results      ExpectationResult, ComparisonResult, GradeError, GroupGrade (+ JSON)
    ├── checks       one frozen, tagged check type per kind; Check is their union
    ├── shapes       kind-specific validation of raw expectations into checks (check_expectation),
    │                against schemas/expectation.schema.json plus the group-dependent rules
    ├── kinds        the nine expectation kinds: dispatch to expected sentences and judges
    │   ├── turns      skill-read, resource-read, response-text, tool-call, context-text
    │   ├── workspace  path, changed-paths, file-text, json
    │   └── judging    Verdict and the evidence views every judge shares
    ├── jsonvalue    strict JSON parsing, RFC 6901 pointers, JSON equality
    ├── comparisons  baseline/candidate pairs and their transitions
    └── group        grade_group: the total entry point

Nothing here does I/O: grading reads a :class:`~pytest_skill_eval.observation.RunObservation`
built from persisted evidence, so a stored result can be re-graded without the agent.
See ``docs/grading.md`` for the user reference.
"""

from __future__ import annotations

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
