"""Running the selected groups: the engine configuration, one group at a time or on lanes.

The part of :class:`~pytest_skill_eval.plugin.session.SkillEvalSession` that starts
things. Nothing here runs until the first group item does, so collection and
``--collect-only`` never start a host or a model server. ``--skill-eval-jobs`` above 1
queues the group items to the lanes of :mod:`pytest_skill_eval.plugin.jobs`, in
:func:`start_order`.

Lazy on purpose (the plugin's entry point loads this module on every pytest run): the engine,
the driver (psutil and the launch layer), the host installer, the stopping rule (statistics),
the lanes (concurrent.futures) and the evidence records are imported where a group first needs them.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_skill_eval.definitions.model import Group, Suite
from pytest_skill_eval.errors import EvidenceError, HostError
from pytest_skill_eval.evidence import layout, store
from pytest_skill_eval.evidence.locate import resolve_result
from pytest_skill_eval.host.models import ModelRouter
from pytest_skill_eval.plugin.progress import LiveProgress
from pytest_skill_eval.plugin.settings import RunSettings, confinement_settings
from pytest_skill_eval.policy import FailOn, Judgement

if TYPE_CHECKING:
    from pytest_skill_eval.engine.config import EngineConfig
    from pytest_skill_eval.evidence.records import PlannedGroup, ShardRecord
    from pytest_skill_eval.host.install import HostInstallation
    from pytest_skill_eval.plugin.items import SkillEvalItem
    from pytest_skill_eval.plugin.jobs import LookAhead
    from pytest_skill_eval.sources.stored import StoredResult


class GroupRunner:
    """The session's running half (a base of ``SkillEvalSession``, which sets these attributes)."""

    config: pytest.Config
    root: Path
    result_dir: Path
    result_id: str
    settings: RunSettings
    fail_on: FailOn
    selected: frozenset[str]
    rerun: StoredResult | None
    progress: LiveProgress
    planned: list[PlannedGroup]
    #: the comparisons the run selected: the family a comparison's p-value is adjusted over
    family: int
    shard_record: ShardRecord | None
    _engine_config: EngineConfig | None
    _router: ModelRouter | None
    _lookahead: LookAhead | None
    _selection_written: bool

    def engine_config(self) -> EngineConfig:
        """Built on first use, so collection and --collect-only never start anything."""
        if self._engine_config is None:
            from pytest_skill_eval.decision.stopping import StopMode, StopRule
            from pytest_skill_eval.engine.config import EngineConfig
            from pytest_skill_eval.host.driver import DEFAULT_STALL_SECONDS, Safeguards
            from pytest_skill_eval.host.install import resolve_host

            opt = self.config.getoption
            explicit = opt("skill_eval_host") or self.config.getini("skill_eval_host") or None
            no_install = bool(opt("skill_eval_no_install"))
            hosts: list[HostInstallation] = []
            lock = threading.Lock()  # --skill-eval-jobs: lanes may ask at once; one resolves

            def host() -> HostInstallation:
                with lock:
                    if not hosts:
                        hosts.append(resolve_host(explicit, install_if_missing=not no_install,
                                                  progress=self.progress.announce))
                    return hosts[0]

            stall = opt("skill_eval_stall_timeout")
            self._router = ModelRouter(self.root, seed=self.settings.seed,
                                       scripts=self.rerun.script if self.rerun is not None else None,
                                       origins=self.rerun.script_origin if self.rerun is not None else None)
            layout.ensure_runs_dir(self.root)
            self._engine_config = EngineConfig(
                root=self.root,
                result_dir=self.result_dir,
                host=host,
                models=self._router,
                selected=self.selected,
                safeguards=Safeguards(stall_seconds=stall or DEFAULT_STALL_SECONDS,
                                      repeat_limit=self.settings.repeat_limit),
                user_models=Path(opt("skill_eval_models")).resolve() if opt("skill_eval_models") else None,
                auth_file=Path(opt("skill_eval_auth")).resolve() if opt("skill_eval_auth") else None,
                progress=self.progress,
                trials=self.settings.count,
                provider_timeout_s=self.settings.provider_timeout_s,
                rerun_infra=self.settings.rerun_infra,
                sources=self.rerun.sources if self.rerun is not None else None,
                confinement=confinement_settings(self.config),
                stop=StopRule(cast(StopMode, self.settings.stop), self.fail_on, self.settings.pass_rate,
                              self.settings.alpha),
                reuse_baseline=self.reuse_source(),
                seed=self.settings.seed,
            )
        return self._engine_config

    def reuse_source(self) -> Path | None:
        """``--skill-eval-reuse-baseline``'s stored result directory (a usage error when it names none)."""
        target = self.config.getoption("skill_eval_reuse_baseline")
        if not target:
            return None
        try:
            return resolve_result(str(target), self.root)
        except EvidenceError as exc:
            raise pytest.UsageError(f"--skill-eval-reuse-baseline: {exc}") from None

    def run_group(self, group: Group, position: int, suite: Suite | None = None) -> Judgement:
        """Run, persist and grade one group, then judge it from its persisted evidence."""
        from pytest_skill_eval.engine.group import run_group

        self.progress.start()
        config = self.engine_config()
        self.write_selection()
        outcome = run_group(self.arms(group), position, config, suite=suite)
        return self.judge(Path(outcome.group_dir))

    def arms(self, group: Group) -> Group:
        """What runs of *group*: as declared, or with ``--skill-eval-aa`` the candidate in both arms."""
        return group.candidate_against_itself() if self.settings.aa else group

    def run_item(self, item: SkillEvalItem, group: Group, position: int, suite: Suite | None = None) -> Judgement:
        """:meth:`run_group` for *item*; with ``--skill-eval-jobs`` above 1 its group runs on a
        lane (started, with every group item after it, when the first group item runs) and
        this waits for it."""
        if self.settings.jobs > 1:
            if self._lookahead is None:
                self._start_lookahead(item)
            assert self._lookahead is not None
            if self._lookahead.has(item.nodeid):
                return self.judge(self._lookahead.result(item.nodeid))
        return self.run_group(group, position, suite)  # one job, or an item run again (reruns)

    def _start_lookahead(self, first: SkillEvalItem) -> None:
        """Queue *first* and every group item after it to the lanes (see :func:`start_order`)."""
        from pytest_skill_eval.engine.group import run_group
        from pytest_skill_eval.plugin.jobs import Job, LookAhead

        self.progress.start()
        base = self.engine_config()
        self.write_selection()  # before any group starts
        items = first.session.items
        # the group items are of *first*'s class (which imports this module, so it is not imported here)
        chosen = [i for i in items[items.index(first):] if isinstance(i, type(first)) and i.strict_refusal is None]
        if any(i.group.runtime.host == "pi" for i in chosen):
            try:
                base.host()  # resolved (installed, if need be) here: its messages go to the terminal
            except HostError:
                pass  # each variant records the failure, as with one job
        lookahead = LookAhead(self.settings.jobs, show=self.progress)
        cfg = dataclasses.replace(base, progress=lookahead.post, cancel=lookahead.cancel_event)

        def job(index: int, item: SkillEvalItem) -> Job:
            def work() -> Path:
                return Path(run_group(self.arms(item.group), item.position, cfg, suite=item.suite).group_dir)
            return Job(index, item.nodeid, work)

        self._lookahead = lookahead
        lookahead.start([job(n, chosen[n]) for n in start_order(chosen, stop_early=bool(self.config.option.maxfail))])

    def cancel_jobs(self) -> None:
        """Ctrl-C: no queued group starts and every running variant is cancelled."""
        if self._lookahead is not None:
            self._lookahead.cancel()

    def write_selection(self) -> None:
        """``selection.json``, before this process writes its first group.

        The batch summary lists every selected group from it, including those that never
        started. Under xdist the controller collects nothing, so each worker writes it
        (the same content: xdist requires every worker to collect the same items).
        """
        if self._selection_written:
            return
        layout.ensure_runs_dir(self.root)
        from pytest_skill_eval.evidence.records import SelectionRecord, VariantName

        selection = SelectionRecord(tuple(cast("list[VariantName]", sorted(self.selected))), tuple(self.planned),
                                    self.shard_record)
        store.write_record(self.result_dir / layout.SELECTION_FILE, selection)
        self._selection_written = True

    def judge(self, group_dir: Path) -> Judgement:
        from pytest_skill_eval.engine.verdict import judge_group_dir

        return judge_group_dir(group_dir, fail_on=self.fail_on, pass_rate=self.settings.pass_rate,
                               alpha=self.settings.alpha, result_id=self.result_id, rules=self.settings.rules,
                               family=self.family, require_power=self.settings.require_power)


def start_order(items: Any, *, stop_early: bool) -> list[int]:
    """The order ``--skill-eval-jobs`` starts the groups of *items* in (indexes into *items*).

    Longest first, by declared turns (a group with more turns keeps its lane longer), ties
    in item order, so the last groups to start are the short ones and the lanes end close
    together. With ``-x``/``--maxfail`` (*stop_early*) in item order, so the first failure
    stops the run as early as it would with one job. Reports are in item order either way.
    """
    if stop_early:
        return list(range(len(items)))
    return sorted(range(len(items)), key=lambda n: -len(items[n].group.prompts))

