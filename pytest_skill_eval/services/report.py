"""``skill-eval report``: the self-contained HTML report of a stored result.

Reads the evidence through its records (:mod:`..evidence.records`, ``GroupGrade``), builds
the diffs, and hands everything to the pure renderer :mod:`..render.html`. The page is
written atomically to ``<result>/report.html`` and, with ``-o``, to another file too.

The evidence keeps skills and context items as fingerprints only. For the "what differs
between the two targets" section, each differing file is materialised again **now** from
the variant's recorded source (the working tree under ``source.root``, or the exact Git
commit ``source.commit``) with the run's own snapshot code, and shown only when its
sha256 still equals the fingerprint recorded at run time; the page says so.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from pytest_skill_eval import __version__
from pytest_skill_eval.engine.verdict import identical_inputs_advice
from pytest_skill_eval.errors import EvidenceError, SkillEvalError
from pytest_skill_eval.evidence import layout, records, safe_io, store, trees
from pytest_skill_eval.evidence.locate import regrade_files, regrade_time, resolve_result
from pytest_skill_eval.evidence.reader import load_tree, parse_aggregate, parse_grade, read_checked
from pytest_skill_eval.evidence.reuse_records import parse_reuse, reuse_text
from pytest_skill_eval.evidence.stop_records import StoppingRecord, parse_stopping
from pytest_skill_eval.grading.aggregate import TrialGrade
from pytest_skill_eval.grading.results import GroupGrade
from pytest_skill_eval.paths import shown
from pytest_skill_eval.render.diffs import FileDiff, diff_files, diff_trees
from pytest_skill_eval.render.html import (
    STDERR_SHOWN,
    Report,
    ReportGroup,
    ReportVariant,
    ResourceFile,
    assistant_steps,
    render_report,
)
from pytest_skill_eval.safe_text import escape_path
from pytest_skill_eval.sameness import resource_key

#: the report's name inside the result directory
REPORT_FILE = "report.html"

_VARIANTS = ("baseline", "candidate")



def _read(kind: type[records.Record], path: Path, result_dir: Path, problems: list[str]) -> Any:
    """The record at *path*, None when absent; a file that is not one becomes a problem."""
    value, found = read_checked(path, lambda data, shown: records.parse(kind, data, shown), shown(path, result_dir),
                                root=result_dir)
    problems += found
    return value


def _read_grade(path: Path, result_dir: Path, problems: list[str]) -> GroupGrade | None:
    value, found = read_checked(path, parse_grade, shown(path, result_dir), root=result_dir)
    problems += found
    return value


def _newest_grade(gdir: Path, grade_path: Path, result_dir: Path,
                  problems: list[str]) -> tuple[GroupGrade | None, str | None]:
    """The newest regrade that reads (and a note saying so), else the run's own grade."""
    for path in regrade_files(gdir):
        grade = _read_grade(path, result_dir, problems)
        if grade is not None:
            original = _read_grade(grade_path, result_dir, [])
            note = (f"regraded {regrade_time(path)} by skill-eval regrade, {shown(path, result_dir)}; "
                    f"the run's own grade: {original.state if original else 'none'}")
            return grade, note
    return _read_grade(grade_path, result_dir, problems), None


