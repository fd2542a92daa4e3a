"""``skill-eval merge``: combine the results of ``--skill-eval-shard K/N`` runs into one result.

Every input must be a finished shard result (``result.json`` written) of the same split:
the same shard count, the same selected groups, the same definitions fingerprint, the same
variants and settings (fail-on, trials, seed, pass rate, alpha), and together the shards
must be exactly 1..N, each once, each holding only its own groups. Every problem found is
reported at once and nothing is written.

The merged result gets a new result id. Its group directories are copied unchanged (their
``NNN`` is the suite position, so shards never collide), in suite order; ``selection.json``
and ``result.json`` are written as one run of the whole selection writes them, and
``merge.json`` records which shard results it was made from. The command exits as that one
run would have: 0, 1 (a group failed or errored), 2 (a shard was cancelled) or 5 (no group
was selected at all); 4 when the inputs cannot be merged.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_skill_eval.errors import EvidenceError, MergeRefusedError
from pytest_skill_eval.evidence import layout, objects, safe_io, store
from pytest_skill_eval.evidence.copying import copy_stored_tree
from pytest_skill_eval.evidence.records import (
    DecisionRecord,
    ProvenanceRecord,
    ResultGroup,
    ResultRecord,
    SelectionRecord,
    ShardRecord,
    VariantUsage,
)
from pytest_skill_eval.policy import Judgement
from pytest_skill_eval.safe_text import escape_path

MERGE_FILE = "merge.json"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CANCELLED = 2
EXIT_CANNOT_MERGE = 4
EXIT_NOTHING_SELECTED = 5


@dataclass(frozen=True, slots=True)
class ShardInput:
    """One input result, read and checked."""

    label: str
    path: Path
    selection: SelectionRecord
    result: ResultRecord
    shard: ShardRecord
    group_dirs: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class Merged:
    """What ``merge`` wrote and how the one run would have exited."""

    result_id: str
    path: Path
    record: ResultRecord
    exit_code: int
    #: ``(node id, outcome, verdict)`` per group, in position order, as a run's summary has them
    rows: tuple[tuple[str, str, Judgement | None], ...]


def read_input(target: str, cwd: Path) -> ShardInput | str:
    """The shard result *target* names, or the problem that keeps it out of a merge."""
    from pytest_skill_eval.evidence.locate import resolve_result
    from pytest_skill_eval.evidence.reader import read_record

    try:
        path = resolve_result(target, cwd).resolve()
    except EvidenceError as exc:
        return str(exc)
    label = escape_path(str(path))
    selection_file, result_file = path / layout.SELECTION_FILE, path / "result.json"
    try:
        if safe_io.entry_kind(result_file, path) is None:
            return (f"{label}: no result.json: that shard run did not finish (cancelled hard, or its evidence could "
                    "not be written); run the shard again")
        if safe_io.entry_kind(selection_file, path) is None:
            return f"{label}: no selection.json: not the result of a --skill-eval-shard K/N run"
        selection = read_record(SelectionRecord, selection_file, path)
        result = read_record(ResultRecord, result_file, path)
        group_dirs = tuple(layout.group_dirs(path))
    except EvidenceError as exc:
        return f"{label}: {exc}" if not str(exc).startswith(str(path)) else str(exc)
    if selection.shard is None:
        return (f"{label}: not a shard result: its selection.json records no shard; "
                "only the results of --skill-eval-shard K/N runs can be merged")
    return ShardInput(label, path, selection, result, selection.shard, group_dirs)


def check_inputs(inputs: Sequence[ShardInput]) -> list[str]:
    """Every reason the *inputs* are not the complete shards of one split (empty when they are)."""
    problems: list[str] = []
    first = inputs[0]
    split = first.shard
    for other in inputs[1:]:
        theirs = other.shard
        if theirs.count != split.count:
            problems.append(f"shard counts differ: {first.label} is shard {split.index}/{split.count}, "
                            f"{other.label} is shard {theirs.index}/{theirs.count}")
            continue
        if theirs.fingerprint != split.fingerprint:
            problems.append(f"definitions differ: {first.label} and {other.label} ran different suite or group "
                            f"definitions ({split.fingerprint} and {theirs.fingerprint}); every shard must run the "
                            "same checkout")
        mine_keys = {g.key: g for g in split.groups}
        their_keys = {g.key: g for g in theirs.groups}
        if mine_keys != their_keys:
            only_first = sorted(set(mine_keys) - set(their_keys))
            only_other = sorted(set(their_keys) - set(mine_keys))
            detail = "; ".join(part for part in (
                f"only in {first.label}: {', '.join(only_first)}" if only_first else "",
                f"only in {other.label}: {', '.join(only_other)}" if only_other else "",
            ) if part) or "the same groups, split differently"
            problems.append(f"the shards selected different groups (another -k/-m, or another suite): {detail}")
        for name in ("fail_on", "trials", "seed", "pass_rate", "alpha"):
            a, b = getattr(split.settings, name), getattr(theirs.settings, name)
            if a != b:
                option = {"fail_on": "--skill-eval-fail-on", "pass_rate": "--skill-eval-pass-rate"}.get(
                    name, f"--skill-eval-{name}")
                problems.append(f"settings differ: {option} is {a!r} in {first.label}, {b!r} in {other.label}; "
                                "give every shard the same options")
        stops = [(r.result.provenance.stop if r.result.provenance is not None else None) or "off" for r in (first, other)]
        if stops[0] != stops[1]:
            problems.append(f"settings differ: --skill-eval-stop is {stops[0]!r} in {first.label}, {stops[1]!r} in "
                            f"{other.label}; give every shard the same options")
        if set(other.selection.variants) != set(first.selection.variants):
            problems.append(f"variant selection differs: {', '.join(first.selection.variants)} in {first.label}, "
                            f"{', '.join(other.selection.variants)} in {other.label}")
    if problems:
        return problems
    seen: dict[int, ShardInput] = {}
    distinct: list[ShardInput] = []
    for item in inputs:
        index = item.shard.index
        same = any(item.path == other.path for other in distinct)
        if index in seen:
            problems.append(f"shard {index}/{split.count} is given twice: {seen[index].label}"
                            + (" (the same result)" if same else f" and {item.label}"))
        else:
            seen[index] = item
        if not same:
            distinct.append(item)
    for index in range(1, split.count + 1):
        if index not in seen:
            groups = [g for g in split.groups if g.shard == index]
            listed = (f"its group(s): {', '.join(_shown(g.position, g.key) for g in groups)}" if groups
                      else "it has no groups, but its result is needed to show it ran")
            problems.append(f"shard {index}/{split.count} is missing ({listed}); add its result")
    owner: dict[str, ShardInput] = {}
    positions = {g.position: g for g in split.groups}
    for item in distinct:
        for gdir in item.group_dirs:
            if gdir.name in owner and owner[gdir.name] is not item:
                problems.append(f"group {gdir.name} is in two shards: {owner[gdir.name].label} and {item.label}")
                continue
            owner[gdir.name] = item
            planned = positions.get(layout.group_position(gdir.name))
            if planned is None or planned.shard != item.shard.index:
                where = f"shard {planned.shard}" if planned is not None else "no shard (it is not in the split)"
                problems.append(f"{item.label} holds group {gdir.name}, which the split assigns to {where}")
    return problems


def _shown(position: int, key: str) -> str:
    return f"{position:03d} {key}"


def merge(targets: Sequence[str], cwd: Path, into: Path | None = None) -> Merged:
    """Check the shard results *targets* name and write their merged result under *into*.

    *into* is the directory that gets the result (default ``<cwd>/.skill-eval/runs``).
    Raises MergeRefusedError listing every problem; nothing is written then.
    """
    if not targets:
        raise MergeRefusedError("expected the results of the shard runs to merge, found none")
    read = [read_input(t, cwd) for t in targets]
    problems = [r for r in read if isinstance(r, str)]
    inputs = [r for r in read if isinstance(r, ShardInput)]
    if not problems:
        problems = check_inputs(inputs)
    if problems:
        count = len(problems)
        raise MergeRefusedError(f"cannot merge: {count} problem{'s' if count != 1 else ''}:\n"
                           + "\n".join(f"  {p}" for p in problems))
    inputs.sort(key=lambda i: i.shard.index)
    runs = (into if into is not None else cwd / layout.RUNS_DIR).absolute()
    if into is None:
        layout.ensure_runs_dir(cwd)
    else:
        runs.mkdir(parents=True, exist_ok=True)
    result_id = layout.new_result_id()
    while (runs / result_id).exists():  # pragma: no cover - eight random hex digits
        result_id = layout.new_result_id()
    record = _merged_record(inputs, result_id)
    staging = Path(tempfile.mkdtemp(prefix=f".{result_id}.", dir=runs))
    try:
        groups = staging / "groups"
        groups.mkdir()
        for item in inputs:
            for gdir in item.group_dirs:
                copy_stored_tree(gdir, groups / gdir.name, item.path)
        _copy_objects(inputs, staging)
        planned = sorted((g for item in inputs for g in item.selection.groups), key=lambda g: (g.position, g.dir))
        selection = SelectionRecord(inputs[0].selection.variants, tuple(planned))
        store.write_record(staging / layout.SELECTION_FILE, selection)
        store.write_json(staging / MERGE_FILE, _merge_json(result_id, inputs))
        record = replace(record, decision=_merged_decision(staging, record, inputs))
        store.write_record(staging / "result.json", record)
        store.fsync_dir(staging)
        final = runs / result_id
        os.replace(staging, final)
        store.fsync_dir(runs)
    except EvidenceError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise MergeRefusedError(f"cannot merge: 1 problem:\n  {exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    code, rows = _exit_code(final, record, inputs)
    return Merged(result_id, final, record, code, tuple(rows))


def _merged_record(inputs: Sequence[ShardInput], result_id: str) -> ResultRecord:
    from pytest_skill_eval.engine.batch import batch_state

    groups: list[ResultGroup] = sorted((g for item in inputs for g in item.result.groups), key=lambda g: g.position)
    interrupted = any(item.result.state == "cancelled" for item in inputs)
    first = inputs[0].result
    # the batch's tokens and cost as the one run would have summed them (none from shards that predate them)
    usage = (sum((g.usage for g in groups if g.usage is not None), VariantUsage())
             if any(item.result.usage is not None for item in inputs) else None)
    return ResultRecord(result_id, batch_state([g.state for g in groups], interrupted), tuple(groups),
                        first.trials, first.seed, usage=usage, provenance=_merged_provenance(inputs))


def _merged_decision(staging: Path, record: ResultRecord, inputs: Sequence[ShardInput]) -> DecisionRecord:
    """The decision over every shard's comparisons together, under shard 1's rules (the shards
    agree on their settings), as the one run would have decided it."""
    from pytest_skill_eval.decision import DecisionRules
    from pytest_skill_eval.engine.decision import result_decision

    first = inputs[0].result.decision
    alpha = inputs[0].shard.settings.alpha
    rules = (DecisionRules(alpha=alpha, min_effect=float(first.rules["min_effect"]),
                           target_power=float(first.rules["target_power"]),
                           coverage_floor=float(first.rules["coverage_floor"]), adjustment=first.rules["adjustment"])
             if first is not None else DecisionRules(alpha=alpha))
    return result_decision(staging, record.groups, rules, aa=first.aa if first is not None else False)


def _merged_provenance(inputs: Sequence[ShardInput]) -> ProvenanceRecord | None:
    """Shard 1's provenance (the shards agree on definitions and settings; merge.json names
    each shard), with the pi hosts every shard used; None when shard 1 recorded none."""
    first = inputs[0].result.provenance
    if first is None:
        return None
    hosts: list[Mapping[str, str | None]] = []
    for item in inputs:
        for host in item.result.provenance.hosts if item.result.provenance is not None else ():
            if host not in hosts:
                hosts.append(host)
    return replace(first, hosts=tuple(hosts))


def _copy_objects(inputs: Sequence[ShardInput], dest: Path) -> None:
    """Every shard's stored inputs into the merged result's ``objects/`` (each content once),
    so ``skill-eval rerun`` works on the merge as on the shards. Each object is read without
    following a link and checked against its name (its sha256) before it is stored again;
    anything else in ``objects/`` is an EvidenceError naming it."""
    for item in inputs:
        source = item.path / objects.OBJECTS_DIR
        for level, kind in safe_io.list_dir(source, item.path):
            if kind != safe_io.DIRECTORY or len(level) != 2:
                raise EvidenceError(f"{item.label}: {objects.OBJECTS_DIR}/{level}: expected a directory named by two "
                                    f"hex digits, found {kind}")
            for name, _kind in safe_io.list_dir(source / level, item.path):
                if name.startswith("."):
                    continue  # a writer's temporary file
                if not name.startswith(level):
                    raise EvidenceError(f"{item.label}: {objects.OBJECTS_DIR}/{level}/{name}: expected an object "
                                        f"whose name starts with {level}, found another name")
                objects.object_path(item.path, name)  # a sha256 name, or a located error
                if (dest / objects.OBJECTS_DIR / level / name).exists():
                    continue  # content another shard stored too
                try:
                    data = objects.read(item.path, name)
                except EvidenceError as exc:
                    raise EvidenceError(f"{item.label}: {exc}") from None
                objects.put(dest, data)


def _merge_json(result_id: str, inputs: Sequence[ShardInput]) -> dict[str, Any]:
    return {
        "result_id": result_id,
        "shards": [{"index": i.shard.index, "count": i.shard.count, "result_id": i.result.result_id,
                    "path": str(i.path), "groups": [g.dir for g in i.result.groups]} for i in inputs],
    }


def _exit_code(result_dir: Path, record: ResultRecord, inputs: Sequence[ShardInput],
               ) -> tuple[int, list[tuple[str, str, Judgement | None]]]:
    """How pytest would have exited on the whole selection, and the summary rows that say why."""
    from pytest_skill_eval.decision import DecisionRules
    from pytest_skill_eval.engine.verdict import judge_group_dir
    from pytest_skill_eval.policy import parse_fail_on

    settings = inputs[0].shard.settings
    fail_on = parse_fail_on(settings.fail_on)
    decision = record.decision
    rules = (DecisionRules(alpha=settings.alpha, min_effect=float(decision.rules["min_effect"]),
                           adjustment=decision.rules["adjustment"]) if decision is not None else None)
    family = len(decision.comparisons) if decision is not None else 0
    nodeids = {g.position: g.nodeid for item in inputs for g in item.selection.groups}
    rows: list[tuple[str, str, Judgement | None]] = []
    failed = False
    for entry in record.groups:
        nodeid = nodeids.get(entry.position, entry.dir or str(entry.id))
        verdict: Judgement | None = None
        outcome: str
        if entry.dir is None or entry.id is None:
            outcome = "error" if entry.id is None else entry.state
        else:
            try:
                verdict = judge_group_dir(result_dir / "groups" / entry.dir, fail_on=fail_on,
                                          pass_rate=settings.pass_rate, alpha=settings.alpha,
                                          result_id=record.result_id, rules=rules, family=family)
                outcome = "error" if verdict.error else "failed" if verdict.failing else "passed"
            except EvidenceError:
                outcome = "error"
        failed = failed or outcome != "passed"
        rows.append((nodeid, outcome, verdict))
    if fail_on == "regression" and decision is not None:
        # a regression the adjustment over every shard's comparisons finds fails the merge
        failed = failed or any(c.decision == "worse" for c in decision.comparisons)
    if record.state == "cancelled":
        return EXIT_CANCELLED, rows
    if not record.groups:
        return (EXIT_NOTHING_SELECTED if not inputs[0].shard.groups else EXIT_OK), rows
    return (EXIT_FAILED if failed else EXIT_OK), rows


def write_summary(merged: Merged, rootdir: Path) -> None:
    """The merged result's section on the CI job page (``GITHUB_STEP_SUMMARY``), as a run writes it."""
    from pytest_skill_eval.services.step_summary import write_step_summary

    write_step_summary(merged.rows, result_id=merged.result_id, state=merged.record.state, result_dir=merged.path,
                       rootdir=rootdir, html_report=None)


def render(merged: Merged, inputs_shown: Sequence[str] = ()) -> str:
    """What ``skill-eval merge`` prints."""
    from pytest_skill_eval.summary_table import summary_table

    rec = merged.record
    out = summary_table(merged.rows) if merged.rows else []
    if not rec.groups:
        out.append("no groups: no shard selected any group")
    out.append(f"merged {len(inputs_shown)} shard result(s) into {merged.result_id} ({rec.state}): "
               f"{escape_path(str(merged.path))}")
    out.append(f"view it with: skill-eval view {merged.result_id} [--group <position>] [--variant baseline|candidate]")
    return "\n".join(out) + "\n"
