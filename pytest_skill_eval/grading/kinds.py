"""The nine expectation kinds: what each one expects, and how evidence answers it.

Every judge is a pure function of one validated :class:`~.shapes.Check` and one
:class:`~pytest_skill_eval.observation.RunObservation`. A judge returns a
:class:`Verdict`; when the evidence cannot answer the question at all (a turn that
was never observed, a missing workspace snapshot) it raises :class:`GradeProblem`,
which the caller turns into ``grade-error`` evidence.

Turns are counted by position: the n-th entry of ``RunObservation.turns`` is declared
turn n, and its ``tool_calls`` are that turn's calls. Context requests are matched by
their one-based ``turn`` number.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_skill_eval.definitions.model import Group
from pytest_skill_eval.errors import GradeProblem
from pytest_skill_eval.grading.jsonvalue import (
    MalformedJSON,
    excerpt,
    json_equal,
    parse_document,
    resolve_pointer,
    show,
)
from pytest_skill_eval.grading.shapes import Check
from pytest_skill_eval.observation import ContextRequest, RunObservation, ToolCall, Turn
from pytest_skill_eval.sources.redaction import MARKER

_LIST_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge's answer: pass or fail, what was seen, and where in the evidence."""

    passed: bool
    observed: str
    locations: tuple[str, ...] = ()


# --- shared evidence views -------------------------------------------------------------


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


def _call_location(turn: int, call: ToolCall) -> str:
    return f"turn {turn}, tool call {call.id} ({call.name})"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _listing(items: list[str]) -> str:
    shown = ", ".join(items[:_LIST_LIMIT])
    return shown if len(items) <= _LIST_LIMIT else f"{shown} and {len(items) - _LIST_LIMIT} more"


def _turn(obs: RunObservation, number: int) -> Turn:
    if number > len(obs.turns):
        raise GradeProblem(f"turn {number} was not observed: the run recorded {_plural(len(obs.turns), 'turn')}")
    return obs.turns[number - 1]


def _selected_turn_number(obs: RunObservation, check: Check) -> int:
    if check.turn is not None:
        _turn(obs, check.turn)
        return check.turn
    if not obs.turns:
        raise GradeProblem("the run recorded no turns")
    return len(obs.turns)


def _scoped_turns(obs: RunObservation, turn: int | None) -> list[tuple[int, Turn]]:
    if turn is not None:
        return [(turn, _turn(obs, turn))]
    return list(enumerate(obs.turns, 1))


def _scope_text(turn: int | None) -> str:
    return f" on turn {turn}" if turn is not None else ""


def _read_calls(turns: list[tuple[int, Turn]], target: str, workspace_root: str) -> list[tuple[int, ToolCall]]:
    return [
        (number, call)
        for number, turn in turns
        for call in turn.tool_calls
        if call.name == "read"
        and isinstance(call.arguments, dict)
        and resolve_read_path(call.arguments.get("path"), workspace_root) == target
    ]


def _workspace(obs: RunObservation, check: Check) -> Mapping[str, bytes]:
    if check.turn is None:
        return obs.final_files
    if check.turn not in obs.turn_files:
        raise GradeProblem(f"no workspace snapshot after turn {check.turn} was recorded")
    return obs.turn_files[check.turn]


def _when(check: Check) -> str:
    return f"after turn {check.turn}" if check.turn is not None else "at the end of the run"


def _workspace_location(path: str, check: Check) -> str:
    return f"workspace {path} after turn {check.turn}" if check.turn is not None else f"final workspace {path}"


def _files_under(files: Mapping[str, bytes], path: str) -> int:
    prefix = path + "/"
    return sum(1 for name in files if name.startswith(prefix))


def _absence(files: Mapping[str, bytes], path: str) -> str:
    """Why there is no file at *path*: it is a directory, or nothing is there."""
    under = _files_under(files, path)
    if under:
        return f"{path} is a directory ({_plural(under, 'file')} under it), not a file"
    return f"{path} does not exist"


