"""Judging one persisted group: the verdict a pytest item reports, from its evidence alone.

The plugin judges each group as it finishes; ``skill-eval merge`` judges a merged result's
groups the same way to exit as the single run would have.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from pytest_skill_eval.decision import DecisionRules
from pytest_skill_eval.definitions.model import VARIANTS
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import layout
from pytest_skill_eval.policy import FailOn, Judgement, judge, stand_in_notes


def judge_group_dir(group_dir: Path, *, fail_on: FailOn, pass_rate: float, alpha: float, result_id: str,
                    rules: DecisionRules | None = None, family: int = 0, require_power: bool = False) -> Judgement:
    """The verdict on the group persisted in *group_dir*, over the grade document its record
    names (a single run's ``grade.json`` or its trials' ``aggregate.json``); EvidenceError when
    it has no group record.

    A group with trials gets each comparison's decision under *rules* (default: the decision
    core's, at *alpha*), bounded over the *family* of comparisons the run selected (at least
    the group's own): see :func:`~pytest_skill_eval.decision_cases.comparison_bound`; and what
    its stop rule saw (``stopping.json``), if one was in force.
    """
    record_file = layout.group_record_file(group_dir)
    if record_file is None:
        raise EvidenceError(f"no group record was persisted in {group_dir} (neither group.json nor group-fallback.json)")
    # evidence and grading modules are imported when a group is judged, not at pytest start-up
    from pytest_skill_eval.evidence import records
    from pytest_skill_eval.evidence.reader import read_group, read_group_grade, read_optional
    from pytest_skill_eval.evidence.records import GroupRecord, RunRecord, TranscriptRecord
    from pytest_skill_eval.grading.results import GradeError, GroupGrade

    group = read_group(record_file)
    grade_file = records.grade_file(group_dir, group)
    # a single run's missing grade is a grade-error; a missing aggregate one of the record's file
    over_trials = isinstance(group, GroupRecord) and group.trials is not None
    grade = read_group_grade(group_dir, group) if over_trials or grade_file.is_file() else GroupGrade(
        str(group.id), "grade-error", errors=(GradeError("system", None, None, f"no grade was persisted at {grade_file}"),))
    stopping = None
    if over_trials:
        from pytest_skill_eval.evidence.stop_records import read_stopping

        stopping = read_stopping(group_dir)
    notes: list[tuple[str, int, str]] = []
    for name in VARIANTS:
        # only adds to the failure text: a run file it cannot read is no reason to fail the judging
        # (a group with trials has none here: its runs are in trials/NNN/)
        run = read_optional(RunRecord, group_dir / name / "run.json")
        transcript = read_optional(TranscriptRecord, group_dir / name / "transcript.json")
        notes += stand_in_notes(name, run, transcript)
    from pytest_skill_eval.decision_cases import decided

    verdict = judge(group, grade, group_dir=str(group_dir), fail_on=fail_on, result_id=result_id, notes=notes,
                    pass_rate=pass_rate, alpha=alpha, stopping=stopping)
    return decided(verdict, rules or DecisionRules(alpha=alpha), family, require_power=require_power)


def identical_inputs_advice(group_dir: Path) -> str | None:
    """What to do when the group's two variants got byte-identical skills and context (from their
    recorded fingerprints and declared targets), else None: nothing a comparison shows can mean a change.

    A group with trials is judged by its first trial (every trial snapshots the same sources).
    """
    try:
        return _identical_inputs_advice(group_dir)
    except (EvidenceError, OSError, ValueError):  # an unreadable file only loses the warning
        return None


def _identical_inputs_advice(group_dir: Path) -> str | None:
    from pytest_skill_eval.evidence.reader import read_optional
    from pytest_skill_eval.evidence.records import DefinitionRecord, FingerprintsRecord
    from pytest_skill_eval.sameness import identical_advice, identical_inputs

    definition = read_optional(DefinitionRecord, group_dir / "definition.json")
    runs = group_dir if (group_dir / VARIANTS[0]).is_dir() else layout.trial_dir(group_dir, 1)
    prints = {name: read_optional(FingerprintsRecord, runs / name / "fingerprints.json") for name in VARIANTS}
    declared = definition.definition.get("variants") if definition is not None else None
    if not isinstance(declared, dict) or any(p is None for p in prints.values()):
        return None
    sides = {name: declared.get(name) for name in VARIANTS}
    if not all(isinstance(side, dict) and isinstance(side.get("source"), dict) for side in sides.values()):
        return None
    baseline, candidate = cast("dict[str, Any]", sides["baseline"]), cast("dict[str, Any]", sides["candidate"])
    before = {name: record.before for name, record in prints.items() if record is not None}
    if not identical_inputs(before["baseline"], before["candidate"], baseline.get("target"), candidate.get("target")):
        return None
    return identical_advice(str(baseline["source"].get("kind")), baseline["source"].get("ref"),
                            str(candidate["source"].get("kind")))
