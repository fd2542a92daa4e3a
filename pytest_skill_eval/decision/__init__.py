"""The decision core (pure): exact tests, power, multiplicity and one decision per suite.

    decision
    ├── exact         sign test, exact McNemar, exact Wilcoxon signed-rank, Fisher's exact test
    ├── power         exact power of Fisher's test and the suite's sign test; trials for a power
    ├── multiplicity  holm, bh (Benjamini-Hochberg, monotone), none
    ├── suite         ComparisonEvidence -> ComparisonDecision, SuiteDecision and its one line
    ├── calibration   A/A false-flip rates per comparison and per suite
    ├── planning      trials per arm a suite's comparisons and its sign test need; pi runs, tokens, cost
    ├── sequential    the group-sequential sign test of one comparison (Lan-DeMets O'Brien-Fleming spending)
    └── stopping      --skill-eval-stop: curtailment (exact, by the extremes) and the group's stop rule

No I/O and no import from a higher layer: it takes counts and returns frozen values.
docs/statistics.md gives the estimand, every formula and its reference.
"""

from __future__ import annotations

from pytest_skill_eval.decision.calibration import (
    FlipRate,
    SuiteFlips,
    decision_flips,
    evidence_flips,
    flip_rate,
    suite_flips,
)
from pytest_skill_eval.decision.exact import SignedRank, fisher_exact, mcnemar_exact, sign_test, signed_rank_exact
from pytest_skill_eval.decision.multiplicity import ADJUSTMENTS, Adjustment, adjust, benjamini_hochberg, holm
from pytest_skill_eval.decision.power import (
    CaseCounts,
    TrialPlan,
    comparison_power,
    fisher_power,
    least_favourable_rates,
    sign_test_power,
    suite_power,
    trials_for_power,
)
from pytest_skill_eval.decision.suite import (
    DECISIONS,
    ComparisonDecision,
    ComparisonEvidence,
    Decision,
    DecisionRules,
    Outcome,
    SuiteDecision,
    decide,
)

__all__ = [
    "ADJUSTMENTS", "DECISIONS", "Adjustment", "CaseCounts", "ComparisonDecision", "ComparisonEvidence", "Decision",
    "DecisionRules", "FlipRate", "Outcome", "SignedRank", "SuiteDecision", "SuiteFlips", "TrialPlan", "adjust",
    "benjamini_hochberg", "comparison_power", "decide", "decision_flips", "evidence_flips", "fisher_exact", "fisher_power",
    "flip_rate", "holm", "least_favourable_rates", "mcnemar_exact", "sign_test", "sign_test_power",
    "signed_rank_exact", "suite_flips", "suite_power", "trials_for_power",
]
