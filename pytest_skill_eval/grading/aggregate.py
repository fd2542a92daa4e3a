"""What repeated trials of one group say together (pure): rates, intervals, tests, flags.

Each trial is graded like a single run (a :class:`~.results.GroupGrade` per trial). The
aggregate counts, per expectation, the trials that passed and failed it; trials whose run
was not ``complete`` (``not-graded``) and trials where it was a ``grade-error`` are counted
apart and never as failures: missing stays unavailable, not zero.

Per comparison it sets the baseline side's rate against the candidate side's, with the
two-sided p-value of Fisher's exact test, and states a factual transition: one of the four
spec words when every graded trial agrees on each side, otherwise the rates themselves,
``3/10 -> 9/10 (p=0.02)``. It never says "better".

Flags: an expectation is ``flaky`` when it both passed and failed; a comparison is
``saturated`` when every trial was ``pass-to-pass``, or every trial ``fail-to-fail`` (the
check does not tell the variants apart).

``aggregate.json`` is a :class:`TrialGrade` through :mod:`pytest_skill_eval.codec`: the counts
are read back, the rates, intervals (``[low, high]``), p-values, transitions and flags are
written from them and never read; the trial counts are stored under ``trials``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from pytest_skill_eval.codec import Layout, Stored, meta
from pytest_skill_eval.grading.results import GRADE_LAYOUT, ComparisonResult, ExpectationResult, GradeError, GroupGrade
from pytest_skill_eval.stats import Interval, fisher_exact, wilson_interval

AggregateState = Literal["graded", "grade-error"]

#: how every record of ``aggregate.json`` is stored: a bad stored value is a grade's located error
AGGREGATE_LAYOUT = replace(GRADE_LAYOUT, name="aggregate")


@dataclass(frozen=True, slots=True)
class Trial:
    """One trial's grade and the states its variants' runs ended in."""

    number: int
    grade: GroupGrade
    runs: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ExpectationRate(Stored):
    """One expectation over the trials: passes out of the graded trials, and what was not graded."""

    STORED: ClassVar[Layout] = replace(AGGREGATE_LAYOUT, order=(
        "id", "kind", "variant", "passes", "fails", "not_graded", "grade_errors", "rate", "interval", "flaky"))
    id: str
    kind: str
    variant: str
    passes: int
    fails: int
    not_graded: int
    grade_errors: int

    @property
    def graded(self) -> int:
        return self.passes + self.fails

    @property
    def rate(self) -> float | None:
        return self.passes / self.graded if self.graded else None

    @property
    def interval(self) -> Interval | None:
        return wilson_interval(self.passes, self.graded)

    @property
    def flaky(self) -> bool:
        return self.passes > 0 and self.fails > 0

    def counts(self) -> str:
        """``7/10`` (passes of the graded trials), or ``unavailable`` when none was graded."""
        return f"{self.passes}/{self.graded}" if self.graded else "unavailable"


@dataclass(frozen=True, slots=True)
class ComparisonRate(Stored):
    """One comparison over the trials: each side's passes of its graded trials, and the test."""

    STORED: ClassVar[Layout] = replace(AGGREGATE_LAYOUT, order=(
        "id", "baseline", "candidate", "baseline_passes", "baseline_graded", "candidate_passes", "candidate_graded",
        "baseline_rate", "candidate_rate", "p_value", "transition", "saturated", "reason"))
    id: str
    baseline: str | None
    candidate: str | None
    baseline_passes: int
    baseline_graded: int
    candidate_passes: int
    candidate_graded: int
    saturated: bool
    reason: str | None = None

    @property
    def p_value(self) -> float | None:
        if not (self.baseline_graded and self.candidate_graded):
            return None
        return fisher_exact(self.baseline_passes, self.baseline_graded - self.baseline_passes,
                            self.candidate_passes, self.candidate_graded - self.candidate_passes)

    @property
    def baseline_rate(self) -> float | None:
        return self.baseline_passes / self.baseline_graded if self.baseline_graded else None

    @property
    def candidate_rate(self) -> float | None:
        return self.candidate_passes / self.candidate_graded if self.candidate_graded else None

    @property
    def transition(self) -> str:
        """A spec word when each side's graded trials agree, else the rates and the p-value."""
        p = self.p_value
        if p is None:
            return "not-comparable"
        sides = []
        for passes, graded in ((self.baseline_passes, self.baseline_graded),
                               (self.candidate_passes, self.candidate_graded)):
            sides.append("pass" if passes == graded else "fail" if passes == 0 else None)
        if None not in sides:
            return f"{sides[0]}-to-{sides[1]}"
        return (f"{self.baseline_passes}/{self.baseline_graded} -> {self.candidate_passes}/{self.candidate_graded} "
                f"(p={p:.2g})")

    @property
    def regressed(self) -> bool | None:
        """Whether the candidate's rate is lower (None when a side was never graded)."""
        if self.baseline_rate is None or self.candidate_rate is None:
            return None
        return self.candidate_rate < self.baseline_rate


