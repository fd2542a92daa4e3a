"""What a verdict over trials says on every surface: status words, ``-v`` lines, failure and
error text, JUnit properties and entries, and the summary table's comparisons column.

docs/usage.md ("Trials", "The decision", "JUnit XML") fixes the words: a rate reads
``7/20 (35 %, 95 % CI 18-57 %)`` with what was not graded and the flags after it, a
comparison its transition with ``[saturated]``, its decision after it (``worse: 9/10 ->
2/10, p = 0.0055 (holm ...)``), the status words ``(20 trials; better)``; the entries follow
the single run's table (not graded is skipped, a grade error an error, an entry fails only
when it is a reason the item fails), and ``--skill-eval-require-power`` makes an
underpowered or indecisive comparison an error. Each case is a whole aggregate judged
host-free, its decisions made by the real decision core.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from pytest_skill_eval.decision import DecisionRules
from pytest_skill_eval.decision.stopping import regression_verdict
from pytest_skill_eval.decision_cases import decided
from pytest_skill_eval.evidence.stop_records import StoppingRecord
from pytest_skill_eval.grading.aggregate import ComparisonRate, ExpectationRate, TrialGrade
from pytest_skill_eval.grading.results import GradeError
from pytest_skill_eval.policy import Entry, FailOn, VariantState, Verdict, judge_trials
from pytest_skill_eval.summary_table import summary_table
from pytest_skill_eval.usage import Usage, VariantUsage

BASE = (("skill_eval.result_id", "r"), ("skill_eval.group", "g"))


def rates(baseline: tuple[int, int], candidate: tuple[int, int], cid: str = "cmp",
          saturated: bool = False) -> tuple[tuple[ExpectationRate, ...], ComparisonRate]:
    """Expectations ``b`` and ``c`` with (passes, fails), compared as *cid*."""
    (bp, bf), (cp, cf) = baseline, candidate
    return ((ExpectationRate("b", "skill-read", "baseline", bp, bf, 0, 0),
             ExpectationRate("c", "skill-read", "candidate", cp, cf, 0, 0)),
            ComparisonRate(cid, "b", "c", bp, bp + bf, cp, cp + cf, saturated))


def trial_verdict(expectations: tuple[ExpectationRate, ...], comparisons: tuple[ComparisonRate, ...], *,
                  fail_on: FailOn = "candidate", planned: int = 10, ran: int = 10,
                  runs: Mapping[str, Mapping[str, int]] | None = None,
                  states: tuple[str, str] = ("complete", "complete"),
                  reasons: tuple[str | None, str | None] = (None, None), state: str = "graded",
                  errors: tuple[GradeError, ...] = (), stopping: StoppingRecord | None = None,
                  usage: VariantUsage | None = None, alpha: float = 0.05) -> Verdict:
    runs = runs if runs is not None else {"baseline": {states[0]: ran}, "candidate": {states[1]: ran}}
    aggregate = TrialGrade("g", planned, ran, state, expectations, comparisons, errors, runs)  # type: ignore[arg-type]
    variants = tuple(VariantState(name, s, reason, f"/g/trials/*/{name}")
                     for name, s, reason in zip(("baseline", "candidate"), states, reasons, strict=True))
    return judge_trials(variants, aggregate, group_id="g", position=4, group_state="complete", group_dir="/g",
                        fail_on=fail_on, pass_rate=1.0, alpha=alpha, result_id="r", usage=usage, stopping=stopping)


def with_decisions(v: Verdict, family: int = 1, require_power: bool = False) -> Verdict:
    """*v* decided as the engine decides it (Holm over *family* comparisons, the default rules)."""
    return decided(v, DecisionRules(), family, require_power=require_power)


def entry(name: str, outcome: str, word: str, message: str, *props: tuple[str, str]) -> Entry:
    """An entry of group ``g`` of result ``r`` (every entry starts with those two properties)."""
    return Entry(name, outcome, word, message, BASE + props)  # type: ignore[arg-type]


# -- a comparison decided worse -----------------------------------------------------------

def test_a_comparison_decided_worse_fails_the_regression_policy_on_every_surface() -> None:
    expectations, comparison = rates((9, 1), (2, 8))
    v = with_decisions(trial_verdict(expectations, (comparison,), fail_on="regression"))
    worse = "worse: 9/10 -> 2/10, p = 0.0055 (holm 0.0055)"
    assert v.outcome == "failed"
    assert v.words() == "9/10 -> 2/10 (p=0.0055) (10 trials; worse)"
    assert v.headline() == f"failed comparison cmp: {worse}"
    details = ["trials     10 of 10 ran", "baseline   complete [10 complete]", "candidate  complete [10 complete]",
               "baseline   9/10 (90 %, 95 % CI 60-98 %) [flaky] b (skill-read)",
               "candidate  2/10 (20 %, 95 % CI 6-51 %) [flaky] c (skill-read)",
               f"comparison cmp: 9/10 -> 2/10 (p=0.0055); {worse}"]
    assert v.detail_lines(indent="") == details
    assert v.failure_text().splitlines() == [
        f"failed comparison cmp: {worse}",
        "group g: 9/10 -> 2/10 (p=0.0055) (10 trials; worse) (--skill-eval-fail-on=regression, "
        "--skill-eval-pass-rate=1, --skill-eval-alpha=0.05)",
        "  evidence: /g", *("  " + line for line in details)]
    props = v.properties()
    assert props[-4:] == [("skill_eval.expectation.c", "candidate 2/10 (20 %, 95 % CI 6-51 %) [flaky]"),
                          ("skill_eval.comparison.cmp", "9/10 -> 2/10 (p=0.0055)"),
                          ("skill_eval.comparison.cmp.p_value", "0.005477"),
                          ("skill_eval.comparison.cmp.decision", worse)]
    assert v.entries()[-2:] == (
        entry("comparison:cmp", "failed", "9/10 -> 2/10 (p=0.0055)", f"comparison cmp: 9/10 -> 2/10 (p=0.0055); {worse}",
              ("skill_eval.transition", "9/10 -> 2/10 (p=0.0055)"), ("skill_eval.p_value", "0.005477"),
              ("skill_eval.decision", worse)),
        entry("grade", "passed", "graded", "graded: /g/aggregate.json",
              ("skill_eval.grade_state", "graded"), ("skill_eval.evidence", "/g")),
    )


@pytest.mark.parametrize(("family", "outcome", "decision"), [
    (1, "failed", "worse"),          # p = 0.0198 on its own: worse
    (3, "passed", "underpowered"),   # Holm over three: 0.059 whatever the others show, not worse
])
def test_the_regression_policy_fails_only_a_comparison_decided_worse(family: int, outcome: str, decision: str) -> None:
    """An item fails only when its comparison is worse whatever the run's other p-values show
    (docs/usage.md, "The decision"); Fisher's unadjusted p below alpha alone is not enough."""
    expectations, comparison = rates((9, 1), (3, 7))
    v = with_decisions(trial_verdict(expectations, (comparison,), fail_on="regression"), family)
    assert (v.outcome, v.decisions["cmp"].decision) == (outcome, decision)
    assert {e.name: e.outcome for e in v.entries()}["comparison:cmp"] == outcome
    # without decisions (a verdict not yet decided) it is Fisher's unadjusted p-value below alpha
    assert trial_verdict(expectations, (comparison,), fail_on="regression").outcome == "failed"


