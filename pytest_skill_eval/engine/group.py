"""Running one group: fixture and bundle snapshots, the variants in order, publication, grading."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from pytest_skill_eval.definitions.model import VARIANTS, Group, Suite, VariantName
from pytest_skill_eval.engine.config import EngineConfig, GroupRunOutcome, VariantOutcome
from pytest_skill_eval.engine.group_run import GroupRun, Shared
from pytest_skill_eval.engine.reuse_hook import BaselineReuse, plan_reuse, with_reuse
from pytest_skill_eval.engine.stop_hook import StopWatch, write_stopping
from pytest_skill_eval.engine.variant import run_variant
from pytest_skill_eval.engine.variant_evidence import persist_state
from pytest_skill_eval.errors import (
    EvidenceError,
    SkillEvalError,
)
from pytest_skill_eval.evidence import layout, reader, records, store
from pytest_skill_eval.grading.aggregate import Trial, TrialGrade, aggregate
from pytest_skill_eval.grading.results import GradeError, GroupGrade
from pytest_skill_eval.redaction import Redactor, unsafe_reason
from pytest_skill_eval.sources.isolation import (
    GroupSources,
    auth_secrets,
    check_description_revision,
)
from pytest_skill_eval.sources.scratch import new_run_dir
from pytest_skill_eval.usage import VariantUsage


def run_group(group: Group, position: int, cfg: EngineConfig, *, suite: Suite | None = None) -> GroupRunOutcome:
    """Run *group* *cfg.trials* times (a single run is one trial) and publish it.

    The definition is persisted and the shared snapshots taken once; each trial runs its
    variants from scratch (own workspaces, agent dirs, pi processes), each persisted before
    its counterpart starts, and is graded from its persisted evidence on its own. The arms
    are planned up front: trial k runs baseline then candidate when k is odd, candidate then
    baseline when it is even, so an order effect cancels out. A cancelled run stops every
    queued trial, after the group is published.

    Where the trials go is the write boundary (:func:`_publish`): a single run is stored as
    the spec fixes it (the variants and ``grade.json`` in the group directory), several
    trials under ``trials/NNN/`` with ``aggregate.json`` over them.
    """
    group_dir = cfg.result_dir / "groups" / layout.group_dir_name(position, group.id)
    redactor = group_redactor(group, cfg)
    definition = records.DefinitionRecord(str(group.path), group.raw)
    store.write_record(group_dir / "definition.json", definition, redactor)
    suite_ref = records.SuiteRef(suite.id, str(suite.path)) if suite is not None else None
    scratch = new_run_dir()
    trials: list[_TrialRun] = []
    cancelled = False
    watch = StopWatch(cfg.stop, cfg.trials, cfg.selected)
    try:
        shared = prepare_shared(group, scratch, cfg, cfg.group_sources(group, position))
        run = GroupRun(group, position, suite_ref, group_dir, scratch, shared, cfg, redactor)
        run = dataclasses.replace(run, reuse=_reuse(run))
        for number in range(1, cfg.trials + 1):
            order = VARIANTS if number % 2 else VARIANTS[::-1]
            outcomes, cancelled = run_variants(run, number, order=order)
            trial_dir = run.trial_dir(number)
            grade = _Publication(trial_dir, layout.GRADE_FILE, layout.GRADE_FALLBACK, "grade",
                                 redactor.record(grade_persisted(group, trial_dir))[0])
            grade.publish()
            trials.append(_TrialRun(Trial(number, cast(GroupGrade, grade.doc),
                                          {name: o.state for name, o in outcomes.items()}), outcomes, grade))
            if not run.single:
                shutil.rmtree(run.trial_scratch(number), ignore_errors=True)
            # --skill-eval-stop looks after every trial of several (engine.stop_hook), never at a single run
            if cancelled or (not run.single and watch.after_trial([t.trial for t in trials])):
                break
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    write_stopping(group_dir, watch, redactor)  # nothing for a single run or under ``off``
    if run.reuse is not None:
        run.reuse.write(group_dir, redactor)  # again: with the runs it copied
    outcome = _publish(run, trials)
    if cancelled:
        raise KeyboardInterrupt
    return outcome


@dataclass(frozen=True, slots=True)
class _TrialRun:
    """One trial as it ran: its graded record, its variants' outcomes, and its published grade."""

    trial: Trial
    outcomes: dict[str, VariantOutcome]
    grade: _Publication


