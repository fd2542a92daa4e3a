"""Text rendering of stored results (pure): the grade first, then the selected variants' runs.

Artifact and workspace paths are printed relative to the absolute result path shown
first. Every path cell escapes literal backslashes before tab, CR and LF, so one path
always stays on one line and reads back unambiguously.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from pytest_skill_eval.evidence.layout import group_dir_id
from pytest_skill_eval.render.text import escape_path, neutralise

_ARGS_SHOWN = 200


_RESULT_SHOWN = 160


class VariantEvidence(TypedDict):
    """What the view reads of one variant: ``run.json``, the transcript, artifact paths."""

    name: str
    run: dict[str, Any] | None
    transcript: dict[str, Any] | None
    #: result-relative slash paths of the artifacts present (directories end with "/")
    artifacts: list[str]
    #: ``(change, result-relative path)`` of files added/modified/removed in the workspace
    workspace_changes: list[tuple[str, str]]
    #: ``<result-relative file>: expected …, found …`` for each file part the view cannot use
    problems: list[str]


class GroupEvidence(TypedDict):
    """What the view reads of one group directory."""

    dir: str
    #: the one-based position recorded in the directory name ``NNN-<id>``
    position: int
    group: dict[str, Any] | None
    #: the newest grade: the newest ``grade-regraded-<stamp>.json`` that reads, else ``grade.json``
    grade: dict[str, Any] | None
    #: when *grade* is a regrade: its result-relative file, its UTC time, and the run's own grade state
    regrade: RegradeShown | None
    definition_path: str | None
    artifacts: list[str]
    variants: list[VariantEvidence]
    problems: list[str]


class RegradeShown(TypedDict):
    """Which regrade a group view shows instead of the run's ``grade.json``."""

    file: str
    time: str
    original_state: str | None


class ResultEvidence(TypedDict):
    """A stored result as the renderer sees it."""

    path: str
    summary: dict[str, Any] | None
    groups: list[GroupEvidence]
    group_selector: str | None
    variant: str | None
    problems: list[str]


def _problem_lines(problems: Iterable[str], indent: int) -> list[str]:
    return [f"{' ' * indent}problem    {escape_path(p)}" for p in problems]


def _field(label: str, value: str, indent: int, width: int = 10) -> list[str]:
    """``label value`` with continuation lines of a multi-line value aligned under it."""
    pad = " " * indent
    lines = value.split("\n") if value else [""]
    head = f"{pad}{label:<{width}} {lines[0]}".rstrip()
    rest = [f"{pad}{'':<{width}} {line}".rstrip() for line in lines[1:]]
    return [head, *rest]


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit} chars)"


def _compact(value: Any) -> str:
    # Same text the tool-call grader matches argumentContains against.
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _selection_line(evidence_: ResultEvidence) -> str:
    groups = f"group {evidence_['group_selector']}" if evidence_["group_selector"] is not None else "all groups"
    variants = evidence_["variant"] or "both variants"
    return f"selected  {groups}, {variants}"


def render_result(result: ResultEvidence) -> str:
    """The whole view: result path, batch state, then each selected group."""
    summary = result["summary"]
    lines = [f"result    {escape_path(result['path'])}"]
    if summary is None:
        if result["problems"]:
            lines.append("state     unknown (result.json is not what the view expects)")
        else:
            lines.append("state     unknown (no result.json: the batch summary was never written)")
    else:
        lines.append(f"state     {summary.get('state', 'unknown')}")
    lines += _problem_lines(result["problems"], 0)
    lines.append(_selection_line(result))
    if not result["groups"]:
        lines += ["", "no groups were persisted in this result"]
    for group in result["groups"]:
        lines += ["", *render_group(group, result["variant"])]
    return neutralise("\n".join(lines) + "\n")