def _variant(gdir: Path, name: str, declared: Mapping[str, Any], result_dir: Path) -> ReportVariant:
    run_dir = gdir / name
    problems: list[str] = []
    run = _read(records.RunRecord, run_dir / "run.json", result_dir, problems)
    transcript = _read(records.TranscriptRecord, run_dir / "transcript.json", result_dir, problems)
    final_response = _text(run_dir / "final-response.txt", result_dir, problems)
    workspace: tuple[FileDiff, ...] = ()
    turn_workspaces: dict[int, tuple[FileDiff, ...]] = {}
    try:
        initial = load_tree(run_dir / "workspace-initial", result_dir)
        if safe_io.entry_kind(run_dir / "workspace", result_dir) is not None:
            workspace = diff_trees(initial, load_tree(run_dir / "workspace", result_dir))
        for entry, _kind in safe_io.list_dir(run_dir / "turns", result_dir):
            turn = run_dir / "turns" / entry
            if entry.isascii() and entry.isdigit() and safe_io.entry_kind(turn / "workspace", result_dir) is not None:
                turn_workspaces[int(entry)] = diff_trees(initial, load_tree(turn / "workspace", result_dir))
    except (EvidenceError, OSError) as exc:  # a linked tree, a manifest key that leaves it
        problems += str(exc).split("\n")
    stderr, stderr_size = None, 0
    text = _text(run_dir / "stderr.txt", result_dir, problems)
    if text is not None:
        stderr, stderr_size = (text[-STDERR_SHOWN:] or None), len(text)
    observed = _read(records.ContextObservations, run_dir / "context-observations.json", result_dir, problems)
    steps = {}
    events = _text(run_dir / "events.jsonl", result_dir, problems)
    if transcript is not None and events is not None:
        ranges = {t.turn.index: t.events for t in transcript.turns}
        steps = assistant_steps(events.split("\n"), ranges)
    return ReportVariant(name=name, dir=shown(run_dir, result_dir), run=run, transcript=transcript,
                         final_response=final_response, declared=declared, workspace=workspace, turn_workspaces=turn_workspaces, steps=steps, stderr=stderr, stderr_size=stderr_size,
                         context_requests=observed.requests if observed is not None else (),
                         problems=tuple(problems))


def _text(path: Path, result_dir: Path, problems: list[str]) -> str | None:
    """A text file of the run (final response, stderr, events), None when absent; read as
    :mod:`..evidence.safe_io` reads a stored result (a link or special file is a problem)."""
    try:
        return safe_io.read_bytes(path, result_dir).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except (EvidenceError, OSError) as exc:
        problems.append(str(exc))
        return None


def _fingerprints(run_dir: Path, result_dir: Path, problems: list[str]) -> dict[str, dict[str, str]]:
    """``{resource key: {file: sha256}}`` recorded before the run (keys like ``skills/0/rollback``)."""
    path = run_dir / "fingerprints.json"
    if safe_io.entry_kind(path, result_dir) is None:
        return {}
    record = _read(records.FingerprintsRecord, path, result_dir, problems)
    if record is None:
        return {}
    return {resource_key(k): dict(v) for k, v in record.before.items()}


def _declared_path(declared: Mapping[str, Any], key: str) -> str | None:
    """The definition's path for a resource key ``skills/<i>/<name>`` or ``context/<i>/<name>``."""
    parts = key.split("/")
    if len(parts) < 2 or parts[0] not in ("skills", "context") or not parts[1].isdigit():
        return None
    items = declared.get(parts[0]) or []
    index = int(parts[1])
    return str(items[index]) if isinstance(items, list) and index < len(items) else None


def home_root(result_dir: Path) -> Path | None:
    """The definition root *result_dir* is stored under (``<root>/.skill-eval/runs/<id>``), else None."""
    runs = result_dir.parent
    if runs.name == layout.RUNS_DIR.name and runs.parent.name == layout.RUNS_DIR.parent.name:
        return runs.parent.parent
    return None


def _materialise(run: records.RunRecord | None, rel: str, dest: Path, result_dir: Path) -> str:
    """Copy the variant's declared path *rel* from its recorded source into *dest*; says from where.

    Only from the definition root the result is stored under: a stored result is untrusted
    input, so the root its ``run.json`` names is never read (nor handed to Git) otherwise.
    """
    from pytest_skill_eval.sources.snapshots import GitSource, copy_working_tree

    if run is None or run.source is None:
        raise SkillEvalError("the run recorded no source")
    root = Path(run.source.root)
    home = home_root(result_dir)
    if home is None or os.path.realpath(root) != os.path.realpath(home):
        raise SkillEvalError(f"the recorded source {escape_path(str(root))} is not the definition root this result "
                             "is stored under, and the report reads nothing outside the result and that root")
    if run.source.kind == "git":
        if not run.source.commit:
            raise SkillEvalError("the run recorded no commit")
        GitSource(root, run.source.commit).copy(rel, dest)
        return f"commit {run.source.commit[:12]} of the repository at {root}"
    copy_working_tree(root, rel, dest)
    return f"the working tree {root}"


