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
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pytest_skill_eval.definitions.loading import load_group
from pytest_skill_eval.definitions.model import VARIANTS, Group
from pytest_skill_eval.definitions.rules import check_group_document
from pytest_skill_eval.engine.group import grade_persisted
from pytest_skill_eval.errors import DefinitionError, EvidenceError
from pytest_skill_eval.evidence import layout, safe_io, store
from pytest_skill_eval.evidence.layout import group_dirs
from pytest_skill_eval.evidence.locate import resolve_result
from pytest_skill_eval.evidence.reader import (
    definition_record,
    parse_grade,
    read_checked,
    run_record,
    transcript_record,
)
from pytest_skill_eval.evidence.records import DefinitionRecord, GroupRecord, parse_group
from pytest_skill_eval.grading.aggregate import Trial, aggregate
from pytest_skill_eval.grading.results import GroupGrade
from pytest_skill_eval.render.regrade import GroupRegrade, render_regrade
from pytest_skill_eval.trial_policy import comparison_text

__all__ = [
    "definition_roots",
    "regrade",
]

Clock = Callable[[], datetime]


def definition_roots(result_dir: Path, cwd: Path) -> list[Path]:
    """The definition roots regrade trusts: the result's own ``<root>/.skill-eval/runs/<id>``
    layout, then *cwd* (the directory the user ran it from).

    A root a record names (``run.json`` ``source.root``) is never one: a stored result is
    untrusted input (docs/security.md), and a root taken from it would let the result choose
    which file on the machine regrade loads as a definition.
    """
    roots: list[Path] = []
    runs = result_dir.parent
    if runs.name == layout.RUNS_DIR.name and runs.parent.name == layout.RUNS_DIR.parent.name:
        roots.append(runs.parent.parent)
    roots.append(cwd)
    return list(dict.fromkeys(roots))


def _root_for(path: Path, roots: Sequence[Path]) -> Path | None:
    real = Path(os.path.realpath(path))
    for root in roots:
        if root.is_dir() and real.is_relative_to(os.path.realpath(root)):
            return root
    return None


class _UnreadableGroupError(EvidenceError):
    """A file of the group's evidence is not what regrade expects: that group is skipped."""


def _stored_group(stored: DefinitionRecord, gdir: Path) -> Group:
    """Build the group from the copy kept in ``definition.json`` (its file is gone)."""
    from pytest_skill_eval.definitions.loading import group_from_document

    doc = dict(stored.definition)
    problems = check_group_document(doc)
    if problems:
        raise DefinitionError(f"{gdir / 'definition.json'} (stored copy of {stored.path})", problems)
    return group_from_document(Path(stored.path or gdir / "definition.json"), doc)


def _current_group(gdir: Path, roots: Sequence[Path], result_dir: Path) -> tuple[Group, str]:
    shown = (gdir / "definition.json").relative_to(result_dir).as_posix()
    stored, problems = read_checked(gdir / "definition.json", definition_record, shown, root=result_dir)
    if stored is None:
        raise _UnreadableGroupError("; ".join(problems) or f"{shown}: expected a JSON object, found none")
    recorded = stored.path
    root = _root_for(Path(recorded), roots)
    if root is None:
        tried = ", ".join(str(r) for r in roots)
        why = f"{recorded} is outside the definition roots regrade trusts ({tried}); run regrade from the definition root"
    elif Path(recorded).is_file():
        return load_group(Path(recorded), root), f"current file {recorded}"
    else:
        why = f"{recorded} no longer exists"
    return _stored_group(stored, gdir), f"stored copy in definition.json ({why})"


def _run_problems(gdir: Path, result_dir: Path) -> list[str]:
    """What is not as expected in the group's run files (grading then records a grade-error)."""
    problems: list[str] = []
    for name in VARIANTS:
        run = gdir / name / "run.json"
        problems += read_checked(run, run_record, run.relative_to(result_dir).as_posix(), root=result_dir)[1]
        transcript = gdir / name / "transcript.json"
        problems += read_checked(transcript, transcript_record, transcript.relative_to(result_dir).as_posix(),
                                 root=result_dir)[1]
    return list(dict.fromkeys(problems))  # a linked directory is named once, not per file in it


def _stored_bytes(path: Path, result_dir: Path) -> bytes | None:
    """The bytes of the stored file *path* to compare a new grade with; None when it is not
    one regular file (its reader names why)."""
    try:
        return safe_io.read_bytes(path, result_dir)
    except (OSError, EvidenceError):
        return None


