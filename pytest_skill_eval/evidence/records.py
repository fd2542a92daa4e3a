"""Typed records of the evidence files.

``run.json``, ``transcript.json``, ``context-observations.json``, ``group.json``,
``definition.json`` and ``result.json`` each have one record here.

Every evidence file is written from a record's ``to_json`` and read back through
:func:`read`, which checks the decoded JSON against the file's JSON Schema
(``schemas/evidence-*.schema.json``) before building the record, so a reader never sees a
half-shaped dict and a damaged file is reported as ``<file>: <pointer>: expected …, found …``.
``grade.json`` has its record in :mod:`.grading.results` (``GroupGrade``).

``to_json`` reproduces the key order of the files exactly (docs/evidence.md), so a file
read and written again is byte-for-byte the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

from pytest_skill_eval import schemas
from pytest_skill_eval.errors import EvidenceError, Problem
from pytest_skill_eval.observation import ContextRequest, ToolCall, Turn

RunState = Literal["complete", "invalid", "infrastructure-failed", "cancelled", "not-selected"]
GroupState = Literal["complete", "partially-complete", "invalid", "cancelled"]
BatchState = Literal["complete", "partially-complete", "invalid", "cancelled"]
VariantName = Literal["baseline", "candidate"]
RUN_STATES: tuple[RunState, ...] = get_args(RunState)
GROUP_STATES: tuple[GroupState, ...] = get_args(GroupState)
BATCH_STATES: tuple[BatchState, ...] = get_args(BatchState)

JSON = Any
"""A decoded JSON value carried as it was stored (definition echoes, pi's own reports)."""


# ------------------------------------------------------------------------------ run.json


@dataclass(frozen=True, slots=True)
class RunPaths:
    """Where the host saw the variant's resources (scratch locations, removed after the run)."""

    workspace: str
    skills: tuple[str, ...]
    target_file: str | None
    context: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "skills": list(self.skills), "target_file": self.target_file,
                "context": list(self.context)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RunPaths:
        return cls(d["workspace"], tuple(d["skills"]), d["target_file"], tuple(d["context"]))


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """Which tree the variant's skills and context were snapshotted from."""

    kind: Literal["working-tree", "git"]
    ref: str | None
    commit: str | None
    root: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "ref": self.ref, "commit": self.commit, "root": self.root}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SourceRecord:
        return cls(d["kind"], d["ref"], d["commit"], d["root"])


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """The model of a run: what pi used (``provider``/``model``, the first it named), what the
    definition declared (``None``: pi's own default), and every model pi's messages named."""

    provider: str | None
    model: str | None
    thinking: str | None
    declared: str | None = None
    used: tuple[Mapping[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "thinking": self.thinking,
                "declared": self.declared, "used": [dict(u) for u in self.used]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ModelRecord:
        return cls(d["provider"], d["model"], d["thinking"], d.get("declared"), tuple(d.get("used", ())))


@dataclass(frozen=True, slots=True)
class Usage:
    """Summed token usage and cost of assistant messages, as pi reports them."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total_tokens: float = 0.0
    cost: float = 0.0

    def to_json(self) -> dict[str, float]:
        return {"input": self.input, "output": self.output, "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write, "totalTokens": self.total_tokens, "cost": self.cost}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Usage:
        return cls(d["input"], d["output"], d["cacheRead"], d["cacheWrite"], d["totalTokens"], d["cost"])


@dataclass(frozen=True, slots=True)
class HostRunRecord:
    """What ``run.json`` records once pi ran: the launch, what the host registered, timings."""

    registered_tools: tuple[tuple[str, ...], ...]
    context_files: tuple[str, ...]
    host: Mapping[str, JSON]
    mode: Literal["json", "rpc"]
    model: ModelRecord
    argv: tuple[str, ...]
    env: Mapping[str, str]
    tools: tuple[str, ...]
    registered_skills: Mapping[str, JSON]
    registered_context: tuple[JSON, ...]
    returncode: int | None
    started_at: float
    ended_at: float
    turn_times: tuple[tuple[float | None, float | None], ...]
    usage: Usage
    fingerprints_changed: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunRecord:
    """``run.json``: the record of one variant, written last of its files.

    ``paths`` is ``None`` until the variant's workspace was prepared (stored as ``{}``);
    ``runtime`` echoes the definition's runtime once the variant started preparing;
    ``source`` is set once skills and context were snapshotted, ``ran`` once pi ran.
    """

    variant: VariantName
    group: str
    state: RunState
    reason: str | None
    paths: RunPaths | None = None
    runtime: Mapping[str, JSON] | None = None
    source: SourceRecord | None = None
    ran: HostRunRecord | None = None
    redactions: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "variant": self.variant, "group": self.group, "state": self.state, "reason": self.reason,
            "paths": self.paths.to_json() if self.paths is not None else {},
        }
        if self.runtime is not None:
            out["runtime"] = self.runtime
        if self.source is not None:
            out["source"] = self.source.to_json()
        if self.ran is not None:
            ran = self.ran
            out.update(
                registered_tools=[list(tools) for tools in ran.registered_tools],
                context_files=list(ran.context_files),
                host=ran.host,
                mode=ran.mode,
                model=ran.model.to_json(),
                argv=list(ran.argv),
                env=dict(ran.env),
                tools=list(ran.tools),
                registered_skills=ran.registered_skills,
                registered_context=list(ran.registered_context),
                returncode=ran.returncode,
                started_at=ran.started_at,
                ended_at=ran.ended_at,
                turn_times=[list(times) for times in ran.turn_times],
                usage=ran.usage.to_json(),
                fingerprints_changed=list(ran.fingerprints_changed),
            )
        if self.redactions:
            out["redactions"] = dict(sorted(self.redactions.items()))
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RunRecord:
        ran = None
        if "host" in d:
            ran = HostRunRecord(
                registered_tools=tuple(tuple(tools) for tools in d.get("registered_tools", ())),
                context_files=tuple(d.get("context_files", ())),
                host=d["host"],
                mode=d["mode"],
                model=ModelRecord.from_json(d["model"]),
                argv=tuple(d["argv"]),
                env=dict(d["env"]),
                tools=tuple(d["tools"]),
                registered_skills=d["registered_skills"],
                registered_context=tuple(d.get("registered_context", ())),
                returncode=d["returncode"],
                started_at=d["started_at"],
                ended_at=d["ended_at"],
                turn_times=tuple((times[0], times[1]) for times in d["turn_times"]),
                usage=Usage.from_json(d["usage"]),
                fingerprints_changed=tuple(d["fingerprints_changed"]),
            )
        return cls(
            variant=d["variant"],
            group=d["group"],
            state=d["state"],
            reason=d["reason"],
            paths=RunPaths.from_json(d["paths"]) if d["paths"] else None,
            runtime=d.get("runtime"),
            source=SourceRecord.from_json(d["source"]) if "source" in d else None,
            ran=ran,
            redactions=dict(d.get("redactions", {})),
        )


# ---------------------------------------------------------------------------- group.json


@dataclass(frozen=True, slots=True)
class VariantState:
    state: RunState
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "reason": self.reason}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> VariantState:
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


def _variants(d: Mapping[str, Any]) -> dict[VariantName, VariantState]:
    # the schema requires exactly these two keys
    return {"baseline": VariantState.from_json(d["baseline"]), "candidate": VariantState.from_json(d["candidate"])}


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
    variants: Mapping[VariantName, VariantState]
    review_questions: tuple[str, ...]
    grade_file: str = "grade.json"
    revision_check: RevisionState | None = None
    publication_errors: tuple[str, ...] = ()

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
        )


@dataclass(frozen=True, slots=True)
class InvalidGroupRecord:
    """``group.json`` of a suite entry whose group file could not be loaded (no grade)."""

    ref: str
    position: int
    variants: Mapping[VariantName, VariantState]
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

    def to_json(self) -> dict[str, Any]:
        return {"dir": self.dir, "id": self.id, "position": self.position, "state": self.state,
                "reason": self.reason, "grade_state": self.grade_state, "variants": dict(self.variants),
                "comparisons": dict(self.comparisons)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ResultGroup:
        return cls(d["dir"], d["id"], d["position"], d["state"], d.get("reason"), d["grade_state"],
                   dict(d["variants"]), dict(d["comparisons"]))


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """``result.json``: the batch summary, written once, last."""

    result_id: str
    state: BatchState
    groups: tuple[ResultGroup, ...]

    def to_json(self) -> dict[str, Any]:
        return {"result_id": self.result_id, "state": self.state, "groups": [g.to_json() for g in self.groups]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ResultRecord:
        return cls(d["result_id"], d["state"], tuple(ResultGroup.from_json(g) for g in d["groups"]))


# ------------------------------------------------------------------------ selection.json


@dataclass(frozen=True, slots=True)
class PlannedGroup:
    """One collected group as ``selection.json`` lists it (``ref`` set for a suite entry that
    could not be loaded, whose ``id`` is then ``None``)."""

    nodeid: str
    position: int
    id: str | None
    dir: str
    ref: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"nodeid": self.nodeid, "position": self.position, "id": self.id}
        if self.ref is not None:
            out["ref"] = self.ref
        out["dir"] = self.dir
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PlannedGroup:
        return cls(d["nodeid"], d["position"], d["id"], d["dir"], d.get("ref"))


@dataclass(frozen=True, slots=True)
class SelectionRecord:
    """``selection.json``: what this run selected, written before its first group, so the
    batch summary can list groups that never started."""

    variants: tuple[VariantName, ...]
    groups: tuple[PlannedGroup, ...]

    def to_json(self) -> dict[str, Any]:
        return {"variants": list(self.variants), "groups": [g.to_json() for g in self.groups]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SelectionRecord:
        return cls(tuple(d["variants"]), tuple(PlannedGroup.from_json(g) for g in d["groups"]))


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


# ------------------------------------------------------------------------ transcript.json


def _tool_call_json(c: ToolCall) -> dict[str, Any]:
    return {"id": c.id, "name": c.name, "arguments": c.arguments, "result_text": c.result_text,
            "is_error": c.is_error, "blocked": c.blocked, "event_index": c.event_index}


@dataclass(frozen=True, slots=True)
class TranscriptTurn:
    """One declared turn as stored: what grading sees (:class:`~.observation.Turn`), its
    token usage, wall-clock times and the range of ``events.jsonl`` lines it spans."""

    turn: Turn
    usage: Usage
    started_at: float | None
    ended_at: float | None
    events: tuple[int, int | None]

    def to_json(self) -> dict[str, Any]:
        t = self.turn
        return {
            "index": t.index, "prompt": t.prompt, "sent": t.sent, "response": t.response,
            "stop_reason": t.stop_reason, "error": t.error, "settled": t.settled,
            "tool_calls": [_tool_call_json(c) for c in t.tool_calls],
            "usage": self.usage.to_json(), "started_at": self.started_at, "ended_at": self.ended_at,
            "events": list(self.events),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TranscriptTurn:
        index = d["index"]
        turn = Turn(
            index=index, prompt=d["prompt"], sent=d["sent"], response=d["response"],
            stop_reason=d["stop_reason"], error=d["error"], settled=d["settled"],
            tool_calls=tuple(
                ToolCall(turn=index, id=c["id"], name=c["name"], arguments=c["arguments"],
                         result_text=c["result_text"], is_error=c["is_error"], blocked=c["blocked"],
                         event_index=c["event_index"])
                for c in d["tool_calls"]
            ),
        )
        return cls(turn, Usage.from_json(d["usage"]), d["started_at"], d["ended_at"],
                   (d["events"][0], d["events"][1]))


@dataclass(frozen=True, slots=True)
class TranscriptRecord:
    """``transcript.json``: one entry per declared turn that started."""

    turns: tuple[TranscriptTurn, ...]

    def to_json(self) -> dict[str, Any]:
        return {"turns": [t.to_json() for t in self.turns]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TranscriptRecord:
        return cls(tuple(TranscriptTurn.from_json(t) for t in d["turns"]))


@dataclass(frozen=True, slots=True)
class ContextObservations:
    """``context-observations.json``: the system prompt and provider context of each model request."""

    requests: tuple[ContextRequest, ...]

    def to_json(self) -> list[dict[str, Any]]:
        return [{"turn": r.turn, "request": r.request, "system_prompt": r.system_prompt,
                 "provider_context": r.provider_context} for r in self.requests]

    @classmethod
    def from_json(cls, d: Sequence[Mapping[str, Any]]) -> ContextObservations:
        return cls(tuple(ContextRequest(r["turn"], r["request"], r["system_prompt"], r["provider_context"])
                         for r in d))


# -------------------------------------------------------------------------------- reading

Record = TypeVar("Record", RunRecord, GroupRecord, InvalidGroupRecord, ResultRecord, DefinitionRecord,
                 TranscriptRecord, ContextObservations, SelectionRecord)

_SCHEMAS: dict[type, str] = {
    RunRecord: "evidence-run",
    GroupRecord: "evidence-group",
    InvalidGroupRecord: "evidence-group",
    ResultRecord: "evidence-result",
    DefinitionRecord: "evidence-definition",
    TranscriptRecord: "evidence-transcript",
    ContextObservations: "evidence-context-observations",
    SelectionRecord: "evidence-selection",
}


def problems(kind: type, data: Any) -> list[Problem]:
    """Why *data* is not a stored record of *kind* (empty when it is)."""
    return sorted(schemas.problems(_SCHEMAS[kind], data), key=Problem.sort_key)


def parse(kind: type[Record], data: Any, source: Path | str) -> Record:
    """The record of *kind* stored as *data*; :class:`EvidenceError` naming *source* when it is not one."""
    found = problems(kind, data)
    if found:
        raise EvidenceError("\n".join(p.render(str(source)) for p in found))
    return kind.from_json(data)


def parse_group(data: Any, source: Path | str) -> GroupRecord | InvalidGroupRecord:
    """A ``group.json`` of either shape: a loaded group, or (``id`` null) a suite entry that could not load."""
    if isinstance(data, dict) and "id" in data and data["id"] is None:
        return parse(InvalidGroupRecord, data, source)
    return parse(GroupRecord, data, source)
