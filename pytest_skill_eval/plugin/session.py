"""The per-process skill-eval session: its state, and the hooks that keep it (one result id, reports, session end).

Four parts make the session: this module (the pytest session state: options read once,
reports, the session's end), :mod:`~pytest_skill_eval.plugin.selection` (declared paths,
positions, ``--skill-eval-group``, ``--skill-eval-shard``), :mod:`~pytest_skill_eval.plugin.runner`
(the engine configuration, one group or ``--skill-eval-jobs`` lanes) and
:mod:`~pytest_skill_eval.plugin.summary` (the terminal summary).

Registered as a plugin only when a run declares skill-eval paths, so a plain pytest run
pays nothing. Nothing here starts a host or a model server until the first group runs,
so ``--collect-only`` never does.

Under xdist every worker shares the controller's result id and writes its groups into the
one result directory; only the controller (or a run without xdist) prints the summary,
writes the JUnit entries and writes the batch summary ``result.json``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_skill_eval.definitions.plan import plan_line
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import layout
from pytest_skill_eval.evidence.locate import resolve_result
from pytest_skill_eval.plugin.declared import resolve_declared
from pytest_skill_eval.plugin.progress import LiveProgress
from pytest_skill_eval.plugin.report import write_html_report
from pytest_skill_eval.plugin.runner import GroupRunner
from pytest_skill_eval.plugin.selection import GroupSelection, shard_option
from pytest_skill_eval.plugin.settings import RunSettings, confinement_settings, run_settings
from pytest_skill_eval.plugin.summary import TerminalSummary
from pytest_skill_eval.policy import (
    DEFAULT_FAIL_ON,
    STATUS_PROPERTY,
    FailOn,
    Judgement,
    parse_fail_on,
)
from pytest_skill_eval.safe_text import neutralise
from pytest_skill_eval.services.cancellation import is_cancellation

if TYPE_CHECKING:
    from pytest_skill_eval.definitions.sharding import Shard
    from pytest_skill_eval.engine.config import EngineConfig
    from pytest_skill_eval.evidence.decision_records import DecisionRecord
    from pytest_skill_eval.evidence.records import PlannedGroup, ShardRecord
    from pytest_skill_eval.host.models import ModelRouter
    from pytest_skill_eval.plugin.jobs import LookAhead
    from pytest_skill_eval.sources.stored import StoredResult

#: user property set by an item whose evidence could not be written (crosses xdist in reports)
PERSISTENCE_FAILED = "skill_eval.persistence_failed"
#: user property: the comparisons the run selected (the family of the adjustment), for the xdist controller
FAMILY_PROPERTY = "skill_eval.comparisons_in_run"
SESSION_KEY = pytest.StashKey["SkillEvalSession"]()
RESULT_ID_KEY = "skill_eval_result_id"
SEED_KEY = "skill_eval_seed"


@dataclass(frozen=True, slots=True)
class Reported:
    """What the session remembers of one group item's report."""

    nodeid: str
    location: tuple[str, int | None, str]
    outcome: str
    verdict: Judgement | None
    #: what to do when the group's variants got byte-identical skills and context (None: they differ)
    identical: str | None = None