def _now_contents(variant: ReportVariant, key: str, expected: Mapping[str, str],
                  scratch: Path, result_dir: Path) -> tuple[dict[str, bytes] | None, str]:
    """The resource's files read now, when they still match the recorded fingerprints."""
    rel = _declared_path(variant.declared, key)
    if rel is None:
        return None, f"{variant.name}: the definition does not declare {key}"
    dest = scratch / variant.name / key
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        where = _materialise(variant.run, rel, dest, result_dir)
    except (SkillEvalError, OSError) as exc:
        return None, f"{variant.name}: {rel} cannot be read now ({exc})"
    now = trees.fingerprint_tree(dest)
    if dict(now) != dict(expected):
        return None, (f"{variant.name}: {rel} in {where} has changed since the run (its fingerprints differ), "
                      "so its contents are not shown")
    files = {".": dest.read_bytes()} if dest.is_file() else trees.read_files(dest)
    return files, f"{variant.name}: {rel} read now from {where}"


def _resources(gdir: Path, variants: tuple[ReportVariant, ...], result_dir: Path,
               problems: list[str]) -> tuple[ResourceFile, ...]:
    by_name = {v.name: v for v in variants}
    prints = {name: _fingerprints(gdir / name, result_dir, problems) for name in _VARIANTS}
    keys = sorted(set(prints["baseline"]) | set(prints["candidate"]),
                  key=lambda k: (k.split("/")[0] != "skills", k))
    found: list[ResourceFile] = []
    with tempfile.TemporaryDirectory(prefix="skill-eval-report-") as tmp:
        scratch = Path(tmp)
        for key in keys:
            b, c = prints["baseline"].get(key, {}), prints["candidate"].get(key, {})
            contents: dict[str, dict[str, bytes] | None] = {}
            notes: list[str] = []
            if b != c:
                for name in _VARIANTS:
                    variant = by_name.get(name)
                    if key not in prints[name]:
                        contents[name] = {}  # the resource is not declared on this side
                    elif variant is not None:
                        files, said = _now_contents(variant, key, prints[name][key], scratch, result_dir)
                        contents[name] = files
                        notes.append(said)
            readable = all(contents.get(n) is not None for n in _VARIANTS)
            for rel in sorted(set(b) | set(c)):
                diff: FileDiff | None = None
                note: str | None = None
                if b.get(rel) != c.get(rel):
                    if readable:
                        before = cast("dict[str, bytes]", contents["baseline"]).get(rel)
                        after = cast("dict[str, bytes]", contents["candidate"]).get(rel)
                        shown = key if rel == "." else f"{key}/{rel}"
                        diff = diff_files(shown, before, after)
                    note = "; ".join(notes) if notes else None
                found.append(ResourceFile(resource=key, file=rel, baseline=b.get(rel), candidate=c.get(rel),
                                          diff=diff, note=note))
    return tuple(found)


def _trial_view(gdir: Path, number: int, record: records.GroupRecord, definition: records.DefinitionRecord | None,
                result_dir: Path) -> ReportGroup:
    """Trial *number* of a group run with trials, in full: its grade and both runs."""
    problems: list[str] = []
    runs_dir = layout.trial_dir(gdir, number)
    grade, regrade = _newest_grade(runs_dir, layout.trial_grade_file(runs_dir), result_dir, problems)
    declared_all = (definition.definition.get("variants") or {}) if definition is not None else {}
    variants = tuple(
        _variant(runs_dir, name, declared_all.get(name) or {} if isinstance(declared_all, dict) else {}, result_dir)
        for name in _VARIANTS
        if safe_io.entry_kind(runs_dir / name, result_dir) is not None
    )
    return ReportGroup(dir=f"{gdir.name}/{layout.TRIALS_DIR}/{number:03d}", position=layout.group_position(gdir.name),
                       record=record, grade=grade, regrade=regrade, definition=definition, variants=variants,
                       problems=tuple(problems), trial=number)


