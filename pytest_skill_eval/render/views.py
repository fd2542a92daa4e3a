"""Text rendering of stored results (pure): the grade first, then the selected variants' runs.

Artifact and workspace paths are printed relative to the absolute result path shown
first. Every path cell escapes literal backslashes before tab, CR and LF, so one path
always stays on one line and reads back unambiguously.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NotRequired, TypedDict

from pytest_skill_eval.evidence.layout import group_dir_id
from pytest_skill_eval.evidence.records import (
    DecisionRecord,
    GroupRecord,
    InvalidGroupRecord,
    ModelRecord,
    ResultRecord,
    RunRecord,
    SourceRecord,
    TranscriptRecord,
)
from pytest_skill_eval.evidence.reuse_records import reuse_text
from pytest_skill_eval.evidence.stop_records import StoppingRecord, stopping_text
from pytest_skill_eval.grading.aggregate import TrialGrade
from pytest_skill_eval.grading.results import GradeError, GroupGrade
from pytest_skill_eval.observation import ToolCall, Turn
from pytest_skill_eval.safe_text import escape_path, neutralise
from pytest_skill_eval.trial_policy import comparison_text, rate_text
from pytest_skill_eval.usage import Usage, VariantUsage, usage_text

_ARGS_SHOWN = 200
_RESULT_SHOWN = 160


class VariantView(TypedDict):
    """What the view reads of one variant: ``run.json``, the transcript, artifact paths."""

    name: str
    run: RunRecord | None
    transcript: TranscriptRecord | None
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
    group: GroupRecord | InvalidGroupRecord | None
    #: the newest grade: the newest ``grade-regraded-<stamp>.json`` that reads, else ``grade.json``
    grade: GroupGrade | None
    #: when *grade* is a regrade: its result-relative file, its UTC time, and the run's own grade state
    regrade: RegradeShown | None
    definition_path: str | None
    artifacts: list[str]
    variants: list[VariantView]
    problems: list[str]
    #: for a group run with several trials: what they say together
    aggregate: NotRequired[TrialGrade | None]
    #: the trial whose grade and runs are shown (``--trial``), if one was selected
    trial: NotRequired[int | None]
    #: what ``--skill-eval-stop`` looked at (``stopping.json``), for a group run with a stop rule
    stopping: NotRequired[StoppingRecord | None]
    #: what ``--skill-eval-reuse-baseline`` reused (``reuse.json``), for a group run with the option
    reuse: NotRequired[dict[str, Any] | None]


class RegradeShown(TypedDict):
    """Which regrade a group view shows instead of the run's ``grade.json``."""

    file: str
    time: str
    original_state: str | None


class ResultEvidence(TypedDict):
    """A stored result as the renderer sees it."""

    path: str
    summary: ResultRecord | None
    groups: list[GroupEvidence]
    group_selector: str | None
    variant: str | None
    problems: list[str]


def problem_lines(problems: Iterable[str], indent: int) -> list[str]:
    # a located message whose found value is already JSON-quoted: not escaped a second time
    return [f"{' ' * indent}problem    {_text(p)}" for p in problems]


def _field(label: str, value: str, indent: int, width: int = 10) -> list[str]:
    """``label value`` with continuation lines of a multi-line value aligned under it."""
    pad = " " * indent
    lines = value.split("\n") if value else [""]
    head = f"{pad}{label:<{width}} {lines[0]}".rstrip()
    rest = [f"{pad}{'':<{width}} {line}".rstrip() for line in lines[1:]]
    return [head, *rest]


def _text(text: str) -> str:
    """A text cell (not a path): one line, neutralised, backslashes as they are."""
    return neutralise(text, one_line=True)


def _line(line: str) -> str:
    """One line of a view, whatever a stored string put in it: multi-line values were split
    into lines by :func:`_field`, so a newline left here came from a stored field
    (a group id, a skill name) and would start a line of its own."""
    return neutralise(line).replace("\n", "\\n")


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
        lines.append(f"state     {summary.state}")
        if summary.shard is not None:
            lines.append(f"shard     {summary.shard.index}/{summary.shard.count}: this result holds one shard's groups; "
                         "skill-eval merge combines the shards")
        if summary.provenance is not None and summary.provenance.rerun_of is not None:
            lines.append(f"rerun of  {summary.provenance.rerun_of}: its groups ran again from the inputs it stored")
        if summary.usage is not None:
            lines += _usage_lines(summary.usage, result["variant"], "usage     ")
        if summary.decision is not None:
            lines += decision_lines(summary.decision)
    lines += problem_lines(result["problems"], 0)
    lines.append(_selection_line(result))
    if not result["groups"]:
        lines += ["", "no groups were persisted in this result"]
    for group in result["groups"]:
        lines += ["", *render_group(group, result["variant"])]
    return "".join(f"{_line(line)}\n" for line in lines)


