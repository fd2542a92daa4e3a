"""``skill-eval plan <suite-or-group>``: the trials each decision needs, the pi runs and the expected cost.

This module reads (the definitions, and at most one stored result, only through the evidence
readers) and hands counts to the pure :mod:`pytest_skill_eval.decision.planning`.

A stored result is **of the same suite** when one of its ``group.json`` files records the
suite's id and its definition path (``suite``: ``{"id", "path"}``, as the run loaded it) —
for a group definition, the group file's path. Its groups give observed baseline rates only
where their ``definition.json`` holds exactly the definition loaded now (a changed group is
planned at the least favourable rate and says so); its usage per model comes from every
group it ran. Without ``--result``, the newest such result is used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_skill_eval.decision.multiplicity import Adjustment
from pytest_skill_eval.decision.planning import ComparisonInput, ModelUsage, PlanRequest, make_plan, render_plan
from pytest_skill_eval.definitions.loading import load_definition, load_suite_groups
from pytest_skill_eval.definitions.model import Group, Suite
from pytest_skill_eval.definitions.plan import DEFAULT_MODEL
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import layout, records
from pytest_skill_eval.evidence.locate import resolve_result, stored_results
from pytest_skill_eval.evidence.reader import (
    definition_record,
    parse_aggregate,
    parse_grade,
    read_checked,
    result_record,
)
from pytest_skill_eval.paths import shown
from pytest_skill_eval.usage import Usage

__all__ = ["StoredGroup", "comparison_ids", "group_model", "plan_definitions", "plan_path"]


def comparison_ids(group: Group) -> tuple[str, ...]:
    """The group's comparison ids, in the order the expectations first name them."""
    return tuple(dict.fromkeys(e.comparison for e in group.expectations if e.comparison is not None))


def group_model(group: Group) -> str:
    return group.model.model if group.model and group.model.model else DEFAULT_MODEL


@dataclass(frozen=True, slots=True)
class StoredGroup:
    """What one stored group offers the plan."""

    id: str
    model: str
    definition: Any
    #: comparison id -> (baseline passes, baseline graded)
    baselines: dict[str, tuple[int, int]] = field(default_factory=dict)
    usage: Usage | None = None
    runs: int = 0


def _stored_model(definition: Any) -> str:
    model = definition.get("model") if isinstance(definition, dict) else None
    name = model.get("model") if isinstance(model, dict) else None
    return name if isinstance(name, str) and name else DEFAULT_MODEL


def _baselines(gdir: Path, record: records.GroupRecord) -> dict[str, tuple[int, int]]:
    grade_path = records.grade_file(gdir, record)
    if record.trials is not None:
        aggregate, _problems = read_checked(grade_path, parse_aggregate)
        if aggregate is None:
            return {}
        return {c.id: (c.baseline_passes, c.baseline_graded) for c in aggregate.comparisons}
    grade, _problems = read_checked(grade_path, parse_grade)
    if grade is None:
        return {}
    found = {}
    for c in grade.comparisons:  # a single run: one graded baseline trial, or none
        if c.transition.startswith("pass-to-"):
            found[c.id] = (1, 1)
        elif c.transition.startswith("fail-to-"):
            found[c.id] = (0, 1)
    return found


def _read_result(result_dir: Path, matches: Any) -> tuple[list[StoredGroup], bool] | None:
    """The stored groups of *result_dir* and whether one of them is of the same suite (*matches*);
    None when the result cannot be read (a result.json that is not one)."""
    _summary, problems = read_checked(result_dir / "result.json", result_record)
    if problems:
        return None
    groups: list[StoredGroup] = []
    same = False
    for gdir in layout.group_dirs(result_dir):
        gfile = layout.group_record_file(gdir)
        if gfile is None:
            continue
        record, _problems = read_checked(gfile, records.parse_group)
        if not isinstance(record, records.GroupRecord):
            continue
        same = same or matches(record)
        definition, _problems = read_checked(gdir / "definition.json", definition_record)
        stored = definition.definition if definition is not None else None
        usage = record.usage
        groups.append(StoredGroup(record.id, _stored_model(stored), stored, _baselines(gdir, record),
                                  usage.total if usage is not None else None, usage.runs if usage is not None else 0))
    return groups, same


