"""Typed records of the evidence files.

``run.json``, ``transcript.json`` and ``context-observations.json`` have their records in
:mod:`.run_records`, ``selection.json`` (and the shard split) in :mod:`.selection_records`;
``group.json``, ``definition.json`` and ``result.json`` here. Every record is importable from here.

Every evidence file is written from its record by :mod:`pytest_skill_eval.codec` (through
``store.write_record``, which redacts it) and read back through :func:`parse`, which checks
the decoded JSON against the file's JSON Schema (``schemas/evidence-*.schema.json``) before
the codec builds the record, so a reader never sees a half-shaped dict and a damaged file is
reported as ``<file>: <pointer>: expected …, found …``. ``grade.json`` has its record in
:mod:`.grading.results` (``GroupGrade``).

The codec derives the stored key order from the fields (or a record's declared ``STORED``
order) and reproduces the files exactly (docs/evidence.md), so a file read and written again
is byte-for-byte the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pytest_skill_eval import codec, schemas
from pytest_skill_eval.codec import Layout, Stored, if_none, meta
from pytest_skill_eval.errors import EvidenceError, Problem
from pytest_skill_eval.evidence.decision_records import DecisionRecord
from pytest_skill_eval.evidence.layout import AGGREGATE_FALLBACK, AGGREGATE_FILE, GRADE_FILE, record_path_problems
from pytest_skill_eval.evidence.run_records import (
    JSON,
    AttemptRecord,
    BatchState,
    ContextObservations,
    FingerprintsRecord,
    GroupState,
    HostRunRecord,
    ManifestEntry,
    ManifestRecord,
    ModelRecord,
    RunPaths,
    RunRecord,
    SnapshotRecord,
    SourceRecord,
    StoredFile,
    StoredScript,
    TranscriptRecord,
    TranscriptTurn,
    VariantName,
)
from pytest_skill_eval.evidence.selection_records import (
    PlannedGroup,
    SelectionRecord,
    ShardGroup,
    ShardIndex,
    ShardRecord,
    ShardSettings,
)
from pytest_skill_eval.observation import RunState
from pytest_skill_eval.usage import Usage, VariantUsage

__all__ = [
    "grade_file",
    "BatchState",
    "AttemptRecord",
    "ContextObservations",
    "FingerprintsRecord",
    "DecisionRecord",
    "DefinitionRecord",
    "GroupRecord",
    "GroupState",
    "HostRunRecord",
    "InvalidGroupRecord",
    "JSON",
    "ManifestEntry",
    "ManifestRecord",
    "ModelRecord",
    "PlannedGroup",
    "ProvenanceRecord",
    "Record",
    "ResultGroup",
    "ResultRecord",
    "RevisionState",
    "RunPaths",
    "RunRecord",
    "RunState",
    "SelectionRecord",
    "ShardGroup",
    "ShardIndex",
    "ShardRecord",
    "ShardSettings",
    "SnapshotRecord",
    "SourceRecord",
    "StoredFile",
    "StoredScript",
    "SuiteRef",
    "TrialCount",
    "TranscriptRecord",
    "TranscriptTurn",
    "Usage",
    "VariantName",
    "VariantStateRecord",
    "VariantUsage",
    "check",
    "parse",
    "parse_group",
    "problems",
]


# ---------------------------------------------------------------------------- group.json


@dataclass(frozen=True, slots=True)
class VariantStateRecord(Stored):
    state: RunState
    reason: str | None


@dataclass(frozen=True, slots=True)
class RevisionState(Stored):
    """The description-only revision rule as ``group.json`` records it."""

    state: Literal["passed", "failed", "not-checkable"]
    reason: str | None


@dataclass(frozen=True, slots=True)
class SuiteRef(Stored):
    id: str
    path: str


@dataclass(frozen=True, slots=True)
class TrialCount(Stored):
    """How many trials a group was planned with and how many ran (a group run with trials)."""

    planned: int
    ran: int


@dataclass(frozen=True, slots=True)
class GroupRecord(Stored):
    """``group.json`` of a group that was loaded: its state and its variants' states."""

    STORED: ClassVar[Layout] = Layout(order=(
        "id", "position", "path", "suite", "type", "state", "grade_state", "grade_file", "variants", "revision_check",
        "review_questions", "publication_errors", "trials", "usage"))
    id: str
    position: int
    path: str
    suite: SuiteRef | None
    type: Literal["description", "body"]
    state: GroupState
    grade_state: Literal["graded", "grade-error"]
    variants: Mapping[VariantName, VariantStateRecord]
    review_questions: tuple[str, ...]
    grade_file: str = "grade.json"
    revision_check: RevisionState | None = None
    publication_errors: tuple[str, ...] = ()
    #: set for a group run with more than one trial: its grade is then ``aggregate.json``
    trials: TrialCount | None = field(default=None, metadata=meta(omit=if_none))
    #: tokens and cost per variant and in total, over every pi run of the group (trials, reruns)
    usage: VariantUsage | None = field(default=None, metadata=meta(omit=if_none))