def _line_column(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


_TEXT_VERBS = {"contains": "contains", "not-contains": "does not contain", "equals": "is exactly"}


#: how much of a text a failed text check shows: the start, or the neighbourhood of a hit
_EXCERPT_CHARS = 120
_CONTEXT_CHARS = 40


def _text_start(text: str) -> str:
    if not text:
        return "it is empty"
    shown = excerpt(text, 0, _EXCERPT_CHARS)
    rest = len(text) - _EXCERPT_CHARS
    return f"it reads {shown}" + (f" (+{rest} more characters)" if rest > 0 else "")


def _judge_text(expect: str, text: str, value: str, subject: str) -> tuple[bool, str]:
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
            f"{subject} ({_plural(len(text), 'character')}) differs from the expected text at "
            f"{_line_column(text, common)}: found {excerpt(text[common:], 0, 40)}"
        )
    index = text.find(value)
    if index >= 0:
        where = f"{subject} contains the text at {_line_column(text, index)}"
        if expect == "contains":
            return True, where
        around = excerpt(text, index - _CONTEXT_CHARS, index + len(value) + _CONTEXT_CHARS)
        return False, f"{where}: {around}"
    counted = f"{subject} does not contain the text ({_plural(len(text), 'character')})"
    if expect == "not-contains":
        return True, counted
    return False, f"{counted}; {_text_start(text)}"


# --- skill-read -----------------------------------------------------------------------


def _target_name(check: Check, group: Group) -> str:
    variant = group.variant(check.variant)  # type: ignore[arg-type]
    target = variant.target
    if target is not None and 0 <= target < len(variant.skills):
        return f"the target skill {variant.skills[target]}"
    return "the target skill"


def _expected_skill_read(check: Check, group: Group) -> str:
    subject = _target_name(check, group)
    return {
        "never": f"{subject} is never read",
        "on-turn": f"{subject} is first read on turn {check.turn}",
        "by-turn": f"{subject} is first read on or before turn {check.turn}",
        "not-before-turn": f"{subject} is not read before turn {check.turn}",
    }[check.expect]


def _judge_skill_read(check: Check, obs: RunObservation, group: Group) -> Verdict:
    if obs.target_file is None:
        raise GradeProblem("the run recorded no target file, but the variant declares a target skill")
    if check.turn is not None:
        _turn(obs, check.turn)
    target = posixpath.normpath(obs.target_file)
    reads = _read_calls(list(enumerate(obs.turns, 1)), target, obs.workspace_root)
    if not reads:
        observed = f"the target was not read in {_plural(len(obs.turns), 'turn')}"
        return Verdict(check.expect in ("never", "not-before-turn"), observed)
    first_turn, call = reads[0]
    turn = check.turn or 0
    passed = {
        "never": False,
        "on-turn": first_turn == turn,
        "by-turn": first_turn <= turn,
        "not-before-turn": first_turn >= turn,
    }[check.expect]
    return Verdict(passed, f"the target was first read on turn {first_turn}", (_call_location(first_turn, call),))


# --- resource-read --------------------------------------------------------------------


def _resource_name(check: Check, group: Group) -> str:
    variant = group.variant(check.variant)  # type: ignore[arg-type]
    if check.resource == "workspace":
        return f"workspace file {check.path}"
    items = variant.skills if check.resource == "skill" else variant.context
    noun = "skill" if check.resource == "skill" else "context item"
    assert check.index is not None
    item = f"{noun} {check.index} ({items[check.index]})"
    return item if check.path == "." else f"file {check.path} of {item}"


def _expected_resource_read(check: Check, group: Group) -> str:
    verb = "is read" if check.expect == "read" else "is not read"
    return f"{_resource_name(check, group)} {verb}{_scope_text(check.turn) or ' on any turn'}"


def _resource_root(check: Check, obs: RunObservation) -> str:
    if check.resource == "workspace":
        return obs.workspace_root
    roots = obs.skill_roots if check.resource == "skill" else obs.context_roots
    assert check.index is not None
    if check.index >= len(roots):
        raise GradeProblem(
            f"{check.resource} index {check.index} has no root: the run recorded "
            f"{_plural(len(roots), check.resource + ' root')}"
        )
    return roots[check.index]


def _judge_resource_read(check: Check, obs: RunObservation, group: Group) -> Verdict:
    target = posixpath.normpath(posixpath.join(_resource_root(check, obs), check.path))
    reads = _read_calls(_scoped_turns(obs, check.turn), target, obs.workspace_root)
    scope = _scope_text(check.turn)
    if reads and check.turn is not None:
        observed = f"read {_plural(len(reads), 'time')}{scope}"
    elif reads:
        observed = f"read {_plural(len(reads), 'time')}, first on turn {reads[0][0]}"
    else:
        observed = f"not read{scope}"
    passed = bool(reads) == (check.expect == "read")
    return Verdict(passed, observed, tuple(_call_location(n, call) for n, call in reads))