def _stamp(now: datetime, dirs: Sequence[Path]) -> str:
    """A timestamp no group directory uses yet, so no earlier regrade is overwritten."""
    base = now.strftime("%Y%m%d%H%M%S")
    stamp, n = base, 1
    while any((d / f"grade-regraded-{stamp}.json").exists() for d in dirs):
        n += 1
        stamp = f"{base}-{n}"
    return stamp


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
    planned: list[tuple[Path, Group | None, str, GroupGrade | None, list[str]]] = []
    with_trials: dict[Path, tuple[Group, str, int]] = {}
    for gdir in dirs:
        if safe_io.entry_kind(gdir / "definition.json", result_dir) is None:
            planned.append((gdir, None, "no definition.json: the group never started", None, []))
            continue
        try:
            group, origin = _current_group(gdir, definition_roots(result_dir, cwd), result_dir)
        except _UnreadableGroupError as exc:
            planned.append((gdir, None, "its definition.json is not what regrade expects", None, [str(exc)]))
            continue
        except EvidenceError as exc:
            # the roots come from run.json: when that is not a run record, say so, located
            unreadable = _run_problems(gdir, result_dir)
            if not unreadable:
                raise
            planned.append((gdir, None, "its run.json is not what regrade expects", None, [*unreadable, str(exc)]))
            continue
        expected_id = gdir.name.split("-", 1)[1]
        if group.id != expected_id:
            raise EvidenceError(
                f"{gdir}: the definition ({origin}) now declares group {group.id!r}, "
                f"but this result holds group {expected_id!r}; regrade needs the same group"
            )
        record, _problems = read_checked(gdir / layout.GROUP_FILE, parse_group, root=result_dir)
        if isinstance(record, GroupRecord) and record.trials is not None:
            with_trials[gdir] = (group, origin, record.trials.planned)
            continue
        planned.append((gdir, group, origin, grade_persisted(group, gdir, result_dir), _run_problems(gdir, result_dir)))

    stamp = _stamp(now(), [*dirs, *(t for gdir in with_trials for t in layout.trial_dirs(gdir))])
    outcomes: list[GroupRegrade] = [_regrade_trials(gdir, *with_trials[gdir], stamp, result_dir) for gdir in with_trials]
    for gdir, chosen, origin, new, problems in planned:
        group_id = chosen.id if chosen is not None else gdir.name.split("-", 1)[-1]
        if chosen is None or new is None:
            outcomes.append(GroupRegrade(gdir.name, group_id, origin, None, None, None, False, skipped=origin,
                                         problems=tuple(problems)))
            continue
        data = store.dump_json(new.to_json())
        out = layout.inside(result_dir, ("groups", gdir.name, f"grade-regraded-{stamp}.json"))
        store.write_atomic(out, data)
        stored_path = gdir / "grade.json"
        stored_bytes = _stored_bytes(stored_path, result_dir)
        stored, stored_problems = read_checked(stored_path, parse_grade, stored_path.relative_to(result_dir).as_posix(),
                                               root=result_dir)
        problems += stored_problems
        outcomes.append(
            GroupRegrade(
                gdir.name, group_id, origin, out.relative_to(result_dir).as_posix(),
                None if stored_problems else stored, new, stored_bytes == data,
                problems=tuple(problems), stored_unusable=bool(stored_problems),
            )
        )
    outcomes.sort(key=lambda o: layout.group_position(o.dir))
    errored = any((o.new is not None and o.new.state == "grade-error") or o.aggregate_state == "grade-error"
                  for o in outcomes)
    return render_regrade(str(result_dir), outcomes), errored or any(o.problems for o in outcomes)


def _regrade_trials(gdir: Path, group: Group, origin: str, planned: int, stamp: str, result_dir: Path) -> GroupRegrade:
    """Re-grade every trial of a group (``trials/NNN/grade-regraded-<stamp>.json``) and their
    aggregate (``aggregate-regraded-<stamp>.json``), each compared with what the run wrote."""
    trials: list[Trial] = []
    lines: list[str] = []
    problems: list[str] = []
    for tdir in layout.trial_dirs(gdir):
        new = grade_persisted(group, tdir, result_dir)
        data = store.dump_json(new.to_json())
        store.write_atomic(layout.inside(result_dir, ("groups", gdir.name, layout.TRIALS_DIR, tdir.name,
                                                      f"grade-regraded-{stamp}.json")), data)
        stored = tdir / layout.GRADE_FILE
        if _stored_bytes(stored, result_dir) != data:
            lines.append(f"trial {int(tdir.name)}: {new.state}, differs from its grade.json")
        runs: dict[str, str] = {}
        for name in VARIANTS:
            run, found = read_checked(tdir / name / "run.json", run_record,
                                      (tdir / name / "run.json").relative_to(result_dir).as_posix(), root=result_dir)
            problems += found
            if run is not None:
                runs[name] = run.state
        trials.append(Trial(int(tdir.name), new, runs))
    combined = aggregate(group.id, planned, trials)
    data = store.dump_json(combined.to_json())
    out = layout.inside(result_dir, ("groups", gdir.name, f"aggregate-regraded-{stamp}.json"))
    store.write_atomic(out, data)
    identical = _stored_bytes(gdir / layout.AGGREGATE_FILE, result_dir) == data
    lines.insert(0, f"trials     {len(trials)} regraded, {len(lines)} differ from their grade.json")
    lines += [f"comparison {c.id}: {comparison_text(c)}" for c in combined.comparisons]
    return GroupRegrade(gdir.name, group.id, origin, out.relative_to(result_dir).as_posix(), None, None, identical,
                        problems=tuple(problems), aggregate_state=combined.state, trial_lines=tuple(lines))