class SkillEvalSession(GroupSelection, GroupRunner, TerminalSummary):
    """State of one pytest process: what is declared and selected, and what was reported."""

    def __init__(self, config: pytest.Config, root: Path, declared: list[Path], *, result_id: str,
                 is_worker: bool, fail_on: FailOn, group_selector: str | None, variant: str | None,
                 settings: RunSettings | None = None, shard: Shard | None = None,
                 rerun: StoredResult | None = None) -> None:
        self.config = config
        #: ``--skill-eval-shard K/N``, and the split :meth:`split_shard` made (recorded in selection.json)
        self.shard = shard
        self.shard_record: ShardRecord | None = None
        #: the stored result whose groups this run runs again from its stored inputs (skill-eval rerun)
        self.rerun = rerun
        self.settings = settings or RunSettings()
        self.root = root
        self.declared = declared
        self.result_id = result_id
        self.is_worker = is_worker
        self.result_dir = root / layout.RUNS_DIR / result_id
        self.fail_on = fail_on
        self.group_selector = group_selector
        self.selected = frozenset([variant] if variant else ["baseline", "candidate"])
        #: True when the run was narrowed to the declared paths (no positional arguments).
        self.only_declared = False
        self.progress = LiveProgress(config, enabled=not is_worker, trials=self.settings.count)
        self._bases: dict[Path, int] = {}
        self._next_base = 0
        self._selected_position: int | None = None
        self._engine_config: EngineConfig | None = None
        self._router: ModelRouter | None = None
        #: ``--skill-eval-jobs`` above 1: the lanes, started when the first group item runs
        self._lookahead: LookAhead | None = None
        self.reported: dict[str, Reported] = {}
        self.persistence_failure: str | None = None
        #: the selected groups, in collection order, as ``selection.json`` records them
        self.planned: list[PlannedGroup] = []
        self.family = 0
        self._selection_written = False
        #: Ctrl-C seen (during the run, or while the session finished)
        self.cancelled = False
        #: why pytest stopped before every selected group ran (-x, --maxfail), if it did
        self.stopped: str | None = None
        #: where ``--skill-eval-html`` wrote the report, once it did
        self.html_report: Path | None = None
        #: why the result's decision failed the run (see :meth:`gate`)
        self.gate_lines: list[str] = []

    @classmethod
    def from_config(cls, config: pytest.Config) -> SkillEvalSession | None:
        """The session for this run, or None when no skill-eval paths are declared."""
        option_paths = [Path(p) for p in config.getoption("skill_eval")]
        ini_paths = [Path(p) for p in config.getini("skill_eval_paths")]
        group_selector: str | None = config.getoption("skill_eval_group")
        variant: str | None = config.getoption("skill_eval_variant")
        shard_text: str | None = config.getoption("skill_eval_shard")
        rerun = _stored_result(config, option_paths, group_selector)
        if rerun is None and not option_paths and not ini_paths:
            for name, value in (("--skill-eval-group", group_selector), ("--skill-eval-variant", variant),
                                ("--skill-eval-shard", shard_text)):
                if value is not None:
                    raise pytest.UsageError(f"{name} needs a suite or group: add --skill-eval PATH (or set skill_eval_paths in the ini file)")
            return None
        root = Path(config.invocation_params.dir).resolve()
        # --skill-eval on the command line replaces skill_eval_paths, as arguments replace testpaths
        source = "--skill-eval" if option_paths else "skill_eval_paths"
        declared = (rerun.definition_files() if rerun is not None else
                    resolve_declared(option_paths or ini_paths, root, source, norecurse=config.getini("norecursedirs")))
        raw_fail_on = config.getoption("skill_eval_fail_on") or config.getini("skill_eval_fail_on") or DEFAULT_FAIL_ON
        try:
            fail_on = parse_fail_on(raw_fail_on, "--skill-eval-fail-on" if config.getoption("skill_eval_fail_on") else "skill_eval_fail_on")
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        workerinput = getattr(config, "workerinput", None)
        result_id = workerinput.get(RESULT_ID_KEY) if workerinput else None
        settings = run_settings(config, workerinput.get(SEED_KEY) if workerinput else None)
        confinement_settings(config)  # a bad value is a usage error before anything runs
        reuse = config.getoption("skill_eval_reuse_baseline")
        if reuse:  # a result that is not there is a usage error before anything runs
            try:
                resolve_result(str(reuse), root)
            except EvidenceError as exc:
                raise pytest.UsageError(f"--skill-eval-reuse-baseline: {exc}") from None
        shard = shard_option(shard_text, settings, rerun=rerun is not None)
        session = cls(config, root, declared, result_id=result_id or layout.new_result_id(),
                      is_worker=workerinput is not None, fail_on=fail_on,
                      group_selector=group_selector, variant=variant, settings=settings, shard=shard,
                      rerun=rerun)
        session.check_group_selector()
        return session

    # -- hooks -----------------------------------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.planned = [entry() for item in session.items if callable(entry := getattr(item, "plan_entry", None))]
        self.family = self.count_comparisons(session.items)
        if (self.shard_record is not None and not self.config.option.collectonly
                and not self.config.getoption("skill_eval_check")):
            # a shard's result exists even when it has no group, so skill-eval merge sees the shard
            self.write_selection()
        if not self.config.option.collectonly or self.config.get_verbosity() < 1:
            return
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        plans = [(item.nodeid, plan()) for item in session.items if callable(plan := getattr(item, "plan_lines", None))]
        if plans:
            reporter.section("skill-eval plan")
            reporter.write_line(self.plan_total(session.items))
            for nodeid, lines in plans:
                reporter.write_line(neutralise(nodeid, one_line=True))
                for line in lines:
                    reporter.write_line(f"    {neutralise(line, one_line=True)}")

    def count_comparisons(self, items: list[pytest.Item]) -> int:
        """The comparisons of the selected groups (none with one variant selected)."""
        if len(self.selected) < 2:
            return 0
        groups = [group for item in items if (group := getattr(item, "group", None)) is not None]
        return sum(len({e.comparison for e in g.expectations if e.comparison}) for g in groups)

    def plan_total(self, items: list[pytest.Item]) -> str:
        """``2 groups × 2 variants × 20 trials = 80 pi runs; models: …`` (nothing is started)."""
        groups = [group for item in items if (group := getattr(item, "group", None)) is not None]
        return plan_line(groups, len(self.selected), self.settings.count)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        props = {str(k): str(v) for k, v in getattr(report, "user_properties", ())}
        if PERSISTENCE_FAILED in props:
            self.persistence_failure = props[PERSISTENCE_FAILED]
        if STATUS_PROPERTY not in props:
            return
        is_error = report.when == "setup" and report.failed
        if not (report.when == "call" or is_error):
            return
        verdict = None
        identical = None
        if FAMILY_PROPERTY in props:  # the xdist controller collects nothing: the workers say it
            self.family = int(props[FAMILY_PROPERTY])
        if "skill_eval.evidence" in props:
            from pytest_skill_eval.engine.verdict import identical_inputs_advice  # lazy: the engine (start-up)

            try:
                verdict = self.judge(Path(props["skill_eval.evidence"]))
            except EvidenceError:
                verdict = None
            # an A/A run gives both arms the same inputs on purpose
            identical = None if self.settings.aa else identical_inputs_advice(Path(props["skill_eval.evidence"]))
        outcome = "error" if is_error else report.outcome
        self.reported[report.nodeid] = Reported(report.nodeid, report.location, outcome, verdict, identical)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if verdict is not None and reporter is not None and self.config.get_verbosity() >= 1:
            for line in verdict.detail_lines(indent="    "):
                reporter.write_line(neutralise(line, one_line=True))

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C cancels; pytest's and xdist's own stops arrive here as KeyboardInterrupt too."""
        exc = excinfo.value
        if isinstance(exc, pytest.Session.Interrupted):
            return  # session.shouldstop: collection errors, or evidence that could not be persisted
        if not is_cancellation(exc):
            self.stopped = str(exc)  # xdist's --maxfail/-x: "stopping after 1 failures"
            return
        self.cancelled = True
        self.cancel_jobs()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._lookahead is not None:
            # queued groups never start; running ones finish, or are cancelled after Ctrl-C
            self._lookahead.stop(cancel=self.cancelled)
        if self._router is not None:
            self._router.close()
        if self.rerun is not None:
            self.rerun.close()
        if self.is_worker or not self.result_dir.exists():
            return
        if self.persistence_failure is not None:
            # spec: when evidence cannot be preserved, no completed summary is published
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"skill-eval: no result.json written: "
                                    f"{neutralise(self.persistence_failure, one_line=True)}", red=True)
            return
        # every writer of this result is done (xdist tears its workers down first)
        layout.sweep_staging(self.result_dir)
        stopped = self.stopped or session.shouldfail or session.shouldstop or None
        # lazy: the engine, the evidence records (which provenance reads) and the step summary stay
        # out of every pytest run's start-up
        from pytest_skill_eval.engine.batch import write_batch_summary
        from pytest_skill_eval.plugin.provenance import build_provenance
        from pytest_skill_eval.services.step_summary import write_step_summary

        record = write_batch_summary(self.result_dir, self.result_id, interrupted=self.cancelled,
                                     stopped=str(stopped) if stopped else None, trials=self.settings.count,
                                     seed=self.settings.seed if self.settings.count > 1 or self.settings.seed_given else None,
                                     shard=self.shard, provenance=build_provenance(self, os.environ),
                                     rules=self.settings.rules, aa=self.settings.aa)
        self.empty_shard(session)
        self.gate(session, record.decision)
        write_html_report(self)
        rows = sorted(((r.nodeid, r.outcome, r.verdict) for r in self.reported.values()),
                      key=lambda row: (row[2].position if row[2] else 0, row[0]))
        write_step_summary(rows, result_id=self.result_id, state=record.state, result_dir=self.result_dir,
                           rootdir=self.config.rootpath, html_report=self.html_report)


    def gate(self, session: pytest.Session, decision: DecisionRecord | None) -> None:
        """What the result's decision adds to the exit status, told in :attr:`gate_lines`.

        Under ``regression`` a comparison the whole family's adjustment decides ``worse`` fails
        the run even when its item, judged before the other groups' p-values were known,
        passed; with ``--skill-eval-require-power`` an underpowered or indecisive suite decision
        or comparison does.
        """
        if decision is None:
            return
        failed_items = {r.verdict.position for r in self.reported.values()
                        if r.verdict is not None and r.outcome in ("failed", "error")}
        if self.fail_on == "regression":
            late = [c for c in decision.comparisons if c.decision == "worse" and c.position not in failed_items]
            self.gate_lines += [f"{c.group}/{c.comparison}: {c.line}: a regression over the whole run "
                                "(--skill-eval-fail-on=regression)" for c in late]
        if self.settings.require_power:
            unsettled = decision.underpowered_or_indecisive
            if "suite" in unsettled:
                self.gate_lines.append(f"the suite's decision is {decision.decision} (--skill-eval-require-power)")
        if self.gate_lines and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _stored_result(config: pytest.Config, option_paths: list[Path], group_selector: str | None) -> StoredResult | None:
    """The stored result ``--skill-eval-rerun`` names (``skill-eval rerun``), checked; None without it."""
    given = config.getoption("skill_eval_rerun", None)
    if not given:
        return None
    if option_paths:
        raise pytest.UsageError("--skill-eval-rerun runs the groups of a stored result: it takes no --skill-eval paths")
    if group_selector is not None:
        raise pytest.UsageError("--skill-eval-rerun: select groups of the stored result with -k <group-id>, "
                                "not --skill-eval-group")
    from pytest_skill_eval.sources.stored import StoredResult  # lazy: it loads the evidence readers (start-up)

    try:
        stored = StoredResult(Path(given).resolve())
        stored.check_rerunnable()
    except EvidenceError as exc:
        raise pytest.UsageError(neutralise(str(exc))) from None  # it may quote the stored result
    return stored
