"""One group's run as the engine carries it: what stays fixed from its first variant to its publication.

:func:`~pytest_skill_eval.engine.group.run_group` builds one :class:`GroupRun` after the shared
snapshots are taken and hands it down the loop (``run_variants`` → ``_run_with_reruns`` →
:func:`~pytest_skill_eval.engine.variant.run_variant`) and to the write boundary, so each of them
takes the run and only what varies: the trial and the variant. Where a trial's and a variant's
files go is decided here, once: a single run (one trial) keeps the spec's layout in the group
directory, several trials go under ``trials/NNN/`` with a scratch directory each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_skill_eval.definitions.model import Group, VariantName
from pytest_skill_eval.engine.config import EngineConfig
from pytest_skill_eval.evidence import layout, records, store
from pytest_skill_eval.redaction import Redactor
from pytest_skill_eval.sources.isolation import GroupSources, RevisionCheck

if TYPE_CHECKING:
    from pytest_skill_eval.engine.reuse_hook import BaselineReuse

__all__ = ["GroupRun", "Shared"]


@dataclass(frozen=True, slots=True)
class Shared:
    """What both variants of a group start from: the fixture and bundle snapshots, the
    description-only revision check, and the problem that makes both invalid, if any."""

    fixture: Path
    bundles: Path
    error: str | None
    revision: RevisionCheck | None
    #: where the variants' skills and context come from
    sources: GroupSources | None = None
    #: what this group's evidence snapshots stored, shared by both variants (and their
    #: reruns): an unchanged file is stored once and hard-linked from then on
    snapshots: store.SnapshotCache = field(default_factory=store.SnapshotCache, compare=False)


@dataclass(frozen=True, slots=True)
class GroupRun:
    """One group's run: the group, where it stands, where its evidence and scratch files go,
    what its variants share, how the caller configured the engine, what no evidence of it may
    hold, and the baseline reuse plan (``--skill-eval-reuse-baseline``; None without it)."""

    group: Group
    position: int
    suite: records.SuiteRef | None
    group_dir: Path
    scratch: Path
    shared: Shared
    cfg: EngineConfig
    redactor: Redactor
    reuse: BaselineReuse | None = None

    @property
    def single(self) -> bool:
        """A single run: one trial, stored as the spec fixes it (no ``trials/``)."""
        return self.cfg.trials == 1

    def trial_dir(self, trial: int) -> Path:
        """Where trial *trial*'s variants and grade are stored."""
        return self.group_dir if self.single else layout.trial_dir(self.group_dir, trial)

    def trial_scratch(self, trial: int) -> Path:
        """Trial *trial*'s scratch directory (removed after the trial when there are several)."""
        return self.scratch if self.single else self.scratch / f"trial-{trial}"

    def run_dir(self, trial: int, name: VariantName) -> Path:
        """Variant *name*'s evidence directory in trial *trial*."""
        return self.trial_dir(trial) / name

    def base(self, trial: int, name: VariantName) -> Path:
        """Variant *name*'s private scratch directory in trial *trial* (workspace, agent dir, home)."""
        return self.trial_scratch(trial) / name