def _publish(run: GroupRun, trials: Sequence[_TrialRun]) -> GroupRunOutcome:
    """The write boundary: the group's grade document and its ``group.json`` (in that order).

    A single run's grade document is its one trial's ``grade.json`` (already published) and
    its variants are that trial's; several trials add ``aggregate.json`` over the trials that
    ran, each variant's state taken across them (:func:`_across_trials`), and the record
    counts the trials. See :class:`_Publication` for the spec's fallbacks. The baseline's
    reason says what ``--skill-eval-reuse-baseline`` did (a single run's copied run says it itself).
    """
    group, group_dir, planned, redactor, reuse = run.group, run.group_dir, run.cfg.trials, run.redactor, run.reuse
    if planned == 1:
        published = trials[0].grade
        variants = trials[0].outcomes
    else:
        published = _Publication(group_dir, layout.AGGREGATE_FILE, layout.AGGREGATE_FALLBACK, "aggregate",
                                 redactor.record(aggregate(group.id, planned, [t.trial for t in trials]))[0])
        published.publish()
        variants = {name: _across_trials(name, [t.outcomes[name] for t in trials], group_dir) for name in VARIANTS}
    if reuse is not None and (planned != 1 or not reuse.reuses):
        variants = {**variants, "baseline": dataclasses.replace(variants["baseline"],
                                                                reason=with_reuse(variants["baseline"].reason, reuse))}
    state = group_state([v.state for v in variants.values()], fixture_failed=run.shared.error is not None)
    usage = _group_usage(group_dir)
    revision = run.shared.revision

    def record() -> records.GroupRecord:
        return records.GroupRecord(
            id=group.id, position=run.position, path=str(group.path), suite=run.suite, type=group.type,
            state=cast(records.GroupState, state), grade_state=published.doc.state,
            variants={cast(VariantName, name): records.VariantStateRecord(cast(records.RunState, v.state), v.reason)
                      for name, v in variants.items()},
            review_questions=group.review_questions, grade_file=published.name,
            revision_check=records.RevisionState(revision.state, revision.reason) if revision is not None else None,
            trials=records.TrialCount(planned, len(trials)) if planned != 1 else None,
            publication_errors=tuple(published.problems),
            usage=usage,
        )

    published.publish_record(record, redactor)
    return GroupRunOutcome(group, run.position, state, group_dir, variants, published.doc)


def prepare_shared(group: Group, scratch: Path, cfg: EngineConfig, sources: GroupSources | None = None) -> Shared:
    """Snapshot the fixture and the extension bundles once, and check a description group's revision."""
    if sources is None:
        sources = cfg.group_sources(group, 0)
    error: str | None = None
    fixture = scratch / "fixture"
    fixture.mkdir()
    bundles = scratch / "bundles"
    try:
        sources.snapshot_fixture(fixture)
    except (SkillEvalError, OSError) as exc:
        error = f"fixture {group.fixture!r}: {exc}"
    try:
        sources.snapshot_bundles(bundles)
    except (SkillEvalError, OSError) as exc:
        error = error or str(exc)
    revision = (check_description_revision(group, scratch / "revision-check", cfg.root, sources)
                if error is None else None)
    if revision is not None and revision.state == "failed" and error is None:
        error = revision.reason
    return Shared(fixture, bundles, error, revision, sources)


def run_variants(run: GroupRun, trial: int, *,
                 order: Sequence[VariantName] = VARIANTS) -> tuple[dict[str, VariantOutcome], bool]:
    """Trial *trial*'s variants in *order*, each persisted before the next starts; and whether one was cancelled."""
    group, cfg, shared, reuse = run.group, run.cfg, run.shared, run.reuse
    outcomes: dict[str, VariantOutcome] = {}
    cancelled = False
    for name in order:
        run_dir = run.run_dir(trial, name)
        if name not in cfg.selected:
            outcomes[name] = persist_state(run_dir, group, name, "not-selected", "excluded by variant selection")
        elif cancelled:
            outcomes[name] = persist_state(run_dir, group, name, "cancelled", "cancelled before it started")
        elif shared.error is not None:
            outcomes[name] = persist_state(run_dir, group, name, "invalid", shared.error)
        elif name == "baseline" and reuse is not None and reuse.reuses:
            outcomes[name] = reuse.copy_run(trial, run_dir, cfg)  # --skill-eval-reuse-baseline
        else:
            try:
                outcomes[name] = _run_with_reruns(run, name, trial)
            except KeyboardInterrupt:
                # the run's observed evidence is already persisted; no queued subject starts
                cancelled = True
                if (run_dir / "run.json").exists():
                    record = reader.read_record(records.RunRecord, run_dir / "run.json")
                    outcomes[name] = VariantOutcome(name, record.state, record.reason, run_dir)
                else:
                    outcomes[name] = persist_state(run_dir, group, name, "cancelled", "cancelled while preparing")
    return {name: outcomes[name] for name in VARIANTS}, cancelled


