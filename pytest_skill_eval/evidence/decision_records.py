"""``result.json`` ``decision``: the one decision over the result's comparisons, with its numbers.

Built from the decision core's :class:`~pytest_skill_eval.decision.SuiteDecision` at the
write boundary of the result (``engine/decision.py``), read back by every surface (the
terminal summary, ``skill-eval view``, JUnit, the step summary, the HTML report) so they all
show the same line and figures. docs/evidence.md gives the fields, docs/statistics.md the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pytest_skill_eval.codec import Layout, Stored, if_none, meta
from pytest_skill_eval.decision import DecisionRules, SuiteDecision, evidence_flips
from pytest_skill_eval.decision.calibration import FlipRate, decision_flips

__all__ = ["ComparisonRecord", "DecisionRecord", "FlipRecord", "comparison_parts"]


def comparison_parts(cid: str) -> tuple[str, str]:
    """``(group id, comparison id)`` of a case id ``<group>/<comparison>``."""
    group, _, comparison = cid.partition("/")
    return group, comparison


@dataclass(frozen=True, slots=True)
class FlipRecord(Stored):
    """A/A calibration: *flips* of *pairs* disagreed (``--skill-eval-aa``)."""

    STORED: ClassVar[Layout] = Layout(order=("flips", "pairs", "rate", "interval"))
    flips: int
    pairs: int

    @property
    def flip_rate(self) -> FlipRate:
        return FlipRate(self.flips, self.pairs)

    @property
    def rate(self) -> float | None:
        """Stored: the observed false-flip rate (``None`` without pairs)."""
        return self.flip_rate.rate

    @property
    def interval(self) -> tuple[float, float] | None:
        """Stored: its 95 % Wilson interval, as ``[low, high]``."""
        interval = self.flip_rate.interval
        return (interval.low, interval.high) if interval is not None else None


@dataclass(frozen=True, slots=True)
class ArmCounts(Stored):
    """One arm's balanced passes and graded trials in a comparison."""

    passes: int
    graded: int


@dataclass(frozen=True, slots=True)
class ComparisonRecord(Stored):
    """One comparison's decision: its counts, raw and adjusted p-value, power and coverage."""

    group: str
    position: int
    comparison: str
    decision: str
    line: str
    planned: int
    baseline: ArmCounts
    candidate: ArmCounts
    coverage: float
    p_value: float | None
    adjusted_p_value: float | None
    power: float | None
    #: A/A runs only: this comparison's false flips
    flips: FlipRecord | None = field(default=None, metadata=meta(omit=if_none))

    @property
    def baseline_passes(self) -> int:
        return self.baseline.passes

    @property
    def baseline_graded(self) -> int:
        return self.baseline.graded

    @property
    def candidate_passes(self) -> int:
        return self.candidate.passes

    @property
    def candidate_graded(self) -> int:
        return self.candidate.graded


@dataclass(frozen=True, slots=True)
class Counts(Stored):
    """The suite test's cases: candidate higher, lower, tied."""

    higher: int
    lower: int
    ties: int


@dataclass(frozen=True, slots=True)
class DecisionRecord(Stored):
    """The result's decision: the suite test over its comparisons, and each comparison's."""

    STORED: ClassVar[Layout] = Layout(order=("decision", "line", "test", "counts", "p_value", "power", "decisive",
                                             "rules", "lost_runs", "comparisons", "aa", "flips", "decision_flips"))
    decision: str
    line: str
    #: ``exact McNemar`` (single runs) or ``exact sign test`` (trials), over cases
    test: str
    counts: Counts
    p_value: float | None
    power: float | None
    decisive: int
    rules: Mapping[str, Any]
    comparisons: tuple[ComparisonRecord, ...]
    #: pi runs of the comparisons' groups that did not complete, and trials that never ran
    lost_runs: int = 0
    #: ``--skill-eval-aa``: the candidate ran against itself; the false flips of the suite and its decisions
    aa: bool = False
    flips: FlipRecord | None = field(default=None, metadata=meta(omit=if_none))
    decision_flips: FlipRecord | None = field(default=None, metadata=meta(omit=if_none))

    @property
    def higher(self) -> int:
        return self.counts.higher

    @property
    def lower(self) -> int:
        return self.counts.lower

    @property
    def ties(self) -> int:
        return self.counts.ties

    @property
    def underpowered_or_indecisive(self) -> tuple[str, ...]:
        """``suite`` and each comparison id decided underpowered or indecisive (``--skill-eval-require-power``)."""
        found = ["suite"] if self.decision in ("underpowered", "indecisive") else []
        return (*found, *(f"{c.group}/{c.comparison}" for c in self.comparisons
                          if c.decision in ("underpowered", "indecisive")))

    def lines(self) -> list[str]:
        """The decision line, then one line per comparison that is not ``no detectable difference``."""
        out = [f"decision: {self.line}"]
        out += [f"  {c.group}/{c.comparison}: {c.line}" for c in self.comparisons]
        if self.lost_runs:
            out.append(f"  lost runs: {self.lost_runs} pi run(s) of the compared groups did not complete "
                       "(counted as not graded, never as failures)")
        if self.aa and self.flips is not None:
            out.append(f"  A/A false-flip rate: {self.flips.flip_rate.text()}")
            if self.decision_flips is not None:
                out.append(f"  A/A comparisons decided better or worse: {self.decision_flips.flips} of "
                           f"{self.decision_flips.pairs} decisive")
        return out

    @classmethod
    def of(cls, suite: SuiteDecision, positions: Mapping[str, int], *, lost_runs: int = 0,
           aa: bool = False) -> DecisionRecord:
        """The record of *suite*; *positions* maps a group id to its position."""
        rules: DecisionRules = suite.rules
        flips = evidence_flips([c.evidence for c in suite.comparisons]) if aa else None
        comparisons = []
        for c in suite.comparisons:
            e = c.evidence
            group, comparison = comparison_parts(e.id)
            own = flips.comparisons.get(e.id) if flips is not None else None
            comparisons.append(ComparisonRecord(
                group, positions.get(group, 0), comparison, c.decision, c.line(rules), e.planned,
                ArmCounts(e.baseline_passes, e.baseline_graded), ArmCounts(e.candidate_passes, e.candidate_graded), e.coverage,
                c.p_value, c.adjusted_p_value, c.power,
                FlipRecord(own.flips, own.pairs) if own is not None else None))
        test = "exact McNemar" if suite.single_run else "exact sign test"
        line = suite.line() if suite.comparisons else "indecisive: no comparison to decide on (no group compared both variants)"
        return cls(suite.decision, line, test, Counts(suite.higher, suite.lower, suite.ties), suite.p_value,
                   suite.power, len(suite.decisive),
                   {"alpha": rules.alpha, "min_effect": rules.min_effect, "target_power": rules.target_power,
                    "coverage_floor": rules.coverage_floor, "adjustment": rules.adjustment},
                   tuple(comparisons), lost_runs, aa,
                   FlipRecord(flips.suite.flips, flips.suite.pairs) if flips is not None else None,
                   (lambda r: FlipRecord(r.flips, r.pairs))(decision_flips(suite)) if aa else None)