def test_without_decisions_the_regression_fallback_is_the_stop_rules_regression_verdict() -> None:
    """Undecided, a comparison fails ``regression`` exactly when curtailment's regression verdict
    (candidate rate lower, Fisher's p below alpha) holds, at alpha equal to the p-value too:
    curtailing must give the verdicts all trials would give."""
    for (bp, bg, cp, cg) in [(9, 10, 3, 10), (9, 10, 2, 10), (6, 10, 5, 10), (3, 10, 9, 10), (10, 10, 5, 10)]:
        expectations, comparison = rates((bp, bg - bp), (cp, cg - cp))
        p = comparison.p_value
        assert p is not None
        for alpha in (0.05, p, 0.01):
            v = trial_verdict(expectations, (comparison,), fail_on="regression", alpha=alpha)
            assert (v.outcome == "failed") is regression_verdict(bp, bg, cp, cg, alpha), (bp, cp, alpha)


def test_an_undecided_failing_comparison_names_its_p_value_against_alpha() -> None:
    expectations, comparison = rates((9, 1), (3, 7))
    v = trial_verdict(expectations, (comparison,), fail_on="regression")
    assert v.headline() == "failed comparison cmp: 9/10 -> 3/10 (p=0.02) (p < 0.05)"
    assert "skill_eval.comparison.cmp.decision" not in dict(v.properties())
    assert v.detail_lines(indent="")[-1] == "comparison cmp: 9/10 -> 3/10 (p=0.02)"


