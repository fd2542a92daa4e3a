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
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

from . import evidence, readback
from .definitions import SelectionError, select_variants
from .errors import EvidenceError

__all__ = [
    "LATEST",
    "GroupEvidence",
    "RegradeShown",
    "ResultEvidence",
    "VariantEvidence",
    "escape_path",
    "group_dirs",
    "has_problems",
    "list_checked",
    "list_results",
    "load_result",
    "neutralise",
    "newest_grade",
    "regrade_files",
    "render",
    "render_checked",
    "render_result",
    "resolve_result",
    "select_group_index",
    "stored_results",
]

_GROUP_DIR = re.compile(r"(\d{3,})-(.+)")
_RESULT_ID = re.compile(r"\d{14}-.+")
_REGRADE_FILE = re.compile(r"grade-regraded-(\d{14})(?:-(\d+))?\.json")
#: the ``view`` target that names the newest stored result
LATEST = "latest"
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


# --------------------------------------------------------------------------- reading


def _path_like(target: str) -> bool:
    return "/" in target or target.startswith(".") or Path(target).is_absolute()


def _is_result(path: Path) -> bool:
    return (path / "result.json").is_file() or (path / "groups").is_dir()


def stored_results(cwd: Path) -> list[Path]:
    """The result directories under ``<cwd>/.skill-eval/runs``, oldest first.

    Hidden entries (a killed run's staging, ``.gitignore``) and directories that are not
    results are left out. Results are ordered by the time in their id
    (``YYYYmmddHHMMSS-…``), then by when the directory last changed, then by name.
    """
    runs = cwd / evidence.RUNS_DIR
    if not runs.is_dir():
        return []
    found = [p for p in runs.iterdir() if not p.name.startswith(".") and p.is_dir() and _is_result(p)]

    def key(path: Path) -> tuple[str, int, str]:
        stamp = path.name[:14] if _RESULT_ID.fullmatch(path.name) else ""
        return stamp, path.stat().st_mtime_ns, path.name

    return sorted(found, key=key)


def _by_prefix(target: str, cwd: Path) -> Path | None:
    """``latest`` or a unique id prefix among the stored results; None when nothing matches."""
    results = stored_results(cwd)
    if target == LATEST:
        if not results:
            raise EvidenceError(f"no stored results in {escape_path(str(cwd / evidence.RUNS_DIR))}: run a suite first")
        return results[-1].absolute()
    matches = [p for p in results if p.name.startswith(target)]
    if len(matches) > 1:
        names = ", ".join(escape_path(p.name) for p in matches)
        raise EvidenceError(
            f"result id prefix {target!r} is ambiguous: it matches {len(matches)} stored results: {names}; "
            "give more of the id"
        )
    return matches[0].absolute() if matches else None


def resolve_result(target: str, cwd: Path) -> Path:
    """The result directory *target* names, as an absolute path.

    A bare target is tried as a stored result id (``<cwd>/.skill-eval/runs/<target>``)
    first, then as a directory path from *cwd*, then as ``latest`` (the newest stored
    result) or as a prefix of exactly one stored id; an absolute or path-like target (one
    holding ``/`` or starting with ``.``) is only a directory path. Raises EvidenceError
    naming every place tried, or the candidates of an ambiguous prefix.
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
            if not _is_result(path):
                raise EvidenceError(f"{escape_path(str(path))} is a directory but not a result: it has neither result.json nor groups/")
            return path
    if not _path_like(target):
        found = _by_prefix(target, cwd)
        if found is not None:
            return found
    shown = " or ".join(f"a directory {escape_path(str(p))}" for p in tried)
    prefix = f", nor a stored result id starting with {target!r}" if not _path_like(target) else ""
    raise EvidenceError(f"no stored result {target!r}: expected {shown}{prefix}, found none")


def group_dirs(result_dir: Path) -> list[Path]:
    """The ``groups/NNN-<id>`` directories of a result, in position order (hidden ones left out)."""
    root = result_dir / "groups"
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if not p.name.startswith(".") and p.is_dir() and _GROUP_DIR.fullmatch(p.name)]
    return sorted(found, key=lambda p: (int(_GROUP_DIR.fullmatch(p.name).group(1)), p.name))  # type: ignore[union-attr]


def regrade_files(gdir: Path) -> list[Path]:
    """The group's ``grade-regraded-<stamp>.json`` files, newest first."""
    found = []
    for path in gdir.glob("grade-regraded-*.json"):
        match = _REGRADE_FILE.fullmatch(path.name)
        if match and path.is_file():
            found.append((match.group(1), int(match.group(2) or 1), path))
    return [path for _stamp, _n, path in sorted(found, reverse=True)]


