"""Grading one group: every expectation against its variant's run, then the comparisons.

Grading is total. Whatever goes wrong inside one expectation becomes that
expectation's ``grade-error``; whatever goes wrong outside becomes a ``system`` error.
Nothing raises out of :func:`grade_group`, because a thrown grade would lose the
evidence the run already paid for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_skill_eval.definitions.model import VARIANTS, Expectation, Group, VariantName
from pytest_skill_eval.errors import UnanswerableError
from pytest_skill_eval.grading.comparisons import compare_expectations
from pytest_skill_eval.grading.jsonvalue import as_text
from pytest_skill_eval.grading.kinds import describe_expected, judge
from pytest_skill_eval.grading.results import ExpectationResult, GradeError, GroupGrade
from pytest_skill_eval.grading.shapes import parse_check
from pytest_skill_eval.observation import RunObservation


def _result(expectation: Expectation, status: str, expected: str, observed: str, **extra: Any) -> ExpectationResult:
    return ExpectationResult(
        id=as_text(expectation.id),
        kind=as_text(expectation.kind),
        variant=as_text(expectation.variant),
        status=status,  # type: ignore[arg-type]
        expected=expected,
        observed=observed,
        **extra,
    )


def grade_expectation(
    group: Group, expectation: Expectation, observations: Mapping[VariantName, RunObservation]
) -> ExpectationResult:
    """Grade one expectation of *group*; never raises.

    A malformed expectation is a ``grade-error`` even when its variant did not run, so
    a broken definition surfaces on the first run rather than the first full run.
    """
    expected = "unknown: the expectation is malformed"
    try:
        check, problems = parse_check(group, expectation)
        if check is None:
            return _result(expectation, "grade-error", expected, "not judged: the expectation is malformed",
                           error="; ".join(problems))
        expected = describe_expected(check, group)
        observation = observations.get(check.variant)
        if observation is None:
            return _result(expectation, "not-graded", expected, f"no {check.variant} run was observed (not-observed)")
        if observation.state != "complete":
            return _result(expectation, "not-graded", expected, f"the {check.variant} run is {observation.state}")
        verdict = judge(check, observation, group)
        return _result(
            expectation, "pass" if verdict.passed else "fail", expected, verdict.observed, locations=verdict.locations
        )
    except UnanswerableError as exc:
        return _result(
            expectation, "grade-error", expected, "not judged: the evidence cannot answer it", error=str(exc)
        )
    except Exception as exc:  # noqa: BLE001 - grading must stay total; the error is the evidence
        return _result(
            expectation, "grade-error", expected, "not judged: grading failed",
            error=f"grading raised {type(exc).__name__}: {exc}",
        )


def grade_group(group: Group, observations: Mapping[VariantName, RunObservation]) -> GroupGrade:
    """Grade every expectation and comparison of *group* against *observations*.

    *observations* maps ``"baseline"``/``"candidate"`` to that variant's run; a missing
    key or a run that is not ``complete`` leaves the variant's expectations
    ``not-graded``. The result is deterministic: equal inputs give equal ``to_json()``.
    """
    try:
        return _grade_group(group, observations)
    except Exception as exc:  # noqa: BLE001 - see module docstring
        group_id = getattr(group, "id", None)
        return GroupGrade(
            group_id=as_text(group_id),
            state="grade-error",
            errors=(GradeError("system", None, None, f"grading raised {type(exc).__name__}: {exc}"),),
        )


def _grade_group(group: Group, observations: Mapping[VariantName, RunObservation]) -> GroupGrade:
    errors: list[GradeError] = []
    run_states: dict[str, str] = {}
    for name in VARIANTS:
        observation = observations.get(name)
        run_states[name] = "not-observed" if observation is None else observation.state
        if observation is not None and observation.variant != name:
            message = f"the {name} observation records the {observation.variant} variant"
            errors.append(GradeError("group", as_text(group.id), name, message))

    graded: list[tuple[Expectation, ExpectationResult]] = []
    for expectation in group.expectations:
        result = grade_expectation(group, expectation, observations)
        graded.append((expectation, result))
        if result.status == "grade-error":
            errors.append(GradeError("expectation", result.id, result.variant, result.error or "grade-error"))

    comparisons, comparison_errors = compare_expectations(graded, run_states)
    errors.extend(comparison_errors)
    return GroupGrade(
        group_id=as_text(group.id),
        state="grade-error" if errors else "graded",
        expectations=tuple(result for _, result in graded),
        comparisons=tuple(comparisons),
        errors=tuple(errors),
    )
