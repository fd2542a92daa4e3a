"""Text views of stored results: ``skill-eval view <result-id-or-directory>``.

A view is a reading aid over the canonical evidence tree, never a replacement for it.
It shows, per selected group, the grade first (expectations, comparisons, grade errors)
and then the selected variants' run evidence (state, source, host, model, registered
skills, turns with their tool calls and responses, artifact paths). Raw host events
and other transport records stay out; open ``events.jsonl`` with ordinary tools.

The module has two halves:

- **reading** (:func:`resolve_result`, :func:`load_result`): finds the result directory
  and reads the files of the selected groups and variants into plain dicts;
- **rendering** (:func:`select_group_index`, :func:`render_result` and helpers): pure
  functions from those dicts to text, tested directly.

Artifact and workspace paths are printed relative to the absolute result path shown
first. Every path cell escapes literal backslashes before tab, CR and LF, so one path
always stays on one line and reads back unambiguously.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, TypedDict

from . import evidence
from .definitions import SelectionError, select_variants
from .errors import EvidenceError

__all__ = [
    "GroupEvidence",
    "ResultEvidence",
    "VariantEvidence",
    "escape_path",
    "group_dirs",
    "load_result",
    "render",
    "render_result",
    "resolve_result",
    "select_group_index",
]

_GROUP_DIR = re.compile(r"(\d{3,})-(.+)")
_ARGS_SHOWN = 200
_RESULT_SHOWN = 160
# Run artifacts in the order a reader usually wants them; directories end with "/".
_RUN_FILES = (
    "run.json",
    "transcript.json",
    "final-response.txt",
    "events.jsonl",
    "stderr.txt",
    "fingerprints.json",
    "context-observations.json",
)
_RUN_DIRS = ("workspace-initial", "workspace", "session")


class VariantEvidence(TypedDict):
    """What the view reads of one variant: ``run.json``, the transcript, artifact paths."""

    name: str
    run: dict[str, Any] | None
    transcript: dict[str, Any] | None
    #: result-relative slash paths of the artifacts present (directories end with "/")
    artifacts: list[str]
    #: ``(change, result-relative path)`` of files added/modified/removed in the workspace
    workspace_changes: list[tuple[str, str]]


class GroupEvidence(TypedDict):
    """What the view reads of one group directory."""

    dir: str
    #: the one-based position recorded in the directory name ``NNN-<id>``
    position: int
    group: dict[str, Any] | None
    grade: dict[str, Any] | None
    definition_path: str | None
    artifacts: list[str]
    variants: list[VariantEvidence]


class ResultEvidence(TypedDict):
    """A stored result as the renderer sees it."""

    path: str
    summary: dict[str, Any] | None
    groups: list[GroupEvidence]
    group_selector: str | None
    variant: str | None


# --------------------------------------------------------------------------- reading


def _path_like(target: str) -> bool:
    return "/" in target or target.startswith(".") or Path(target).is_absolute()


def resolve_result(target: str, cwd: Path) -> Path:
    """The result directory *target* names, as an absolute path.

    A bare target is tried as a stored result id (``<cwd>/.skill-eval/runs/<target>``)
    first, then as a directory path from *cwd*; an absolute or path-like target (one
    holding ``/`` or starting with ``.``) is only a directory path. Raises
    EvidenceError naming every place tried.
    """
    if not target:
        raise EvidenceError("expected a result id or result directory, found an empty target")
    tried: list[Path] = []
    if not _path_like(target):
        tried.append(cwd / evidence.RUNS_DIR / target)
    tried.append(Path(target) if Path(target).is_absolute() else cwd / target)
    for candidate in tried:
        if candidate.is_dir():
            path = candidate.absolute()
            if not (path / "result.json").is_file() and not (path / "groups").is_dir():
                raise EvidenceError(f"{path} is a directory but not a result: it has neither result.json nor groups/")
            return path
    shown = " or ".join(f"a directory {p}" for p in tried)
    raise EvidenceError(f"no stored result {target!r}: expected {shown}, found none")


def group_dirs(result_dir: Path) -> list[Path]:
    """The ``groups/NNN-<id>`` directories of a result, in position order."""
    root = result_dir / "groups"
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and _GROUP_DIR.fullmatch(p.name)]
    return sorted(found, key=lambda p: (int(_GROUP_DIR.fullmatch(p.name).group(1)), p.name))  # type: ignore[union-attr]


def _optional_json(path: Path) -> Any:
    # Absent files are ordinary (a run stopped early); unreadable ones are errors.
    return evidence.read_json(path) if path.is_file() else None


def _relative(path: Path, result_dir: Path) -> str:
    return path.relative_to(result_dir).as_posix()


def _run_artifacts(run_dir: Path, result_dir: Path) -> list[str]:
    found = [_relative(run_dir / name, result_dir) for name in _RUN_FILES if (run_dir / name).is_file()]
    found += [_relative(run_dir / name, result_dir) + "/" for name in _RUN_DIRS if (run_dir / name).is_dir()]
    turns = run_dir / "turns"
    if turns.is_dir():
        numbered = sorted((p for p in turns.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
        found += [_relative(p / "workspace", result_dir) + "/" for p in numbered if (p / "workspace").is_dir()]
    return found


def _workspace_changes(run_dir: Path, result_dir: Path) -> list[tuple[str, str]]:
    final_dir = run_dir / "workspace"
    if not final_dir.is_dir():
        return []
    before = evidence.fingerprint_tree(run_dir / "workspace-initial") if (run_dir / "workspace-initial").is_dir() else {}
    after = evidence.fingerprint_tree(final_dir)
    changes: list[tuple[str, str]] = []
    for rel in sorted(set(before) | set(after)):
        if rel not in before:
            changes.append(("added", _relative(final_dir / rel, result_dir)))
        elif rel not in after:
            changes.append(("removed", _relative(run_dir / "workspace-initial" / rel, result_dir)))
        elif before[rel] != after[rel]:
            changes.append(("modified", _relative(final_dir / rel, result_dir)))
    return changes


def _group_artifacts(gdir: Path, result_dir: Path) -> list[str]:
    names = [n for n in ("definition.json", "group.json", "grade.json") if (gdir / n).is_file()]
    names += sorted(p.name for p in gdir.glob("grade-regraded-*.json") if p.is_file())
    return [_relative(gdir / n, result_dir) for n in names]


def load_result(result_dir: Path, *, group: str | None = None, variant: str | None = None) -> ResultEvidence:
    """Read what the view needs of *result_dir*, only for the selected group and variants.

    Raises SelectionError for a selector that names nothing, EvidenceError for an
    unreadable evidence file.
    """
    variants = select_variants(variant, "--variant")
    dirs = group_dirs(result_dir)
    if group is not None:
        direct = _from_direct_group(dirs)
        index = select_group_index([d.name for d in dirs], group, direct=direct, result=str(result_dir))
        chosen = [dirs[index]]
    else:
        chosen = dirs
    groups: list[GroupEvidence] = []
    for gdir in chosen:
        definition = _optional_json(gdir / "definition.json")
        groups.append(
            GroupEvidence(
                dir=gdir.name,
                position=_position_of(gdir.name),
                group=_optional_json(gdir / "group.json"),
                grade=_optional_json(gdir / "grade.json"),
                definition_path=definition.get("path") if isinstance(definition, dict) else None,
                artifacts=_group_artifacts(gdir, result_dir),
                variants=[
                    VariantEvidence(
                        name=name,
                        run=_optional_json(gdir / name / "run.json"),
                        transcript=_optional_json(gdir / name / "transcript.json"),
                        artifacts=_run_artifacts(gdir / name, result_dir),
                        workspace_changes=_workspace_changes(gdir / name, result_dir),
                    )
                    for name in variants
                ],
            )
        )
    return ResultEvidence(
        path=str(result_dir),
        summary=_optional_json(result_dir / "result.json"),
        groups=groups,
        group_selector=group,
        variant=variant,
    )


def _from_direct_group(dirs: Sequence[Path]) -> bool:
    """Whether the result holds one group run from a direct group definition.

    ``group.json`` records ``"suite": null`` for such a group; evidence without the
    field predates it and is treated as a suite result, so ``--group`` still works.
    """
    if len(dirs) != 1:
        return False
    data = _optional_json(dirs[0] / "group.json")
    return isinstance(data, dict) and "suite" in data and data["suite"] is None


def render(target: str, cwd: Path, *, group: str | None = None, variant: str | None = None) -> str:
    """Render the stored result *target* (result id or directory) as text.

    *group* selects one group by id or by its one-based position ``NNN`` (the
    ``groups/NNN-<id>`` directory, the position the run recorded); *variant* selects ``baseline`` or ``candidate``
    across the selected groups. Raises EvidenceError or SelectionError.
    """
    result_dir = resolve_result(target, cwd)
    return render_result(load_result(result_dir, group=group, variant=variant))


# --------------------------------------------------------------------------- selection (pure)


def _group_id_of(dir_name: str) -> str:
    match = _GROUP_DIR.fullmatch(dir_name)
    return match.group(2) if match else dir_name


def _position_of(dir_name: str) -> int:
    match = _GROUP_DIR.fullmatch(dir_name)
    return int(match.group(1)) if match else 0


def select_group_index(dir_names: Sequence[str], selector: str, *, direct: bool = False, result: str = "the result") -> int:
    """The index into *dir_names* of the group *selector* names.

    *selector* is a group id or a one-based position, matched against the ``NNN`` of
    ``NNN-<id>``: the position the run recorded, which is the suite position (and the
    directory order) unless the run selected groups. Raises SelectionError when it
    names nothing, or when *direct* says the result came from a direct group definition
    (the spec makes ``--group`` invalid there).
    """
    if direct:
        raise SelectionError(
            f"--group selects a group of a suite result; {result} was run from a direct group definition: drop --group"
        )
    if not dir_names:
        raise SelectionError(f"--group {selector}: {result} holds no groups")
    ids = [_group_id_of(name) for name in dir_names]
    positions = [_position_of(name) for name in dir_names]
    shown = "position " + ", ".join(str(p) for p in positions) if len(positions) == 1 else (
        "one of the positions " + ", ".join(str(p) for p in positions)
    )
    if selector.isascii() and selector.isdigit():
        if int(selector) in positions:
            return positions.index(int(selector))
        raise SelectionError(f"--group {selector} is out of range: {result} has {shown}")
    if selector in ids:
        return ids.index(selector)
    known = ", ".join(json.dumps(i) for i in ids)
    raise SelectionError(f"--group {json.dumps(selector)} matches no group of {result}: expected one of {known} or {shown}")


# --------------------------------------------------------------------------- rendering (pure)


def escape_path(path: str) -> str:
    """Escape a path cell: backslash first, then tab, CR and LF, so it stays one line."""
    return path.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")


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
        lines.append("state     unknown (no result.json: the batch summary was never written)")
    else:
        lines.append(f"state     {summary.get('state', 'unknown')}")
    lines.append(_selection_line(result))
    if not result["groups"]:
        lines += ["", "no groups were persisted in this result"]
    for group in result["groups"]:
        lines += ["", *render_group(group, result["variant"])]
    return "\n".join(lines) + "\n"


def render_group(group: GroupEvidence, variant: str | None = None) -> list[str]:
    """One group: header, grade (before run evidence), review questions, variants."""
    data = group["group"] or {}
    group_id = data.get("id") or _group_id_of(group["dir"])
    kind = f" ({data['type']})" if data.get("type") else ""
    state = data.get("state", "unknown: no group.json")
    lines = [f"== group {group['position']} {group_id}{kind} [{state}]"]
    if group["definition_path"]:
        lines.append(f"definition {escape_path(group['definition_path'])}")
    if data.get("definition_errors"):
        # a suite entry whose group file could not be loaded: no run, no grade
        lines.append(f"definition {escape_path(str(data.get('ref')))} is invalid")
        lines += [f"  {problem}" for problem in data["definition_errors"]]
    lines += render_grade(group["grade"], variant)
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


def _visible_errors(errors: Iterable[Mapping[str, Any]], variant: str | None) -> list[Mapping[str, Any]]:
    """Leave out the other variant's expectation-owned errors; keep every other scope."""
    if variant is None:
        return list(errors)
    return [e for e in errors if not (e.get("scope") == "expectation" and e.get("variant") not in (None, variant))]