@dataclass(frozen=True, slots=True)
class InvalidGroupRecord(Stored):
    """``group.json`` of a suite entry whose group file could not be loaded (no grade)."""

    STORED: ClassVar[Layout] = Layout(order=("id", "ref", "position", "state", "grade_state", "variants",
                                             "definition_errors"))
    ref: str
    position: int
    variants: Mapping[VariantName, VariantStateRecord]
    definition_errors: tuple[str, ...]
    id: None = None
    state: Literal["invalid"] = "invalid"
    grade_state: None = None


# --------------------------------------------------------------------------- result.json


@dataclass(frozen=True, slots=True)
class ResultGroup(Stored):
    """One selected group's line in ``result.json``; ``not-run`` (with ``reason``, and no
    ``dir``) for a group pytest stopped before it started."""

    STORED: ClassVar[Layout] = Layout(order=("dir", "id", "position", "state", "reason", "grade_state", "variants",
                                             "comparisons", "trials", "lost_runs", "usage"))
    dir: str | None
    id: str | None
    position: int
    state: GroupState | Literal["not-run"]
    reason: str | None
    grade_state: Literal["graded", "grade-error"] | None
    variants: Mapping[VariantName, RunState | Literal["not-run"]]
    comparisons: Mapping[str, str]
    #: for a group run with several trials: how many were planned and how many ran
    trials: TrialCount | None = field(default=None, metadata=meta(omit=if_none))
    #: the group's tokens and cost (``None``: no pi run of it was recorded)
    usage: VariantUsage | None = None
    #: a group with trials: per selected variant, trials whose run did not complete or never ran (a
    #: group is ``complete`` when each variant completed once, so its state alone hides them)
    lost_runs: Mapping[str, int] | None = field(default=None, metadata=meta(omit=if_none))


@dataclass(frozen=True, slots=True)
class ProvenanceRecord(Stored):
    """``result.json`` ``provenance``: what produced the result, so it can be reproduced.

    ``versions`` names the Python side (``pytest-skill-eval``, ``python``, ``pytest``,
    ``pytest-xdist`` or null when absent); ``hosts`` the pi hosts the runs used (``pi`` and
    ``node`` versions, read from the runs). ``argv`` is pytest's argument list with every
    inherited value and auth-file secret replaced by the redaction marker. ``rerun_of`` is
    the result a ``skill-eval rerun`` ran again.
    """

    versions: Mapping[str, str | None]
    hosts: tuple[Mapping[str, str | None], ...]
    selection: Mapping[str, JSON]
    fail_on: str
    trials: int
    seed: str
    pass_rate: float
    alpha: float
    provider_timeout_s: float
    rerun_infra: int
    argv: tuple[str, ...]
    rerun_of: str | None = None
    #: ``--skill-eval-repeat-limit`` in force (0: off; absent in results of older versions)
    repeat_limit: int | None = field(default=None, metadata=meta(omit=if_none))
    #: ``--skill-eval-stop`` in force (absent when off, and in results of older versions)
    stop: str | None = field(default=None, metadata=meta(omit=lambda v: v is None or v == "off"))


