"""The batch summary ``result.json``: written last, from the records the groups persisted."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from pytest_skill_eval.decision import DecisionRules
from pytest_skill_eval.decision_cases import lost_trial_runs, planned_trials
from pytest_skill_eval.engine.decision import result_decision, stored_stopping
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import layout, records, store
from pytest_skill_eval.evidence.reader import read_group, read_group_grade, read_group_usage, read_record
from pytest_skill_eval.evidence.records import (
    BatchState,
    DefinitionRecord,
    GroupRecord,
    ProvenanceRecord,
    ResultGroup,
    ResultRecord,
    RunRecord,
    RunState,
    SelectionRecord,
    ShardIndex,
    VariantName,
    VariantUsage,
)
from pytest_skill_eval.grading.aggregate import TrialGrade

if TYPE_CHECKING:
    from pytest_skill_eval.definitions.sharding import Shard

_VARIANTS: tuple[VariantName, VariantName] = ("baseline", "candidate")


def write_batch_summary(result_dir: Path, result_id: str, *, interrupted: bool, stopped: str | None = None,
                        trials: int = 1, seed: str | None = None, shard: Shard | None = None,
                        provenance: ProvenanceRecord | None = None, rules: DecisionRules | None = None,
                        aa: bool = False) -> ResultRecord:
    """Write ``result.json`` (last): one entry per selected group, whether or not it ran.

    The selection comes from ``selection.json``; a selected group with no directory never
    started: ``cancelled`` after Ctrl-C, else ``not-run`` with the reason pytest stopped
    (*stopped*, e.g. ``-x``). Group directories not in the selection are listed too.
    The ``decision`` over the groups' comparisons is made here, under *rules* (defaults:
    docs/statistics.md), from the grades the groups persisted; *aa*: an A/A run.
    """
    selection_file = result_dir / layout.SELECTION_FILE
    selection = (read_record(SelectionRecord, selection_file) if selection_file.is_file()
                 else SelectionRecord(_VARIANTS, ()))
    selected_variants = set(selection.variants)
    on_disk = {d.name: d for d in layout.group_dirs(result_dir)}
    groups: list[ResultGroup] = []
    for planned in selection.groups:
        gdir = on_disk.pop(planned.dir, None)
        if gdir is not None:
            groups.append(_persisted_entry(gdir, interrupted))
            continue
        state: Literal["cancelled", "not-run"] = "cancelled" if interrupted else "not-run"
        reason = ("cancelled before it started" if interrupted
                  else f"not run: pytest stopped early ({stopped})" if stopped
                  else "not run: no process ran it")
        groups.append(ResultGroup(
            dir=None, id=planned.id, position=planned.position, state=state, reason=reason, grade_state=None,
            variants={n: state if n in selected_variants else "not-selected" for n in _VARIANTS},
            comparisons={},
        ))
    groups.extend(_persisted_entry(gdir, interrupted) for gdir in on_disk.values())
    groups.sort(key=lambda g: g.position)
    usage = sum((g.usage for g in groups if g.usage is not None), VariantUsage())
    summary = ResultRecord(result_id, batch_state([g.state for g in groups], interrupted), tuple(groups),
                           trials if trials > 1 else None, seed,
                           ShardIndex(shard.index, shard.count) if shard is not None else None, usage, provenance,
                           result_decision(result_dir, groups, rules or DecisionRules(), aa=aa))
    store.write_record(result_dir / "result.json", summary)
    return summary


def batch_state(states: list[str], interrupted: bool) -> BatchState:
    """The batch state of groups in *states* (``skill-eval merge`` derives it as a run does)."""
    if interrupted or "cancelled" in states:
        return "cancelled"
    if states and all(s == "invalid" for s in states):
        return "invalid"
    if all(s == "complete" for s in states):
        return "complete"
    return "partially-complete"


def _persisted_entry(gdir: Path, interrupted: bool) -> ResultGroup:
    """The summary entry of a group that started, from its group record (or what there is of it)."""
    record_file = layout.group_record_file(gdir)
    position = layout.group_position(gdir.name)
    if record_file is None:
        # started, but the process running it stopped before the group record was written
        runs = {n: read_record(RunRecord, gdir / n / "run.json") for n in _VARIANTS if (gdir / n / "run.json").is_file()}
        definition_file = gdir / "definition.json"
        group_id = (read_record(DefinitionRecord, definition_file).definition.get("id")
                    if definition_file.is_file() else None)
        variants: dict[VariantName, RunState | str] = {n: runs[n].state if n in runs else "not-run" for n in _VARIANTS}
        return ResultGroup(
            dir=gdir.name, id=cast("str | None", group_id) or layout.group_dir_id(gdir.name), position=position,
            state="cancelled" if interrupted else "not-run", reason="stopped before its group.json was written",
            grade_state=None, variants=cast("dict[VariantName, RunState]", variants), comparisons={},
            usage=_usage(gdir),
        )
    group = read_group(record_file)
    comparisons: dict[str, str] = {}
    lost: dict[str, int] | None = None
    grade_path = records.grade_file(gdir, group)
    trial_count = group.trials if isinstance(group, GroupRecord) else None
    if group.grade_state is not None and grade_path.is_file():
        grade = read_group_grade(gdir, group)
        comparisons = {c.id: c.transition for c in grade.comparisons}
        if isinstance(grade, TrialGrade):
            lost = lost_trial_runs(grade, [n for n, v in group.variants.items() if v.state != "not-selected"],
                                   planned_trials(grade, stored_stopping(gdir)))
    return ResultGroup(
        dir=gdir.name, id=group.id, position=group.position, state=group.state, reason=None,
        grade_state=group.grade_state, variants={n: v.state for n, v in group.variants.items()},
        comparisons=comparisons, trials=trial_count,
        usage=group.usage if isinstance(group, GroupRecord) and group.usage is not None else _usage(gdir),
        lost_runs=lost,
    )


def _usage(gdir: Path) -> VariantUsage | None:
    """What the group's recorded runs used; ``None`` when it recorded no pi run, or a run
    file cannot be read (the summary must still be written)."""
    try:
        usage = read_group_usage(gdir)
    except (OSError, EvidenceError):
        return None
    return usage if usage.runs else None
