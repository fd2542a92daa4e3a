"""The values grading produces: one result per expectation and per comparison, plus errors.

Every value is frozen and slotted and round-trips through plain JSON
(``to_json``/``from_json``, both :mod:`pytest_skill_eval.codec`), because the evidence
layer persists them as ``grade.json`` and a stored grade must read back identically; a
stored value of the wrong type is a :class:`MalformedGradeError` naming its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, get_args

from pytest_skill_eval.codec import Layout, Stored
from pytest_skill_eval.errors import MalformedGradeError

ExpectationStatus = Literal["pass", "fail", "grade-error", "not-graded"]
Transition = Literal["pass-to-pass", "fail-to-pass", "pass-to-fail", "fail-to-fail", "not-comparable"]
ErrorScope = Literal["expectation", "comparison", "group", "system"]
GroupGradeState = Literal["graded", "grade-error"]

EXPECTATION_STATUSES: tuple[ExpectationStatus, ...] = get_args(ExpectationStatus)
TRANSITIONS: tuple[Transition, ...] = get_args(Transition)
ERROR_SCOPES: tuple[ErrorScope, ...] = get_args(ErrorScope)
GROUP_GRADE_STATES: tuple[GroupGradeState, ...] = get_args(GroupGradeState)


#: how every grade record is stored: a bad stored value is a MalformedGradeError naming its place
GRADE_LAYOUT = Layout(error=MalformedGradeError, name="grade", strict=True)


@dataclass(frozen=True, slots=True)
class ExpectationResult(Stored):
    """The verdict on one expectation.

    ``status`` is ``not-graded`` when the variant's run is not ``complete`` (``observed``
    then names the run state) and ``grade-error`` when the expectation is malformed or
    the evidence cannot answer it (``error`` says why). ``locations`` point into the
    evidence that decided the verdict.
    """

    STORED: ClassVar[Layout] = GRADE_LAYOUT
    id: str
    kind: str
    variant: str
    status: ExpectationStatus
    expected: str
    observed: str
    locations: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ComparisonResult(Stored):
    """The factual transition between a baseline and a candidate expectation.

    ``baseline``/``candidate`` are expectation ids (``None`` when the comparison does
    not have exactly one on that side); ``reason`` explains ``not-comparable``.
    """

    STORED: ClassVar[Layout] = GRADE_LAYOUT
    id: str
    baseline: str | None
    candidate: str | None
    transition: Transition
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class GradeError(Stored):
    """A problem that stops grading from answering something.

    ``owner`` is the expectation id (scope ``expectation``) or comparison id (scope
    ``comparison``); ``variant`` is set for expectation-owned errors so variant views
    can leave out the other variant's errors.
    """

    STORED: ClassVar[Layout] = GRADE_LAYOUT
    scope: ErrorScope
    owner: str | None
    variant: str | None
    message: str


@dataclass(frozen=True, slots=True)
class GroupGrade(Stored):
    """Everything grading says about one group; ``state`` is ``grade-error`` iff ``errors``."""

    STORED: ClassVar[Layout] = GRADE_LAYOUT
    group_id: str
    state: GroupGradeState
    expectations: tuple[ExpectationResult, ...] = ()
    comparisons: tuple[ComparisonResult, ...] = ()
    errors: tuple[GradeError, ...] = ()