@dataclass(frozen=True, slots=True)
class ResultRecord(Stored):
    """``result.json``: the batch summary, written once, last."""

    STORED: ClassVar[Layout] = Layout(order=("result_id", "state", "trials", "seed", "shard", "groups", "usage",
                                             "provenance", "decision"))
    result_id: str
    state: BatchState
    groups: tuple[ResultGroup, ...]
    #: trials per variant, when more than one (a single run leaves it out)
    trials: int | None = field(default=None, metadata=meta(omit=if_none))
    #: the scripted stand-in's seed, when trials ran or the user gave it (``--skill-eval-seed``)
    seed: str | None = field(default=None, metadata=meta(omit=if_none))
    #: the shard of a ``--skill-eval-shard K/N`` run (selection.json has the whole split)
    shard: ShardIndex | None = field(default=None, metadata=meta(omit=if_none))
    #: tokens and cost over every group (``None`` only in evidence written before it was recorded)
    usage: VariantUsage | None = field(default=None, metadata=meta(omit=if_none))
    #: what produced the result (absent in results of older versions)
    provenance: ProvenanceRecord | None = field(default=None, metadata=meta(omit=if_none))
    #: the one decision over the result's comparisons (absent in results of older versions)
    decision: DecisionRecord | None = field(default=None, metadata=meta(omit=if_none))


# ----------------------------------------------------------------------- definition.json


@dataclass(frozen=True, slots=True)
class DefinitionRecord(Stored):
    """``definition.json``: the group definition exactly as it was read, and where from."""

    path: str
    definition: Mapping[str, JSON]


# -------------------------------------------------------------------------------- reading

Record = TypeVar("Record", RunRecord, GroupRecord, InvalidGroupRecord, ResultRecord, DefinitionRecord,
                 TranscriptRecord, ContextObservations, SelectionRecord, FingerprintsRecord, ManifestRecord)

_SCHEMAS: dict[type, str] = {
    RunRecord: "evidence-run",
    GroupRecord: "evidence-group",
    InvalidGroupRecord: "evidence-group",
    ResultRecord: "evidence-result",
    DefinitionRecord: "evidence-definition",
    TranscriptRecord: "evidence-transcript",
    ContextObservations: "evidence-context-observations",
    SelectionRecord: "evidence-selection",
    FingerprintsRecord: "evidence-fingerprints",
    ManifestRecord: "evidence-manifest",
}


def problems(kind: type, data: Any) -> list[Problem]:
    """Why *data* is not a stored record of *kind* (empty when it is)."""
    return sorted(schemas.problems(_SCHEMAS[kind], data), key=Problem.sort_key)


def check(schema: str, data: Any, source: Path | str, error: type[EvidenceError] = EvidenceError) -> None:
    """Raise *error* naming *source*, one line per problem in pointer order, unless *data* fits
    the evidence schema *schema* (every stored file is checked this way before it is read)."""
    found = sorted(schemas.problems(schema, data), key=Problem.sort_key)
    if found:
        raise error("\n".join(p.render(str(source)) for p in found))


def parse(kind: type[Record], data: Any, source: Path | str) -> Record:
    """The record of *kind* stored as *data*; :class:`EvidenceError` naming *source* when it is not one."""
    check(_SCHEMAS[kind], data, source)
    paths = record_path_problems(_SCHEMAS[kind], data)
    if paths:
        raise EvidenceError("\n".join(p.render(str(source)) for p in paths))
    result: Record = codec.from_json(kind, data, source)
    return result


def parse_group(data: Any, source: Path | str) -> GroupRecord | InvalidGroupRecord:
    """A ``group.json`` of either shape: a loaded group, or (``id`` null) a suite entry that could not load."""
    if isinstance(data, dict) and "id" in data and data["id"] is None:
        return parse(InvalidGroupRecord, data, source)
    return parse(GroupRecord, data, source)


def grade_file(group_dir: Path, record: GroupRecord | InvalidGroupRecord) -> Path:
    """The grade a group record points at, in *group_dir* (``grade.json`` unless a fallback was published)."""
    name = record.grade_file if isinstance(record, GroupRecord) else GRADE_FILE
    if isinstance(record, GroupRecord) and record.trials is not None and name != AGGREGATE_FALLBACK:
        name = AGGREGATE_FILE
    return group_dir / Path(name).name
