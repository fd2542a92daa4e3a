"""The adapter from graded groups to the decision core's cases (issue 28), checked against scipy.

- the cases a single run's and a group's trials' stored grades give: outcomes in trial
  order, missing (not graded, grade-error, a trial that never ran) never a failure;
- the bound an item decides its comparisons on before the other groups' p-values are known
  is never more significant than the decision over the whole family (Holm by hand and
  scipy's Fisher), so an item never fails on a regression the result does not find;
- with identical arms drawn by the stochastic stand-in's own seeded generator (the weights
  of ``example_suites/trials``), the suite test and the Holm-adjusted regression policy,
  through the adapter, reject at most alpha (within three Monte Carlo standard errors), and
  the unadjusted policy does not.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from scipy.stats import binomtest, fisher_exact

from pytest_skill_eval.decision import ComparisonEvidence, DecisionRules, decide
from pytest_skill_eval.decision_cases import (
    GroupCases,
    comparison_bound,
    decided,
    grade_cases,
    lost_trial_runs,
    planned_trials,
    split_case_id,
    trial_cases,
    verdict_cases,
)
from pytest_skill_eval.evidence.stop_records import StoppingRecord
from pytest_skill_eval.grading.aggregate import Trial, aggregate
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GroupGrade
from pytest_skill_eval.policy import VariantState, Verdict, judge_trials
from pytest_skill_eval.scripted.format import load_script
from pytest_skill_eval.scripted.replies import Arm

TRIALS_SCRIPT = Path(__file__).resolve().parents[2] / "example_suites" / "trials" / "scripts" / "changelog-activation.json"


def grade(group: str, baseline: str, candidate: str) -> GroupGrade:
    """One trial's grade of a group with one comparison ``c``."""
    expectations = (ExpectationResult("b", "skill-read", "baseline", baseline, "", ""),  # type: ignore[arg-type]
                    ExpectationResult("c", "skill-read", "candidate", candidate, "", ""))  # type: ignore[arg-type]
    word = {"pass": "pass", "fail": "fail"}
    transition = (f"{word[baseline]}-to-{word[candidate]}" if baseline in word and candidate in word
                  else "not-comparable")
    return GroupGrade(group, "graded", expectations, (ComparisonResult("c", "b", "c", transition),))  # type: ignore[arg-type]


def test_a_single_runs_grade_is_one_planned_trial_per_arm() -> None:
    (case,) = grade_cases("g", grade("g", "fail", "pass"))
    assert (case.id, case.baseline, case.candidate) == ("g/c", (False,), (True,))
    (missing,) = grade_cases("g", grade("g", "not-graded", "grade-error"))
    assert (missing.baseline, missing.candidate, missing.coverage) == ((None,), (None,), 0.0)


def test_trials_keep_trial_order_and_missing_is_never_a_failure() -> None:
    trials = {1: grade("g", "pass", "fail"), 2: grade("g", "not-graded", "pass"), 4: grade("g", "fail", "grade-error")}
    agg = aggregate("g", 5, [Trial(n, g, {"baseline": "complete", "candidate": "complete"}) for n, g in trials.items()])
    (case,) = trial_cases("g", agg, trials)
    # trial 3 and 5 never ran (no grade): missing in both arms
    assert case.baseline == (True, None, None, False, None)
    assert case.candidate == (False, True, None, None, None)
    assert (case.baseline_graded, case.candidate_graded, case.planned) == (2, 2, 5)


def test_a_trial_verdict_gives_its_counts() -> None:
    trials = [Trial(n, grade("g", "pass" if n <= 3 else "fail", "pass"), {"baseline": "complete", "candidate": "complete"})
              for n in range(1, 5)]
    agg = aggregate("g", 6, trials)  # two planned trials never ran
    variants = (VariantState("baseline", "complete", None, "x"), VariantState("candidate", "complete", None, "x"))
    verdict = judge_trials(variants, agg, group_id="g", position=1, group_state="complete", group_dir="x",
                           fail_on="regression", pass_rate=1.0, alpha=0.05, result_id="r")
    found = verdict_cases(verdict)
    (case,) = found.cases
    assert (case.baseline_passes, case.baseline_graded, case.candidate_passes, case.candidate_graded) == (3, 4, 4, 4)
    assert case.planned == 6 and found.lost_runs == {"baseline": 2, "candidate": 2}


BOTH = {"baseline": "complete", "candidate": "complete"}


def states(baseline: str, candidate: str) -> tuple[VariantState, VariantState]:
    return VariantState("baseline", baseline, None, "x"), VariantState("candidate", candidate, None, "x")


