"""Typed records of the evidence files.

``run.json``, ``transcript.json`` and ``context-observations.json`` have their records in
:mod:`.run_records`, ``selection.json`` (and the shard split) in :mod:`.selection_records`;
``group.json``, ``definition.json`` and ``result.json`` here. Every record is importable from here.

Every evidence file is written from a record's ``to_json`` and read back through
:func:`read`, which checks the decoded JSON against the file's JSON Schema
(``schemas/evidence-*.schema.json``) before building the record, so a reader never sees a
half-shaped dict and a damaged file is reported as ``<file>: <pointer>: expected …, found …``.
``grade.json`` has its record in :mod:`.grading.results` (``GroupGrade``).

``to_json`` reproduces the key order of the files exactly (docs/evidence.md), so a file
read and written again is byte-for-byte the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pytest_skill_eval import schemas
from pytest_skill_eval.errors import EvidenceError, Problem
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
class VariantStateRecord:
    state: RunState
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "reason": self.reason}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> VariantStateRecord:
        return cls(d["state"], d["reason"])


@dataclass(frozen=True, slots=True)
class RevisionState:
    """The description-only revision rule as ``group.json`` records it."""

    state: Literal["passed", "failed", "not-checkable"]
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class SuiteRef:
    id: str
    path: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "path": self.path}


def _variants(d: Mapping[str, Any]) -> dict[VariantName, VariantStateRecord]:
    # the schema requires exactly these two keys
    return {"baseline": VariantStateRecord.from_json(d["baseline"]), "candidate": VariantStateRecord.from_json(d["candidate"])}


@dataclass(frozen=True, slots=True)
class TrialCount:
    """How many trials a group was planned with and how many ran (a group run with trials)."""

    planned: int
    ran: int

    def to_json(self) -> dict[str, int]:
        return {"planned": self.planned, "ran": self.ran}


@dataclass(frozen=True, slots=True)
class GroupRecord:
    """``group.json`` of a group that was loaded: its state and its variants' states."""

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
    trials: TrialCount | None = None
    #: tokens and cost per variant and in total, over every pi run of the group (trials, reruns)
    usage: VariantUsage | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "position": self.position, "path": self.path,
            "suite": self.suite.to_json() if self.suite is not None else None,
            "type": self.type, "state": self.state, "grade_state": self.grade_state,
            "grade_file": self.grade_file,
            "variants": {name: v.to_json() for name, v in self.variants.items()},
            "revision_check": self.revision_check.to_json() if self.revision_check is not None else None,
            "review_questions": list(self.review_questions),
            "publication_errors": list(self.publication_errors),
            **({"trials": self.trials.to_json()} if self.trials is not None else {}),
            **({"usage": self.usage.to_json()} if self.usage is not None else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GroupRecord:
        suite, revision = d["suite"], d.get("revision_check")
        return cls(
            id=d["id"], position=d["position"], path=d["path"],
            suite=SuiteRef(suite["id"], suite["path"]) if suite is not None else None,
            type=d["type"], state=d["state"], grade_state=d["grade_state"],
            variants=_variants(d["variants"]), review_questions=tuple(d["review_questions"]),
            grade_file=d.get("grade_file", "grade.json"),
            revision_check=RevisionState(revision["state"], revision["reason"]) if revision is not None else None,
            publication_errors=tuple(d.get("publication_errors", ())),
            trials=TrialCount(d["trials"]["planned"], d["trials"]["ran"]) if d.get("trials") else None,
            usage=VariantUsage.from_json(d["usage"]) if d.get("usage") else None,
        )


@dataclass(frozen=True, slots=True)
class InvalidGroupRecord:
    """``group.json`` of a suite entry whose group file could not be loaded (no grade)."""

    ref: str
    position: int
    variants: Mapping[VariantName, VariantStateRecord]
    definition_errors: tuple[str, ...]
    id: None = None
    state: Literal["invalid"] = "invalid"
    grade_state: None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": None, "ref": self.ref, "position": self.position, "state": "invalid", "grade_state": None,
            "variants": {name: v.to_json() for name, v in self.variants.items()},
            "definition_errors": list(self.definition_errors),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> InvalidGroupRecord:
        return cls(ref=d["ref"], position=d["position"], variants=_variants(d["variants"]),
                   definition_errors=tuple(d["definition_errors"]))


# --------------------------------------------------------------------------- result.json


@dataclass(frozen=True, slots=True)
class ResultGroup:
    """One selected group's line in ``result.json``; ``not-run`` (with ``reason``, and no
    ``dir``) for a group pytest stopped before it started."""

    dir: str | None
    id: str | None
    position: int
    state: GroupState | Literal["not-run"]
    reason: str | None
    grade_state: Literal["graded", "grade-error"] | None
    variants: Mapping[VariantName, RunState | Literal["not-run"]]
    comparisons: Mapping[str, str]
    #: for a group run with several trials: how many were planned and how many ran
    trials: TrialCount | None = None
    #: the group's tokens and cost (``None``: no pi run of it was recorded)
    usage: VariantUsage | None = None

    def to_json(self) -> dict[str, Any]:
        return {"dir": self.dir, "id": self.id, "position": self.position, "state": self.state,
                "reason": self.reason, "grade_state": self.grade_state, "variants": dict(self.variants),
                "comparisons": dict(self.comparisons),
                **({"trials": self.trials.to_json()} if self.trials is not None else {}),
                "usage": self.usage.to_json() if self.usage is not None else None}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ResultGroup:
        trials, usage = d.get("trials"), d.get("usage")
        return cls(d["dir"], d["id"], d["position"], d["state"], d.get("reason"), d["grade_state"],
                   dict(d["variants"]), dict(d["comparisons"]),
                   TrialCount(trials["planned"], trials["ran"]) if trials else None,
                   VariantUsage.from_json(usage) if usage else None)


@dataclass(frozen=True, slots=True)
class ProvenanceRecord:
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
    repeat_limit: int | None = None
    #: ``--skill-eval-stop`` in force (absent when off, and in results of older versions)
    stop: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "versions": dict(self.versions), "hosts": [dict(h) for h in self.hosts], "selection": dict(self.selection),
            "fail_on": self.fail_on, "trials": self.trials, "seed": self.seed, "pass_rate": self.pass_rate,
            "alpha": self.alpha, "provider_timeout_s": self.provider_timeout_s, "rerun_infra": self.rerun_infra,
            "argv": list(self.argv), "rerun_of": self.rerun_of,
        }
        if self.repeat_limit is not None:
            out["repeat_limit"] = self.repeat_limit
        if self.stop is not None and self.stop != "off":
            out["stop"] = self.stop
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ProvenanceRecord:
        return cls(d["versions"], tuple(d["hosts"]), d["selection"], d["fail_on"], d["trials"], d["seed"],
                   d["pass_rate"], d["alpha"], d["provider_timeout_s"], d["rerun_infra"], tuple(d["argv"]),
                   d.get("rerun_of"), d.get("repeat_limit"), d.get("stop"))


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """``result.json``: the batch summary, written once, last."""

    result_id: str
    state: BatchState
    groups: tuple[ResultGroup, ...]
    #: trials per variant, when more than one (a single run leaves it out)
    trials: int | None = None
    #: the scripted stand-in's seed, when trials ran or the user gave it (``--skill-eval-seed``)
    seed: str | None = None
    #: the shard of a ``--skill-eval-shard K/N`` run (selection.json has the whole split)
    shard: ShardIndex | None = None
    #: tokens and cost over every group (``None`` only in evidence written before it was recorded)
    usage: VariantUsage | None = None
    #: what produced the result (absent in results of older versions)
    provenance: ProvenanceRecord | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"result_id": self.result_id, "state": self.state}
        if self.trials is not None:
            out["trials"] = self.trials
        if self.seed is not None:
            out["seed"] = self.seed
        if self.shard is not None:
            out["shard"] = self.shard.to_json()
        out["groups"] = [g.to_json() for g in self.groups]
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        if self.provenance is not None:
            out["provenance"] = self.provenance.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ResultRecord:
        shard, usage = d.get("shard"), d.get("usage")
        return cls(d["result_id"], d["state"], tuple(ResultGroup.from_json(g) for g in d["groups"]), d.get("trials"),
                   d.get("seed"), ShardIndex(shard["index"], shard["count"]) if shard else None,
                   VariantUsage.from_json(usage) if usage else None,
                   ProvenanceRecord.from_json(d["provenance"]) if "provenance" in d else None)


# ----------------------------------------------------------------------- definition.json


@dataclass(frozen=True, slots=True)
class DefinitionRecord:
    """``definition.json``: the group definition exactly as it was read, and where from."""

    path: str
    definition: Mapping[str, JSON]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "definition": self.definition}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DefinitionRecord:
        return cls(d["path"], d["definition"])


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
    return kind.from_json(data)


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
