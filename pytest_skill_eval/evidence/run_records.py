"""Typed records of what a variant's run directory holds: ``run.json``, ``transcript.json``
and ``context-observations.json`` (see :mod:`.records` for the rest, and for reading)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_skill_eval.observation import ContextRequest, RunState, ToolCall, Turn
from pytest_skill_eval.usage import Usage

GroupState = Literal["complete", "partially-complete", "invalid", "cancelled"]
BatchState = Literal["complete", "partially-complete", "invalid", "cancelled"]
VariantName = Literal["baseline", "candidate"]

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
    #: pi's provider request timeout for this run (seconds); None in evidence written before it was recorded
    provider_timeout_s: float | None = None
    #: the repeated cycle of tool calls that stopped the run (no-progress detection); None: none did
    no_progress: Mapping[str, JSON] | None = None


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """An earlier attempt of a variant that was run again (``--skill-eval-rerun-infra``)."""

    attempt: int
    state: RunState
    reason: str | None
    #: its evidence directory, relative to the group directory (``<variant>-attempts/N``)
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "state": self.state, "reason": self.reason, "evidence": self.evidence}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> AttemptRecord:
        return cls(d["attempt"], d["state"], d["reason"], d["evidence"])


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One input file as the variant got it: its object in the result's store, and its mode."""

    sha256: str
    mode: str

    def to_json(self) -> dict[str, str]:
        return {"sha256": self.sha256, "mode": self.mode}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> StoredFile:
        return cls(d["sha256"], d["mode"])


@dataclass(frozen=True, slots=True)
class StoredScript:
    """The scripted stand-in's script the variant's model ran from."""

    model: str
    path: str
    sha256: str

    def to_json(self) -> dict[str, str]:
        return {"model": self.model, "path": self.path, "sha256": self.sha256}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> StoredScript:
        return cls(d["model"], d["path"], d["sha256"])


@dataclass(frozen=True, slots=True)
class SnapshotRecord:
    """What a variant got, byte for byte, in the result's ``objects/`` store.

    ``files`` maps each path as the variant got it, relative to its scratch directory
    (``workspace/...`` before the run, ``resources/skills/<i>/...``,
    ``resources/context/<i>/...``, ``extensions/<i>/...``) to its stored object.
    """

    files: Mapping[str, StoredFile]
    script: StoredScript | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"files": {rel: f.to_json() for rel, f in sorted(self.files.items())}}
        if self.script is not None:
            out["script"] = self.script.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SnapshotRecord:
        return cls({rel: StoredFile.from_json(f) for rel, f in d["files"].items()},
                   StoredScript.from_json(d["script"]) if d.get("script") else None)


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
    #: the earlier attempts of a variant run again after an infrastructure failure
    attempts: tuple[AttemptRecord, ...] = ()
    #: the inputs the variant got, in the result's object store (none in results of older versions)
    snapshot: SnapshotRecord | None = None
    #: how the kernel confined pi: mechanism, version, mode, guard, effective rules (None: not recorded)
    confinement: Mapping[str, JSON] | None = None

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
            if ran.provider_timeout_s is not None:
                out["provider_timeout_s"] = ran.provider_timeout_s
            if ran.no_progress is not None:
                out["no_progress"] = dict(ran.no_progress)
        if self.redactions:
            out["redactions"] = dict(sorted(self.redactions.items()))
        if self.attempts:
            out["attempts"] = [a.to_json() for a in self.attempts]
        if self.snapshot is not None:
            out["snapshot"] = self.snapshot.to_json()
        if self.confinement is not None:
            out["confinement"] = self.confinement
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
                provider_timeout_s=d.get("provider_timeout_s"),
                no_progress=d.get("no_progress"),
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
            attempts=tuple(AttemptRecord.from_json(a) for a in d.get("attempts", ())),
            snapshot=SnapshotRecord.from_json(d["snapshot"]) if "snapshot" in d else None,
            confinement=d.get("confinement"),
        )


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


# ----------------------------------------------------------------------- fingerprints.json


@dataclass(frozen=True, slots=True)
class FingerprintsRecord:
    """``fingerprints.json``: the sha256 of every file of each declared resource (skills,
    context, bundles), keyed by the resource's scratch path, before and after the run."""

    before: Mapping[str, Mapping[str, str]]
    after: Mapping[str, Mapping[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"before": {k: dict(v) for k, v in self.before.items()},
                "after": {k: dict(v) for k, v in self.after.items()}}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> FingerprintsRecord:
        return cls({k: dict(v) for k, v in d["before"].items()}, {k: dict(v) for k, v in d["after"].items()})


# ------------------------------------------------------------- <tree>.manifest.json


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One regular file of a snapshotted tree: its size and the sha256 of its stored bytes."""

    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class ManifestRecord:
    """``<tree>.manifest.json`` beside a snapshotted tree (``workspace``, ``workspace-initial``,
    ``turns/<n>/workspace``, ``session``): every regular file stored under it, by
    slash-separated relative path, as it was stored (after redaction). Grading and the views
    compare trees by these digests and read only the files a check names."""

    files: Mapping[str, ManifestEntry]

    def to_json(self) -> dict[str, Any]:
        return {"files": {k: {"size": v.size, "sha256": v.sha256} for k, v in self.files.items()}}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ManifestRecord:
        return cls({k: ManifestEntry(int(v["size"]), str(v["sha256"])) for k, v in d["files"].items()})

    def to_bytes(self) -> bytes:
        """The stored text: one line per file (``grep``-able; json's indenting encoder is pure
        Python and costs ~0.15 s per 10,000 entries, this a tenth of it)."""
        lines = [f'    {json.dumps(k, ensure_ascii=False)}: {{"size": {v.size}, "sha256": "{v.sha256}"}}'
                 for k, v in self.files.items()]
        body = ",\n".join(lines)
        return ('{\n  "files": {\n' + body + "\n  }\n}\n" if lines else '{\n  "files": {}\n}\n').encode("utf-8")