def single_verdict(baseline: str, candidate: str, grade_: GroupGrade) -> Verdict:
    return Verdict(result_id="r", group_id="g", position=3, group_state="complete", grade_state="graded",
                   group_dir="x", fail_on="candidate", variants=states(baseline, candidate),
                   expectations=grade_.expectations, comparisons=grade_.comparisons, grade_errors=())


def test_a_single_run_verdicts_cases_and_lost_runs() -> None:
    g = grade("g", "pass", "fail")
    found = verdict_cases(single_verdict("complete", "timeout", g))
    assert found == GroupCases("g", 3, (ComparisonEvidence("g/c", (True,), (False,)),), {"baseline": 0, "candidate": 1})
    assert verdict_cases(single_verdict("complete", "complete", g)).lost_runs == {"baseline": 0, "candidate": 0}
    # a variant not selected: nothing was compared, nothing lost
    assert verdict_cases(single_verdict("complete", "not-selected", g)) == GroupCases("g", 3, (), {})
    # a comparison naming no baseline expectation has no baseline outcome
    lone = GroupGrade("g", "graded", g.expectations, (ComparisonResult("c", "", "c", "not-comparable"),))
    assert grade_cases("g", lone) == (ComparisonEvidence("g/c", (None,), (False,)),)
    assert split_case_id("g/c") == ("g", "c")


def test_a_trial_verdicts_cases_count_the_trials_a_stop_rule_ran() -> None:
    runs = [BOTH, {"baseline": "complete", "candidate": "timeout"}, BOTH, {"baseline": "complete", "candidate": "not-selected"}]
    trials = [Trial(n, grade("g", "pass", "fail" if n == 2 else "pass"), r) for n, r in enumerate(runs, 1)]
    agg = aggregate("g", 10, trials)  # 4 of 10 ran
    assert lost_trial_runs(agg, ["baseline", "candidate"]) == {"baseline": 6, "candidate": 7}
    assert lost_trial_runs(agg, ["baseline", "candidate", "other"], 4) == {"baseline": 0, "candidate": 1, "other": 0}
    stopped = StoppingRecord("curtail", 10, 4, True, "decided", "regression", 1.0, 0.05, ())
    assert planned_trials(agg, stopped) == 4 and planned_trials(agg, None) == 10
    assert planned_trials(agg, StoppingRecord("curtail", 10, 4, False, "open", "regression", 1.0, 0.05, ())) == 10
    verdict = judge_trials(states("complete", "complete"), agg, group_id="g", position=2, group_state="complete",
                           group_dir="x", fail_on="regression", pass_rate=1.0, alpha=0.05, result_id="r", stopping=stopped)
    found = verdict_cases(verdict)
    assert found == GroupCases("g", 2, (ComparisonEvidence("g/c", (True,) * 4, (True, True, True, False)),),
                               {"baseline": 0, "candidate": 1})
    # the trials' own cases over the trials the rule ran, by trial number
    assert trial_cases("g", agg, {t.number: t.grade for t in trials}, 4) == (
        ComparisonEvidence("g/c", (True,) * 4, (True, False, True, True)),)
    # a variant not selected: no cases, the lost runs of the selected one
    alone = judge_trials(states("complete", "not-selected"), agg, group_id="g", position=2, group_state="complete",
                         group_dir="x", fail_on="regression", pass_rate=1.0, alpha=0.05, result_id="r")
    assert verdict_cases(alone) == GroupCases("g", 2, (), {"baseline": 6})
    alone_stopped = judge_trials(states("complete", "not-selected"), agg, group_id="g", position=2, group_state="complete",
                                 group_dir="x", fail_on="regression", pass_rate=1.0, alpha=0.05, result_id="r",
                                 stopping=stopped)
    assert verdict_cases(alone_stopped) == GroupCases("g", 2, (), {"baseline": 0})  # the 6 not run were never due


def test_decided_adds_the_bound_over_the_family() -> None:
    trials = [Trial(n, grade("g", "pass", "fail" if n <= 8 else "pass"), BOTH) for n in range(1, 11)]
    verdict = judge_trials(states("complete", "complete"), aggregate("g", 10, trials), group_id="g", position=1,
                           group_state="complete", group_dir="x", fail_on="regression", pass_rate=1.0, alpha=0.05,
                           result_id="r")
    rules = DecisionRules()
    p = fisher_exact([[10, 0], [2, 8]]).pvalue
    for family, required in ((1, False), (3, True), (100, False)):
        d = decided(verdict, rules, family, require_power=required)
        assert (d.rules, d.require_power, list(d.decisions)) == (rules, required, ["c"])
        c = d.decisions["c"]
        # Holm with the family's other p-values at 1: this one is multiplied by the family size
        assert c.adjusted_p_value == pytest.approx(min(1.0, family * p), rel=1e-9)
        assert c.decision == ("worse" if family * p <= 0.05 else "underpowered")
    assert decided(verdict, rules, 1).require_power is False
    single = single_verdict("complete", "complete", grade("g", "pass", "fail"))
    assert decided(single, rules, 5) is single


