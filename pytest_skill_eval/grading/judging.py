"""What every judge shares: the :class:`JudgeVerdict`, views of turns and read calls, text checks.

A judge is a pure function of one validated check (:mod:`.checks`) and one
:class:`~pytest_skill_eval.observation.RunObservation`. It returns a :class:`JudgeVerdict`;
when the evidence cannot answer the question at all (a turn that was never observed, a
missing workspace snapshot) it raises :class:`UnanswerableError`, which the caller turns into
``grade-error`` evidence.

Turns are counted by position: the n-th entry of ``RunObservation.turns`` is declared
turn n, and its ``tool_calls`` are that turn's calls.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from pytest_skill_eval.errors import UnanswerableError
from pytest_skill_eval.grading.checks import Check
from pytest_skill_eval.grading.jsonvalue import excerpt
from pytest_skill_eval.observation import RunObservation, ToolCall, Turn

_LIST_LIMIT = 20


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """A judge's answer: pass or fail, what was seen, and where in the evidence."""

    passed: bool
    observed: str
    locations: tuple[str, ...] = ()



def resolve_read_path(path: Any, workspace_root: str) -> str | None:
    """The absolute, lexically normalised file a ``read`` call's ``path`` argument names.

    Relative paths resolve against the workspace (the subject's cwd). A leading ``@`` is
    dropped as pi does for mentioned files; ``~`` is not expanded because the subject's
    home is a private, empty directory that evidence does not name. Symlinks are not
    followed: grading does no I/O, and the guard already confines reads.
    """
    if not isinstance(path, str):
        return None
    if path.startswith("@"):
        path = path[1:]
    if not path:
        return None
    joined = path if path.startswith("/") else posixpath.join(workspace_root, path)
    return posixpath.normpath(joined)


def call_location(turn: int, call: ToolCall) -> str:
    return f"turn {turn}, tool call {call.id} ({call.name})"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def listing(items: list[str]) -> str:
    shown = ", ".join(items[:_LIST_LIMIT])
    return shown if len(items) <= _LIST_LIMIT else f"{shown} and {len(items) - _LIST_LIMIT} more"


def observed_turn(obs: RunObservation, number: int) -> Turn:
    if number > len(obs.turns):
        raise UnanswerableError(f"turn {number} was not observed: the run recorded {plural(len(obs.turns), 'turn')}")
    return obs.turns[number - 1]


def selected_turn_number(obs: RunObservation, check: Check) -> int:
    if check.turn is not None:
        observed_turn(obs, check.turn)
        return check.turn
    if not obs.turns:
        raise UnanswerableError("the run recorded no turns")
    return len(obs.turns)


def scoped_turns(obs: RunObservation, turn: int | None) -> list[tuple[int, Turn]]:
    if turn is not None:
        return [(turn, observed_turn(obs, turn))]
    return list(enumerate(obs.turns, 1))


def scope_text(turn: int | None) -> str:
    return f" on turn {turn}" if turn is not None else ""


def read_calls(turns: list[tuple[int, Turn]], target: str, workspace_root: str) -> list[tuple[int, ToolCall]]:
    return [
        (number, call)
        for number, turn in turns
        for call in turn.tool_calls
        if call.name == "read"
        and isinstance(call.arguments, dict)
        and resolve_read_path(call.arguments.get("path"), workspace_root) == target
    ]



def _line_column(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


TEXT_VERBS = {"contains": "contains", "not-contains": "does not contain", "equals": "is exactly"}


#: how much of a text a failed text check shows: the start, or the neighbourhood of a hit
_EXCERPT_CHARS = 120
_CONTEXT_CHARS = 40


def _text_start(text: str) -> str:
    if not text:
        return "it is empty"
    shown = excerpt(text, 0, _EXCERPT_CHARS)
    rest = len(text) - _EXCERPT_CHARS
    return f"it reads {shown}" + (f" (+{rest} more characters)" if rest > 0 else "")


def judge_text(expect: str, text: str, value: str, subject: str) -> tuple[bool, str]:
    """contains / not-contains / equals on exact text (no case or newline folding).

    A failed check says what was found: the start of the text, or the text around the
    unwanted hit, bounded and escaped (:func:`~.jsonvalue.excerpt`).
    """
    if expect == "equals":
        if text == value:
            return True, f"{subject} is exactly the expected text"
        common = 0
        for a, b in zip(text, value, strict=False):
            if a != b:
                break
            common += 1
        return False, (
            f"{subject} ({plural(len(text), 'character')}) differs from the expected text at "
            f"{_line_column(text, common)}: found {excerpt(text[common:], 0, 40)}"
        )
    index = text.find(value)
    if index >= 0:
        where = f"{subject} contains the text at {_line_column(text, index)}"
        if expect == "contains":
            return True, where
        around = excerpt(text, index - _CONTEXT_CHARS, index + len(value) + _CONTEXT_CHARS)
        return False, f"{where}: {around}"
    counted = f"{subject} does not contain the text ({plural(len(text), 'character')})"
    if expect == "not-contains":
        return True, counted
    return False, f"{counted}; {_text_start(text)}"
