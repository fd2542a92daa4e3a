"""The nine expectation kinds: what each one expects, and how evidence answers it.

    kinds       dispatch: describe_expected and judge, by kind
    ├── turns      skill-read, resource-read, response-text, tool-call, context-text
    ├── workspace  path, changed-paths, file-text, json (and the redaction note)
    └── judging    Verdict and the evidence views every judge shares

Every judge is a pure function of one validated :class:`~.shapes.Check` and one
:class:`~pytest_skill_eval.observation.RunObservation`; see :mod:`.judging`.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_skill_eval.definitions.model import Group
from pytest_skill_eval.errors import GradeProblem
from pytest_skill_eval.grading import turns, workspace
from pytest_skill_eval.grading.judging import Verdict, resolve_read_path
from pytest_skill_eval.grading.shapes import Check
from pytest_skill_eval.grading.turns import arguments_text
from pytest_skill_eval.grading.workspace import WORKSPACE_KINDS, changed_files, redaction_note
from pytest_skill_eval.observation import RunObservation

__all__ = [
    "WORKSPACE_KINDS",
    "GradeProblem",
    "Verdict",
    "arguments_text",
    "changed_files",
    "describe_expected",
    "judge",
    "redaction_note",
    "resolve_read_path",
]

_Judge = Callable[[Check, RunObservation, Group], Verdict]
_Describe = Callable[[Check, Group], str]

_KINDS: dict[str, tuple[_Describe, _Judge]] = {
    "skill-read": (turns.expected_skill_read, turns.judge_skill_read),
    "resource-read": (turns.expected_resource_read, turns.judge_resource_read),
    "path": (workspace.expected_path, workspace.judge_path),
    "changed-paths": (workspace.expected_changed_paths, workspace.judge_changed_paths),
    "file-text": (workspace.expected_file_text, workspace.judge_file_text),
    "json": (workspace.expected_json, workspace.judge_json),
    "response-text": (turns.expected_response_text, turns.judge_response_text),
    "tool-call": (turns.expected_tool_call, turns.judge_tool_call),
    "context-text": (turns.expected_context_text, turns.judge_context_text),
}


def describe_expected(check: Check, group: Group) -> str:
    """A short sentence saying what *check* expects."""
    return _KINDS[check.kind][0](check, group)


def judge(check: Check, obs: RunObservation, group: Group) -> Verdict:
    """Answer *check* from *obs*; raises :class:`GradeProblem` when the evidence cannot."""
    verdict = _KINDS[check.kind][1](check, obs, group)
    note = redaction_note(check, obs)
    if note:
        return Verdict(verdict.passed, f"{verdict.observed}; {note}", verdict.locations)
    return verdict