def _outcome(gdir: Path, summary: records.ResultRecord | None, result_dir: Path) -> str | None:
    """The pytest outcome of the group, judged again from its evidence under the result's recorded
    settings (``provenance``; a result without them is judged under the defaults)."""
    from pytest_skill_eval.decision import DecisionRules
    from pytest_skill_eval.engine.verdict import judge_group_dir
    from pytest_skill_eval.policy import parse_fail_on

    provenance = summary.provenance if summary is not None else None
    decision = summary.decision if summary is not None else None
    # the judging reads below the variants' directories: only real directories of the result
    # (a stored result is untrusted; a linked variant directory could lead out of it)
    if any(safe_io.entry_kind(gdir / name, result_dir) not in (None, safe_io.DIRECTORY) for name in _VARIANTS):
        return None
    try:
        fail_on = parse_fail_on(provenance.fail_on) if provenance is not None else "candidate"
        alpha = provenance.alpha if provenance is not None else 0.05
        rules = DecisionRules(alpha=alpha, min_effect=float(decision.rules["min_effect"]),
                              adjustment=decision.rules["adjustment"]) if decision is not None else None
        verdict = judge_group_dir(gdir, fail_on=fail_on, pass_rate=provenance.pass_rate if provenance else 1.0,
                                  alpha=alpha, result_id=gdir.parent.parent.name, rules=rules,
                                  family=len(decision.comparisons) if decision is not None else 0)
    except (EvidenceError, OSError, ValueError, KeyError, TypeError):
        return None
    return "error" if verdict.error else "failed" if verdict.failing else "passed"


def _group(gdir: Path, result_dir: Path, summary: records.ResultRecord | None = None,
           outcome: str | None = None) -> ReportGroup:
    problems: list[str] = []
    definition = _read(records.DefinitionRecord, gdir / "definition.json", result_dir, problems)
    record_file = layout.group_record_file(gdir)
    record: records.GroupRecord | records.InvalidGroupRecord | None = None
    raw: Mapping[str, Any] = {}
    if record_file is not None:
        try:
            raw = safe_io.read_json(record_file, result_dir)
            record = records.parse_group(raw, shown(record_file, result_dir))
        except (EvidenceError, OSError) as exc:
            problems.append(str(exc))
    trials = record.trials if isinstance(record, records.GroupRecord) else None
    aggregate: TrialGrade | None = None
    stopping: StoppingRecord | None = None
    reuse_path = gdir / layout.REUSE_FILE
    reuse, found_reuse = read_checked(reuse_path, parse_reuse, shown(reuse_path, result_dir), root=result_dir)
    problems += found_reuse
    runs_dir = gdir
    if trials is not None:
        # a group run with trials: the aggregate, and trial 1 in full (the others are in trials/)
        aggregate_path = records.grade_file(gdir, cast(records.GroupRecord, record))
        aggregate, found = read_checked(aggregate_path, parse_aggregate, shown(aggregate_path, result_dir),
                                        root=result_dir)
        problems += found
        stopping_path = gdir / layout.STOPPING_FILE
        stopping, found = read_checked(stopping_path, parse_stopping, shown(stopping_path, result_dir), root=result_dir)
        problems += found
        runs_dir = layout.trial_dir(gdir, 1)
        grade_path = layout.trial_grade_file(runs_dir)
    else:
        grade_path = records.grade_file(gdir, record) if record is not None else gdir / layout.GRADE_FILE
    grade, regrade = _newest_grade(runs_dir, grade_path, result_dir, problems)
    declared_all = (definition.definition.get("variants") or {}) if definition is not None else {}
    variants = tuple(
        _variant(runs_dir, name, declared_all.get(name) or {} if isinstance(declared_all, dict) else {}, result_dir)
        for name in _VARIANTS
        if safe_io.entry_kind(runs_dir / name, result_dir) is not None
    )
    resources = _resources(gdir, variants, result_dir, problems)
    every_trial: tuple[ReportGroup, ...] = ()
    if trials is not None and isinstance(record, records.GroupRecord):
        try:
            numbers = [int(t.name) for t in layout.trial_dirs(gdir)]
        except (EvidenceError, OSError) as exc:
            problems.append(str(exc))
            numbers = []
        every_trial = tuple(_trial_view(gdir, n, record, definition, result_dir) for n in numbers)
    position = layout.group_position(gdir.name)
    decided = tuple(c for c in (summary.decision.comparisons if summary is not None and summary.decision else ())
                    if c.position == position)
    entry = next((e for e in (summary.groups if summary is not None else ()) if e.dir == gdir.name), None)
    lost = sum(entry.lost_runs.values()) if entry is not None and entry.lost_runs else 0
    return ReportGroup(dir=gdir.name, position=position, record=record, grade=grade,
                       regrade=regrade, definition=definition, variants=variants, resources=resources,
                       problems=tuple(problems), aggregate=aggregate, trial=1 if trials is not None else None,
                       # an A/A run gives both arms the same inputs on purpose
                       identical=None if summary is not None and summary.decision is not None and summary.decision.aa
                       else identical_inputs_advice(gdir), trials=every_trial,
                       outcome=outcome or (_outcome(gdir, summary, result_dir) if record is not None else None),
                       decisions=decided, lost_runs=lost, stopping=stopping,
                       reuse=reuse_text(reuse) if reuse is not None else None)


