"""One decision over a suite's comparisons (pure): better, worse, no detectable difference, underpowered, indecisive.

A **case** is a comparison: one baseline and one candidate check of one group. Its trials
(N per arm, N = 1 for a single run) measure that case; they are never pooled with other
cases' trials as independent samples. The decision is made twice, with the same rules:

- **per comparison**: Fisher's exact test of the case's 2x2 table of trial counts, its
  p-value adjusted over the suite's decisive comparisons (Holm by default), and the exact
  power the test had to detect the minimum effect D at the baseline rate it saw;
- **for the suite**: the exact sign test over cases on the sign of each case's rate
  difference (candidate rate minus baseline rate over the first k graded trials of each
  arm, k the smaller arm's graded count; zeros are ties). With N = 1 the differences are
  +1 (fail-to-pass), -1 (pass-to-fail) and 0 (a tie), and the test is exactly McNemar's:
  one test for single runs and trials.

In order, a decision is **indecisive** when too little was graded (a comparison below the
coverage floor of planned trials in an arm; a suite with fewer decisive comparisons than
the floor); **better** or **worse** when the test is significant (p <= alpha, adjusted for
comparisons); **underpowered** when it is not and its power to detect D was below the
target; **no detectable difference** otherwise. docs/statistics.md gives the estimand,
formulas and references.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from pytest_skill_eval.decision.exact import fisher_exact, sign_test
from pytest_skill_eval.decision.multiplicity import ADJUSTMENTS, Adjustment, adjust
from pytest_skill_eval.decision.power import CaseCounts, check_effect, check_level, comparison_power, suite_power

__all__ = ["DECISIONS", "ComparisonDecision", "ComparisonEvidence", "Decision", "DecisionRules", "Outcome",
           "SuiteDecision", "decide"]

Decision = Literal["better", "worse", "no detectable difference", "underpowered", "indecisive"]
DECISIONS: tuple[Decision, ...] = ("better", "worse", "no detectable difference", "underpowered", "indecisive")


def p_text(p: float) -> str:
    """Two significant digits: ``0.62``, ``0.0039``, ``1.1e-05``, ``1``."""
    return f"{p:.2g}"


def percent_text(share: float) -> str:
    return f"{share * 100:.0f} %"


@dataclass(frozen=True, slots=True)
class DecisionRules:
    """The settings a decision is made under, with their documented defaults."""

    #: the significance level of every test (family-wise with ``holm``)
    alpha: float = 0.05
    #: D, the smallest rate difference worth detecting (``--skill-eval-min-effect``)
    min_effect: float = 0.2
    #: below this power a non-significant test is ``underpowered``, never "no difference"
    target_power: float = 0.8
    #: the share of planned trials an arm must have graded (and of comparisons the suite must have decisive)
    coverage_floor: float = 0.8
    #: the multiplicity adjustment across comparisons (``--skill-eval-adjust``)
    adjustment: Adjustment = "holm"

    def __post_init__(self) -> None:
        check_level("alpha", self.alpha)
        check_effect(self.min_effect)
        check_level("target power", self.target_power)
        if not 0.0 < self.coverage_floor <= 1.0:
            raise ValueError(f"coverage floor: expected a share above 0 and at most 1, found {self.coverage_floor!r}")
        if self.adjustment not in ADJUSTMENTS:
            raise ValueError(f"adjustment: expected one of {', '.join(ADJUSTMENTS)}, found {self.adjustment!r}")


#: one trial's outcome of a check: passed, failed, or None when it was not graded
#: (the run was not complete, the check was a grade-error, or the trial never ran)
Outcome = bool | None


@dataclass(frozen=True, slots=True)
class ComparisonEvidence:
    """One case: a comparison's outcome in each planned trial, per arm, in trial order.

    A trial that was not graded is missing (``None``), never a failure. A single run is one
    planned trial: ``ComparisonEvidence("reads-skill", (False,), (True,))`` is fail-to-pass.
    """

    id: str
    baseline: tuple[Outcome, ...]
    candidate: tuple[Outcome, ...]

    def __post_init__(self) -> None:
        if not self.baseline or len(self.baseline) != len(self.candidate):
            raise ValueError(f"comparison {self.id}: expected one outcome per planned trial in each arm, found "
                             f"{len(self.baseline)} baseline and {len(self.candidate)} candidate outcomes")
        for arm, outcomes in (("baseline", self.baseline), ("candidate", self.candidate)):
            for k, outcome in enumerate(outcomes, 1):
                if outcome is not None and not isinstance(outcome, bool):
                    raise ValueError(f"comparison {self.id}: {arm} trial {k}: expected true (pass), false (fail) "
                                     f"or None (not graded), found {outcome!r}")

    @property
    def planned(self) -> int:
        return len(self.baseline)

    @property
    def baseline_passes(self) -> int:
        return sum(1 for o in self.baseline if o is True)

    @property
    def baseline_graded(self) -> int:
        return sum(1 for o in self.baseline if o is not None)

    @property
    def candidate_passes(self) -> int:
        return sum(1 for o in self.candidate if o is True)

    @property
    def candidate_graded(self) -> int:
        return sum(1 for o in self.candidate if o is not None)

    @property
    def coverage(self) -> float:
        """The smaller arm's share of its planned trials that were graded."""
        return min(self.baseline_graded, self.candidate_graded) / self.planned

    @property
    def difference(self) -> Fraction | None:
        """The candidate's rate minus the baseline's over every graded trial, exactly (None without both arms)."""
        if not (self.baseline_graded and self.candidate_graded):
            return None
        return (Fraction(self.candidate_passes, self.candidate_graded)
                - Fraction(self.baseline_passes, self.baseline_graded))

    @property
    def balanced_trials(self) -> int:
        """k: the graded trials of the smaller arm; the suite test compares each arm's first k graded trials."""
        return min(self.baseline_graded, self.candidate_graded)

    @property
    def balanced_difference(self) -> Fraction | None:
        """The rate difference over the first k graded trials of each arm (k = :attr:`balanced_trials`).

        The suite's sign test needs a difference whose sign is as likely + as - when the
        arms are identical; with unequal graded counts (3/9 against 3/10) it is not, so both
        arms are cut to equally many graded trials, chosen by trial number, never by outcome.
        """
        k = self.balanced_trials
        if not k:
            return None
        first = [[o for o in arm if o is not None][:k] for arm in (self.baseline, self.candidate)]
        return Fraction(first[1].count(True) - first[0].count(True), k)

    @property
    def balanced_baseline_passes(self) -> int:
        return [o for o in self.baseline if o is not None][:self.balanced_trials].count(True)

    @property
    def pairs(self) -> tuple[tuple[bool, bool], ...]:
        """(baseline, candidate) of every trial graded in both arms: what A/A calibration counts flips in."""
        return tuple((b, c) for b, c in zip(self.baseline, self.candidate, strict=True)
                     if b is not None and c is not None)

    def counts_text(self) -> str:
        """``3/10 -> 9/10`` (passes of the graded trials), or ``pass -> fail`` for a single run."""
        if self.planned == 1 and self.baseline_graded and self.candidate_graded:
            word = {0: "fail", 1: "pass"}
            return f"{word[self.baseline_passes]}-to-{word[self.candidate_passes]}"
        return (f"{self.baseline_passes}/{self.baseline_graded} -> "
                f"{self.candidate_passes}/{self.candidate_graded}")