def regrade_time(path: Path) -> str:
    """``2026-07-20 17:32:09 UTC``: when the regrade that wrote *path* ran."""
    match = _REGRADE_FILE.fullmatch(path.name)
    if not match:
        return "at an unknown time"
    stamp = datetime.strptime(match.group(1), "%Y%m%d%H%M%S")
    return stamp.strftime("%Y-%m-%d %H:%M:%S UTC")


def _checked(path: Path, shape: readback.Shape, result_dir: Path, problems: list[str]) -> Any:
    # Absent files are ordinary (a run stopped early); unreadable or misshapen ones are
    # problems the view names and reads past.
    value, found = readback.read_checked(path, shape, _relative(path, result_dir))
    problems += found
    return value


def newest_grade(gdir: Path, result_dir: Path, problems: list[str]) -> tuple[dict[str, Any] | None, RegradeShown | None]:
    """The grade a reader should see: the newest regrade that reads, else ``grade.json``."""
    original: Any = None
    for path in regrade_files(gdir):
        grade = _checked(path, readback.GRADE, result_dir, problems)
        if grade is not None:
            state = None
            if (gdir / "grade.json").is_file():
                original = _checked(gdir / "grade.json", readback.GRADE, result_dir, [])
                state = original.get("state") if isinstance(original, dict) else "not what the view expects"
            return grade, RegradeShown(file=_relative(path, result_dir), time=regrade_time(path), original_state=state)
    return _checked(gdir / "grade.json", readback.GRADE, result_dir, problems), None


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
    names += sorted(p.name for p in regrade_files(gdir))
    return [_relative(gdir / n, result_dir) for n in names]


def _variant(gdir: Path, name: str, result_dir: Path) -> VariantEvidence:
    problems: list[str] = []
    return VariantEvidence(
        name=name,
        run=_checked(gdir / name / "run.json", readback.RUN, result_dir, problems),
        transcript=_checked(gdir / name / "transcript.json", readback.TRANSCRIPT, result_dir, problems),
        artifacts=_run_artifacts(gdir / name, result_dir),
        workspace_changes=_workspace_changes(gdir / name, result_dir),
        problems=problems,
    )


def load_result(result_dir: Path, *, group: str | None = None, variant: str | None = None) -> ResultEvidence:
    """Read what the view needs of *result_dir*, only for the selected group and variants.

    Raises SelectionError for a selector that names nothing. A file that cannot be read,
    or that parses but is not what the view expects, becomes a problem of its group (or
    of the result) and the parts that do fit are still shown.
    """
    variants = select_variants(variant, "--variant")
    dirs = group_dirs(result_dir)
    if group is not None:
        direct = _from_direct_group(dirs)
        index = select_group_index([d.name for d in dirs], group, direct=direct, result=escape_path(str(result_dir)))
        chosen = [dirs[index]]
    else:
        chosen = dirs
    groups: list[GroupEvidence] = []
    for gdir in chosen:
        problems: list[str] = []
        definition = _checked(gdir / "definition.json", readback.DEFINITION, result_dir, problems)
        group_doc = _checked(gdir / "group.json", readback.GROUP, result_dir, problems)
        grade, regrade = newest_grade(gdir, result_dir, problems)
        groups.append(
            GroupEvidence(
                dir=gdir.name,
                position=_position_of(gdir.name),
                group=group_doc,
                grade=grade,
                regrade=regrade,
                definition_path=definition.get("path") if isinstance(definition, dict) else None,
                artifacts=_group_artifacts(gdir, result_dir),
                variants=[_variant(gdir, name, result_dir) for name in variants],
                problems=problems,
            )
        )
    problems = []
    summary = _checked(result_dir / "result.json", readback.RESULT, result_dir, problems)
    return ResultEvidence(
        path=str(result_dir),
        summary=summary,
        groups=groups,
        group_selector=group,
        variant=variant,
        problems=problems,
    )


def has_problems(result: ResultEvidence) -> bool:
    """Whether any file of the shown evidence was not what the view expects."""
    return bool(result["problems"]) or any(
        g["problems"] or any(v["problems"] for v in g["variants"]) for g in result["groups"]
    )