# -- require-power ------------------------------------------------------------------------

def test_require_power_makes_an_underpowered_comparison_an_error() -> None:
    expectations, comparison = rates((2, 1), (2, 1))
    underpowered = "underpowered: 2/3 -> 2/3, p = 1 (holm 1), power 0.00 to detect 0.2"
    v = with_decisions(trial_verdict(expectations, (comparison,), fail_on="never", planned=3, ran=3), require_power=True)
    assert v.outcome == "error"
    assert v.words() == "underpowered (3 trials; underpowered)"
    assert v.error_text().splitlines() == [
        "group g: underpowered (3 trials; underpowered)",
        f"  comparison cmp: {underpowered} (an error under --skill-eval-require-power)",
        "  evidence: /g", "  trials     3 of 3 ran", "  baseline   complete [3 complete]",
        "  candidate  complete [3 complete]", "  baseline   2/3 (67 %, 95 % CI 21-94 %) [flaky] b (skill-read)",
        "  candidate  2/3 (67 %, 95 % CI 21-94 %) [flaky] c (skill-read)",
        f"  comparison cmp: 2/3 -> 2/3 (p=1); {underpowered}"]
    assert v.entries()[-2] == entry("comparison:cmp", "error", "2/3 -> 2/3 (p=1)",
                                    f"comparison cmp: 2/3 -> 2/3 (p=1); {underpowered}",
                                    ("skill_eval.transition", "2/3 -> 2/3 (p=1)"), ("skill_eval.p_value", "1"),
                                    ("skill_eval.decision", underpowered))
    # without the option the same comparison is shown, and passes
    plain = with_decisions(trial_verdict(expectations, (comparison,), fail_on="never", planned=3, ran=3))
    assert plain.outcome == "passed" and plain.words() == "2/3 -> 2/3 (p=1) (3 trials; underpowered)"
    assert {e.name: e.outcome for e in plain.entries()}["comparison:cmp"] == "passed"
    assert not any("require-power" in line for line in plain.error_text().splitlines())


def test_require_power_names_only_the_unsettled_comparison_by_its_own_id() -> None:
    """A stored aggregate's comparison ids are untrusted text: one holding a slash is still
    named by its id, and a settled comparison beside it is no error. (Three of ten planned
    trials graded is below the 80 % coverage floor: indecisive.)"""
    (b, c), unsettled = rates((2, 1), (2, 1), cid="odd/id")
    b2, c2 = ExpectationRate("b2", "path", "baseline", 10, 0, 0, 0), ExpectationRate("c2", "path", "candidate", 0, 10, 0, 0)
    settled = ComparisonRate("clear", "b2", "c2", 10, 10, 0, 10, False)
    v = with_decisions(trial_verdict((b, c, b2, c2), (unsettled, settled), fail_on="never", planned=10, ran=10),
                       require_power=True)
    assert [d.decision for d in v.decisions.values()] == ["indecisive", "worse"]
    lines = [line for line in v.error_text().splitlines() if "require-power" in line]
    assert lines == ["  comparison odd/id: indecisive: baseline 3 of 10 graded, candidate 3 of 10 (30 %, floor 80 %) "
                     "(an error under --skill-eval-require-power)"]
    outcomes = {e.name: e.outcome for e in v.entries()}
    assert (outcomes["comparison:odd/id"], outcomes["comparison:clear"]) == ("error", "passed")


