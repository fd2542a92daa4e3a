"""Comparison pairs: one baseline and one candidate expectation sharing a comparison ID.

A comparison reports a factual transition (``fail-to-pass`` …), never a verdict on
quality. A pair that is not exactly one baseline and one candidate expectation of the
same kind and predicate is a comparison-scoped grade error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_skill_eval.definitions.model import Expectation
from pytest_skill_eval.grading.jsonvalue import as_text, json_equal, show
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GradeError

# Fields that name or place an expectation rather than say what it checks.
_IDENTITY_FIELDS = frozenset({"id", "variant", "comparison"})


def _label(expectation: Expectation) -> str:
    variant = expectation.variant if isinstance(expectation.variant, str) else show(expectation.variant)
    return f'{variant} "{as_text(expectation.id)}"'


def _pairing_problem(members: Sequence[Expectation]) -> str | None:
    baselines = [e for e in members if e.variant == "baseline"]
    candidates = [e for e in members if e.variant == "candidate"]
    if len(baselines) != 1 or len(candidates) != 1 or len(members) != 2:
        labels = [_label(e) for e in members]
        found = f"only {labels[0]}" if len(labels) == 1 else ", ".join(labels[:-1]) + f" and {labels[-1]}"
        return f"expected exactly one baseline and one candidate expectation, found {found}"
    base, cand = baselines[0], candidates[0]
    if base.kind != cand.kind:
        return (
            f"{_label(base)} is a {show(base.kind)} expectation "
            f"but {_label(cand)} is a {show(cand.kind)} expectation"
        )
    differing = _differing_fields(base.raw, cand.raw)
    if differing:
        return f"{_label(base)} and {_label(cand)} must check the same predicate but differ in {', '.join(differing)}"
    return None


def _differing_fields(a: Any, b: Any) -> list[str]:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return ["shape (not both objects)"]
    keys = sorted((set(a) | set(b)) - _IDENTITY_FIELDS)
    return [k for k in keys if k not in a or k not in b or not json_equal(a[k], b[k])]


def _side_reason(side: str, result: ExpectationResult, run_states: Mapping[str, str]) -> str | None:
    if result.status in ("pass", "fail"):
        return None
    if result.status == "grade-error":
        return f"{side} grade-error"
    return f"{side} {run_states.get(side, 'not-observed')}"


def compare_expectations(
    graded: Sequence[tuple[Expectation, ExpectationResult]],
    run_states: Mapping[str, str],
) -> tuple[list[ComparisonResult], list[GradeError]]:
    """Pair *graded* expectations by comparison ID, in order of first appearance.

    *run_states* maps each variant to its run state (``not-observed`` when absent) so
    a ``not-comparable`` reason can say why a side was not graded.
    """
    members: dict[str, list[tuple[Expectation, ExpectationResult]]] = {}
    for expectation, result in graded:
        if isinstance(expectation.comparison, str):
            members.setdefault(expectation.comparison, []).append((expectation, result))

    comparisons: list[ComparisonResult] = []
    errors: list[GradeError] = []
    for cid, pair in members.items():
        expectations = [e for e, _ in pair]
        baselines = [(e, r) for e, r in pair if e.variant == "baseline"]
        candidates = [(e, r) for e, r in pair if e.variant == "candidate"]
        base_id = as_text(baselines[0][0].id) if len(baselines) == 1 else None
        cand_id = as_text(candidates[0][0].id) if len(candidates) == 1 else None
        problem = _pairing_problem(expectations)
        if problem is not None:
            errors.append(GradeError("comparison", cid, None, f'comparison "{cid}": {problem}'))
            comparisons.append(
                ComparisonResult(cid, base_id, cand_id, "not-comparable", f"comparison grade-error: {problem}")
            )
            continue
        base_result, cand_result = baselines[0][1], candidates[0][1]
        reasons = [
            r
            for r in (
                _side_reason("baseline", base_result, run_states),
                _side_reason("candidate", cand_result, run_states),
            )
            if r is not None
        ]
        if reasons:
            comparisons.append(ComparisonResult(cid, base_id, cand_id, "not-comparable", "; ".join(reasons)))
        else:
            transition = f"{base_result.status}-to-{cand_result.status}"
            comparisons.append(ComparisonResult(cid, base_id, cand_id, transition, None))  # type: ignore[arg-type]
    return comparisons, errors