def render_grade(grade: Mapping[str, Any] | None, variant: str | None = None) -> list[str]:
    """The grade of one group: expectations, comparisons and grade errors."""
    if grade is None:
        return ["grade     none (no grade.json: the group was not graded)"]
    lines = [f"grade     {grade.get('state', 'unknown')}"]
    expectations = [e for e in grade.get("expectations", []) if variant is None or e.get("variant") == variant]
    lines.append("  expectations" if expectations else "  expectations: none")
    for item in expectations:
        lines.append(f"    {item.get('status', '?'):<11} {item.get('id')} ({item.get('variant')} {item.get('kind')})")
        lines += _field("expected", str(item.get("expected", "")), 6)
        lines += _field("observed", str(item.get("observed", "")), 6)
        for location in item.get("locations", []):
            lines += _field("location", str(location), 6)
        if item.get("error"):
            lines += _field("error", str(item["error"]), 6)
    comparisons = grade.get("comparisons", [])
    lines.append("  comparisons" if comparisons else "  comparisons: none")
    for item in comparisons:
        pair = f"{item.get('baseline') or '-'} -> {item.get('candidate') or '-'}"
        lines.append(f"    {item.get('id')}: {item.get('transition')} ({pair})")
        if item.get("reason"):
            lines += _field("reason", str(item["reason"]), 6)
    errors = _visible_errors(grade.get("errors", []), variant)
    lines.append("  grade errors" if errors else "  grade errors: none")
    for error in errors:
        owner = f" {error['owner']}" if error.get("owner") else ""
        lines += _field(f"{error.get('scope')}{owner}:", str(error.get("message", "")), 4, 0)
    return lines


def _source_text(source: Mapping[str, Any]) -> str:
    parts = [str(source.get("kind", "?"))]
    if source.get("ref"):
        parts.append(f"ref {source['ref']}")
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
        lines += _field("error", str(turn["error"]), 4)
    return lines


def render_variant(run: VariantEvidence, group_reason: str | None = None) -> list[str]:
    """One variant's run evidence; transport noise (raw events, argv, env) is left out."""
    data = run["run"]
    if data is None:
        return [f"-- {run['name']} [no run.json: this variant was not persisted]"]
    lines = [f"-- {run['name']} [{data.get('state', 'unknown')}]"]
    reason = data.get("reason") or group_reason
    if reason:
        lines += _field("reason", str(reason), 2)
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

