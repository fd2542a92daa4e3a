"""The decision rules, written from issue 28 and docs/statistics.md, with the figures checked independently."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from scipy import stats

from pytest_skill_eval.decision import (
    ComparisonEvidence,
    DecisionRules,
    comparison_power,
    decide,
    decision_flips,
    evidence_flips,
    flip_rate,
    holm,
    signed_rank_exact,
)


def single(cid: str, baseline: bool | None, candidate: bool | None) -> ComparisonEvidence:
    return ComparisonEvidence(cid, (baseline,), (candidate,))


def trials(cid: str, planned: int, base: int, cand: int, *, base_missing: int = 0,
           cand_missing: int = 0) -> ComparisonEvidence:
    """``base`` passes then fails then the missing trials, per arm (order matters only for balancing)."""
    def arm(passes: int, missing: int) -> tuple[bool | None, ...]:
        return (True,) * passes + (False,) * (planned - passes - missing) + (None,) * missing
    return ComparisonEvidence(cid, arm(base, base_missing), arm(cand, cand_missing))


def suite_of(up: int, down: int, both_pass: int, both_fail: int = 0) -> list[ComparisonEvidence]:
    return ([single(f"up{i}", False, True) for i in range(up)] + [single(f"down{i}", True, False) for i in range(down)]
            + [single(f"pp{i}", True, True) for i in range(both_pass)]
            + [single(f"ff{i}", False, False) for i in range(both_fail)])


def test_the_issues_example_is_underpowered_with_its_counts_shown() -> None:
    d = decide(suite_of(3, 1, 12))
    assert (d.higher, d.lower, d.ties) == (3, 1, 12)
    assert d.p_value == stats.binomtest(3, 4, 0.5).pvalue == 0.625
    # 13 cases passed at baseline: their mean rate 13/16 admits only a drop of 0.2; each then
    # goes pass-to-fail with probability 0.2, and the sign test rejects from 6 of them on
    power = stats.binom.sf(5, 13, 0.2)
    assert d.power == pytest.approx(power, rel=1e-9)
    assert d.decision == "underpowered"
    assert d.line() == (f"underpowered: 3 fail-to-pass, 1 pass-to-fail, 12 ties: p = 0.62, "
                        f"power {power:.2f} to detect 0.2 at alpha 0.05")


def test_significant_suites_are_better_or_worse() -> None:
    better = decide(suite_of(9, 0, 3))
    assert better.line() == "better: 9 fail-to-pass, 0 pass-to-fail, 3 ties: p = 0.0039"
    worse = decide(suite_of(1, 10, 1))
    assert worse.decision == "worse"
    assert worse.p_value == pytest.approx(stats.binomtest(1, 11, 0.5).pvalue, rel=1e-12)
    assert worse.line() == "worse: 1 fail-to-pass, 10 pass-to-fail, 1 tie: p = 0.012"


def test_enough_ties_with_power_are_no_detectable_difference() -> None:
    d = decide(suite_of(0, 0, 40))
    power = stats.binom.sf(5, 40, 0.2)  # 40 cases, each pass-to-fail with probability 0.2 under the drop
    assert d.power == pytest.approx(power, rel=1e-9) and power >= 0.8
    assert d.line() == f"no detectable difference: 0 fail-to-pass, 0 pass-to-fail, 40 ties: p = 1, power {power:.2f} to detect 0.2 at alpha 0.05"
    # a stricter target power turns the same evidence into underpowered
    assert decide(suite_of(0, 0, 40), DecisionRules(target_power=0.95)).decision == "underpowered"


def test_one_run_of_one_comparison_says_nothing_on_its_own() -> None:
    d = decide([single("reads-skill", False, True)])
    [c] = d.comparisons
    assert (c.decision, c.p_value, c.power) == ("underpowered", 1.0, 0.0)
    assert c.line(d.rules) == "underpowered: fail-to-pass, p = 1 (holm 1), power 0.00 to detect 0.2"
    assert d.decision == "underpowered"


def test_coverage_floor_for_comparisons_and_for_the_suite() -> None:
    at_floor = trials("a", 10, 3, 8, cand_missing=2)  # 8 of 10 graded: exactly the floor
    below = trials("b", 10, 3, 9, base_missing=3)     # 7 of 10
    assert at_floor.coverage == 0.8 and below.coverage == 0.7
    d = decide([at_floor, below, *[trials(f"c{i}", 10, 5, 5) for i in range(3)]])
    decisions = {c.evidence.id: c for c in d.comparisons}
    assert decisions["a"].decision != "indecisive"
    b = decisions["b"]
    assert (b.decision, b.p_value, b.adjusted_p_value, b.power) == ("indecisive", None, None, None)
    assert b.line(d.rules) == "indecisive: baseline 7 of 10 graded, candidate 10 of 10 (70 %, floor 80 %)"
    # 4 of 5 comparisons decisive is the floor: the suite decides on them, b is left out
    assert d.decision != "indecisive" and d.higher + d.lower + d.ties == 4
    # the Holm family is the 4 decisive comparisons
    assert decisions["a"].adjusted_p_value == pytest.approx(4 * stats.fisher_exact([[3, 7], [8, 0]]).pvalue)
    # one more indecisive comparison: 4 of 6 is below the floor, and the suite is indecisive
    d = decide([at_floor, below, trials("z", 10, 1, 1, cand_missing=5), *[trials(f"c{i}", 10, 5, 5) for i in range(3)]])
    assert (d.decision, d.p_value, d.power) == ("indecisive", None, None)
    # its counts are still the decisive comparisons': a higher (3/8 -> 8/8 over 8 each), 3 ties
    assert (d.higher, d.lower, d.ties) == (1, 0, 3)
    assert d.line() == "indecisive: 4 of 6 comparisons graded in at least 80 % of planned trials (67 %, floor 80 %)"
    # a single run whose candidate was not graded is indecisive, never a failure
    assert decide([single("x", True, None)]).comparisons[0].decision == "indecisive"
    assert decide([]).line() == "indecisive: 0 of 0 comparisons graded in at least 80 % of planned trials (0 %, floor 80 %)"


def test_per_comparison_significance_uses_the_adjusted_p_value() -> None:
    cases = [trials("drop", 10, 9, 2), trials("rise", 10, 2, 9), trials("same", 10, 5, 5), trials("noise", 10, 4, 6)]
    raw = [stats.fisher_exact([[c.baseline_passes, 10 - c.baseline_passes],
                               [c.candidate_passes, 10 - c.candidate_passes]]).pvalue for c in cases]
    d = decide(cases)
    assert [c.p_value for c in d.comparisons] == pytest.approx(raw, rel=1e-9)
    assert [c.adjusted_p_value for c in d.comparisons] == pytest.approx(holm(raw), rel=1e-9)
    assert [c.decision for c in d.comparisons] == ["worse", "better", "underpowered", "underpowered"]
    assert [c.evidence.id for c in d.regressions] == ["drop"]
    assert d.comparisons[0].line(d.rules) == f"worse: 9/10 -> 2/10, p = {raw[0]:.2g} (holm {4 * raw[0]:.2g})"
    # raw p 0.02 passes alpha alone, but not after Holm over 4 comparisons; without adjustment it is worse
    borderline = [trials("drop", 10, 9, 3), *cases[2:], trials("more", 10, 5, 6)]
    assert decide(borderline).comparisons[0].decision == "underpowered"
    unadjusted = decide(borderline, DecisionRules(adjustment="none"))
    assert unadjusted.comparisons[0].decision == "worse"
    assert unadjusted.comparisons[0].line(unadjusted.rules).startswith("worse: 9/10 -> 3/10, p = 0.02")
    assert "(" not in unadjusted.comparisons[0].line(unadjusted.rules)  # no adjusted figure to show


def test_comparison_power_is_taken_at_the_strictest_level_of_its_family() -> None:
    cases = [trials(f"c{i}", 120, 60, 60) for i in range(4)]
    d = decide(cases)
    expected = comparison_power(120, 120, 0.5, 0.2, 0.05 / 4)
    assert [c.power for c in d.comparisons] == [expected] * 4
    assert d.comparisons[0].decision == ("no detectable difference" if expected >= 0.8 else "underpowered")
    # without an adjustment every comparison faces alpha itself; a family of one faces alpha under holm too
    unadjusted = decide(cases, DecisionRules(adjustment="none"))
    assert [c.power for c in unadjusted.comparisons] == [comparison_power(120, 120, 0.5, 0.2, 0.05)] * 4
    assert decide(cases[:1]).comparisons[0].power == comparison_power(120, 120, 0.5, 0.2, 0.05)
    alone = decide(cases[:1], DecisionRules(adjustment="none")).comparisons[0]
    assert alone.power == comparison_power(120, 120, 0.5, 0.2, 0.05) >= 0.8 > expected
    assert alone.line(DecisionRules(adjustment="none")) == f"no detectable difference: 60/120 -> 60/120, p = 1, power {alone.power:.2f} to detect 0.2"


def test_the_suite_compares_equally_many_graded_trials_per_arm() -> None:
    # baseline graded in 9 trials (3 passes), candidate in 10 (3 passes, the last one a pass):
    # over all graded trials 3/10 < 3/9, but over the first 9 of each the rates are 2/9 and 3/9
    c = ComparisonEvidence("x", (True, True, True, False, False, False, False, False, False, None),
                           (True, True, False, False, False, False, False, False, False, True))
    assert c.difference == Fraction(3, 10) - Fraction(3, 9)
    assert (c.balanced_trials, c.balanced_baseline_passes) == (9, 3)
    assert c.balanced_difference == Fraction(2 - 3, 9)
    assert ComparisonEvidence("s", (True,), (False,)).balanced_difference == -1
    # the suite counts the balanced sign: 0/9 -> 1/10 is higher over all graded trials but a
    # tie over the first 9 of each arm
    lean = ComparisonEvidence("lean", (False,) * 9 + (None,), (False,) * 9 + (True,))
    assert lean.difference is not None and lean.difference > 0 and lean.balanced_difference == 0
    d = decide([lean, trials("up", 10, 2, 8)])
    assert (d.higher, d.lower, d.ties) == (1, 0, 1)
    assert d.comparisons[0].line(d.rules).startswith("underpowered: 0/9 -> 1/10, p = 1")


def test_trials_wording_and_mixed_plans() -> None:
    d = decide([trials(f"c{i}", 5, 1, 4) for i in range(6)] + [trials("t", 5, 2, 2)])
    assert d.line().startswith("better: 6 higher, 0 lower, 1 tie: p = 0.031")
    assert not d.single_run


def test_rules_and_evidence_refuse_bad_values_with_what_was_found() -> None:
    with pytest.raises(ValueError, match="alpha: expected a number strictly between 0 and 1, found 0"):
        DecisionRules(alpha=0)
    with pytest.raises(ValueError, match="coverage floor: expected a share above 0 and at most 1, found 1.5"):
        DecisionRules(coverage_floor=1.5)
    with pytest.raises(ValueError, match="adjustment: expected one of holm, bh, none, found 'sidak'"):
        DecisionRules(adjustment="sidak")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="comparison c: expected one outcome per planned trial in each arm, found 2 baseline and 1"):
        ComparisonEvidence("c", (True, False), (True,))
    with pytest.raises(ValueError, match=r"comparison c: candidate trial 2: expected true \(pass\), false \(fail\) or None \(not graded\), found 1"):
        ComparisonEvidence("c", (True, False), (True, 1))  # type: ignore[arg-type]
    # numbers read back from a stored record can be anything JSON or Python allows
    for bad in (float("nan"), float("inf"), -0.1):
        with pytest.raises(ValueError, match="alpha: expected a number strictly between 0 and 1"):
            DecisionRules(alpha=bad)
        with pytest.raises(ValueError, match="minimum effect: expected a rate difference above 0 and at most 0.5"):
            DecisionRules(min_effect=bad)
    with pytest.raises(ValueError, match="target power: expected a number strictly between 0 and 1, found nan"):
        DecisionRules(target_power=float("nan"))
    with pytest.raises(ValueError, match="comparison c: expected one outcome per planned trial in each arm, found 0"):
        ComparisonEvidence("c", (), ())
    with pytest.raises(ValueError, match=r"baseline trial 1: .* found 'pass'"):
        ComparisonEvidence("c", ("pass",), (True,))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        signed_rank_exact([float("nan")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="expected each comparison once, found a more than once"):
        decide([single("a", True, True), single("a", True, False)])
    with pytest.raises(ValueError, match="expected each comparison once, found a, b more than once"):
        decide([single(i, True, True) for i in "babca"])
    with pytest.raises(ValueError, match="coverage floor: expected a share above 0 and at most 1, found 0"):
        DecisionRules(coverage_floor=0)


def test_the_boundaries_are_inclusive() -> None:
    # significant is p <= alpha: Fisher's p of 3/3 -> 0/3 is 2 / C(6, 3) = 0.1, as scipy has it
    assert stats.fisher_exact([[3, 0], [0, 3]]).pvalue == pytest.approx(0.1, rel=1e-12)
    [drop] = decide([trials("drop", 3, 3, 0)], DecisionRules(alpha=0.1)).comparisons
    assert (drop.p_value, drop.adjusted_p_value, drop.decision) == (0.1, 0.1, "worse")
    # the suite's sign test: 5 of 5 one way has p = 2 / 2^5 = 0.0625
    at_alpha = DecisionRules(alpha=stats.binomtest(5, 5, 0.5).pvalue)
    assert at_alpha.alpha == 0.0625
    assert decide(suite_of(5, 0, 0), at_alpha).decision == "better"
    assert decide(suite_of(0, 5, 0), at_alpha).decision == "worse"
    # power at the target is enough for "no detectable difference"; a hair below it is underpowered
    ties = suite_of(0, 0, 40)
    power = decide(ties).power
    assert power is not None
    assert decide(ties, DecisionRules(target_power=power)).decision == "no detectable difference"
    assert decide(ties, DecisionRules(target_power=math.nextafter(power, 1.0))).decision == "underpowered"
    # a coverage floor of 1 is allowed: every planned trial graded, or indecisive
    full = DecisionRules(coverage_floor=1.0)
    assert decide([trials("all", 4, 2, 2)], full).comparisons[0].decision != "indecisive"
    assert decide([trials("one-lost", 4, 2, 2, cand_missing=1)], full).decision == "indecisive"


def test_false_flip_rates() -> None:
    cases = suite_of(2, 1, 5, 2)
    flips = evidence_flips(cases)
    assert (flips.suite.flips, flips.suite.pairs) == (3, 10)
    assert flips.suite.text() == "3 flips in 10 pairs (30 %, 95 % CI 11-60 %)"
    assert flips.comparisons["up0"].flips == 1 and flips.comparisons["pp0"].flips == 0
    per_trial = evidence_flips([trials("t", 10, 5, 5, cand_missing=2)])  # passes line up: no flips in 8 pairs
    assert (per_trial.comparisons["t"].flips, per_trial.comparisons["t"].pairs) == (0, 8)
    assert flip_rate([]).text() == "no pairs" and flip_rate([]).rate is None
    d = decide([trials("drop", 10, 9, 2), trials("same", 10, 5, 5)])
    assert (decision_flips(d).flips, decision_flips(d).pairs) == (1, 2)
    # better and worse are flips, of the decisive comparisons only
    d = decide([trials("drop", 10, 9, 2), trials("rise", 10, 2, 9), trials("rise2", 10, 1, 9), trials("same", 10, 5, 5),
                trials("lost", 10, 5, 5, base_missing=5)])
    assert [c.decision for c in d.comparisons] == ["worse", "better", "better", "underpowered", "indecisive"]
    assert (decision_flips(d).flips, decision_flips(d).pairs) == (3, 4)
    # every pair counts, whatever the last one is; the shares and the Wilson interval as scipy has them
    many = flip_rate([(True, False), (False, True), (True, True), (False, False), (True, True), (True, False), (True, True)])
    ci = stats.binomtest(3, 7).proportion_ci(method="wilson")
    assert many.text() == f"3 flips in 7 pairs (43 %, 95 % CI {ci.low * 100:.0f}-{ci.high * 100:.0f} %)" == \
        "3 flips in 7 pairs (43 %, 95 % CI 16-75 %)"
    ci = stats.binomtest(10, 10).proportion_ci(method="wilson")
    assert flip_rate([(True, False)] * 10).text() == f"10 flips in 10 pairs (100 %, 95 % CI {ci.low * 100:.0f}-100 %)"


def test_the_lines_docs_statistics_shows_are_the_ones_the_core_writes() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "statistics.md").read_text(encoding="utf-8")
    family = decide([trials("drop", 10, 9, 2), trials("some", 10, 3, 5), trials("c", 10, 5, 5), trials("d", 10, 5, 5)])
    at_floor = [trials("a", 10, 3, 8, cand_missing=2), trials("b", 10, 3, 9, base_missing=3),
                trials("z", 10, 1, 1, cand_missing=5), *[trials(f"c{i}", 10, 5, 5) for i in range(3)]]
    lines = [
        decide(suite_of(9, 0, 3)).line(), decide(suite_of(3, 1, 12)).line(), decide(suite_of(0, 0, 40)).line(),
        decide([trials(f"c{i}", 5, 1, 4) for i in range(6)] + [trials("t", 5, 2, 2)]).line(),
        decide(at_floor).line(),
        family.comparisons[0].line(family.rules), family.comparisons[1].line(family.rules),
        decide([single("x", False, True)]).comparisons[0].line(DecisionRules()),
        decide(at_floor).comparisons[1].line(DecisionRules()),
    ]
    for line in lines:
        assert f"\n{line}\n" in docs, line
