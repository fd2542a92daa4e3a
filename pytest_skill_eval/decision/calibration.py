"""A/A calibration (pure): how often identical arms disagree, the false-flip rate.

When the baseline and the candidate are the same skill, every flip (a pair whose baseline
and candidate outcomes differ: fail-to-pass or pass-to-fail) is noise. The false-flip rate
is observed flips / observed pairs, with its 95 % Wilson interval:

- **per comparison**: over its trials, each trial's baseline and candidate outcome a pair;
- **for the suite**: over every comparison's pairs; with single runs each comparison is one
  pair, so it is flips / comparisons.

:func:`decision_flips` counts the other kind of flip an A/A run can show: comparisons the
decision calls ``better`` or ``worse`` (each one is a false discovery when the arms are identical).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_skill_eval.decision.suite import ComparisonEvidence, SuiteDecision
from pytest_skill_eval.stats import Interval, wilson_interval

__all__ = ["FlipRate", "SuiteFlips", "decision_flips", "evidence_flips", "flip_rate", "suite_flips"]


@dataclass(frozen=True, slots=True)
class FlipRate:
    """``flips`` of ``pairs`` disagreed."""

    flips: int
    pairs: int

    @property
    def rate(self) -> float | None:
        return self.flips / self.pairs if self.pairs else None

    @property
    def interval(self) -> Interval | None:
        return wilson_interval(self.flips, self.pairs)

    def text(self) -> str:
        """``2 flips in 40 pairs (5 %, 95 % CI 1-17 %)``, or ``no pairs``."""
        interval = self.interval
        if self.rate is None or interval is None:
            return "no pairs"
        return (f"{self.flips} flips in {self.pairs} pairs ({self.rate * 100:.0f} %, "
                f"95 % CI {interval.low * 100:.0f}-{interval.high * 100:.0f} %)")


def flip_rate(pairs: Iterable[tuple[bool, bool]]) -> FlipRate:
    """The flips among paired (baseline passed, candidate passed) outcomes."""
    flips = total = 0
    for baseline, candidate in pairs:
        total += 1
        flips += baseline != candidate
    return FlipRate(flips, total)


@dataclass(frozen=True, slots=True)
class SuiteFlips:
    """The suite's false-flip rate and each comparison's."""

    suite: FlipRate
    comparisons: Mapping[str, FlipRate]


def suite_flips(by_comparison: Mapping[str, Sequence[tuple[bool, bool]]]) -> SuiteFlips:
    """Per comparison, its pairs' flip rate; for the suite, the flips over every pair."""
    rates = {cid: flip_rate(pairs) for cid, pairs in by_comparison.items()}
    return SuiteFlips(FlipRate(sum(r.flips for r in rates.values()), sum(r.pairs for r in rates.values())), rates)


def evidence_flips(cases: Sequence[ComparisonEvidence]) -> SuiteFlips:
    """:func:`suite_flips` of the trials graded in both arms of each comparison."""
    return suite_flips({c.id: c.pairs for c in cases})


def decision_flips(decision: SuiteDecision) -> FlipRate:
    """The decisive comparisons decided ``better`` or ``worse``, of the decisive ones."""
    decisive = decision.decisive
    return FlipRate(sum(1 for c in decisive if c.decision in ("better", "worse")), len(decisive))
