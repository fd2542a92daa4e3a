"""Re-grading stored evidence without running any subject: ``skill-eval regrade``.

Grading reads only persisted evidence, so a stored result can be graded again with the
current definitions: each group's definition is re-loaded from the path recorded in its
``definition.json`` when that file still exists, otherwise from the stored copy. The new
grade goes to a new file ``grade-regraded-<timestamp>.json`` beside ``grade.json``; the
original grade, and every other file of the result, stays untouched.

Everything is read and graded before anything is written, so a definition that no
longer loads stops the command without leaving half a regrade behind. The new grade is
serialised exactly as the engine serialises ``grade.json``, so regrading untouched
evidence with unchanged definitions reproduces ``grade.json`` byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_skill_eval.definitions.loading import load_group
from pytest_skill_eval.definitions.model import VARIANTS, Group
from pytest_skill_eval.definitions.rules import check_group_document
from pytest_skill_eval.engine.group import grade_persisted
from pytest_skill_eval.errors import DefinitionError, EvidenceError
from pytest_skill_eval.evidence import layout, readback, store
from pytest_skill_eval.evidence.layout import group_dirs
from pytest_skill_eval.evidence.locate import resolve_result

__all__ = [
    "GroupRegrade",
    "definition_roots",
    "describe_changes",
    "regrade_result",
    "render_regrade",
]

Clock = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class GroupRegrade:
    """One group's regrade: where its definition came from and both grades as JSON."""

    dir: str
    group_id: str
    origin: str
    file: str | None
    stored: Mapping[str, Any] | None
    new: Mapping[str, Any] | None
    identical: bool
    skipped: str | None = None
    #: ``<result-relative file>: expected …, found …`` for each evidence file not as expected
    problems: tuple[str, ...] = ()
    #: grade.json exists but is not what regrade expects, so the new grade is not compared with it
    stored_unusable: bool = False


def definition_roots(result_dir: Path, gdir: Path, cwd: Path) -> list[Path]:
    """Where the run's definition root may be, most trustworthy first.

    ``run.json`` records the root the engine used (``source.root``); a result still in
    its ``<root>/.skill-eval/runs/<id>`` layout names it too; *cwd* comes last.
    """
    roots: list[Path] = []
    for name in VARIANTS:
        run, _problems = readback.read_checked(gdir / name / "run.json", readback.RUN)  # reported by regrade()
        source = run.get("source") if isinstance(run, dict) else None
        if isinstance(source, dict) and isinstance(source.get("root"), str):
            roots.append(Path(source["root"]))
    runs = result_dir.parent
    if runs.name == layout.RUNS_DIR.name and runs.parent.name == layout.RUNS_DIR.parent.name:
        roots.append(runs.parent.parent)
    roots.append(cwd)
    return list(dict.fromkeys(roots))


def _root_for(path: Path, roots: Sequence[Path]) -> Path:
    real = Path(os.path.realpath(path))
    for root in roots:
        if root.is_dir() and real.is_relative_to(os.path.realpath(root)):
            return root
    tried = ", ".join(str(r) for r in roots)
    raise EvidenceError(
        f"the recorded definition {path} lies outside every definition root this result names ({tried}); "
        "run regrade from the definition root"
    )


class _Unreadable(EvidenceError):
    """A file of the group's evidence is not what regrade expects: that group is skipped."""


def _stored_group(stored: Mapping[str, Any], gdir: Path) -> Group:
    """Build the group from the copy kept in ``definition.json`` (its file is gone)."""
    from pytest_skill_eval.definitions.loading import group_from_document

    doc = stored.get("definition")
    shown = f"{gdir / 'definition.json'} (stored copy of {stored.get('path')})"
    if not isinstance(doc, dict):
        raise _Unreadable(f"{gdir / 'definition.json'}: expected a stored group definition object under \"definition\"")
    problems = check_group_document(doc)
    if problems:
        raise DefinitionError(shown, problems)
    return group_from_document(Path(str(stored.get("path") or gdir / "definition.json")), doc)