def decision_lines(decision: DecisionRecord) -> list[str]:
    """The result's decision: its line, the test and rules, each comparison's line, lost runs, A/A flips."""
    rules = decision.rules
    total = len(decision.comparisons)
    lines = [f"decision  {_text(decision.line)}",
             f"          {decision.test} over {total} comparison{'s' if total != 1 else ''} ({decision.decisive} "
             f"decisive); adjustment {rules.get('adjustment')}, alpha {rules.get('alpha')}, minimum effect "
             f"{rules.get('min_effect')}, target power {rules.get('target_power')}, coverage floor "
             f"{rules.get('coverage_floor')}"]
    lines += [_text(line) for line in decision.lines()[1:]]
    return lines


def render_group(group: GroupEvidence, variant: str | None = None) -> list[str]:
    """One group: header, grade (before run evidence), review questions, variants."""
    data = group["group"]
    group_id = (data.id if data is not None else None) or group_dir_id(group["dir"])
    kind = f" ({data.type})" if isinstance(data, GroupRecord) else ""
    missing = "unknown: no group.json" if not any("group.json: " in p for p in group["problems"]) else "unknown"
    state = data.state if data is not None else missing
    lines = [f"== group {group['position']} {group_id}{kind} [{state}]"]
    lines += problem_lines(group["problems"], 0)
    if isinstance(data, GroupRecord) and data.usage is not None:
        lines += _usage_lines(data.usage, variant, "usage     ")
    if group["definition_path"]:
        lines.append(f"definition {escape_path(group['definition_path'])}")
    reuse = group.get("reuse")
    if reuse is not None:
        lines.append(f"reuse     {_text(reuse_text(reuse))}")
    if isinstance(data, InvalidGroupRecord) and data.definition_errors:
        # a suite entry whose group file could not be loaded: no run, no grade
        lines.append(f"definition {escape_path(data.ref)} is invalid")
        lines += [f"  {_text(problem)}" for problem in data.definition_errors]
    trials = data.trials if isinstance(data, GroupRecord) else None
    if trials is not None:
        lines += render_aggregate(group.get("aggregate"), variant, trials.planned)
        lines += render_stopping(group.get("stopping"))
        selected = group.get("trial")
        if selected is None:
            lines.append(f"trials    each trial's grade and runs: skill-eval view <result> --group {group['position']} "
                         f"--trial K (K from 1 to {trials.ran})")
        else:
            lines.append(f"== trial {selected} of {trials.ran}")
            lines += render_grade(group["grade"], variant, group.get("regrade"))
    elif group["grade"] is None and any(p.startswith(f"{_grade_file(group)}: ") for p in group["problems"]):
        lines.append("grade     unknown (grade.json is not what the view expects)")
    else:
        lines += render_grade(group["grade"], variant, group.get("regrade"))
    questions = data.review_questions if isinstance(data, GroupRecord) else ()
    if questions:
        lines.append("review questions")
        for question in questions:
            lines += _field("-", str(question), 2, 1)
    lines.append("artifacts")
    lines += [f"  {escape_path(path)}" for path in group["artifacts"]] or ["  none"]
    for run in group["variants"]:
        state_of = next((v for n, v in data.variants.items() if n == run["name"]), None) if data is not None else None
        reason = state_of.reason if state_of is not None else None
        lines += ["", *render_variant(run, reason)]
    return lines


def _usage_lines(usage: VariantUsage, variant: str | None, label: str) -> list[str]:
    """The selected variant's usage, or each variant's and the total (over every pi run: trials, reruns)."""
    if variant is not None:
        return [f"{label}{variant}: {usage_text(usage.variant(variant))}"]
    return [f"{label}{name}: {usage_text(part)}"
            for name, part in (("baseline", usage.baseline), ("candidate", usage.candidate), ("total", usage.total))]


def render_stopping(record: StoppingRecord | None) -> list[str]:
    """``stopping  stopped after 6 of 20 trials (sequential): ...`` and each comparison's looks."""
    if record is None:
        return []
    lines = [f"stopping  {_text(stopping_text(record))}"]
    for cid, looks in record.looks:
        lines.append(f"  comparison {_text(cid)}")
        for look in looks:
            bound = "unreachable" if look.boundary_p is None else f"p <= {look.boundary_p:.2g}"
            lines.append(f"    look {look.number} after {look.trials} of {look.planned} trials: {look.higher} higher, "
                         f"{look.lower} lower, S = {look.statistic}, boundary |S| >= {look.boundary} ({bound}), "
                         f"p = {look.p_value:.2g}, alpha spent {look.spent:.2g} of {look.allowed:.2g}: {look.decision}")
    return lines