def _run_with_reruns(run: GroupRun, name: VariantName, trial: int) -> VariantOutcome:
    """One variant, run again from scratch up to *cfg.rerun_infra* times while it ends
    ``infrastructure-failed``: each earlier attempt's evidence moves to
    ``<variant>-attempts/N/`` and the last attempt's ``run.json`` lists them. Never silent."""
    cfg = run.cfg
    trial_dir, run_dir = run.trial_dir(trial), run.run_dir(trial, name)
    attempts: list[records.AttemptRecord] = []
    for attempt in range(1, cfg.rerun_infra + 2):
        outcome = run_variant(run, name, trial)
        # nothing of a finished variant may be reachable while its counterpart (or next attempt) runs
        shutil.rmtree(run.base(trial, name), ignore_errors=True)
        if outcome.state != "infrastructure-failed" or attempt > cfg.rerun_infra:
            break
        kept = layout.attempt_dir(trial_dir, name, attempt)
        kept.parent.mkdir(parents=True, exist_ok=True)
        run_dir.replace(kept)
        attempts.append(records.AttemptRecord(attempt, "infrastructure-failed", outcome.reason,
                                              kept.relative_to(trial_dir).as_posix()))
        cfg.progress(f"{run.group.id} [{name}] infrastructure-failed ({outcome.reason}); "
                     f"running it again, attempt {attempt + 1} of {cfg.rerun_infra + 1}")
    if attempts:
        final = reader.read_record(records.RunRecord, run_dir / "run.json")
        store.write_record(run_dir / "run.json", dataclasses.replace(final, attempts=tuple(attempts)), run.redactor)
    return outcome


def _reuse(run: GroupRun) -> BaselineReuse | None:
    """The group's baseline reuse plan (``engine.reuse_hook``), its ``reuse.json`` written; None without the option."""
    if run.shared.error is not None:
        return None
    reuse = plan_reuse(run)
    if reuse is not None:
        reuse.write(run.group_dir, run.redactor)
    return reuse


def _across_trials(name: str, outcomes: Sequence[VariantOutcome], group_dir: Path) -> VariantOutcome:
    """One variant's state over its trials: ``complete`` when at least one trial completed
    (the others are counted, and said in the reason), else the state its trials ended in."""
    states = [o.state for o in outcomes]
    counts = ", ".join(f"{states.count(s)} {s}" for s in dict.fromkeys(states))
    trials = len(states)
    if "cancelled" in states:
        return VariantOutcome(cast(VariantName, name), "cancelled", f"cancelled in trial {states.index('cancelled') + 1} "
                              f"of {trials} run ({counts})", group_dir)
    complete = states.count("complete")
    if complete == trials:
        return VariantOutcome(cast(VariantName, name), "complete", None, group_dir)
    if complete:
        return VariantOutcome(cast(VariantName, name), "complete", f"{trials - complete} of {trials} trials did not "
                              f"complete ({counts}); they count as unavailable, not as failures", group_dir)
    first = outcomes[0]
    if all(s == first.state for s in states):
        return VariantOutcome(cast(VariantName, name), first.state, first.reason, group_dir)
    return VariantOutcome(cast(VariantName, name), first.state, f"no trial completed ({counts}); trial 1: {first.reason}",
                          group_dir)


@dataclass
class _Publication:
    """One grade document (a group's or trial's grade, or a group's aggregate) and the group
    record that names it, published with the spec's fallbacks.

    The document goes to *primary*; when that cannot be written, to *fallback* as a
    ``grade-error`` with the problem as one more ``system`` error. A group record that
    cannot be written as ``group.json`` goes to ``group-fallback.json``, and the document
    is published again as a fallback. A fallback that cannot be written propagates, and
    queued work stops.
    """

    directory: Path
    primary: str
    fallback: str
    what: str  # "grade" or "aggregate", as messages name it
    doc: GroupGrade | TrialGrade
    problems: list[str] = field(default_factory=list)
    name: str = ""

    def publish(self) -> None:
        self.name = self.primary
        try:
            store.write_record(self.directory / self.primary, self.doc)
        except _PUBLICATION_ERRORS as exc:
            self._fall_back(f"{self.primary} could not be written: {exc}; the {self.what} is in {self.fallback}")

    def publish_record(self, record: Callable[[], records.GroupRecord], redactor: Redactor) -> None:
        """Write the group record *record()* builds (again after a fallback, which it names),
        redacted by *redactor*."""
        try:
            store.write_record(self.directory / layout.GROUP_FILE, record(), redactor)
        except _PUBLICATION_ERRORS as exc:
            problem = f"group.json could not be written: {exc}; the group record is in {layout.GROUP_FALLBACK}"
            if self.name == self.primary:
                self._fall_back(problem)
            else:
                self.problems.append(problem)
            store.write_record(self.directory / layout.GROUP_FALLBACK, record(), redactor)

    def _fall_back(self, problem: str) -> None:
        self.problems.append(problem)
        self.doc = dataclasses.replace(self.doc, state="grade-error",
                                       errors=(*self.doc.errors, GradeError("system", None, None, problem)))
        store.write_record(self.directory / self.fallback, self.doc)
        self.name = self.fallback


