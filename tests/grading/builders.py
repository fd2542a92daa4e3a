"""Small builders for grading tests: groups, expectations and observations as plain values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pytest_skill_eval.definitions.model import Expectation, Group, Runtime, Source, Variant, VariantName
from pytest_skill_eval.grading import ExpectationResult, GroupGrade, grade_group
from pytest_skill_eval.observation import ContextRequest, RunObservation, RunState, ToolCall, Turn

WORKSPACE = "/run/ws"
SKILL_ROOTS = ("/run/skills/0", "/run/skills/1")
TARGET_FILE = "/run/skills/1/SKILL.md"
CONTEXT_ROOTS = ("/run/context/0/contract.md", "/run/context/1")
PROMPTS = ("first prompt", "second prompt", "third prompt")

GroupType = Literal["description", "body"]


def variant(name: VariantName, *, target: int | None = 1) -> Variant:
    return Variant(
        name=name,
        source=Source("working-tree"),
        skills=("skills/support", "skills/target"),
        target=target,
        context=("context/contract.md", "context/dir"),
    )


def expectation(raw: Any, position: int = 0) -> Expectation:
    """An Expectation as the loader builds it: common fields mirrored from *raw*."""
    get = raw.get if isinstance(raw, dict) else (lambda key, default=None: default)
    return Expectation(
        id=get("id", f"e{position}"),
        kind=get("kind", ""),
        variant=get("variant", "candidate"),
        expect=get("expect", ""),
        comparison=get("comparison"),
        turn=get("turn"),
        pointer=f"/expectations/{position}",
        raw=raw,
    )


def group(
    expectations: Sequence[Any] = (),
    *,
    type: GroupType = "body",
    prompts: Sequence[str] = PROMPTS,
    baseline_target: int | None = 1,
    candidate_target: int | None = 1,
) -> Group:
    return Group(
        path=Path("groups/g.json"),
        id="g",
        type=type,
        prompts=tuple(prompts),
        input_kind="turns",
        fixture=None,
        tools=("read", "write", "edit"),
        baseline=variant("baseline", target=baseline_target),
        candidate=variant("candidate", target=candidate_target),
        expectations=tuple(expectation(raw, i) for i, raw in enumerate(expectations)),
        review_questions=(),
        model=None,
        runtime=Runtime(),
        raw={},
    )


def call(
    id: str, name: str, arguments: dict[str, Any] | None = None, *, is_error: bool = False, blocked: bool = False
) -> ToolCall:
    return ToolCall(turn=0, id=id, name=name, arguments=arguments or {}, is_error=is_error, blocked=blocked)


def read(id: str, path: str) -> ToolCall:
    return call(id, "read", {"path": path})


def turn(index: int, response: str = "", calls: Sequence[ToolCall] = ()) -> Turn:
    return Turn(index=index, prompt=f"p{index}", sent=f"p{index}", response=response, tool_calls=tuple(calls))


def observation(
    variant: VariantName = "candidate",
    *,
    state: RunState = "complete",
    turns: Sequence[Turn] | None = None,
    initial: Mapping[str, bytes] | None = None,
    final: Mapping[str, bytes] | None = None,
    turn_files: Mapping[int, Mapping[str, bytes]] | None = None,
    context: Sequence[ContextRequest] = (),
    target_file: str | None = TARGET_FILE,
) -> RunObservation:
    return RunObservation(
        variant=variant,
        state=state,
        workspace_root=WORKSPACE,
        skill_roots=SKILL_ROOTS,
        target_file=target_file,
        context_roots=CONTEXT_ROOTS,
        turns=tuple(turns if turns is not None else [turn(i) for i in range(1, len(PROMPTS) + 1)]),
        initial_files=dict(initial or {}),
        final_files=dict(final or {}),
        turn_files=dict(turn_files or {}),
        context_requests=tuple(context),
    )


def grade(
    expectations: Sequence[Any], observations: Mapping[VariantName, RunObservation], **group_options: Any
) -> GroupGrade:
    return grade_group(group(expectations, **group_options), observations)


def grade_one(raw: dict[str, Any], obs: RunObservation | None = None, **group_options: Any) -> ExpectationResult:
    """Grade one expectation (candidate unless *raw* says otherwise) against one observation."""
    raw = {"id": "e", "variant": "candidate", **raw}
    obs = obs or observation(raw["variant"])
    grade_result = grade([raw], {obs.variant: obs}, **group_options)
    (result,) = grade_result.expectations
    return result