def render_group(group: GroupEvidence, variant: str | None = None) -> list[str]:
    """One group: header, grade (before run evidence), review questions, variants."""
    data = group["group"] or {}
    group_id = data.get("id") or group_dir_id(group["dir"])
    kind = f" ({data['type']})" if data.get("type") else ""
    missing = "unknown: no group.json" if not any("group.json: " in p for p in group["problems"]) else "unknown"
    state = data.get("state", missing)
    lines = [f"== group {group['position']} {group_id}{kind} [{state}]"]
    lines += _problem_lines(group["problems"], 0)
    if group["definition_path"]:
        lines.append(f"definition {escape_path(group['definition_path'])}")
    if data.get("definition_errors"):
        # a suite entry whose group file could not be loaded: no run, no grade
        lines.append(f"definition {escape_path(str(data.get('ref')))} is invalid")
        lines += [f"  {escape_path(problem)}" for problem in data["definition_errors"]]
    if group["grade"] is None and any(p.startswith(f"{_grade_file(group)}: ") for p in group["problems"]):
        lines.append("grade     unknown (grade.json is not what the view expects)")
    else:
        lines += render_grade(group["grade"], variant, group.get("regrade"))
    questions = data.get("review_questions") or []
    if questions:
        lines.append("review questions")
        for question in questions:
            lines += _field("-", str(question), 2, 1)
    lines.append("artifacts")
    lines += [f"  {escape_path(path)}" for path in group["artifacts"]] or ["  none"]
    for run in group["variants"]:
        reason = ((data.get("variants") or {}).get(run["name"]) or {}).get("reason")
        lines += ["", *render_variant(run, reason)]
    return lines


def _grade_file(group: GroupEvidence) -> str:
    return f"groups/{group['dir']}/grade.json"


def _visible_errors(errors: Iterable[Mapping[str, Any]], variant: str | None) -> list[Mapping[str, Any]]:
    """Leave out the other variant's expectation-owned errors; keep every other scope."""
    if variant is None:
        return list(errors)
    return [e for e in errors if not (e.get("scope") == "expectation" and e.get("variant") not in (None, variant))]


def render_grade(grade: Mapping[str, Any] | None, variant: str | None = None,
                 regrade: RegradeShown | None = None) -> list[str]:
    """The grade of one group: expectations, comparisons and grade errors.

    Every cell that may hold a path (expected, observed, locations, errors, reasons) is
    escaped as a path cell. *regrade* says the grade is a regrade, and which.
    """
    if grade is None:
        return ["grade     none (no grade.json: the group was not graded)"]
    state = grade.get("state", "unknown")
    if regrade is None:
        lines = [f"grade     {state}"]
    else:
        original = regrade["original_state"] or "none"
        lines = [f"grade     {state} (regraded {regrade['time']} by skill-eval regrade; the run's own grade.json: {original})",
                 f"  file       {escape_path(regrade['file'])}"]
    expectations = [e for e in grade.get("expectations", []) if variant is None or e.get("variant") == variant]
    lines.append("  expectations" if expectations else "  expectations: none")
    for item in expectations:
        lines.append(f"    {item.get('status', '?'):<11} {item.get('id')} ({item.get('variant')} {item.get('kind')})")
        lines += _field("expected", escape_path(str(item.get("expected", ""))), 6)
        lines += _field("observed", escape_path(str(item.get("observed", ""))), 6)
        for location in item.get("locations", []):
            lines += _field("location", escape_path(str(location)), 6)
        if item.get("error"):
            lines += _field("error", escape_path(str(item["error"])), 6)
    comparisons = grade.get("comparisons", [])
    lines.append("  comparisons" if comparisons else "  comparisons: none")
    for item in comparisons:
        pair = f"{item.get('baseline') or '-'} -> {item.get('candidate') or '-'}"
        lines.append(f"    {item.get('id')}: {item.get('transition')} ({pair})")
        if item.get("reason"):
            lines += _field("reason", escape_path(str(item["reason"])), 6)
    errors = _visible_errors(grade.get("errors", []), variant)
    lines.append("  grade errors" if errors else "  grade errors: none")
    for error in errors:
        owner = f" {error['owner']}" if error.get("owner") else ""
        lines += _field(f"{error.get('scope')}{owner}:", escape_path(str(error.get("message", ""))), 4, 0)
    return lines


def _source_text(source: Mapping[str, Any]) -> str:
    parts = [str(source.get("kind", "?"))]
    if source.get("ref"):
        parts.append(f"ref {escape_path(str(source['ref']))}")
    if source.get("commit"):
        parts.append(f"commit {source['commit']}")
    text = " ".join(parts)
    return f"{text} at {escape_path(str(source['root']))}" if source.get("root") else text


def _model_text(model: Mapping[str, Any]) -> str:
    if model.get("provider") is None:
        text = "none answered"
    else:
        text = f"{model.get('provider')}/{model.get('model')}"
    if "declared" in model and model.get("declared") is None:
        text += " (pi's default: the group declares no model)"
    if model.get("thinking"):
        text += f" (thinking {model['thinking']})"
    if model.get("provider") == "scripted":
        text += " [scripted stand-in, not a real model]"
    return text