@dataclass(frozen=True, slots=True)
class ComparisonDecision:
    """One comparison's decision, with the figures that led to it (None for an indecisive comparison)."""

    evidence: ComparisonEvidence
    decision: Decision
    p_value: float | None
    adjusted_p_value: float | None
    power: float | None

    def line(self, rules: DecisionRules) -> str:
        """``worse: 9/10 -> 2/10, p = 0.0055 (holm 0.022)``, ``underpowered: ..., power 0.12 to detect 0.2``."""
        e = self.evidence
        if self.decision == "indecisive":
            return (f"indecisive: baseline {e.baseline_graded} of {e.planned} graded, candidate {e.candidate_graded} "
                    f"of {e.planned} ({percent_text(e.coverage)}, floor {percent_text(rules.coverage_floor)})")
        assert self.p_value is not None and self.adjusted_p_value is not None and self.power is not None
        text = f"{self.decision}: {e.counts_text()}, p = {p_text(self.p_value)}"
        if rules.adjustment != "none":
            text += f" ({rules.adjustment} {p_text(self.adjusted_p_value)})"
        if self.decision in ("underpowered", "no detectable difference"):
            text += f", power {self.power:.2f} to detect {rules.min_effect:g}"
        return text


@dataclass(frozen=True, slots=True)
class SuiteDecision:
    """The suite's one decision over its selected comparisons."""

    decision: Decision
    rules: DecisionRules
    comparisons: tuple[ComparisonDecision, ...]
    #: decisive cases whose candidate rate is higher, lower, equal (the sign test's counts)
    higher: int
    lower: int
    ties: int
    #: the sign test's p-value and power (None when indecisive)
    p_value: float | None
    power: float | None

    @property
    def decisive(self) -> tuple[ComparisonDecision, ...]:
        return tuple(c for c in self.comparisons if c.decision != "indecisive")

    @property
    def coverage(self) -> float:
        """The share of the suite's comparisons that were decisive (0 for a suite without comparisons)."""
        return len(self.decisive) / len(self.comparisons) if self.comparisons else 0.0

    @property
    def single_run(self) -> bool:
        return bool(self.comparisons) and all(c.evidence.planned == 1 for c in self.comparisons)

    @property
    def regressions(self) -> tuple[ComparisonDecision, ...]:
        """The comparisons the ``regression`` policy fails on: decided ``worse`` (adjusted p <= alpha)."""
        return tuple(c for c in self.comparisons if c.decision == "worse")

    def counts_text(self) -> str:
        up, down = ("fail-to-pass", "pass-to-fail") if self.single_run else ("higher", "lower")
        return f"{self.higher} {up}, {self.lower} {down}, {self.ties} {'tie' if self.ties == 1 else 'ties'}"

    def line(self) -> str:
        """The one line: ``better: 3 fail-to-pass, 1 pass-to-fail, 12 ties: p = 0.62`` and its kin."""
        if self.decision == "indecisive":
            floor = percent_text(self.rules.coverage_floor)
            return (f"indecisive: {len(self.decisive)} of {len(self.comparisons)} comparisons graded in at least "
                    f"{floor} of planned trials ({percent_text(self.coverage)}, floor {floor})")
        assert self.p_value is not None and self.power is not None
        text = f"{self.decision}: {self.counts_text()}: p = {p_text(self.p_value)}"
        if self.decision in ("underpowered", "no detectable difference"):
            text += f", power {self.power:.2f} to detect {self.rules.min_effect:g} at alpha {self.rules.alpha:g}"
        return text