# -- errors, lost runs, what was not graded ---------------------------------------------------

def test_an_error_over_trials_names_each_cause_and_its_entries_say_which_part_it_is() -> None:
    """An invalid variant, a check no trial could answer and group grade errors: each is named
    once in the error text; a check graded in no trial is skipped, or an error when grading
    failed it; what was not graded and the grade errors are counted beside a rate."""
    (b, c), comparison = rates((0, 0), (3, 2))
    unanswered = ExpectationRate("x", "path", "candidate", 0, 0, 2, 3)
    never_graded = ExpectationRate("y", "path", "candidate", 0, 0, 5, 0)
    once = ExpectationRate("z", "path", "candidate", 1, 0, 2, 2)  # a grade error beside a graded trial: counted, no error
    mixed = ExpectationRate("w", "path", "candidate", 2, 1, 1, 1)
    v = trial_verdict(
        (b, c, unanswered, never_graded, once, mixed), (comparison,), planned=5, ran=5,
        states=("invalid", "complete"), reasons=(None, "4 of 5 trials completed; 1 infrastructure-failed"),
        runs={"baseline": {"invalid": 5}, "candidate": {"complete": 4, "infrastructure-failed": 1}},
        state="grade-error",
        errors=(GradeError("group", "g", None, "two comparisons share an id"), GradeError("system", None, None, "boom")))
    assert v.outcome == "error"
    assert v.words() == "invalid, grade-error (5 trials; 6 runs lost)"
    details = [
        "  trials     5 of 5 ran", "  baseline   invalid [5 invalid]",
        "  candidate  complete [4 complete, 1 infrastructure-failed]",
        "  baseline   unavailable (graded in no trial) b (skill-read)",
        "  candidate  3/5 (60 %, 95 % CI 23-88 %) [flaky] c (skill-read)",
        "  candidate  unavailable (graded in no trial) [2 not graded, 3 grade-error] x (path)",
        "  candidate  unavailable (graded in no trial) [5 not graded] y (path)",
        "  candidate  1/1 (100 %, 95 % CI 21-100 %) [2 not graded, 2 grade-error] z (path)",
        "  candidate  2/3 (67 %, 95 % CI 21-94 %) [1 not graded, 1 grade-error, flaky] w (path)",
        "  comparison cmp: not-comparable"]
    error_text = [
        "group g: invalid, grade-error (5 trials; 6 runs lost)",
        "  baseline: invalid: no reason recorded",
        "  grade-error (x): no trial could answer it; see trials/*/grade.json",
        "  grade-error (group g): two comparisons share an id",
        "  grade-error (system): boom",
        "  evidence: /g", *details]
    # the error text leaves the reasons to its own lines; the failure text's details show them
    assert v.error_text().splitlines() == error_text
    assert "  candidate  complete (4 of 5 trials completed; 1 infrastructure-failed) [4 complete, 1 infrastructure-failed]" \
        in v.failure_text().splitlines()
    rate = "skill_eval.rate"
    assert v.entries() == (
        entry("variant:baseline", "error", "invalid", "baseline invalid",
              ("skill_eval.state", "invalid"), ("skill_eval.evidence", "/g")),
        entry("variant:candidate", "passed", "complete", "candidate complete: 4 of 5 trials completed; 1 infrastructure-failed",
              ("skill_eval.state", "complete"), ("skill_eval.evidence", "/g")),
        entry("expectation:b", "skipped", "unavailable", "[baseline] b (skill-read): unavailable (graded in no trial)",
              ("skill_eval.variant", "baseline"), ("skill_eval.kind", "skill-read"), (rate, "unavailable")),
        entry("expectation:c", "failed", "3/5", "[candidate] c (skill-read): 3/5 (60 %, 95 % CI 23-88 %) [flaky]",
              ("skill_eval.variant", "candidate"), ("skill_eval.kind", "skill-read"), (rate, "3/5")),
        entry("expectation:x", "error", "unavailable",
              "[candidate] x (path): unavailable (graded in no trial) [2 not graded, 3 grade-error]",
              ("skill_eval.variant", "candidate"), ("skill_eval.kind", "path"), (rate, "unavailable")),
        entry("expectation:y", "skipped", "unavailable", "[candidate] y (path): unavailable (graded in no trial) [5 not graded]",
              ("skill_eval.variant", "candidate"), ("skill_eval.kind", "path"), (rate, "unavailable")),
        entry("expectation:z", "passed", "1/1", "[candidate] z (path): 1/1 (100 %, 95 % CI 21-100 %) [2 not graded, 2 grade-error]",
              ("skill_eval.variant", "candidate"), ("skill_eval.kind", "path"), (rate, "1/1")),
        entry("expectation:w", "failed", "2/3",
              "[candidate] w (path): 2/3 (67 %, 95 % CI 21-94 %) [1 not graded, 1 grade-error, flaky]",
              ("skill_eval.variant", "candidate"), ("skill_eval.kind", "path"), (rate, "2/3")),
        entry("comparison:cmp", "skipped", "not-comparable", "comparison cmp: not-comparable",
              ("skill_eval.transition", "not-comparable"), ("skill_eval.p_value", "")),
        entry("grade", "error", "grade-error", "\n".join(error_text),
              ("skill_eval.grade_state", "grade-error"), ("skill_eval.evidence", "/g")),
    )


