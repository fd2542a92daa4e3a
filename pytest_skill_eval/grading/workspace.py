"""Kinds judged on workspace state: path, changed-paths, file-text and json.

Without a ``turn`` they read the final workspace; with one, the snapshot taken after
that turn. Each has an expected sentence (``expected_<kind>``) and a judge
(``judge_<kind>``); :func:`redaction_note` says when a file they read was redacted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_skill_eval.definitions.model import Group
from pytest_skill_eval.errors import UnanswerableError
from pytest_skill_eval.grading.checks import ChangedPaths, Check, FileText, JsonCheck, PathCheck, WorkspaceCheck
from pytest_skill_eval.grading.jsonvalue import (
    MalformedJSONError,
    json_equal,
    parse_document,
    resolve_pointer,
    show,
)
from pytest_skill_eval.grading.judging import TEXT_VERBS, JudgeVerdict, judge_text, listing, plural
from pytest_skill_eval.observation import RunObservation, file_size, same_file
from pytest_skill_eval.redaction import MARKER
from pytest_skill_eval.safe_text import escape_path

#: kinds judged on workspace state (the kinds of :data:`~.checks.WorkspaceCheck`): a ``turn``
#: makes them read that turn's snapshot
WORKSPACE_KINDS = frozenset({"path", "changed-paths", "file-text", "json"})


def _workspace(obs: RunObservation, check: WorkspaceCheck) -> Mapping[str, bytes]:
    if check.turn is None:
        return obs.final_files
    if check.turn not in obs.turn_files:
        raise UnanswerableError(f"no workspace snapshot after turn {check.turn} was recorded")
    return obs.turn_files[check.turn]


def _when(check: WorkspaceCheck) -> str:
    return f"after turn {check.turn}" if check.turn is not None else "at the end of the run"


def _workspace_location(path: str, check: WorkspaceCheck) -> str:
    return f"workspace {path} after turn {check.turn}" if check.turn is not None else f"final workspace {path}"


def _files_under(files: Mapping[str, bytes], path: str) -> int:
    prefix = path + "/"
    return sum(1 for name in files if name.startswith(prefix))


def _absence(files: Mapping[str, bytes], path: str) -> str:
    """Why there is no file at *path*: it is a directory, or nothing is there."""
    under = _files_under(files, path)
    if under:
        return f"{path} is a directory ({plural(under, 'file')} under it), not a file"
    return f"{path} does not exist"



# --- path -----------------------------------------------------------------------------


def expected_path(check: PathCheck, group: Group) -> str:
    verb = "exists" if check.expect == "exists" else "does not exist"
    return f"{check.path} {verb} in the workspace {_when(check)}"


def judge_path(check: PathCheck, obs: RunObservation, group: Group) -> JudgeVerdict:
    files = _workspace(obs, check)
    if check.path in files:
        observed, exists = f"{check.path} is a file", True
    else:
        under = _files_under(files, check.path)
        exists = under > 0
        observed = f"{check.path} is a directory with {plural(under, 'file')} under it"
        if not exists:
            observed = f"{check.path} does not exist"
    return JudgeVerdict(exists == (check.expect == "exists"), observed, (_workspace_location(check.path, check),))


# --- changed-paths --------------------------------------------------------------------


def changed_files(initial: Mapping[str, bytes], current: Mapping[str, bytes]) -> dict[str, str]:
    """Map each added, removed or modified file to that word, sorted by path."""
    changes: dict[str, str] = {}
    for path in sorted(set(initial) | set(current)):
        if path not in initial:
            changes[path] = "added"
        elif path not in current:
            changes[path] = "removed"
        elif not same_file(initial, current, path):
            changes[path] = "modified"
    return changes


def expected_changed_paths(check: ChangedPaths, group: Group) -> str:
    by = f"by the end of turn {check.turn}" if check.turn is not None else "by the end of the run"
    if check.expect == "equals":
        if not check.paths:
            return f"no file changes {by}"
        return f"exactly these files change {by}: {listing(sorted(check.paths))}"
    return f"none of these files change {by}: {listing(sorted(check.paths))}"


def judge_changed_paths(check: ChangedPaths, obs: RunObservation, group: Group) -> JudgeVerdict:
    changes = changed_files(obs.initial_files, _workspace(obs, check))
    # the subject named these files: each shown as a path cell (one line, nothing raw)
    described = [f"{escape_path(path)} ({how})" for path, how in changes.items()]
    summary = f"changed files: {listing(described)}" if changes else "no file changed"
    location = (
        f"workspace changes after turn {check.turn}" if check.turn is not None else "final workspace changes",
    )
    if check.expect == "equals":
        missing = sorted(set(check.paths) - set(changes))
        unexpected = [p for p in changes if p not in check.paths]
        notes = []
        if missing:
            notes.append(f"unchanged but expected: {listing([escape_path(p) for p in missing])}")
        if unexpected:
            notes.append(f"changed but not expected: {listing([escape_path(p) for p in unexpected])}")
        return JudgeVerdict(not notes, "; ".join([summary, *notes]), location)
    hits = [f"{escape_path(path)} ({changes[path]})" for path in sorted(check.paths) if path in changes]
    if hits:
        return JudgeVerdict(False, f"excluded files changed: {listing(hits)}", location)
    return JudgeVerdict(True, summary, location)


# --- file-text ------------------------------------------------------------------------


def expected_file_text(check: FileText, group: Group) -> str:
    return f"{check.path} {TEXT_VERBS[check.expect]} {show(check.value)} {_when(check)}"


def judge_file_text(check: FileText, obs: RunObservation, group: Group) -> JudgeVerdict:
    files = _workspace(obs, check)
    location = (_workspace_location(check.path, check),)
    data = files.get(check.path)
    if data is None:
        return JudgeVerdict(False, _absence(files, check.path), location)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JudgeVerdict(False, f"{check.path} is not UTF-8 text (invalid byte at offset {exc.start})", location)
    passed, observed = judge_text(check.expect, text, check.value, check.path)
    return JudgeVerdict(passed, observed, location)


# --- json -----------------------------------------------------------------------------


def expected_json(check: JsonCheck, group: Group) -> str:
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


def judge_json(check: JsonCheck, obs: RunObservation, group: Group) -> JudgeVerdict:
    files = _workspace(obs, check)
    location = _workspace_location(check.path, check)
    if check.expect in ("available", "missing"):
        present = check.path in files
        if not present:
            observed = _absence(files, check.path)
        else:
            observed = f"{check.path} exists ({plural(file_size(files, check.path), 'byte')})"
        return JudgeVerdict(present == (check.expect == "available"), observed, (location,))
    data = files.get(check.path)
    if data is None:
        return JudgeVerdict(False, _absence(files, check.path), (location,))
    try:
        document = parse_document(data)
    except MalformedJSONError as exc:
        return JudgeVerdict(check.expect == "malformed", f"{check.path} is not valid JSON: {exc}", (location,))
    if check.expect in ("valid", "malformed"):
        return JudgeVerdict(check.expect == "valid", f"{check.path} is valid JSON ({_json_type(document)})", (location,))
    found, value = resolve_pointer(document, check.tokens)
    location = f"{location} at pointer {show(check.pointer)}"
    if not found:
        observed = f"{check.path} has no value at pointer {show(check.pointer)}"
        return JudgeVerdict(check.expect == "field-absent", observed, (location,))
    observed = f"the value at pointer {show(check.pointer)} is {show(value)}"
    if check.expect == "field-equals":
        return JudgeVerdict(json_equal(value, check.value), observed, (location,))
    return JudgeVerdict(check.expect == "field-present", observed, (location,))


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


def redaction_note(check: Check, obs: RunObservation) -> str | None:
    """Which stored workspace files this check read were redacted, or None.

    A file holding an inherited value is stored with it replaced by the redaction marker,
    so a check on it may fail because of redaction; the verdict says so.
    """
    if not isinstance(check, (PathCheck, ChangedPaths, FileText, JsonCheck)) or not obs.redactions:
        return None
    prefix = "workspace/" if check.turn is None else f"turns/{check.turn}/workspace/"
    if isinstance(check, ChangedPaths):
        hits = {k: v for k, v in obs.redactions.items() if k.startswith((prefix, "workspace-initial/"))}
    else:
        hits = {k: v for k, v in obs.redactions.items() if k == prefix + check.path}
    if not hits:
        return None
    listed = ", ".join(f"{k} ({plural(v, 'value')})" for k, v in sorted(hits.items()))
    return f"note: redacted file(s), inherited values replaced by {MARKER}: {listed}"