def judged(significant: bool, difference: Fraction, power: float, rules: DecisionRules) -> Decision:
    if significant and difference > 0:
        return "better"
    if significant and difference < 0:
        return "worse"
    return "no detectable difference" if power >= rules.target_power else "underpowered"


def decide_comparisons(cases: Sequence[ComparisonEvidence], rules: DecisionRules) -> tuple[ComparisonDecision, ...]:
    decisive_indices = [i for i, c in enumerate(cases) if c.coverage >= rules.coverage_floor]
    decisive = [cases[i] for i in decisive_indices]
    raw = [fisher_exact(c.baseline_passes, c.baseline_graded - c.baseline_passes,
                        c.candidate_passes, c.candidate_graded - c.candidate_passes) for c in decisive]
    adjusted = adjust(raw, rules.adjustment)
    # the power at the strictest level a comparison of the family can face: alpha / m under holm
    # and bh (their first step), alpha without adjustment; so "no detectable difference" is never
    # claimed on a power the adjustment does not grant
    level = rules.alpha if rules.adjustment == "none" else rules.alpha / max(1, len(decisive))
    figures: dict[int, ComparisonDecision] = {}
    for index, c, p, p_adj in zip(decisive_indices, decisive, raw, adjusted, strict=True):
        power = comparison_power(c.baseline_graded, c.candidate_graded, c.baseline_passes / c.baseline_graded,
                                 rules.min_effect, level)
        difference = c.difference
        assert difference is not None  # decisive: both arms graded
        figures[index] = ComparisonDecision(c, judged(p_adj <= rules.alpha, difference, power, rules), p, p_adj,
                                            power)
    return tuple(figures.get(i) or ComparisonDecision(c, "indecisive", None, None, None) for i, c in enumerate(cases))


def decide(cases: Sequence[ComparisonEvidence], rules: DecisionRules | None = None) -> SuiteDecision:
    """The decision per comparison and for the suite (see the module docstring for the rules)."""
    rules = rules or DecisionRules()
    duplicates = sorted(cid for cid, n in Counter(c.id for c in cases).items() if n > 1)
    if duplicates:
        raise ValueError(f"expected each comparison once, found {', '.join(duplicates)} more than once")
    comparisons = decide_comparisons(cases, rules)
    decisive = [c.evidence for c in comparisons if c.decision != "indecisive"]
    differences = [c.balanced_difference for c in decisive]
    higher = sum(1 for d in differences if d is not None and d > 0)
    lower = sum(1 for d in differences if d is not None and d < 0)
    ties = len(decisive) - higher - lower
    if not decisive or len(decisive) / len(cases) < rules.coverage_floor:
        return SuiteDecision("indecisive", rules, comparisons, higher, lower, ties, None, None)
    p = sign_test(higher, lower)
    power = suite_power([CaseCounts(c.balanced_trials, c.balanced_trials, c.balanced_baseline_passes) for c in decisive],
                        rules.min_effect, rules.alpha)
    decision = judged(p <= rules.alpha, Fraction(higher - lower), power, rules)
    return SuiteDecision(decision, rules, comparisons, higher, lower, ties, p, power)