def holm_by_hand(p_values: list[float]) -> list[float]:
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def test_an_items_bound_is_never_more_significant_than_the_whole_familys_decision() -> None:
    rng = random.Random(28)
    rules = DecisionRules()
    checked_worse = 0
    for _ in range(300):
        m = rng.randint(1, 6)
        n = rng.choice([4, 6, 10])
        cases = []
        for _ in range(m):
            pb, pc = rng.random(), rng.random()
            cases.append((tuple(rng.random() < pb for _ in range(n)), tuple(rng.random() < pc for _ in range(n))))


        evidence = [ComparisonEvidence(f"g{k}/c", b, c) for k, (b, c) in enumerate(cases)]
        whole = decide(evidence, rules)
        raw = [fisher_exact([[sum(b), n - sum(b)], [sum(c), n - sum(c)]]).pvalue for b, c in cases]
        by_hand = holm_by_hand(raw)
        for k, whole_k in enumerate(whole.comparisons):
            assert whole_k.adjusted_p_value == pytest.approx(by_hand[k], rel=1e-9, abs=1e-12)
        own = rng.randrange(m)
        (bound,) = comparison_bound([evidence[own]], m, rules)
        assert bound.adjusted_p_value == pytest.approx(min(1.0, m * raw[own]), rel=1e-9, abs=1e-12)
        if bound.decision == "worse":
            checked_worse += 1
            assert whole.comparisons[own].decision == "worse"
        mine, theirs = bound.adjusted_p_value, whole.comparisons[own].adjusted_p_value
        assert mine is not None and theirs is not None
        assert mine >= theirs - 1e-12
    assert checked_worse > 0, "the property was exercised on comparisons the bound calls worse"


def stand_in_passes(seed: str, group: str, variant: str, trial: int, weights: list[float]) -> bool:
    """Whether the stand-in's seeded draw for this arm chose the alternative that reads the skill (index 0)."""
    generator = Arm(seed, group, variant, trial).generator(1, "/turns/0/rules/0")
    return generator.choices([0, 1], weights=weights)[0] == 0


def test_identical_arms_on_the_stochastic_stand_in_reject_at_most_alpha() -> None:
    script = load_script(TRIALS_SCRIPT)
    rules_of_script = [[c.weight for c in rule.choices] for rule in script.turns[0].rules]
    assert rules_of_script == [[9, 1], [3, 7]]
    suites, groups, trials = 400, 12, 10
    alpha = 0.05
    suite_rejections = holm_rejections = raw_rejections = 0
    rules = DecisionRules(alpha=alpha)
    for s in range(suites):
        seed = f"aa-{s}"
        evidence: list[ComparisonEvidence] = []
        for g in range(groups):
            weights = rules_of_script[g % 2]
            grades = {}
            for t in range(1, trials + 1):
                # A/A: both arms are the candidate; each arm draws on its own, as each pi process does
                b = stand_in_passes(seed, f"group-{g}", "baseline", t, weights)
                c = stand_in_passes(seed, f"group-{g}", "candidate", t, weights)
                grades[t] = grade(f"group-{g}", "pass" if b else "fail", "pass" if c else "fail")
            agg = aggregate(f"group-{g}", trials, [Trial(t, gr, {"baseline": "complete", "candidate": "complete"})
                                                      for t, gr in grades.items()])
            evidence += trial_cases(f"group-{g}", agg, grades)
        decision = decide(evidence, rules)
        # the suite test, checked against scipy's binomial test on the same counts
        assert decision.p_value == pytest.approx(binomtest(decision.higher, decision.higher + decision.lower, 0.5).pvalue
                                                 if decision.higher + decision.lower else 1.0)
        suite_rejections += decision.decision in ("better", "worse")
        holm_rejections += any(c.decision == "worse" for c in decision.comparisons)
        raw_rejections += any(c.p_value is not None and c.p_value <= alpha and c.evidence.difference is not None
                              and c.evidence.difference < 0 for c in decision.comparisons)
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / suites)
    assert suite_rejections / suites <= bound
    assert holm_rejections / suites <= bound
    # each unadjusted test is conservative at n = 10, yet over 12 comparisons they flag a regression too often
    assert raw_rejections / suites > alpha