def _group_usage(group_dir: Path) -> VariantUsage | None:
    """The group's tokens and cost from its persisted runs (``None`` if a run file cannot be read)."""
    try:
        return reader.read_group_usage(group_dir)
    except (OSError, EvidenceError):
        return None


#: what a failed write of grade.json or group.json raises (serialising included)
_PUBLICATION_ERRORS = (OSError, EvidenceError, TypeError, ValueError)


def grade_persisted(group: Group, group_dir: Path, result: Path | None = None) -> GroupGrade:
    """Grade from persisted evidence; a thrown failure becomes explicit grade-error evidence.

    The one grading entry point for a run and for ``skill-eval regrade``, so a regrade of
    untouched evidence reproduces ``grade.json`` byte for byte. *result*: the stored result
    *group_dir* lies in, when it is untrusted input (regrade): no link below it is followed.
    """
    from pytest_skill_eval.grading import grade_group

    try:
        observations = {
            name: reader.load_observation(group_dir / name, result)
            for name in VARIANTS
            if (group_dir / name / "run.json").exists() or (group_dir / name / "run.json").is_symlink()
        }
        return grade_group(group, observations)
    except Exception as exc:  # noqa: BLE001 - any grading crash must become evidence, not a traceback
        error = GradeError(scope="system", owner=None, variant=None, message=f"grading failed: {type(exc).__name__}: {exc}")
        return GroupGrade(group_id=group.id, state="grade-error", expectations=(), comparisons=(), errors=(error,))


def persist_invalid_definition(result_dir: Path, position: int, ref: str, error: SkillEvalError) -> Path:
    """Evidence for a suite entry whose group definition cannot be loaded: state ``invalid``.

    No group id is known, so the directory is named after the referenced file.
    """
    group_dir = result_dir / "groups" / invalid_definition_dir_name(position, ref)
    reason = f"invalid group definition: {error}"
    invalid = records.VariantStateRecord("invalid", reason)
    record = records.InvalidGroupRecord(ref=ref, position=position, variants={"baseline": invalid, "candidate": invalid},
                                        definition_errors=tuple(str(error).splitlines()))
    store.write_record(group_dir / "group.json", record)
    return group_dir


def invalid_definition_dir_name(position: int, ref: str) -> str:
    """``NNN-invalid-<file stem>``: the directory of a suite entry whose definition does not load."""
    return layout.group_dir_name(position, f"invalid-{Path(ref).stem.lower() or 'group'}")


def group_state(states: Iterable[str], *, fixture_failed: bool = False) -> str:
    """Group state from its run states (spec: complete, partially-complete, invalid, cancelled).

    ``partially-complete`` needs at least one complete selected run: a group none of whose
    selected runs completed (each invalid or infrastructure-failed) is ``invalid``, since
    nothing of it can be compared.
    """
    states = list(states)
    if "cancelled" in states:
        return "cancelled"
    if fixture_failed:
        return "invalid"
    selected = [s for s in states if s != "not-selected"]
    if selected and "complete" not in selected:
        return "invalid"
    if all(s == "complete" for s in selected):
        return "complete"
    return "partially-complete"


def group_redactor(group: Group, cfg: EngineConfig) -> Redactor:
    """The values no evidence of *group* may hold: its inherited values and the auth file's secrets.

    An inherited value too short or too common to redact reliably is not a secret to
    redact: the variant is made invalid before the subject starts (see :func:`_inherited`).
    """
    values = [cfg.env[n] for n in group.runtime.environment.inherit if n in cfg.env and unsafe_reason(cfg.env[n]) is None]
    return Redactor.of([*values, *auth_secrets(cfg.auth_file).values()])