def render_aggregate(aggregate: TrialGrade | None, variant: str | None, planned: int) -> list[str]:
    """What a group's trials say together: rates with intervals, comparisons with p-values."""
    if aggregate is None:
        return [f"aggregate unknown (aggregate.json is missing or not what the view expects; {planned} trials planned)"]
    lines = [f"aggregate {aggregate.state} over {aggregate.ran} of {aggregate.planned} trials"]
    for name, states in aggregate.runs.items():
        if variant is None or name == variant:
            lines.append(f"  runs       {name}: " + ", ".join(f"{n} {state}" for state, n in states.items()))
    expectations = [e for e in aggregate.expectations if variant is None or e.variant == variant]
    lines.append("  expectations" if expectations else "  expectations: none")
    for e in expectations:
        lines.append(f"    {e.counts():<11} {e.id} ({e.variant} {e.kind})")
        lines += _field("rate", _text(rate_text(e)), 6)
    lines.append("  comparisons" if aggregate.comparisons else "  comparisons: none")
    for c in aggregate.comparisons:
        lines.append(f"    {c.id}: {comparison_text(c)} ({c.baseline or '-'} -> {c.candidate or '-'})")
        if c.p_value is not None:
            lines += _field("p-value", f"{c.p_value:.4g} (Fisher's exact test, two-sided)", 6)
        if c.reason:
            lines += _field("reason", _text(c.reason), 6)
    return lines + _error_lines(aggregate.errors, variant)


def _grade_file(group: GroupEvidence) -> str:
    return f"groups/{group['dir']}/grade.json"


def _visible_errors(errors: Iterable[GradeError], variant: str | None) -> list[GradeError]:
    """Leave out the other variant's expectation-owned errors; keep every other scope."""
    if variant is None:
        return list(errors)
    return [e for e in errors if not (e.scope == "expectation" and e.variant not in (None, variant))]


def render_grade(grade: GroupGrade | None, variant: str | None = None,
                 regrade: RegradeShown | None = None) -> list[str]:
    """The grade of one group: expectations, comparisons and grade errors.

    Expected, observed, locations, errors and reasons are one line each, neutralised but
    not escaped again: grading already wrote the paths in them as path cells and its
    excerpts as JSON strings. *regrade* says the grade is a regrade, and which.
    """
    if grade is None:
        return ["grade     none (no grade.json: the group was not graded)"]
    state = grade.state
    if regrade is None:
        lines = [f"grade     {state}"]
    else:
        original = regrade["original_state"] or "none"
        lines = [f"grade     {state} (regraded {regrade['time']} by skill-eval regrade; the run's own grade.json: {original})",
                 f"  file       {escape_path(regrade['file'])}"]
    expectations = [e for e in grade.expectations if variant is None or e.variant == variant]
    lines.append("  expectations" if expectations else "  expectations: none")
    for item in expectations:
        lines.append(f"    {item.status:<11} {item.id} ({item.variant} {item.kind})")
        lines += _field("expected", _text(item.expected), 6)
        lines += _field("observed", _text(item.observed), 6)
        for location in item.locations:
            lines += _field("location", _text(location), 6)
        if item.error:
            lines += _field("error", _text(item.error), 6)
    lines.append("  comparisons" if grade.comparisons else "  comparisons: none")
    for comparison in grade.comparisons:
        pair = f"{comparison.baseline or '-'} -> {comparison.candidate or '-'}"
        lines.append(f"    {comparison.id}: {comparison.transition} ({pair})")
        if comparison.reason:
            lines += _field("reason", _text(comparison.reason), 6)
    return lines + _error_lines(grade.errors, variant)


def _error_lines(errors: Iterable[GradeError], variant: str | None) -> list[str]:
    """The grade errors a view of *variant* shows (every one without a variant selector)."""
    visible = _visible_errors(errors, variant)
    lines = ["  grade errors" if visible else "  grade errors: none"]
    for error in visible:
        owner = f" {error.owner}" if error.owner else ""
        lines += _field(f"{error.scope}{_text(owner)}:", _text(error.message), 4, 0)
    return lines


def _source_text(source: SourceRecord) -> str:
    parts: list[str] = [source.kind]
    if source.ref:
        parts.append(f"ref {escape_path(source.ref)}")
    if source.commit:
        parts.append(f"commit {source.commit}")
    text = " ".join(parts)
    return f"{text} at {escape_path(source.root)}" if source.root else text