@pytest.mark.parametrize(("runs", "ran", "stopping", "words"), [
    ({"baseline": {"complete": 10}, "candidate": {"complete": 10}}, 10, None, "pass-to-pass (10 trials)"),
    ({"baseline": {"complete": 9, "infrastructure-failed": 1}, "candidate": {"complete": 10}}, 10, None,
     "pass-to-pass (10 trials; 1 run lost)"),
    ({"baseline": {"complete": 8, "invalid": 1, "cancelled": 1}, "candidate": {"complete": 10}}, 10, None,
     "pass-to-pass (10 trials; 2 runs lost)"),
    # a variant that was not selected lost nothing
    ({"baseline": {"complete": 10}, "candidate": {"not-selected": 10}}, 10, None, "pass-to-pass (10 trials)"),
    ({"baseline": {"complete": 4}, "candidate": {"complete": 4}}, 4, None, "pass-to-pass (4 of 10 trials)"),
    ({"baseline": {"complete": 4}, "candidate": {"complete": 4}}, 4,
     StoppingRecord("curtail", 10, 4, True, "no remaining trial can change a verdict", "candidate", 1.0, 0.05, ()),
     "pass-to-pass (4 of 10 trials, stopped by curtail)"),
])
def test_the_status_words_say_how_many_trials_ran_and_how_many_runs_were_lost(
        runs: Mapping[str, Mapping[str, int]], ran: int, stopping: StoppingRecord | None, words: str) -> None:
    (b, c), comparison = rates((ran, 0), (ran, 0))
    v = trial_verdict((b, c), (comparison,), runs=runs, ran=ran, stopping=stopping)
    assert v.words() == words


# -- a variant not selected, flags, the summary table ---------------------------------------------