# --- path -----------------------------------------------------------------------------


def _expected_path(check: Check, group: Group) -> str:
    verb = "exists" if check.expect == "exists" else "does not exist"
    return f"{check.path} {verb} in the workspace {_when(check)}"


def _judge_path(check: Check, obs: RunObservation, group: Group) -> Verdict:
    files = _workspace(obs, check)
    if check.path in files:
        observed, exists = f"{check.path} is a file", True
    else:
        under = _files_under(files, check.path)
        exists = under > 0
        observed = f"{check.path} is a directory with {_plural(under, 'file')} under it"
        if not exists:
            observed = f"{check.path} does not exist"
    return Verdict(exists == (check.expect == "exists"), observed, (_workspace_location(check.path, check),))


# --- changed-paths --------------------------------------------------------------------


def changed_files(initial: Mapping[str, bytes], current: Mapping[str, bytes]) -> dict[str, str]:
    """Map each added, removed or modified file to that word, sorted by path."""
    changes: dict[str, str] = {}
    for path in sorted(set(initial) | set(current)):
        if path not in initial:
            changes[path] = "added"
        elif path not in current:
            changes[path] = "removed"
        elif initial[path] != current[path]:
            changes[path] = "modified"
    return changes


def _expected_changed_paths(check: Check, group: Group) -> str:
    by = f"by the end of turn {check.turn}" if check.turn is not None else "by the end of the run"
    if check.expect == "equals":
        if not check.paths:
            return f"no file changes {by}"
        return f"exactly these files change {by}: {_listing(sorted(check.paths))}"
    return f"none of these files change {by}: {_listing(sorted(check.paths))}"


def _judge_changed_paths(check: Check, obs: RunObservation, group: Group) -> Verdict:
    changes = changed_files(obs.initial_files, _workspace(obs, check))
    described = [f"{path} ({how})" for path, how in changes.items()]
    summary = f"changed files: {_listing(described)}" if changes else "no file changed"
    location = (
        f"workspace changes after turn {check.turn}" if check.turn is not None else "final workspace changes",
    )
    if check.expect == "equals":
        missing = sorted(set(check.paths) - set(changes))
        unexpected = [p for p in changes if p not in check.paths]
        notes = []
        if missing:
            notes.append(f"unchanged but expected: {_listing(missing)}")
        if unexpected:
            notes.append(f"changed but not expected: {_listing(unexpected)}")
        return Verdict(not notes, "; ".join([summary, *notes]), location)
    hits = [f"{path} ({changes[path]})" for path in sorted(check.paths) if path in changes]
    if hits:
        return Verdict(False, f"excluded files changed: {_listing(hits)}", location)
    return Verdict(True, summary, location)


# --- file-text ------------------------------------------------------------------------


def _expected_file_text(check: Check, group: Group) -> str:
    return f"{check.path} {_TEXT_VERBS[check.expect]} {show(check.value)} {_when(check)}"


def _judge_file_text(check: Check, obs: RunObservation, group: Group) -> Verdict:
    files = _workspace(obs, check)
    location = (_workspace_location(check.path, check),)
    data = files.get(check.path)
    if data is None:
        return Verdict(False, _absence(files, check.path), location)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Verdict(False, f"{check.path} is not UTF-8 text (invalid byte at offset {exc.start})", location)
    passed, observed = _judge_text(check.expect, text, check.value, check.path)
    return Verdict(passed, observed, location)


# --- json -----------------------------------------------------------------------------


def _expected_json(check: Check, group: Group) -> str:
    pointer = show(check.pointer)
    when = _when(check)
    return {
        "available": f"{check.path} exists {when}",
        "missing": f"{check.path} does not exist {when}",
        "valid": f"{check.path} is valid JSON {when}",
        "malformed": f"{check.path} exists but is not valid JSON {when}",
        "field-present": f"{check.path} is JSON with a value at pointer {pointer} {when}",
        "field-absent": f"{check.path} is JSON without a value at pointer {pointer} {when}",
        "field-equals": f"the value at pointer {pointer} in {check.path} equals {show(check.value)} {when}",
    }[check.expect]