def _model_text(model: ModelRecord) -> str:
    text = "none answered" if model.provider is None else f"{model.provider}/{model.model}"
    if model.declared is None:
        text += " (pi's default: the group declares no model)"
    if model.thinking:
        text += f" (thinking {model.thinking})"
    if model.provider == "scripted":
        text += " [scripted stand-in, not a real model]"
    return text


def _skill_lines(run: RunRecord) -> list[str]:
    assert run.ran is not None
    registered: dict[str, Any] = dict(run.ran.registered_skills)
    target = run.paths.target_file if run.paths is not None else None
    listed = registered.get("prompt") or []
    lines: list[str] = []
    for skill in listed:
        mark = " (target)" if target and skill.get("location") == target else ""
        lines += _field("skill", f"{skill.get('name')}{mark} {escape_path(str(skill.get('location')))}", 2)
    if not listed:
        declared = run.paths.skills if run.paths is not None else ()
        lines.append("  skills     none listed in the system prompt" + (f" ({len(declared)} declared)" if declared else ""))
    commands = registered.get("commands")
    if commands:
        lines += _field("commands", ", ".join(str(c.get("name")) for c in commands), 2)
    return lines


def render_tool_call(call: ToolCall) -> str:
    """``name {compact args} -> ok|error|blocked[: first result line]``."""
    outcome = "blocked" if call.blocked else "error" if call.is_error else "ok"
    if outcome == "ok" and call.result_text is None:
        outcome = "no result"
    text = f"{call.name} {_shorten(_compact(call.arguments or {}), _ARGS_SHOWN)} -> {outcome}"
    if outcome in ("blocked", "error") and call.result_text:
        first = call.result_text.strip().split("\n", 1)[0]
        text += f": {_shorten(first, _RESULT_SHOWN)}"
    return _text(text)  # the subject named the tool: a tool name never starts a line of its own


def render_turn(turn: Turn, usage: Usage | None = None) -> list[str]:
    """One declared turn: prompt, sent text when it differs, tool calls, response, usage."""
    state = "" if turn.settled else " (not settled)"
    lines = [f"  turn {turn.index}{state}"]
    lines += _field("prompt", turn.prompt, 4)
    if turn.sent != turn.prompt:
        lines += _field("sent", turn.sent, 4)
    for call in turn.tool_calls:
        lines += _field("tool", render_tool_call(call), 4)
    lines += _field("response", turn.response, 4)
    if turn.stop_reason not in (None, "stop"):
        lines += _field("stopped", str(turn.stop_reason), 4)
    if usage is not None:
        lines += _field("usage", usage_text(usage), 4)
    if turn.error:
        lines += _field("error", _text(turn.error), 4)
    return lines


def render_variant(run: VariantView, group_reason: str | None = None) -> list[str]:
    """One variant's run evidence; transport noise (raw events, argv, env) is left out."""
    data = run["run"]
    problems = problem_lines(run["problems"], 2)
    if data is None and not run["problems"]:
        return [f"-- {run['name']} [no run.json: this variant was not persisted]"]
    lines = [f"-- {run['name']} [{data.state if data is not None else 'unknown'}]", *problems]
    reason = (data.reason if data is not None else None) or group_reason
    if reason:
        lines += _field("reason", _text(reason), 2)
    if data is not None and data.source is not None:
        lines += _field("source", _source_text(data.source), 2)
    ran = data.ran if data is not None else None
    if data is not None and ran is not None:
        lines += _field("host", f"pi {ran.host.get('version', '?')}, {ran.mode} mode", 2)
        lines += _field("model", _model_text(ran.model), 2)
        lines += _field("tools", ", ".join(ran.tools) or "none", 2)
        lines += _skill_lines(data)
        for path in ran.context_files:
            lines += _field("context", escape_path(path), 2)
        lines += _field("duration", f"{ran.ended_at - ran.started_at:.2f} s", 2)
        lines += _field("usage", usage_text(ran.usage), 2)
        if ran.fingerprints_changed:
            lines += _field("changed", ", ".join(escape_path(p) for p in ran.fingerprints_changed), 2)
    if data is not None and data.redactions:
        # files stored with inherited values replaced by the marker: checks on them may fail for that reason
        lines += _field("redacted", ", ".join(f"{escape_path(p)} ({n})" for p, n in data.redactions.items()), 2)
    for stored in run["transcript"].turns if run["transcript"] is not None else ():
        lines += render_turn(stored.turn, stored.usage)
    if run["workspace_changes"]:
        lines.append("  workspace changes")
        lines += [f"    {change:<8} {escape_path(path)}" for change, path in run["workspace_changes"]]
    lines.append("  artifacts")
    lines += [f"    {escape_path(path)}" for path in run["artifacts"]] or ["    none"]
    return lines
