"""Typed records of ``selection.json``: what a run selected, and the shard split it is part of.

Also the shard index ``result.json`` records. Like every record, importable from
:mod:`pytest_skill_eval.evidence.records`, which reads them through their JSON Schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_skill_eval.evidence.run_records import VariantName

# ------------------------------------------------------------------- shards (both files)


@dataclass(frozen=True, slots=True)
class ShardIndex:
    """Shard *index* (one-based) of *count*, as ``result.json`` records a sharded run."""

    index: int
    count: int

    def to_json(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}


@dataclass(frozen=True, slots=True)
class ShardGroup:
    """One group of the whole split: its sharding key, suite position and shard."""

    key: str
    position: int
    shard: int

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "position": self.position, "shard": self.shard}


@dataclass(frozen=True, slots=True)
class ShardSettings:
    """What must agree between the shards of one result for ``skill-eval merge`` to combine them."""

    fail_on: str
    trials: int
    seed: str | None
    pass_rate: float
    alpha: float

    def to_json(self) -> dict[str, Any]:
        return {"fail_on": self.fail_on, "trials": self.trials, "seed": self.seed, "pass_rate": self.pass_rate,
                "alpha": self.alpha}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ShardSettings:
        return cls(d["fail_on"], d["trials"], d["seed"], d["pass_rate"], d["alpha"])


@dataclass(frozen=True, slots=True)
class ShardRecord:
    """``selection.json`` ``shard``: which shard this run is, and the whole split it is part of.

    ``groups`` lists every group the run selected before sharding (the full suite without
    ``-k``/``-m``), in position order, each with its shard, so ``skill-eval merge`` can tell a
    missing shard from an empty one; ``fingerprint`` is the sha256 of the definitions.
    """

    index: int
    count: int
    groups: tuple[ShardGroup, ...]
    fingerprint: str
    settings: ShardSettings

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "count": self.count, "groups": [g.to_json() for g in self.groups],
                "fingerprint": self.fingerprint, "settings": self.settings.to_json()}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ShardRecord:
        return cls(d["index"], d["count"], tuple(ShardGroup(g["key"], g["position"], g["shard"]) for g in d["groups"]),
                   d["fingerprint"], ShardSettings.from_json(d["settings"]))


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
    #: set by a ``--skill-eval-shard K/N`` run only
    shard: ShardRecord | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"variants": list(self.variants), "groups": [g.to_json() for g in self.groups]}
        if self.shard is not None:
            out["shard"] = self.shard.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SelectionRecord:
        shard = d.get("shard")
        return cls(tuple(d["variants"]), tuple(PlannedGroup.from_json(g) for g in d["groups"]),
                   ShardRecord.from_json(shard) if shard else None)
