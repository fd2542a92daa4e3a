"""``skill-eval view``: reading the selected groups and variants of a stored result.

A view is a reading aid over the canonical evidence tree, never a replacement for it.
The rendering lives in :mod:`pytest_skill_eval.render.views`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_skill_eval.definitions.selection import select_variants
from pytest_skill_eval.errors import EvidenceError, SelectionError
from pytest_skill_eval.evidence import layout, records, safe_io
from pytest_skill_eval.evidence.locate import (
    RESULT_ID,
    regrade_files,
    regrade_time,
    resolve_result,
    stored_results,
)
from pytest_skill_eval.evidence.reader import (
    Parsed,
    definition_record,
    load_tree,
    parse_aggregate,
    parse_grade,
    read_checked,
    result_record,
    run_record,
    transcript_record,
)
from pytest_skill_eval.evidence.records import GroupRecord, parse_group
from pytest_skill_eval.evidence.reuse_records import parse_reuse
from pytest_skill_eval.evidence.stop_records import parse_stopping
from pytest_skill_eval.grading.results import GroupGrade
from pytest_skill_eval.observation import same_file
from pytest_skill_eval.render.views import (
    GroupEvidence,
    RegradeShown,
    ResultEvidence,
    VariantView,
    problem_lines,
    render_result,
)
from pytest_skill_eval.safe_text import escape_path, neutralise

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


def _checked(path: Path, parse: Callable[[Any, str], Parsed], result_dir: Path, problems: list[str]) -> Parsed | None:
    # Absent files are ordinary (a run stopped early); unreadable or misshapen ones are
    # problems the view names and reads past.
    value, found = read_checked(path, parse, _relative(path, result_dir), root=result_dir)
    problems += found
    return value


def newest_grade(gdir: Path, result_dir: Path, problems: list[str], stored: Path | None = None,
                 entries: Mapping[str, str] | None = None) -> tuple[GroupGrade | None, RegradeShown | None]:
    """The grade a reader should see: the newest regrade that reads, else the stored grade
    (*stored*: the one the group record names; by default ``grade.json``, or the
    ``grade-fallback.json`` published when it could not be written). *entries*: *gdir*'s
    listing, when the caller has it."""
    stored = stored if stored is not None else layout.trial_grade_file(gdir, entries)
    for path in regrade_files(gdir, entries):
        grade = _checked(path, parse_grade, result_dir, problems)
        if grade is not None:
            state = None
            if safe_io.entry_kind(stored, result_dir) is not None:
                original = _checked(stored, parse_grade, result_dir, [])
                state = original.state if original is not None else "not what the view expects"
            return grade, RegradeShown(file=_relative(path, result_dir), time=regrade_time(path), original_state=state)
    return _checked(stored, parse_grade, result_dir, problems), None


def _relative(path: Path, result_dir: Path) -> str:
    # every path here is built by joining onto result_dir: a string prefix, without
    # pathlib's re-parsing (a view of 500 groups names ~15,000 of them)
    text, root = str(path), str(result_dir)
    if text.startswith(root + os.sep):
        return text[len(root) + 1:].replace(os.sep, "/")
    return path.relative_to(result_dir).as_posix()


def _run_artifacts(run_dir: Path, result_dir: Path, entries: dict[str, str]) -> list[str]:
    # one directory listing (*entries*) instead of a stat per possible artifact; links are never
    # followed (a linked artifact is not listed: it is not evidence)
    shown = _relative(run_dir, result_dir)  # each artifact's name is one listed name below it
    found = [f"{shown}/{name}" for name in _RUN_FILES if entries.get(name) == safe_io.FILE]
    found += [f"{shown}/{name}/" for name in _RUN_DIRS if entries.get(name) == safe_io.DIRECTORY]
    turns = run_dir / "turns"
    listed = safe_io.list_dir(turns, result_dir) if "turns" in entries else []  # absent: nothing to list
    numbered = sorted((name for name, kind in listed
                       if kind == safe_io.DIRECTORY and name.isascii() and name.isdigit()), key=int)
    found += [f"{shown}/turns/{n}/workspace/" for n in numbered if safe_io.is_dir(turns / n / "workspace", result_dir)]
    return found


def _odd_entries(run_dir: Path, result_dir: Path, entries: dict[str, str]) -> list[str]:
    """A problem for each run artifact that is there but not what a writer makes (a link, a
    FIFO, a directory for a file): never read, never followed."""
    expected = {**{n: safe_io.FILE for n in _RUN_FILES}, **{n: safe_io.DIRECTORY for n in _RUN_DIRS}}
    return [f"{_relative(run_dir, result_dir)}/{name}: expected {expected[name]}, found {kind}; it is not read"
            for name, kind in entries.items() if name in expected and kind != expected[name]]


def _workspace_changes(run_dir: Path, result_dir: Path, entries: Mapping[str, str]) -> list[tuple[str, str]]:
    final_dir = run_dir / "workspace"
    if entries.get("workspace") != safe_io.DIRECTORY:
        return []
    # by the manifests' digests when the snapshots wrote them: no workspace is re-hashed
    before = load_tree(run_dir / "workspace-initial", result_dir, entries)
    after = load_tree(final_dir, result_dir, entries)
    changes: list[tuple[str, str]] = []
    for rel in sorted(set(before) | set(after)):
        if rel not in before:
            changes.append(("added", _relative(final_dir / rel, result_dir)))
        elif rel not in after:
            changes.append(("removed", _relative(run_dir / "workspace-initial" / rel, result_dir)))
        elif not same_file(before, after, rel):
            changes.append(("modified", _relative(final_dir / rel, result_dir)))
    return changes


def _group_artifacts(gdir: Path, result_dir: Path, entries: Mapping[str, str]) -> list[str]:
    names = [n for n in ("definition.json", "group.json", "grade.json", layout.GROUP_FALLBACK, layout.GRADE_FALLBACK)
             if entries.get(n) == safe_io.FILE]
    names += sorted(p.name for p in regrade_files(gdir, entries))
    shown = _relative(gdir, result_dir)  # each a listed name below it
    return [f"{shown}/{n}" for n in names]


def _variant(gdir: Path, name: str, result_dir: Path) -> VariantView:
    problems: list[str] = []
    run_dir = gdir / name
    run = _checked(run_dir / "run.json", run_record, result_dir, problems)
    transcript = _checked(run_dir / "transcript.json", transcript_record, result_dir, problems)
    artifacts: list[str] = []
    changes: list[tuple[str, str]] = []
    try:
        entries = dict(safe_io.list_dir(run_dir, result_dir))  # sorted by name, as listed
        artifacts = _run_artifacts(run_dir, result_dir, entries)
        problems += _odd_entries(run_dir, result_dir, entries)
        changes = _workspace_changes(run_dir, result_dir, entries)
    except EvidenceError as exc:  # a linked directory, a manifest key that leaves its tree
        problems += str(exc).split("\n")
    return VariantView(name=name, run=run, transcript=transcript, artifacts=artifacts,
                           workspace_changes=changes, problems=problems)


def load_result(result_dir: Path, *, group: str | None = None, variant: str | None = None,
                trial: int | None = None) -> ResultEvidence:
    """Read what the view needs of *result_dir*, only for the selected group and variants.

    A group run with several trials shows its aggregate; *trial* (one-based) adds that
    trial's grade and runs. Raises SelectionError for a selector that names nothing. A file
    that cannot be read, or that is not its record, becomes a problem of its group (or of
    the result) and is left out; everything else is still shown.
    """
    variants = select_variants(variant, "--variant")
    dirs = layout.group_dirs(result_dir)
    if group is not None:
        direct = _from_direct_group(dirs)
        index = select_group_index([d.name for d in dirs], group, direct=direct, result=escape_path(str(result_dir)))
        chosen = [dirs[index]]
    else:
        chosen = dirs
    groups: list[GroupEvidence] = []
    if trial is not None and trial < 1:
        raise SelectionError(f"--trial expects a trial number of at least 1, found {trial}")
    for gdir in chosen:
        problems: list[str] = []
        # one listing of the group directory (none of it followed) says which files are there
        entries = dict(safe_io.list_dir(gdir, gdir.parent))
        definition = _checked(gdir / "definition.json", definition_record, result_dir, problems)
        # group.json, or the group-fallback.json published when it could not be written
        group_doc = _checked(layout.group_record_file(gdir, entries) or gdir / layout.GROUP_FILE, parse_group,
                             result_dir, problems)
        trials = group_doc.trials if isinstance(group_doc, GroupRecord) else None
        aggregate = None
        # an absent file reads as None: only what is listed is read
        stopping = (_checked(gdir / layout.STOPPING_FILE, parse_stopping, result_dir, problems)
                    if layout.STOPPING_FILE in entries else None)
        reuse = _checked(gdir / layout.REUSE_FILE, parse_reuse, result_dir, problems) if layout.REUSE_FILE in entries else None
        runs_dir: Path | None = gdir
        if trials is not None and isinstance(group_doc, GroupRecord):
            aggregate = _checked(records.grade_file(gdir, group_doc), parse_aggregate, result_dir, problems)
            runs_dir = None
            if trial is not None:
                if trial > trials.ran:
                    raise SelectionError(f"--trial {trial} is out of range: group {gdir.name} ran "
                                         f"{trials.ran} of {trials.planned} trials")
                runs_dir = layout.trial_dir(gdir, trial)
        elif trial is not None and group is not None:
            raise SelectionError(f"--trial {trial}: group {gdir.name} was run once, without trials: drop --trial")
        named = records.grade_file(gdir, group_doc) if isinstance(group_doc, GroupRecord) and runs_dir == gdir else None
        grade, regrade = (newest_grade(runs_dir, result_dir, problems, named, entries if runs_dir == gdir else None)
                          if runs_dir is not None else (None, None))
        groups.append(
            GroupEvidence(
                dir=gdir.name,
                position=layout.group_position(gdir.name),
                group=group_doc,
                grade=grade,
                regrade=regrade,
                definition_path=definition.path if definition is not None else None,
                artifacts=_group_artifacts(gdir, result_dir, entries),
                variants=[_variant(runs_dir, name, result_dir) for name in variants] if runs_dir is not None else [],
                problems=problems,
                aggregate=aggregate,
                trial=trial if trials is not None else None,
                stopping=stopping,
                reuse=reuse,
            )
        )
    problems = []
    summary = _checked(result_dir / "result.json", result_record, result_dir, problems)
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
    data, _problems = read_checked(dirs[0] / "group.json", parse_group, root=dirs[0])
    return isinstance(data, GroupRecord) and data.suite is None


def render(target: str, cwd: Path, *, group: str | None = None, variant: str | None = None,
           trial: int | None = None) -> str:
    """Render the stored result *target* (result id or directory) as text.

    *group* selects one group by id or by its one-based position ``NNN`` (the
    ``groups/NNN-<id>`` directory, the position the run recorded); *variant* selects ``baseline`` or ``candidate``
    across the selected groups. Raises EvidenceError or SelectionError.
    """
    return render_checked(target, cwd, group=group, variant=variant, trial=trial)[0]


def render_checked(target: str, cwd: Path, *, group: str | None = None, variant: str | None = None,
                   trial: int | None = None) -> tuple[str, bool]:
    """:func:`render`, and whether some evidence file was not what the view expects."""
    result_dir = resolve_result(target, cwd)
    result = load_result(result_dir, group=group, variant=variant, trial=trial)
    return render_result(result), has_problems(result)


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
    ids = [layout.group_dir_id(name) for name in dir_names]
    positions = [layout.group_position(name) for name in dir_names]
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


def _result_time(path: Path) -> str:
    if RESULT_ID.fullmatch(path.name):
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
    from pytest_skill_eval.policy import count_words

    runs = cwd / layout.RUNS_DIR
    results = stored_results(cwd)
    if not results:
        return f"no stored results in {escape_path(str(runs))}\n", False
    rows: list[tuple[str, str, str, str, str]] = []
    problems: list[str] = []
    for path in results:
        summary, found = read_checked(path / "result.json", result_record, f"{path.name}/result.json", root=path)
        problems += found
        try:
            dirs = layout.group_dirs(path)
        except EvidenceError as exc:
            problems.append(f"{path.name}/{exc}")
            dirs = []
        transitions: list[str] = []
        regraded = False
        for gdir in dirs:
            group_problems: list[str] = []
            grade, regrade = newest_grade(gdir, path, group_problems)
            problems += [f"{path.name}/{p}" for p in group_problems]
            regraded = regraded or regrade is not None
            transitions += [c.transition for c in grade.comparisons] if grade is not None else []
        if not dirs and summary is not None:
            transitions = [t for g in summary.groups for t in g.comparisons.values()]
        count = len(summary.groups) if summary is not None else len(dirs)
        shown = (count_words(transitions) or "-") + (" (regraded)" if regraded else "")
        state = summary.state if summary is not None else "unknown"
        rows.append((escape_path(path.name), _result_time(path), escape_path(state), str(count), escape_path(shown)))
    header = ("id", "time (UTC)", "state", "groups", "transitions")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = [f"results in {escape_path(str(runs))} (oldest first)"]
    for row in [header, *rows]:
        lines.append("  ".join([*(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])), row[-1]]).rstrip())
    lines += problem_lines(problems, 0)
    return neutralise("\n".join(lines) + "\n"), bool(problems)


def list_results(cwd: Path) -> str:
    """The text of :func:`list_checked`."""
    return list_checked(cwd)[0]