def test_a_variant_not_selected_over_trials_is_skipped_and_its_checks_unavailable() -> None:
    """With a variant not selected nothing was compared: the decision core gets no case, and
    every surface still reads (decision rules set, no decision)."""
    (b, c), comparison = rates((0, 0), (10, 0))
    v = with_decisions(trial_verdict(
        (b, c), (comparison,), states=("not-selected", "complete"), reasons=("excluded by --skill-eval-variant", None),
        runs={"baseline": {"not-selected": 10}, "candidate": {"complete": 10}}), require_power=True)
    assert v.rules is not None and dict(v.decisions) == {}
    assert (v.outcome, v.words()) == ("passed", "baseline not-selected, candidate 10/10 pass (10 trials)")
    assert v.detail_lines(indent="") == [
        "trials     10 of 10 ran", "baseline   not-selected [10 not-selected]", "candidate  complete [10 complete]",
        "baseline   unavailable (graded in no trial) b (skill-read)", "candidate  10/10 (100 %, 95 % CI 72-100 %) c (skill-read)",
        "comparison cmp: not-comparable"]
    entries = {e.name: e for e in v.entries()}
    assert entries["variant:baseline"] == entry(
        "variant:baseline", "skipped", "not-selected", "baseline not-selected: excluded by --skill-eval-variant",
        ("skill_eval.state", "not-selected"), ("skill_eval.evidence", "/g"))
    assert (entries["expectation:b"].outcome, entries["comparison:cmp"].outcome) == ("skipped", "skipped")
    assert dict(v.properties())["skill_eval.variant.baseline.trials"] == "10 not-selected"


def test_flags_stopping_and_several_comparisons_in_the_summary_table() -> None:
    (b, c), saturated = rates((10, 0), (10, 0), saturated=True)
    b2, c2 = ExpectationRate("b2", "path", "baseline", 3, 7, 0, 0), ExpectationRate("c2", "path", "candidate", 9, 1, 0, 0)
    second = ComparisonRate("second", "b2", "c2", 3, 10, 9, 10, False)
    stopping = StoppingRecord("curtail", 10, 10, False, "ran every planned trial", "candidate", 1.0, 0.05, ())
    usage = VariantUsage(Usage(100, 10, 0, 0, 110, 0.01, 0, 1), Usage(200, 20, 0, 0, 220, 0.02, 0, 1), 2)
    v = trial_verdict((b, c, b2, c2), (saturated, second), stopping=stopping, usage=usage)
    assert v.summary_row()[3] == ("cmp: pass-to-pass [saturated], second: 3/10 -> 9/10 (p=0.02); "
                                  "ran all 10 trials (curtail: no earlier stop)")
    assert v.detail_lines(indent="")[1] == "stopping   ran all 10 trials (curtail: no earlier stop)"
    assert "comparison cmp: pass-to-pass [saturated]" in v.detail_lines(indent="")
    # the group's tokens and cost follow the rates, as for a single run
    from pytest_skill_eval.usage import usage_lines

    assert v.detail_lines(indent="> ")[-3:] == usage_lines(usage, "> ")
    assert dict(v.properties())["skill_eval.comparison.cmp"] == "pass-to-pass [saturated]"
    assert dict(v.properties())["skill_eval.stopping"] == "ran all 10 trials (curtail: no earlier stop)"
    none = trial_verdict((b, c), ())
    assert none.summary_row()[3] == "-"
    assert summary_table([("s::g", "passed", none)])[1].endswith("  -")


# -- the headline ---------------------------------------------------------------------------

def test_the_headline_names_the_candidates_checks_first_and_marks_the_baselines() -> None:
    """docs/usage.md: the first line names every check that fails the group, the candidate's
    first; a baseline check, under ``--skill-eval-fail-on=any``, is marked ``baseline``."""
    (b, c), comparison = rates((3, 7), (9, 1))
    v = trial_verdict((b, c), (comparison,), fail_on="any")
    assert v.headline() == ("failed c (skill-read): passed 9/10, below 100 %; "
                            "baseline b (skill-read): passed 3/10, below 100 %")