def load_report(result_dir: Path, *, now: datetime | None = None, outcomes: Mapping[int, str] | None = None) -> Report:
    """Everything the HTML report shows of *result_dir*; unreadable files become problems.

    *outcomes*: each group's pytest outcome by position, as the run reported it; a group
    without one is judged again from its evidence under the result's recorded settings.
    """
    problems: list[str] = []
    summary = _read(records.ResultRecord, result_dir / "result.json", result_dir, problems)
    try:
        dirs = layout.group_dirs(result_dir)
    except EvidenceError as exc:
        problems.append(str(exc))
        dirs = []
    known = outcomes or {}
    groups = tuple(_group(gdir, result_dir, summary, known.get(layout.group_position(gdir.name))) for gdir in dirs)
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M:%S UTC")
    return Report(result_id=result_dir.name, path=str(result_dir), summary=summary, groups=groups,
                  generated_at=stamp, version=__version__, problems=tuple(problems))


def write_report(result_dir: Path, output: Path | None = None,
                 outcomes: Mapping[int, str] | None = None) -> tuple[Path, list[str]]:
    """Render *result_dir* into ``<result>/report.html`` (and *output*); atomic writes.

    Returns the path written to (*output* when given) and warnings: each evidence file the
    page names as a problem, and a result directory that cannot take the copy (a read-only
    artifact) when *output* was written.
    """
    loaded = load_report(result_dir, outcomes=outcomes)
    page = render_report(loaded).encode("utf-8")
    # every evidence file the page names as a problem is named on stderr too (CI logs)
    warnings: list[str] = [f"problem: {p}" for p in loaded.problems]
    for group in loaded.groups:
        warnings += [f"problem: {p}" for p in group.problems]
        warnings += [f"problem: {p}" for v in group.variants for p in v.problems]
    inside = result_dir / REPORT_FILE
    if output is None or output.resolve() != inside.resolve():
        try:
            store.write_atomic(inside, page, shared=True)
        except OSError as exc:
            if output is None:
                raise
            warnings.append(f"could not store a copy in the result directory: {inside}: {exc}")
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        store.write_atomic(output, page, shared=True)
    return (output if output is not None else inside), warnings


def report(target: str, cwd: Path, output: Path | None = None) -> tuple[Path, list[str]]:
    """``skill-eval report <target> [-o FILE]``: resolve the result, then :func:`write_report`."""
    result_dir = resolve_result(target, cwd)
    return write_report(result_dir, output)
