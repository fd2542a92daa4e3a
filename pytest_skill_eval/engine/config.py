"""What the engine needs from its caller, and what it hands back: configuration, backends, outcomes."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_skill_eval.decision.stopping import StopRule
from pytest_skill_eval.definitions.model import VARIANTS, Group, VariantName
from pytest_skill_eval.grading.aggregate import TrialGrade
from pytest_skill_eval.grading.results import GroupGrade
from pytest_skill_eval.host.confinement import Settings as ConfinementSettings
from pytest_skill_eval.host.driver import Safeguards
from pytest_skill_eval.host.install import HostInstallation
from pytest_skill_eval.host.launch import DEFAULT_PROVIDER_TIMEOUT_S

if TYPE_CHECKING:
    from pytest_skill_eval.sources.isolation import GroupSources

GUARD_PREFIX = "skill-eval guard blocked"
Progress = Callable[[str], None]


class ModelBackend(Protocol):
    """Chooses the provider for a group and supplies its ``models.json`` entries; names the
    script a scripted group runs from, which evidence stores and baseline reuse compares."""

    def providers_for(self, group: Group) -> tuple[str | None, str | None, dict[str, Any]]: ...

    def script_path(self, group: Group) -> Path | None:
        """The script file *group*'s model runs from; None when the backend runs no script for it."""
        ...

    def script_origin(self, path: Path) -> str:
        """Where a script file :meth:`script_path` named came from, as evidence names it."""
        ...


@dataclass(slots=True)
class EngineConfig:
    root: Path
    result_dir: Path
    host: Callable[[], HostInstallation]
    models: ModelBackend
    selected: frozenset[str] = frozenset(VARIANTS)
    safeguards: Safeguards = Safeguards()
    user_models: Path | None = None
    auth_file: Path | None = None
    progress: Progress = lambda _msg: None
    #: where the ``piflow`` host lives (a pi-compatible CLI); default: ``piflow`` on PATH
    piflow: str | None = None
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    #: trials per selected variant (1: the layout and evidence of a single run)
    trials: int = 1
    #: how often an infrastructure-failed variant is run again from scratch (--skill-eval-rerun-infra)
    rerun_infra: int = 0
    #: pi's provider request timeout, recorded in run.json (default: the emergency ceiling)
    provider_timeout_s: float = DEFAULT_PROVIDER_TIMEOUT_S
    #: set from another thread to cancel as Ctrl-C does (``--skill-eval-jobs``: groups run on
    #: threads, which no KeyboardInterrupt reaches); None: only a Ctrl-C in this thread cancels
    cancel: threading.Event | None = None
    #: where a group's inputs come from, by group and position (default: the definition root; a
    #: rerun: the stored result's object store)
    sources: Callable[[Group, int], GroupSources] | None = None
    #: the kernel confinement of every pi run (--skill-eval-confinement, --skill-eval-allow-*)
    confinement: ConfinementSettings = field(default_factory=ConfinementSettings)
    #: --skill-eval-stop and the policy settings its verdicts are the ones of (trials only)
    stop: StopRule = field(default_factory=StopRule)
    #: --skill-eval-reuse-baseline: the stored result whose baseline runs a group may reuse (None: never)
    reuse_baseline: Path | None = None
    #: the scripted stand-in's seed (recorded with reused runs: another seed is another sample)
    seed: str | None = None

    def group_sources(self, group: Group, position: int) -> GroupSources:
        if self.sources is not None:
            return self.sources(group, position)
        from pytest_skill_eval.sources.isolation import DeclaredSources

        return DeclaredSources(group, self.root)


@dataclass(frozen=True, slots=True)
class VariantOutcome:
    variant: VariantName
    state: str
    reason: str | None
    run_dir: Path


@dataclass(frozen=True, slots=True)
class GroupRunOutcome:
    group: Group
    position: int
    state: str
    group_dir: Path
    variants: Mapping[str, VariantOutcome]
    grade: GroupGrade | TrialGrade