def _judge_json(check: Check, obs: RunObservation, group: Group) -> Verdict:
    files = _workspace(obs, check)
    location = _workspace_location(check.path, check)
    data = files.get(check.path)
    if check.expect in ("available", "missing"):
        if data is None:
            observed = _absence(files, check.path)
        else:
            observed = f"{check.path} exists ({_plural(len(data), 'byte')})"
        return Verdict((data is not None) == (check.expect == "available"), observed, (location,))
    if data is None:
        return Verdict(False, _absence(files, check.path), (location,))
    try:
        document = parse_document(data)
    except MalformedJSON as exc:
        return Verdict(check.expect == "malformed", f"{check.path} is not valid JSON: {exc}", (location,))
    if check.expect in ("valid", "malformed"):
        return Verdict(check.expect == "valid", f"{check.path} is valid JSON ({_json_type(document)})", (location,))
    found, value = resolve_pointer(document, check.tokens)
    location = f"{location} at pointer {show(check.pointer)}"
    if not found:
        observed = f"{check.path} has no value at pointer {show(check.pointer)}"
        return Verdict(check.expect == "field-absent", observed, (location,))
    observed = f"the value at pointer {show(check.pointer)} is {show(value)}"
    if check.expect == "field-equals":
        return Verdict(json_equal(value, check.value), observed, (location,))
    return Verdict(check.expect == "field-present", observed, (location,))


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


# --- response-text --------------------------------------------------------------------


def _expected_response_text(check: Check, group: Group) -> str:
    turn = f"turn {check.turn}" if check.turn is not None else "the final turn"
    return f"the final response of {turn} {_TEXT_VERBS[check.expect]} {show(check.value)}"


def _judge_response_text(check: Check, obs: RunObservation, group: Group) -> Verdict:
    number = _selected_turn_number(obs, check)
    text = obs.turns[number - 1].response
    passed, observed = _judge_text(check.expect, text, check.value, f"the final response of turn {number}")
    return Verdict(passed, observed, (f"final response of turn {number}",))


# --- tool-call ------------------------------------------------------------------------


