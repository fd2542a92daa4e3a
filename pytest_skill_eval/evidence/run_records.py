"""Typed records of what a variant's run directory holds: ``run.json``, ``transcript.json``
and ``context-observations.json`` (see :mod:`.records` for the rest, and for reading).

Stored through :mod:`pytest_skill_eval.codec`: the key order is the field order, and each
exception (a key left out when empty, ``paths`` stored as ``{}``, the host part inline in
``run.json``) is declared on its field."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_skill_eval.codec import Stored, if_empty, if_none, meta
from pytest_skill_eval.observation import ContextRequest, RunState, Turn
from pytest_skill_eval.usage import Usage

GroupState = Literal["complete", "partially-complete", "invalid", "cancelled"]
BatchState = Literal["complete", "partially-complete", "invalid", "cancelled"]
VariantName = Literal["baseline", "candidate"]

JSON = Any
"""A decoded JSON value carried as it was stored (definition echoes, pi's own reports)."""


# ------------------------------------------------------------------------------ run.json


@dataclass(frozen=True, slots=True)
class RunPaths(Stored):
    """Where the host saw the variant's resources (scratch locations, removed after the run)."""

    workspace: str
    skills: tuple[str, ...]
    target_file: str | None
    context: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SourceRecord(Stored):
    """Which tree the variant's skills and context were snapshotted from."""

    kind: Literal["working-tree", "git"]
    ref: str | None
    commit: str | None
    root: str


@dataclass(frozen=True, slots=True)
class ModelRecord(Stored):
    """The model of a run: what pi used (``provider``/``model``, the first it named), what the
    definition declared (``None``: pi's own default), and every model pi's messages named."""

    provider: str | None
    model: str | None
    thinking: str | None
    declared: str | None = None
    used: tuple[Mapping[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class HostRunRecord(Stored):
    """What ``run.json`` records once pi ran: the launch, what the host registered, timings."""

    registered_tools: tuple[tuple[str, ...], ...] = field(metadata=meta(absent=()))
    context_files: tuple[str, ...] = field(metadata=meta(absent=()))
    host: Mapping[str, JSON]
    mode: Literal["json", "rpc"]
    model: ModelRecord
    argv: tuple[str, ...]
    env: Mapping[str, str]
    tools: tuple[str, ...]
    registered_skills: Mapping[str, JSON]
    registered_context: tuple[JSON, ...] = field(metadata=meta(absent=()))
    returncode: int | None
    started_at: float
    ended_at: float
    turn_times: tuple[tuple[float | None, float | None], ...]
    usage: Usage
    fingerprints_changed: tuple[str, ...]
    #: pi's provider request timeout for this run (seconds); None in evidence written before it was recorded
    provider_timeout_s: float | None = field(default=None, metadata=meta(omit=if_none))
    #: the repeated cycle of tool calls that stopped the run (no-progress detection); None: none did
    no_progress: Mapping[str, JSON] | None = field(default=None, metadata=meta(omit=if_none))


@dataclass(frozen=True, slots=True)
class AttemptRecord(Stored):
    """An earlier attempt of a variant that was run again (``--skill-eval-rerun-infra``)."""

    attempt: int
    state: RunState
    reason: str | None
    #: its evidence directory, relative to the group directory (``<variant>-attempts/N``)
    evidence: str


@dataclass(frozen=True, slots=True)
class StoredFile(Stored):
    """One input file as the variant got it: its object in the result's store, and its mode."""

    sha256: str
    mode: str


@dataclass(frozen=True, slots=True)
class StoredScript(Stored):
    """The scripted stand-in's script the variant's model ran from."""

    model: str
    path: str
    sha256: str


@dataclass(frozen=True, slots=True)
class SnapshotRecord(Stored):
    """What a variant got, byte for byte, in the result's ``objects/`` store.

    ``files`` maps each path as the variant got it, relative to its scratch directory
    (``workspace/...`` before the run, ``resources/skills/<i>/...``,
    ``resources/context/<i>/...``, ``extensions/<i>/...``) to its stored object.
    """

    files: Mapping[str, StoredFile] = field(metadata=meta(sort=True))
    script: StoredScript | None = field(default=None, metadata=meta(omit=if_none))


@dataclass(frozen=True, slots=True)
class RunRecord(Stored):
    """``run.json``: the record of one variant, written last of its files.

    ``paths`` is ``None`` until the variant's workspace was prepared (stored as ``{}``);
    ``runtime`` echoes the definition's runtime once the variant started preparing;
    ``source`` is set once skills and context were snapshotted, ``ran`` once pi ran.
    """

    variant: VariantName
    group: str
    state: RunState
    reason: str | None
    paths: RunPaths | None = field(default=None, metadata=meta(none_as={}))
    runtime: Mapping[str, JSON] | None = field(default=None, metadata=meta(omit=if_none))
    source: SourceRecord | None = field(default=None, metadata=meta(omit=if_none))
    #: stored inline: its keys in run.json itself, present when ``host`` is
    ran: HostRunRecord | None = field(default=None, metadata=meta(inline="host"))
    redactions: Mapping[str, int] = field(default_factory=dict, metadata=meta(omit=if_empty, sort=True))
    #: the earlier attempts of a variant run again after an infrastructure failure
    attempts: tuple[AttemptRecord, ...] = field(default=(), metadata=meta(omit=if_empty))
    #: the inputs the variant got, in the result's object store (none in results of older versions)
    snapshot: SnapshotRecord | None = field(default=None, metadata=meta(omit=if_none))
    #: how the kernel confined pi: mechanism, version, mode, guard, effective rules (None: not recorded)
    confinement: Mapping[str, JSON] | None = field(default=None, metadata=meta(omit=if_none))


# ------------------------------------------------------------------------ transcript.json


@dataclass(frozen=True, slots=True)
class TranscriptTurn(Stored):
    """One declared turn as stored: what grading sees (:class:`~.observation.Turn`), its
    token usage, wall-clock times and the range of ``events.jsonl`` lines it spans."""

    #: stored inline: the turn's keys first (``index`` … ``tool_calls``)
    turn: Turn = field(metadata=meta(inline="index"))
    usage: Usage
    started_at: float | None
    ended_at: float | None
    events: tuple[int, int | None]


@dataclass(frozen=True, slots=True)
class TranscriptRecord(Stored):
    """``transcript.json``: one entry per declared turn that started."""

    turns: tuple[TranscriptTurn, ...]


@dataclass(frozen=True, slots=True)
class ContextObservations(Stored):
    """``context-observations.json``: the system prompt and provider context of each model request."""

    #: the whole document: an array, one object per request
    requests: tuple[ContextRequest, ...] = field(metadata=meta(whole=True))


# ----------------------------------------------------------------------- fingerprints.json


@dataclass(frozen=True, slots=True)
class FingerprintsRecord(Stored):
    """``fingerprints.json``: the sha256 of every file of each declared resource (skills,
    context, bundles), keyed by the resource's scratch path, before and after the run."""

    before: Mapping[str, Mapping[str, str]]
    after: Mapping[str, Mapping[str, str]]


# ------------------------------------------------------------- <tree>.manifest.json


@dataclass(frozen=True, slots=True)
class ManifestEntry(Stored):
    """One regular file of a snapshotted tree: its size and the sha256 of its stored bytes."""

    size: int = field(metadata=meta(read=int))
    sha256: str = field(metadata=meta(read=str))


@dataclass(frozen=True, slots=True)
class ManifestRecord(Stored):
    """``<tree>.manifest.json`` beside a snapshotted tree (``workspace``, ``workspace-initial``,
    ``turns/<n>/workspace``, ``session``): every regular file stored under it, by
    slash-separated relative path, as it was stored (after redaction). Grading and the views
    compare trees by these digests and read only the files a check names."""

    files: Mapping[str, ManifestEntry]

    def to_bytes(self) -> bytes:
        """The stored text: one line per file (``grep``-able; json's indenting encoder is pure
        Python and costs ~0.15 s per 10,000 entries, this a tenth of it)."""
        lines = [f'    {json.dumps(k, ensure_ascii=False)}: {{"size": {v.size}, "sha256": "{v.sha256}"}}'
                 for k, v in self.files.items()]
        body = ",\n".join(lines)
        return ('{\n  "files": {\n' + body + "\n  }\n}\n" if lines else '{\n  "files": {}\n}\n').encode("utf-8")
