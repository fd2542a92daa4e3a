"""The nine expectation kinds: what each one expects, and how evidence answers it.

    kinds       dispatch: describe_expected and judge, by check type (:mod:`.checks`)
    ├── turns      skill-read, resource-read, response-text, tool-call, context-text
    ├── workspace  path, changed-paths, file-text, json (and the redaction note)
    └── judging    JudgeVerdict and the evidence views every judge shares

Every judge is a pure function of one validated check of its own type and one
:class:`~pytest_skill_eval.observation.RunObservation`; see :mod:`.judging`.
"""

from __future__ import annotations

from typing import assert_never

from pytest_skill_eval.definitions.model import Group
from pytest_skill_eval.errors import UnanswerableError
from pytest_skill_eval.grading import turns, workspace
from pytest_skill_eval.grading.checks import (
    ChangedPaths,
    Check,
    ContextText,
    FileText,
    JsonCheck,
    PathCheck,
    ResourceRead,
    ResponseText,
    SkillRead,
    ToolCallCheck,
)
from pytest_skill_eval.grading.judging import JudgeVerdict, resolve_read_path
from pytest_skill_eval.grading.turns import arguments_text
from pytest_skill_eval.grading.workspace import WORKSPACE_KINDS, changed_files, redaction_note
from pytest_skill_eval.observation import RunObservation

__all__ = [
    "WORKSPACE_KINDS",
    "UnanswerableError",
    "JudgeVerdict",
    "arguments_text",
    "changed_files",
    "describe_expected",
    "judge",
    "redaction_note",
    "resolve_read_path",
]

def describe_expected(check: Check, group: Group) -> str:
    """A short sentence saying what *check* expects."""
    match check:
        case SkillRead():
            return turns.expected_skill_read(check, group)
        case ResourceRead():
            return turns.expected_resource_read(check, group)
        case PathCheck():
            return workspace.expected_path(check, group)
        case ChangedPaths():
            return workspace.expected_changed_paths(check, group)
        case FileText():
            return workspace.expected_file_text(check, group)
        case JsonCheck():
            return workspace.expected_json(check, group)
        case ResponseText():
            return turns.expected_response_text(check, group)
        case ToolCallCheck():
            return turns.expected_tool_call(check, group)
        case ContextText():
            return turns.expected_context_text(check, group)
        case _:
            assert_never(check)


def _verdict(check: Check, obs: RunObservation, group: Group) -> JudgeVerdict:
    match check:
        case SkillRead():
            return turns.judge_skill_read(check, obs, group)
        case ResourceRead():
            return turns.judge_resource_read(check, obs, group)
        case PathCheck():
            return workspace.judge_path(check, obs, group)
        case ChangedPaths():
            return workspace.judge_changed_paths(check, obs, group)
        case FileText():
            return workspace.judge_file_text(check, obs, group)
        case JsonCheck():
            return workspace.judge_json(check, obs, group)
        case ResponseText():
            return turns.judge_response_text(check, obs, group)
        case ToolCallCheck():
            return turns.judge_tool_call(check, obs, group)
        case ContextText():
            return turns.judge_context_text(check, obs, group)
        case _:
            assert_never(check)


def judge(check: Check, obs: RunObservation, group: Group) -> JudgeVerdict:
    """Answer *check* from *obs*; raises :class:`UnanswerableError` when the evidence cannot."""
    verdict = _verdict(check, obs, group)
    note = redaction_note(check, obs)
    if note:
        return JudgeVerdict(verdict.passed, f"{verdict.observed}; {note}", verdict.locations)
    return verdict