def _current_group(gdir: Path, roots: Sequence[Path], result_dir: Path) -> tuple[Group, str]:
    shown = (gdir / "definition.json").relative_to(result_dir).as_posix()
    stored, problems = readback.read_checked(gdir / "definition.json", readback.DEFINITION, shown)
    recorded = stored.get("path") if isinstance(stored, dict) else None
    if isinstance(recorded, str) and Path(recorded).is_file():
        return load_group(Path(recorded), _root_for(Path(recorded), roots)), f"current file {recorded}"
    if problems or not isinstance(stored, dict):
        raise _Unreadable("; ".join(problems) or f"{shown}: expected a JSON object, found none")
    group = _stored_group(stored, gdir)
    missing = f"{recorded} no longer exists" if isinstance(recorded, str) else "no path was recorded"
    return group, f"stored copy in definition.json ({missing})"


def _run_problems(gdir: Path, result_dir: Path) -> list[str]:
    """What is not as expected in the group's run files (grading then records a grade-error)."""
    problems: list[str] = []
    for name in VARIANTS:
        for file, shape in (("run.json", readback.RUN), ("transcript.json", readback.TRANSCRIPT)):
            path = gdir / name / file
            problems += readback.read_checked(path, shape, path.relative_to(result_dir).as_posix())[1]
    return problems


def _stamp(now: datetime, dirs: Sequence[Path]) -> str:
    """A timestamp no group directory uses yet, so no earlier regrade is overwritten."""
    base = now.strftime("%Y%m%d%H%M%S")
    stamp, n = base, 1
    while any((d / f"grade-regraded-{stamp}.json").exists() for d in dirs):
        n += 1
        stamp = f"{base}-{n}"
    return stamp


def regrade_result(target: str, cwd: Path, *, now: Clock = lambda: datetime.now(UTC)) -> str:
    """Re-grade the stored result *target* and return the text summary (see :func:`regrade`)."""
    return regrade(target, cwd, now=now)[0]


def regrade(target: str, cwd: Path, *, now: Clock = lambda: datetime.now(UTC)) -> tuple[str, bool]:
    """Re-grade the stored result *target* (result id or directory) and summarise.

    Returns the summary and whether any new grade is a ``grade-error`` or some evidence
    file was not what regrade expects (the command's exit status, as for a run).

    A group whose ``definition.json`` is not what regrade expects is not regraded; the
    other groups are. Run files that are not as expected are named, and grading records
    the grade-error a run would. A ``grade.json`` that is not a grade is named and the new
    grade is written without a comparison.

    Writes ``groups/NNN-<id>/grade-regraded-<timestamp>.json`` per group and returns a
    text summary: per-group transitions and whether the new grade differs from
    ``grade.json``. Raises EvidenceError or DefinitionError before writing anything.
    """
    result_dir = resolve_result(target, cwd)
    dirs = group_dirs(result_dir)
    planned: list[tuple[Path, Group | None, str, dict[str, Any] | None, list[str]]] = []
    for gdir in dirs:
        if not (gdir / "definition.json").is_file():
            planned.append((gdir, None, "no definition.json: the group never started", None, []))
            continue
        try:
            group, origin = _current_group(gdir, definition_roots(result_dir, gdir, cwd), result_dir)
        except _Unreadable as exc:
            planned.append((gdir, None, "its definition.json is not what regrade expects", None, [str(exc)]))
            continue
        expected_id = gdir.name.split("-", 1)[1]
        if group.id != expected_id:
            raise EvidenceError(
                f"{gdir}: the definition ({origin}) now declares group {group.id!r}, "
                f"but this result holds group {expected_id!r}; regrade needs the same group"
            )
        planned.append((gdir, group, origin, grade_persisted(group, gdir).to_json(), _run_problems(gdir, result_dir)))

    stamp = _stamp(now(), dirs)
    outcomes: list[GroupRegrade] = []
    for gdir, chosen, origin, new, problems in planned:
        group_id = chosen.id if chosen is not None else gdir.name.split("-", 1)[-1]
        if chosen is None or new is None:
            outcomes.append(GroupRegrade(gdir.name, group_id, origin, None, None, None, False, skipped=origin,
                                         problems=tuple(problems)))
            continue
        data = store.dump_json(new)
        out = gdir / f"grade-regraded-{stamp}.json"
        store.write_atomic(out, data)
        stored_path = gdir / "grade.json"
        stored_bytes = stored_path.read_bytes() if stored_path.is_file() else None
        stored, stored_problems = readback.read_checked(stored_path, readback.GRADE,
                                                        stored_path.relative_to(result_dir).as_posix())
        problems += stored_problems
        outcomes.append(
            GroupRegrade(
                gdir.name, group_id, origin, out.relative_to(result_dir).as_posix(),
                None if stored_problems else stored, new, stored_bytes == data,
                problems=tuple(problems), stored_unusable=bool(stored_problems),
            )
        )
    errored = any(o.new is not None and o.new.get("state") == "grade-error" for o in outcomes)
    return render_regrade(str(result_dir), outcomes), errored or any(o.problems for o in outcomes)