def _skill_lines(run: Mapping[str, Any]) -> list[str]:
    registered = run.get("registered_skills") or {}
    target = (run.get("paths") or {}).get("target_file")
    listed = registered.get("prompt") or []
    lines: list[str] = []
    for skill in listed:
        mark = " (target)" if target and skill.get("location") == target else ""
        lines += _field("skill", f"{skill.get('name')}{mark} {escape_path(str(skill.get('location')))}", 2)
    if not listed:
        declared = (run.get("paths") or {}).get("skills") or []
        lines.append("  skills     none listed in the system prompt" + (f" ({len(declared)} declared)" if declared else ""))
    commands = registered.get("commands")
    if commands:
        lines += _field("commands", ", ".join(str(c.get("name")) for c in commands), 2)
    return lines


def render_tool_call(call: Mapping[str, Any]) -> str:
    """``name {compact args} -> ok|error|blocked[: first result line]``."""
    outcome = "blocked" if call.get("blocked") else "error" if call.get("is_error") else "ok"
    if outcome == "ok" and call.get("result_text") is None:
        outcome = "no result"
    text = f"{call.get('name')} {_shorten(_compact(call.get('arguments') or {}), _ARGS_SHOWN)} -> {outcome}"
    if outcome in ("blocked", "error") and call.get("result_text"):
        first = str(call["result_text"]).strip().split("\n", 1)[0]
        text += f": {_shorten(first, _RESULT_SHOWN)}"
    return text


def render_turn(turn: Mapping[str, Any]) -> list[str]:
    """One declared turn: prompt, sent text when it differs, tool calls, response."""
    state = "" if turn.get("settled", True) else " (not settled)"
    lines = [f"  turn {turn.get('index')}{state}"]
    lines += _field("prompt", str(turn.get("prompt", "")), 4)
    if turn.get("sent") != turn.get("prompt"):
        lines += _field("sent", str(turn.get("sent", "")), 4)
    for call in turn.get("tool_calls", []):
        lines += _field("tool", render_tool_call(call), 4)
    lines += _field("response", str(turn.get("response", "")), 4)
    if turn.get("stop_reason") not in (None, "stop"):
        lines += _field("stopped", str(turn.get("stop_reason")), 4)
    if turn.get("error"):
        lines += _field("error", escape_path(str(turn["error"])), 4)
    return lines


def render_variant(run: VariantEvidence, group_reason: str | None = None) -> list[str]:
    """One variant's run evidence; transport noise (raw events, argv, env) is left out."""
    data = run["run"]
    problems = _problem_lines(run["problems"], 2)
    if data is None and not run["problems"]:
        return [f"-- {run['name']} [no run.json: this variant was not persisted]"]
    lines = [f"-- {run['name']} [{(data or {}).get('state', 'unknown')}]", *problems]
    data = data or {}
    reason = data.get("reason") or group_reason
    if reason:
        lines += _field("reason", escape_path(str(reason)), 2)
    if data.get("source"):
        lines += _field("source", _source_text(data["source"]), 2)
    if data.get("host"):
        mode = f", {data['mode']} mode" if data.get("mode") else ""
        lines += _field("host", f"pi {data['host'].get('version', '?')}{mode}", 2)
    if data.get("model"):
        lines += _field("model", _model_text(data["model"]), 2)
    if data.get("tools") is not None:
        lines += _field("tools", ", ".join(data["tools"]) or "none", 2)
    if "registered_skills" in data:
        lines += _skill_lines(data)
    for path in data.get("context_files") or []:
        lines += _field("context", escape_path(str(path)), 2)
    if data.get("started_at") is not None and data.get("ended_at") is not None:
        lines += _field("duration", f"{float(data['ended_at']) - float(data['started_at']):.2f} s", 2)
    usage = data.get("usage") or {}
    if usage.get("totalTokens"):
        lines += _field("tokens", f"{int(usage['totalTokens'])} (input {int(usage.get('input', 0))}, output {int(usage.get('output', 0))})", 2)
    if data.get("fingerprints_changed"):
        lines += _field("changed", ", ".join(escape_path(p) for p in data["fingerprints_changed"]), 2)
    if data.get("redactions"):
        # files stored with inherited values replaced by the marker: checks on them may fail for that reason
        lines += _field("redacted", ", ".join(f"{escape_path(str(p))} ({n})" for p, n in data["redactions"].items()), 2)
    for turn in (run["transcript"] or {}).get("turns", []):
        lines += render_turn(turn)
    if run["workspace_changes"]:
        lines.append("  workspace changes")
        lines += [f"    {change:<8} {escape_path(path)}" for change, path in run["workspace_changes"]]
    lines.append("  artifacts")
    lines += [f"    {escape_path(path)}" for path in run["artifacts"]] or ["    none"]
    return lines
