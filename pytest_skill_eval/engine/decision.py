"""The result's decision, read from the groups it persisted (the write boundary of ``result.json``).

Each graded group's comparisons become cases through :mod:`pytest_skill_eval.decision_cases`
(a single run from ``grade.json``, trials from each trial's grade in trial order), the
decision core decides the suite and every comparison, and the record goes into
``result.json``. A group that never started, or whose definition did not load, has no
comparisons to count; a group with a variant not selected compared nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pytest_skill_eval.decision import DecisionRules, decide
from pytest_skill_eval.decision_cases import (
    GroupCases,
    case_id,
    grade_cases,
    lost_trial_runs,
    planned_trials,
    split_case_id,
    trial_cases,
)
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import layout, records
from pytest_skill_eval.evidence.decision_records import DecisionRecord
from pytest_skill_eval.evidence.reader import parse_grade, read_group, read_group_grade, read_json
from pytest_skill_eval.evidence.records import GroupRecord, ResultGroup
from pytest_skill_eval.evidence.stop_records import StoppingRecord, read_stopping
from pytest_skill_eval.grading.aggregate import TrialGrade
from pytest_skill_eval.grading.results import GroupGrade

__all__ = ["group_cases", "result_decision", "stored_stopping"]


def group_cases(gdir: Path) -> GroupCases | None:
    """The cases of the group persisted in *gdir*; None when it has no graded comparisons to give."""
    record_file = layout.group_record_file(gdir)
    if record_file is None:
        return None
    group = read_group(record_file)
    if not isinstance(group, GroupRecord):
        return None  # its definition did not load: no comparison is known
    selected: list[str] = [name for name, v in group.variants.items() if v.state != "not-selected"]
    states: dict[str, str] = {name: v.state for name, v in group.variants.items()}
    grade_file = records.grade_file(gdir, group)
    if not grade_file.is_file():
        return None
    if group.trials is None and len(selected) < len(group.variants):
        return GroupCases(group.id, group.position, (), {})
    grade = read_group_grade(gdir, group)  # the record names the document: a grade, or the aggregate over trials
    if not isinstance(grade, TrialGrade):
        return GroupCases(group.id, group.position, grade_cases(group.id, grade),
                          {name: int(states[name] != "complete") for name in selected})
    aggregate = grade
    planned = planned_trials(aggregate, stored_stopping(gdir))
    lost = lost_trial_runs(aggregate, selected, planned)
    if len(selected) < len(group.variants):
        return GroupCases(group.id, group.position, (), lost)
    trials: dict[int, GroupGrade | None] = {}
    for n in range(1, planned + 1):
        tdir = layout.trial_dir(gdir, n)
        if not tdir.is_dir():
            continue
        try:
            path = layout.trial_grade_file(tdir)
            trials[n] = parse_grade(read_json(path), path)
        except (OSError, EvidenceError):
            trials[n] = None  # an unreadable trial grade is a missing trial, never a failure
    return GroupCases(group.id, group.position, trial_cases(group.id, aggregate, trials, planned), lost)


def stored_stopping(gdir: Path) -> StoppingRecord | None:
    """The group's ``stopping.json``; an unreadable one counts as none (every planned trial)."""
    try:
        return read_stopping(gdir)
    except (OSError, EvidenceError):
        return None


def result_decision(result_dir: Path, groups: Sequence[ResultGroup], rules: DecisionRules, *,
                    aa: bool = False) -> DecisionRecord:
    """The decision over the comparisons of the result's graded *groups*."""
    found: list[GroupCases] = []
    for g in groups:
        if g.dir is None or g.grade_state is None:
            continue
        try:
            cases = group_cases(result_dir / "groups" / g.dir)
        except (OSError, EvidenceError):
            cases = None  # result.json must still be written; the group's own record says what broke
        if cases is not None:
            found.append(cases)
    counts = Counter(g.group_id for g in found)
    for i, one in enumerate(found):
        if counts[one.group_id] > 1:  # the same group id in two declared suites: told apart by position
            name = f"{one.group_id}#{one.position}"
            found[i] = GroupCases(name, one.position, tuple(replace(c, id=case_id(name, split_case_id(c.id)[1]))
                                                            for c in one.cases), one.lost_runs)
    suite = decide([c for g in found for c in g.cases], rules)
    positions = {one.group_id: one.position for one in found}
    lost = sum(n for one in found if one.cases for n in one.lost_runs.values())
    return DecisionRecord.of(suite, positions, lost_runs=lost, aa=aa)
