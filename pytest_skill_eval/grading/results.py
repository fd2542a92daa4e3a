"""The values grading produces: one result per expectation and per comparison, plus errors.

Every value is frozen and slotted and round-trips through plain JSON
(``to_json``/``from_json``), because the evidence layer persists them as
``grade.json`` and a stored grade must read back identically.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args

from pytest_skill_eval.errors import MalformedGrade
from pytest_skill_eval.grading.jsonvalue import show

ExpectationStatus = Literal["pass", "fail", "grade-error", "not-graded"]
Transition = Literal["pass-to-pass", "fail-to-pass", "pass-to-fail", "fail-to-fail", "not-comparable"]
ErrorScope = Literal["expectation", "comparison", "group", "system"]
GroupGradeState = Literal["graded", "grade-error"]

EXPECTATION_STATUSES: tuple[ExpectationStatus, ...] = get_args(ExpectationStatus)
TRANSITIONS: tuple[Transition, ...] = get_args(Transition)
ERROR_SCOPES: tuple[ErrorScope, ...] = get_args(ErrorScope)
GROUP_GRADE_STATES: tuple[GroupGradeState, ...] = get_args(GroupGradeState)


_MISSING: Any = object()
_JSON_TYPES = ((bool, "boolean"), (str, "string"), (int, "number"), (float, "number"), (list, "array"), (dict, "object"))


def _found(value: Any) -> str:
    """What a stored field holds, for messages: ``nothing``, ``null``, ``number 3``…"""
    if value is _MISSING:
        return "nothing"
    if value is None:
        return "null"
    name = next((n for t, n in _JSON_TYPES if isinstance(value, t)), type(value).__name__)
    return f"{name} {show(value)}"


def _choice(d: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> Any:
    value = d.get(key, _MISSING)
    if value is _MISSING:
        raise MalformedGrade(f"{key}: expected one of {', '.join(allowed)}, found nothing")
    if not isinstance(value, str) or value not in allowed:
        raise MalformedGrade(f"{key}: {value!r} is not valid. Valid values: {', '.join(allowed)}")
    return value


def _str(d: Mapping[str, Any], key: str) -> str:
    value = d.get(key, _MISSING)
    if not isinstance(value, str):
        raise MalformedGrade(f"{key}: expected a string, found {_found(value)}")
    return value


def _optional_str(d: Mapping[str, Any], key: str) -> str | None:
    value = d.get(key)
    if value is not None and not isinstance(value, str):
        raise MalformedGrade(f"{key}: expected a string or null, found {_found(value)}")
    return value


def _strings(d: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = d.get(key, [])
    if not isinstance(value, list):
        raise MalformedGrade(f"{key}: expected an array of strings, found {_found(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise MalformedGrade(f"{key}/{i}: expected a string, found {_found(item)}")
    return tuple(value)


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedGrade(f"{where}: expected an object, found {_found(value)}")
    return value


_T = TypeVar("_T")


def _items(d: Mapping[str, Any], key: str, read: Callable[[Mapping[str, Any]], _T]) -> tuple[_T, ...]:
    """Each object of the array at *key*, read by *read*; errors are prefixed with its place."""
    value = d.get(key, [])
    if not isinstance(value, list):
        raise MalformedGrade(f"{key}: expected an array of objects, found {_found(value)}")
    found = []
    for i, item in enumerate(value):
        item = _object(item, f"{key}/{i}")
        try:
            found.append(read(item))
        except MalformedGrade as exc:
            raise MalformedGrade(f"{key}/{i}/{exc}") from None
    return tuple(found)


@dataclass(frozen=True, slots=True)
class ExpectationResult:
    """The verdict on one expectation.

    ``status`` is ``not-graded`` when the variant's run is not ``complete`` (``observed``
    then names the run state) and ``grade-error`` when the expectation is malformed or
    the evidence cannot answer it (``error`` says why). ``locations`` point into the
    evidence that decided the verdict.
    """

    id: str
    kind: str
    variant: str
    status: ExpectationStatus
    expected: str
    observed: str
    locations: tuple[str, ...] = ()
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "variant": self.variant,
            "status": self.status,
            "expected": self.expected,
            "observed": self.observed,
            "locations": list(self.locations),
            "error": self.error,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ExpectationResult:
        return cls(
            id=_str(d, "id"),
            kind=_str(d, "kind"),
            variant=_str(d, "variant"),
            status=_choice(d, "status", EXPECTATION_STATUSES),
            expected=_str(d, "expected"),
            observed=_str(d, "observed"),
            locations=_strings(d, "locations"),
            error=_optional_str(d, "error"),
        )


@dataclass(frozen=True, slots=True)
class ComparisonResult:
    """The factual transition between a baseline and a candidate expectation.

    ``baseline``/``candidate`` are expectation ids (``None`` when the comparison does
    not have exactly one on that side); ``reason`` explains ``not-comparable``.
    """

    id: str
    baseline: str | None
    candidate: str | None
    transition: Transition
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "transition": self.transition,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ComparisonResult:
        return cls(
            id=_str(d, "id"),
            baseline=_optional_str(d, "baseline"),
            candidate=_optional_str(d, "candidate"),
            transition=_choice(d, "transition", TRANSITIONS),
            reason=_optional_str(d, "reason"),
        )


@dataclass(frozen=True, slots=True)
class GradeError:
    """A problem that stops grading from answering something.

    ``owner`` is the expectation id (scope ``expectation``) or comparison id (scope
    ``comparison``); ``variant`` is set for expectation-owned errors so variant views
    can leave out the other variant's errors.
    """

    scope: ErrorScope
    owner: str | None
    variant: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "owner": self.owner, "variant": self.variant, "message": self.message}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GradeError:
        return cls(
            scope=_choice(d, "scope", ERROR_SCOPES),
            owner=_optional_str(d, "owner"),
            variant=_optional_str(d, "variant"),
            message=_str(d, "message"),
        )


@dataclass(frozen=True, slots=True)
class GroupGrade:
    """Everything grading says about one group; ``state`` is ``grade-error`` iff ``errors``."""

    group_id: str
    state: GroupGradeState
    expectations: tuple[ExpectationResult, ...] = ()
    comparisons: tuple[ComparisonResult, ...] = ()
    errors: tuple[GradeError, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "state": self.state,
            "expectations": [e.to_json() for e in self.expectations],
            "comparisons": [c.to_json() for c in self.comparisons],
            "errors": [e.to_json() for e in self.errors],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GroupGrade:
        """Read a stored ``grade.json``; MalformedGrade names the first field that is not what it should be."""
        d = _object(d, "grade")
        return cls(
            group_id=_str(d, "group_id"),
            state=_choice(d, "state", GROUP_GRADE_STATES),
            expectations=_items(d, "expectations", ExpectationResult.from_json),
            comparisons=_items(d, "comparisons", ComparisonResult.from_json),
            errors=_items(d, "errors", GradeError.from_json),
        )