# --------------------------------------------------------------------------- summary (pure)


def describe_changes(stored: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What changed from the *stored* grade to the *new* one, one line per change."""
    lines: list[str] = []
    if stored.get("state") != new.get("state"):
        lines.append(f"grade state: {stored.get('state')} -> {new.get('state')}")
    old_exp = {e.get("id"): e for e in stored.get("expectations", [])}
    new_exp = {e.get("id"): e for e in new.get("expectations", [])}
    for ident, item in new_exp.items():
        before = old_exp.get(ident)
        if before is None:
            lines.append(f"expectation {ident}: new, {item.get('status')}")
        elif before.get("status") != item.get("status"):
            lines.append(f"expectation {ident}: {before.get('status')} -> {item.get('status')}")
        elif before != item:
            lines.append(f"expectation {ident}: still {item.get('status')}, wording or locations changed")
    lines += [f"expectation {ident}: removed (was {item.get('status')})" for ident, item in old_exp.items() if ident not in new_exp]
    old_cmp = {c.get("id"): c for c in stored.get("comparisons", [])}
    new_cmp = {c.get("id"): c for c in new.get("comparisons", [])}
    for ident, item in new_cmp.items():
        before = old_cmp.get(ident)
        if before is None:
            lines.append(f"comparison {ident}: new, {item.get('transition')}")
        elif before.get("transition") != item.get("transition"):
            lines.append(f"comparison {ident}: {before.get('transition')} -> {item.get('transition')}")
    lines += [f"comparison {ident}: removed (was {item.get('transition')})" for ident, item in old_cmp.items() if ident not in new_cmp]
    old_errors, new_errors = stored.get("errors", []), new.get("errors", [])
    if old_errors != new_errors:
        lines.append(f"grade errors: {len(old_errors)} -> {len(new_errors)}")
    if not lines and stored != new:
        lines.append("same verdicts; the file differs only in order or formatting")
    return lines


def render_regrade(result_path: str, groups: Sequence[GroupRegrade]) -> str:
    """The regrade summary: per group its definition origin, new file, transitions, changes."""
    from pytest_skill_eval.render.text import escape_path, neutralise

    changed = sum(1 for g in groups if g.skipped is None and not g.identical)
    lines = [f"result    {escape_path(result_path)}"]
    regraded = [g for g in groups if g.skipped is None]
    lines.append(f"regraded  {len(regraded)} of {len(groups)} groups, {changed} differ from grade.json")
    for group in groups:
        index = group.dir.split("-", 1)[0].lstrip("0") or "0"
        lines.append("")
        problems = [f"  problem    {escape_path(p)}" for p in group.problems]
        if group.skipped is not None:
            lines.append(f"== group {index} {group.group_id}: not regraded ({group.skipped})")
            lines += problems
            continue
        new = group.new or {}
        if group.stored_unusable:
            verdict = "not compared with grade.json (it is not what regrade expects)"
        elif group.stored is None:
            verdict = "new grade (there was no grade.json to compare with)"
        elif group.identical:
            verdict = "identical to grade.json"
        else:
            verdict = "differs from grade.json"
        lines.append(f"== group {index} {group.group_id}: {new.get('state')}, {verdict}")
        lines += problems
        lines.append(f"  definition {escape_path(group.origin)}")
        lines.append(f"  wrote      {escape_path(group.file or '')}")
        for comparison in new.get("comparisons", []):
            lines.append(f"  comparison {comparison.get('id')}: {comparison.get('transition')}")
        for error in new.get("errors", []):
            owner = f" {error.get('owner')}" if error.get("owner") else ""
            lines.append(f"  grade error {error.get('scope')}{owner}: {escape_path(str(error.get('message')))}")
        if group.stored is not None and not group.identical:
            lines += [f"  changed    {line}" for line in describe_changes(group.stored, new)]
    return neutralise("\n".join(lines))
