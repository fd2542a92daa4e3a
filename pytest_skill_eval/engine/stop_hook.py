"""The trials loop's one hook for ``--skill-eval-stop``: after each trial, stop or go on.

The loop (``engine.group.run_group``, over several trials) keeps one :class:`StopWatch` per group, calls
:meth:`StopWatch.after_trial` with every trial graded so far after each trial (a balanced
pair: both arms ran), leaves the loop when it says stop, and writes :meth:`StopWatch.record`
as ``stopping.json`` (:func:`write_stopping`) before the aggregate. The decision itself is the
pure :mod:`pytest_skill_eval.decision.stopping`; this module only turns the trials' grades into
its counts: per expectation of a selected variant, passes of graded trials; per comparison
with both sides selected, the arms' counts and one pair per trial (+1 fail-to-pass, -1
pass-to-fail, 0 a tie, None when a side was not graded).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_skill_eval.decision.sequential import PairOutcome
from pytest_skill_eval.decision.stopping import ComparisonCounts, ExpectationCounts, StopCheck, StopRule, check_stop
from pytest_skill_eval.evidence import store
from pytest_skill_eval.evidence.layout import STOPPING_FILE
from pytest_skill_eval.evidence.stop_records import StoppingRecord
from pytest_skill_eval.grading.aggregate import Trial, aggregate
from pytest_skill_eval.redaction import Redactor

__all__ = ["StopWatch", "trial_counts", "write_stopping"]

_PAIRS: dict[str, PairOutcome] = {"fail-to-pass": 1, "pass-to-fail": -1, "pass-to-pass": 0, "fail-to-fail": 0}


def trial_counts(trials: Sequence[Trial], rule: StopRule,
                 selected: frozenset[str]) -> tuple[list[ExpectationCounts], list[ComparisonCounts]]:
    """The counts the stop rule decides on, from the trials so far (the aggregate's own counting)."""
    totals = aggregate("", max(len(trials), 1), trials)
    expectations = [ExpectationCounts(e.id, e.passes, e.graded, rule.judges_expectation(e.variant))
                    for e in totals.expectations if e.variant in selected]
    variant_of = {e.id: e.variant for e in totals.expectations}
    comparisons = []
    for c in totals.comparisons:
        if variant_of.get(c.baseline or "") not in selected or variant_of.get(c.candidate or "") not in selected:
            continue
        pairs: list[PairOutcome] = []
        for trial in trials:
            seen = next((r.transition for r in trial.grade.comparisons if r.id == c.id), None)
            pairs.append(_PAIRS.get(seen or "", None))
        comparisons.append(ComparisonCounts(c.id, c.baseline_passes, c.baseline_graded, c.candidate_passes,
                                            c.candidate_graded, rule.judges_comparisons, tuple(pairs)))
    return expectations, comparisons


@dataclass
class StopWatch:
    """One group's stop rule over its trials: every check it made, in order."""

    rule: StopRule
    planned: int
    selected: frozenset[str]
    checks: list[StopCheck] = field(default_factory=list)

    def after_trial(self, trials: Sequence[Trial]) -> bool:
        """Whether the group stops after *trials* (every trial so far, in order); always False under ``off``."""
        if self.rule.mode == "off":
            return False
        expectations, comparisons = trial_counts(trials, self.rule, self.selected)
        never = [name for name in sorted(self.selected)
                 if not any(trial.runs.get(name) == "complete" for trial in trials)]
        if never and len(trials) < self.planned:
            # "completed in no trial" makes the item an error, and a later trial could change that
            check = StopCheck(self.rule.mode, len(trials), self.planned, False,
                              f"variant {never[0]} has completed in no trial yet")
            self.checks.append(check)
            return False
        check = check_stop(self.rule.mode, ran=len(trials), planned=self.planned, expectations=expectations,
                           comparisons=comparisons, pass_rate=self.rule.pass_rate, alpha=self.rule.alpha,
                           looks=self.rule.looks)
        self.checks.append(check)
        return check.stop

    def record(self) -> StoppingRecord | None:
        if self.rule.mode == "off" or not self.checks:
            return None
        return StoppingRecord.of(self.checks, fail_on=self.rule.fail_on, pass_rate=self.rule.pass_rate,
                                 alpha=self.rule.alpha)


def write_stopping(group_dir: Path, watch: StopWatch, redactor: Redactor) -> None:
    """``stopping.json`` of the group (nothing under ``off``), redacted as every evidence file."""
    record = watch.record()
    if record is not None:
        store.write_record(group_dir / STOPPING_FILE, record, redactor)
