"""Typed records of ``selection.json``: what a run selected, and the shard split it is part of.

Also the shard index ``result.json`` records. Like every record, importable from
:mod:`pytest_skill_eval.evidence.records`, which reads them through their JSON Schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from pytest_skill_eval.codec import Layout, Stored, if_none, meta
from pytest_skill_eval.evidence.run_records import VariantName

# ------------------------------------------------------------------- shards (both files)


@dataclass(frozen=True, slots=True)
class ShardIndex(Stored):
    """Shard *index* (one-based) of *count*, as ``result.json`` records a sharded run."""

    index: int
    count: int


@dataclass(frozen=True, slots=True)
class ShardGroup(Stored):
    """One group of the whole split: its sharding key, suite position and shard."""

    key: str
    position: int
    shard: int


@dataclass(frozen=True, slots=True)
class ShardSettings(Stored):
    """What must agree between the shards of one result for ``skill-eval merge`` to combine them."""

    fail_on: str
    trials: int
    seed: str | None
    pass_rate: float
    alpha: float


@dataclass(frozen=True, slots=True)
class ShardRecord(Stored):
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


# ------------------------------------------------------------------------ selection.json


@dataclass(frozen=True, slots=True)
class PlannedGroup(Stored):
    """One collected group as ``selection.json`` lists it (``ref`` set for a suite entry that
    could not be loaded, whose ``id`` is then ``None``)."""

    STORED: ClassVar[Layout] = Layout(order=("nodeid", "position", "id", "ref", "dir"))
    nodeid: str
    position: int
    id: str | None
    dir: str
    ref: str | None = field(default=None, metadata=meta(omit=if_none))


@dataclass(frozen=True, slots=True)
class SelectionRecord(Stored):
    """``selection.json``: what this run selected, written before its first group, so the
    batch summary can list groups that never started."""

    variants: tuple[VariantName, ...]
    groups: tuple[PlannedGroup, ...]
    #: set by a ``--skill-eval-shard K/N`` run only
    shard: ShardRecord | None = field(default=None, metadata=meta(omit=if_none))