def _from_direct_group(dirs: Sequence[Path]) -> bool:
    """Whether the result holds one group run from a direct group definition.

    ``group.json`` records ``"suite": null`` for such a group; evidence without the
    field predates it and is treated as a suite result, so ``--group`` still works.
    """
    if len(dirs) != 1:
        return False
    data, _problems = readback.read_checked(dirs[0] / "group.json", readback.GROUP)
    return isinstance(data, dict) and "suite" in data and data["suite"] is None


def render(target: str, cwd: Path, *, group: str | None = None, variant: str | None = None) -> str:
    """Render the stored result *target* (result id or directory) as text.

    *group* selects one group by id or by its one-based position ``NNN`` (the
    ``groups/NNN-<id>`` directory, the position the run recorded); *variant* selects ``baseline`` or ``candidate``
    across the selected groups. Raises EvidenceError or SelectionError.
    """
    return render_checked(target, cwd, group=group, variant=variant)[0]


def render_checked(target: str, cwd: Path, *, group: str | None = None, variant: str | None = None) -> tuple[str, bool]:
    """:func:`render`, and whether some evidence file was not what the view expects."""
    result_dir = resolve_result(target, cwd)
    result = load_result(result_dir, group=group, variant=variant)
    return render_result(result), has_problems(result)


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


def neutralise(text: str) -> str:
    """*text* with every control, format and separator character but newline and tab as ``\\uXXXX``.

    Applied to everything a view prints: prompts and responses are shown as written, but
    nothing the subject wrote can move the cursor, recolour or retitle the terminal, or
    reorder a line (bidi controls).
    """
    return "".join(
        c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp") else f"\\u{ord(c):04x}"
        for c in text
    )


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
    group_id = data.get("id") or _group_id_of(group["dir"])
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



# --------------------------------------------------------------------------- list


def _result_time(path: Path) -> str:
    if _RESULT_ID.fullmatch(path.name):
        try:
            return datetime.strptime(path.name[:14], "%Y%m%d%H%M%S").strftime("%Y-%m-%d %H:%M:%S")
        except ValueError:
            pass
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M:%S")


def list_checked(cwd: Path) -> tuple[str, bool]:
    """``skill-eval list``: every stored result under *cwd*, oldest first, and whether some
    evidence file was not what the listing expects.

    One row per result: id, time (from the id, in UTC), batch state (``unknown`` without
    ``result.json``), number of groups, and the comparison transitions of each group's
    newest grade, marked ``(regraded)`` when a regrade is among them.
    """
    from .policy import count_words

    runs = cwd / evidence.RUNS_DIR
    results = stored_results(cwd)
    if not results:
        return f"no stored results in {escape_path(str(runs))}\n", False
    rows: list[tuple[str, str, str, str, str]] = []
    problems: list[str] = []
    for path in results:
        summary, found = readback.read_checked(path / "result.json", readback.RESULT, f"{path.name}/result.json")
        problems += found
        dirs = group_dirs(path)
        transitions: list[str] = []
        regraded = False
        for gdir in dirs:
            group_problems: list[str] = []
            grade, regrade = newest_grade(gdir, path, group_problems)
            problems += [f"{path.name}/{p}" for p in group_problems]
            regraded = regraded or regrade is not None
            transitions += [str(c.get("transition")) for c in (grade or {}).get("comparisons", [])]
        if not dirs and summary is not None:
            transitions = [str(t) for g in summary.get("groups", []) for t in (g.get("comparisons") or {}).values()]
        count = len(summary["groups"]) if summary is not None and "groups" in summary else len(dirs)
        shown = (count_words(transitions) or "-") + (" (regraded)" if regraded else "")
        state = str(summary.get("state", "unknown")) if summary is not None else "unknown"
        rows.append((escape_path(path.name), _result_time(path), escape_path(state), str(count), escape_path(shown)))
    header = ("id", "time (UTC)", "state", "groups", "transitions")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = [f"results in {escape_path(str(runs))} (oldest first)"]
    for row in [header, *rows]:
        lines.append("  ".join([*(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])), row[-1]]).rstrip())
    lines += _problem_lines(problems, 0)
    return neutralise("\n".join(lines) + "\n"), bool(problems)


def list_results(cwd: Path) -> str:
    """The text of :func:`list_checked`."""
    return list_checked(cwd)[0]