def _model_usage(groups: Sequence[StoredGroup]) -> tuple[ModelUsage, ...]:
    by_model: dict[str, list[StoredGroup]] = {}
    for g in groups:
        if g.usage is not None and g.runs > 0:
            by_model.setdefault(g.model, []).append(g)
    out = []
    for model, found in sorted(by_model.items()):
        runs = sum(g.runs for g in found)
        usages = [g.usage for g in found if g.usage is not None]
        tokens = [u.total_tokens for u in usages]
        costs = [u.cost for u in usages]
        # a figure is usable only when every group of the model reported it
        total_tokens = sum(t for t in tokens if t is not None) if all(t is not None for t in tokens) else None
        total_cost = math.fsum(c for c in costs if c is not None) if all(c is not None for c in costs) else None
        out.append(ModelUsage(model, runs, total_tokens, total_cost,
                              tokens_partial=any(u.messages_without_tokens for u in usages),
                              cost_partial=any(u.messages_without_cost for u in usages)))
    return tuple(out)



def plan_definitions(target: str, definition: Group | Suite, groups: Sequence[Group], root: Path, *,
                     effect: float, power: float, alpha: float, adjustment: Adjustment = "holm",
                     result: str | None = None) -> str:
    """The plan text of loaded definitions (``skill-eval plan`` and ``check``'s section)."""
    if isinstance(definition, Suite):
        suite_id, suite_path = definition.id, str(definition.path)

        def matches(record: records.GroupRecord) -> bool:
            return record.suite is not None and record.suite.id == suite_id and record.suite.path == suite_path
        what = f"suite {suite_id} at {shown(definition.path, root)}"
    else:
        group_path = str(definition.path)

        def matches(record: records.GroupRecord) -> bool:
            return record.path == group_path
        what = f"group {definition.id} at {shown(definition.path, root)}"

    chosen: tuple[Path, list[StoredGroup]] | None = None
    skipped = 0
    if result is not None:
        result_dir = resolve_result(result, root)
        read = _read_result(result_dir, matches)
        if read is None:
            raise EvidenceError(f"result {result_dir.name}: its result.json is not a result record; "
                                "skill-eval view names the problem")
        if not read[1]:
            raise EvidenceError(f"result {result_dir.name} is not of {what}: none of its group.json files records "
                                "that definition; give a result of this suite, or leave out --result")
        chosen = (result_dir, read[0])
    else:
        for result_dir in reversed(stored_results(root)):
            read = _read_result(result_dir, matches)
            if read is None:
                skipped += 1
            elif read[1]:
                chosen = (result_dir, read[0])
                break

    stored = {g.id: g for g in chosen[1]} if chosen else {}
    comparisons = []
    unchanged = 0
    for group in groups:
        stored_group = stored.get(group.id)
        same_definition = stored_group is not None and stored_group.definition == group.raw
        unchanged += same_definition
        for cid in comparison_ids(group):
            counts = stored_group.baselines.get(cid) if stored_group is not None and same_definition else None
            if counts is not None and 0 <= counts[0] <= counts[1] and counts[1] > 0:
                comparisons.append(ComparisonInput(group.id, cid, counts[0], counts[1]))
                continue
            note = ""
            if chosen is not None:
                note = ("not in the stored result" if stored_group is None
                        else "definition changed since the stored result" if not same_definition
                        else "no graded baseline trial stored" if counts is None or counts[1] == 0
                        else f"the stored baseline counts are not a rate ({counts[0]} passes of {counts[1]} graded)")
                note += ": least favourable rate assumed"
            comparisons.append(ComparisonInput(group.id, cid, note=note))
    result_text = None
    no_result = f"no stored result of {what}"
    if skipped:
        no_result += f" ({skipped} stored result(s) could not be read and were skipped)"
    if chosen is not None:
        result_text = (f"result {chosen[0].name} ({shown(chosen[0], root)}: it records {what}; "
                       f"{unchanged} of {len(groups)} group definition(s) unchanged since)")
    request = PlanRequest(effect, power, alpha, adjustment, tuple((g.id, group_model(g)) for g in groups),
                          tuple(comparisons), result_text, no_result, _model_usage(chosen[1]) if chosen else ())
    return render_plan(make_plan(request), target)


def plan_path(path: Path, root: Path, *, effect: float, power: float, alpha: float,
              adjustment: Adjustment = "holm", result: str | None = None) -> str:
    """``skill-eval plan``: load the suite or group at *path* (from the definition *root*) and plan it.

    Raises DefinitionError when a definition does not load, EvidenceError for a bad ``--result``.
    """
    full = path if path.is_absolute() else root / path
    definition = load_definition(full, root)
    if isinstance(definition, Suite):
        definition, groups = load_suite_groups(definition, root)
    else:
        groups = (definition,)
    return plan_definitions(shown(full, root), definition, groups, root, effect=effect, power=power, alpha=alpha,
                            adjustment=adjustment, result=result)