def arguments_text(call: ToolCall) -> str:
    """A call's arguments as the compact JSON text that argument filters search."""
    return json.dumps(call.arguments, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _call_failed(call: ToolCall) -> bool:
    # A call the guard blocked was still made; from the subject's side it failed.
    return call.is_error or call.blocked


def _expected_tool_call(check: Check, group: Group) -> str:
    filters = []
    if check.contains:
        filters.append("arguments containing " + ", ".join(show(v) for v in check.contains))
    if check.not_contains:
        filters.append("arguments not containing " + ", ".join(show(v) for v in check.not_contains))
    call = f"call to {check.tool}" + (" with " + " and ".join(filters) if filters else "")
    scope = _scope_text(check.turn)
    return {
        "called": f"a {call} is made{scope}",
        "succeeded": f"a {call} succeeds{scope}",
        "failed": f"a {call} fails{scope}",
        "not-called": f"no {call} is made{scope}",
    }[check.expect]


def _judge_tool_call(check: Check, obs: RunObservation, group: Group) -> Verdict:
    named = [(n, c) for n, turn in _scoped_turns(obs, check.turn) for c in turn.tool_calls if c.name == check.tool]
    matching = []
    for number, call in named:
        text = arguments_text(call)
        if all(v in text for v in check.contains) and not any(v in text for v in check.not_contains):
            matching.append((number, call))
    scope = _scope_text(check.turn)
    failed = [(n, c) for n, c in matching if _call_failed(c)]
    succeeded = [(n, c) for n, c in matching if not _call_failed(c)]
    if not named:
        observed = f"no call to {check.tool}{scope}"
    elif not matching:
        observed = (
            f"no matching call to {check.tool}{scope}; "
            f"{_plural(len(named), 'call')} did not match the argument filters"
        )
    else:
        blocked = sum(1 for _, c in failed if c.blocked)
        observed = (
            f"{_plural(len(matching), 'matching call')} to {check.tool}{scope}: {len(succeeded)} succeeded, "
            f"{len(failed)} failed" + (f" ({blocked} blocked by the guard)" if blocked else "")
        )
    passed = {
        "called": bool(matching),
        "succeeded": bool(succeeded),
        "failed": bool(failed),
        "not-called": not matching,
    }[check.expect]
    return Verdict(passed, observed, tuple(_call_location(n, c) for n, c in matching))


# --- context-text ---------------------------------------------------------------------

_SURFACE_NOUNS = {"system-prompt": "system prompt", "provider-context": "provider context"}


def _expected_context_text(check: Check, group: Group) -> str:
    request = f"model request {check.request}" if isinstance(check.request, int) else f"{check.request} model request"
    turn = f"turn {check.turn}" if check.turn is not None else "the final turn"
    surface = _SURFACE_NOUNS[check.surface]
    return f"the {surface} of the {request} on {turn} {_TEXT_VERBS[check.expect]} {show(check.value)}"


def _select_request(requests: list[ContextRequest], selector: str | int) -> ContextRequest | None:
    if selector == "first":
        return requests[0]
    if selector == "last":
        return requests[-1]
    return next((r for r in requests if r.request == selector), None)


def _judge_context_text(check: Check, obs: RunObservation, group: Group) -> Verdict:
    if not obs.context_requests:
        raise GradeProblem("the context observer recorded nothing for this run")
    number = _selected_turn_number(obs, check)
    requests = sorted((r for r in obs.context_requests if r.turn == number), key=lambda r: r.request)
    if not requests:
        raise GradeProblem(f"the context observer recorded no model request on turn {number}")
    request = _select_request(requests, check.request)
    if request is None:
        # The subject decides how many requests a turn takes, so a request it never made is
        # a behavioural fact (fail), not a grading problem.
        made = _plural(len(requests), "model request")
        return Verdict(False, f"turn {number} made {made}; request {check.request} was never made")
    text = request.system_prompt if check.surface == "system-prompt" else request.provider_context
    subject = f"the {_SURFACE_NOUNS[check.surface]} of model request {request.request} on turn {number}"
    passed, observed = _judge_text(check.expect, text, check.value, subject)
    return Verdict(passed, observed, (f"context request {request.request} of turn {number} ({check.surface})",))


# --- dispatch -------------------------------------------------------------------------

_Judge = Callable[[Check, RunObservation, Group], Verdict]
_Describe = Callable[[Check, Group], str]

_KINDS: dict[str, tuple[_Describe, _Judge]] = {
    "skill-read": (_expected_skill_read, _judge_skill_read),
    "resource-read": (_expected_resource_read, _judge_resource_read),
    "path": (_expected_path, _judge_path),
    "changed-paths": (_expected_changed_paths, _judge_changed_paths),
    "file-text": (_expected_file_text, _judge_file_text),
    "json": (_expected_json, _judge_json),
    "response-text": (_expected_response_text, _judge_response_text),
    "tool-call": (_expected_tool_call, _judge_tool_call),
    "context-text": (_expected_context_text, _judge_context_text),
}


def describe_expected(check: Check, group: Group) -> str:
    """A short sentence saying what *check* expects."""
    return _KINDS[check.kind][0](check, group)


#: kinds judged on workspace state: a ``turn`` makes them read that turn's snapshot
WORKSPACE_KINDS = frozenset({"path", "changed-paths", "file-text", "json"})


def redaction_note(check: Check, obs: RunObservation) -> str | None:
    """Which stored workspace files this check read were redacted, or None.

    A file holding an inherited value is stored with it replaced by the redaction marker,
    so a check on it may fail because of redaction; the verdict says so.
    """
    if check.kind not in WORKSPACE_KINDS or not obs.redactions:
        return None
    prefix = "workspace/" if check.turn is None else f"turns/{check.turn}/workspace/"
    if check.kind == "changed-paths":
        hits = {k: v for k, v in obs.redactions.items() if k.startswith((prefix, "workspace-initial/"))}
    else:
        hits = {k: v for k, v in obs.redactions.items() if k == prefix + str(check.path)}
    if not hits:
        return None
    listed = ", ".join(f"{k} ({_plural(v, 'value')})" for k, v in sorted(hits.items()))
    return f"note: redacted file(s), inherited values replaced by {MARKER}: {listed}"


def judge(check: Check, obs: RunObservation, group: Group) -> Verdict:
    """Answer *check* from *obs*; raises :class:`GradeProblem` when the evidence cannot."""
    verdict = _KINDS[check.kind][1](check, obs, group)
    note = redaction_note(check, obs)
    if note:
        return Verdict(verdict.passed, f"{verdict.observed}; {note}", verdict.locations)
    return verdict