@dataclass(frozen=True, slots=True)
class TrialGrade(Stored):
    """``aggregate.json``: what the trials of one group say together."""

    STORED: ClassVar[Layout] = replace(AGGREGATE_LAYOUT, order=(
        "group_id", "planned", "ran", "state", "runs", "expectations", "comparisons", "errors"))
    group_id: str
    #: how many trials were meant to run, and how many did (stored as ``trials: {planned, ran}``)
    planned: int = field(metadata=meta(within="trials"))
    ran: int = field(metadata=meta(within="trials"))
    state: AggregateState
    expectations: tuple[ExpectationRate, ...]
    comparisons: tuple[ComparisonRate, ...]
    errors: tuple[GradeError, ...]
    #: per variant, how many trials' runs ended in each state (``complete``, ``invalid``, …)
    runs: Mapping[str, Mapping[str, int]]


def aggregate(group_id: str, planned: int, trials: Sequence[Trial]) -> TrialGrade:
    """The aggregate of the trials that ran (``planned`` says how many were meant to)."""
    expectations: dict[str, ExpectationResult] = {}
    comparisons: dict[str, ComparisonResult] = {}
    statuses: dict[str, list[str]] = {}
    transitions: dict[str, list[str]] = {}
    errors: dict[tuple[str, str | None, str | None, str], GradeError] = {}
    runs: dict[str, dict[str, int]] = {}
    for trial in trials:
        for name, run_state in trial.runs.items():
            runs.setdefault(name, {})
            runs[name][run_state] = runs[name].get(run_state, 0) + 1
        for e in trial.grade.expectations:
            expectations.setdefault(e.id, e)
            statuses.setdefault(e.id, []).append(e.status)
        for c in trial.grade.comparisons:
            comparisons.setdefault(c.id, c)
            transitions.setdefault(c.id, []).append(c.transition)
        for err in trial.grade.errors:
            if err.scope != "expectation":  # expectation-owned errors are counted on the expectation
                errors.setdefault((err.scope, err.owner, err.variant, err.message), err)
    rates = tuple(
        ExpectationRate(e.id, e.kind, e.variant, seen.count("pass"), seen.count("fail"), seen.count("not-graded"),
                        seen.count("grade-error"))
        for e in expectations.values() for seen in [statuses[e.id]]
    )
    by_id = {r.id: r for r in rates}

    def side(expectation_id: str | None) -> tuple[int, int]:
        rate = by_id.get(expectation_id) if expectation_id is not None else None
        return (rate.passes, rate.graded) if rate is not None else (0, 0)

    comparison_rates = []
    for c in comparisons.values():
        seen = transitions[c.id]
        saturated = bool(seen) and (all(t == "pass-to-pass" for t in seen) or all(t == "fail-to-fail" for t in seen))
        (bp, bg), (cp, cg) = side(c.baseline), side(c.candidate)
        reason = None if bg and cg else (c.reason or "a side was graded in no trial")
        comparison_rates.append(ComparisonRate(c.id, c.baseline, c.candidate, bp, bg, cp, cg, saturated, reason))
    unanswerable = any(r.graded == 0 and r.grade_errors for r in rates)
    state: AggregateState = "grade-error" if errors or unanswerable else "graded"
    return TrialGrade(group_id, planned, len(trials), state, rates, tuple(comparison_rates), tuple(errors.values()),
                      runs)