@pytest.mark.parametrize("trials", [False, True])
def test_a_verdict_that_fails_nothing_heads_with_its_words(trials: bool) -> None:
    """One rule for N = 1 and N > 1: with nothing failing, the headline is the group and its words."""
    (b, c), comparison = rates((0, 1), (1, 0))
    if trials:
        v = trial_verdict((b, c), (comparison,), fail_on="never")
    else:
        from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GroupGrade
        from pytest_skill_eval.policy import judge

        grade = GroupGrade("g", "graded", (ExpectationResult("b", "skill-read", "baseline", "fail", "", ""),
                                           ExpectationResult("c", "skill-read", "candidate", "pass", "", "")),
                           (ComparisonResult("cmp", "b", "c", "fail-to-pass"),))
        from pytest_skill_eval.evidence.records import GroupRecord, VariantStateRecord

        done = VariantStateRecord("complete", None)
        group = GroupRecord(id="g", position=4, path="g.json", suite=None, type="body", state="complete",
                            grade_state="graded", variants={"baseline": done, "candidate": done}, review_questions=())
        v = judge(group, grade, group_dir="/g", fail_on="never", result_id="r")
    assert v.outcome == "passed"
    assert v.headline() == f"group g: {v.words()}"
    assert v.words().startswith("fail-to-pass")


def test_without_comparisons_a_side_counts_the_passes_of_all_its_checks_over_the_trials() -> None:
    """``candidate 2/3 pass`` (docs/usage.md) over trials: every check's passes of its graded trials, summed."""
    expectations = (ExpectationRate("b", "path", "baseline", 1, 4, 0, 0),
                    ExpectationRate("c1", "path", "candidate", 3, 2, 0, 0),
                    ExpectationRate("c2", "path", "candidate", 4, 0, 1, 0))
    v = trial_verdict(expectations, (), planned=5, ran=5, fail_on="never")
    assert v.words() == "baseline 1/5 pass, candidate 7/9 pass (5 trials)"


def test_an_errors_words_name_its_causes_and_leave_the_decisions_to_the_trials() -> None:
    """Without ``--skill-eval-require-power`` an underpowered comparison is no cause of an
    error: the words name the grade error, and the decision only beside the trials."""
    (b, c), comparison = rates((2, 1), (2, 1))
    v = with_decisions(trial_verdict((b, c), (comparison,), planned=3, ran=3, state="grade-error"))
    assert v.outcome == "error"
    assert v.words() == "grade-error (3 trials; underpowered)"
    assert with_decisions(trial_verdict((b, c), (comparison,), planned=3, ran=3, state="grade-error"),
                          require_power=True).words() == "grade-error, underpowered (3 trials; underpowered)"


def test_over_trials_the_v_lines_show_reasons_only_when_asked() -> None:
    """``-v`` and the failure text show a variant's reason (how its other trials ended); the
    error text, which names the causes itself, asks for none. A verdict over trials holds the
    aggregate only: no single run's expectations, comparisons or grade errors."""
    (b, c), comparison = rates((10, 0), (9, 0))
    v = trial_verdict((b, c), (comparison,), reasons=(None, "9 of 10 trials completed; 1 infrastructure-failed"),
                      runs={"baseline": {"complete": 10}, "candidate": {"complete": 9, "infrastructure-failed": 1}})
    shown = "candidate  complete (9 of 10 trials completed; 1 infrastructure-failed) [9 complete, 1 infrastructure-failed]"
    assert v.detail_lines(indent="")[2] == shown
    assert v.detail_lines(indent="", reasons=False)[2] == "candidate  complete [9 complete, 1 infrastructure-failed]"
    assert (v.expectations, v.comparisons, v.grade_errors) == ((), (), ())
