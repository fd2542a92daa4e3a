"""What a single run's verdict reports besides its outcome, host-free: the details docs/usage.md
fixes for the JUnit properties and the failure and error texts that the outcome table does not
look at."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_skill_eval.evidence.records import GroupRecord, VariantStateRecord
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GroupGrade
from pytest_skill_eval.policy import ERROR_RUN_STATES, FailOn, Verdict, judge
from pytest_skill_eval.usage import Usage, VariantUsage

DONE = VariantStateRecord("complete", None)


def verdict(baseline: str, candidate: str, transition: str, *, fail_on: FailOn = "candidate",
            usage: VariantUsage | None = None) -> Verdict:
    grade = GroupGrade("g", "graded", (ExpectationResult("b", "path", "baseline", baseline, "b wanted", "b seen"),  # type: ignore[arg-type]
                                       ExpectationResult("c", "path", "candidate", candidate, "c wanted", "c seen")),  # type: ignore[arg-type]
                       (ComparisonResult("cmp", "b", "c", transition),))  # type: ignore[arg-type]
    group = GroupRecord(id="g", position=2, path="g.json", suite=None, type="body", state="complete",
                        grade_state="graded", variants={"baseline": DONE, "candidate": DONE}, review_questions=(),
                        usage=usage)
    return judge(group, grade, group_dir="/g", fail_on=fail_on, result_id="r")


def test_the_groups_tokens_and_cost_follow_its_own_properties() -> None:
    """docs/usage.md, JUnit XML: ``skill_eval.usage.<baseline|candidate|total>.<figure>``, a
    figure pi did not report ``unavailable``, after the group's states, expectations and comparisons."""
    usage = VariantUsage(Usage(100, 10, 0, 0, 110, 0.0125, 0, 1), Usage(200, 20, 0, 0, 220, None, 0, 2, 0, 2), 2)
    props = verdict("fail", "pass", "fail-to-pass", usage=usage).properties()
    names = [name for name, _value in props]
    assert names[:4] == ["skill_eval.status", "skill_eval.result_id", "skill_eval.position", "skill_eval.fail_on"]
    assert names.index("skill_eval.comparison.cmp") < names.index("skill_eval.usage.baseline.tokens")
    values = dict(props)
    assert values["skill_eval.status"] == "fail-to-pass"
    assert (values["skill_eval.usage.baseline.tokens"], values["skill_eval.usage.candidate.tokens"],
            values["skill_eval.usage.total.tokens"]) == ("110", "220", "330")
    assert (values["skill_eval.usage.baseline.cost"], values["skill_eval.usage.candidate.cost"]) == ("0.0125", "unavailable")
    assert not any(name.startswith("skill_eval.usage.") for name, _ in verdict("fail", "pass", "fail-to-pass").properties())


def test_the_v_lines_end_with_the_groups_tokens_and_cost() -> None:
    """docs/usage.md, "With -v": after the variants, expectations and comparisons, one usage line
    when no cost was reported (``tokens 11350 (baseline 4750, candidate 6600), cost unavailable``)."""
    usage = VariantUsage(Usage(100, 10, 0, 0, 110, None, 0, 1), Usage(200, 20, 0, 0, 220, None, 0, 2), 2)
    assert verdict("fail", "pass", "fail-to-pass", usage=usage).detail_lines(indent="> ") == [
        "> baseline   complete", "> candidate  complete", "> baseline   fail        b (path)",
        "> candidate  pass        c (path)", "> comparison cmp: fail-to-pass",
        "> usage            tokens 330 (baseline 110, candidate 220), cost unavailable"]
    assert verdict("fail", "pass", "fail-to-pass").detail_lines()[-1] == "  comparison cmp: fail-to-pass"


def test_judge_gives_a_verdict_over_trials_the_groups_usage_and_stopping() -> None:
    """One judge for N >= 1: the record's tokens and cost and the group's ``stopping.json`` reach
    the verdict over trials as they reach a single run's."""
    from pytest_skill_eval.evidence.records import TrialCount
    from pytest_skill_eval.evidence.stop_records import StoppingRecord
    from pytest_skill_eval.grading.aggregate import Trial, aggregate

    usage = VariantUsage(Usage(100, 10, 0, 0, 110, None, 0, 1), Usage(200, 20, 0, 0, 220, None, 0, 2), 2)
    once = verdict("fail", "pass", "fail-to-pass", usage=usage)
    grade = GroupGrade("g", "graded", once.expectations, once.comparisons)
    trials = aggregate("g", 2, [Trial(k, grade, {"baseline": "complete", "candidate": "complete"}) for k in (1, 2)])
    stopping = StoppingRecord("curtail", 2, 2, False, "ran every planned trial", "candidate", 1.0, 0.05, ())
    lost = VariantStateRecord("complete", "1 of 2 trials completed; 1 infrastructure-failed")
    group = GroupRecord(id="g", position=2, path="g.json", suite=None, type="body", state="complete",
                        grade_state="graded", variants={"baseline": DONE, "candidate": lost}, review_questions=(),
                        usage=usage, trials=TrialCount(2, 2))
    over = judge(group, trials, group_dir="/g", fail_on="candidate", result_id="r", stopping=stopping)
    assert once.usage == over.usage == usage
    assert over.stopping == stopping and over.aggregate == trials
    assert [(s.name, s.state, s.reason, s.run_dir) for s in over.variants] == [
        ("baseline", "complete", None, "/g/trials/*/baseline"),
        ("candidate", "complete", "1 of 2 trials completed; 1 infrastructure-failed", "/g/trials/*/candidate")]
    assert over.detail_lines(indent="")[-1] == "usage            tokens 330 (baseline 110, candidate 220), cost unavailable"


def test_an_error_lists_the_stand_ins_run_out_turns_as_a_failure_does() -> None:
    """docs/usage.md: an error (invalid, infrastructure-failed, grade-error) lists the same
    stand-in lines as a failure; with nothing failing the headline says it ran out."""
    notes = (("candidate", 2, "[scripted stand-in] Script exhausted: s.json has 1 turn(s)"),)
    grade = GroupGrade("g", "grade-error", (ExpectationResult("c", "path", "candidate", "pass", "c wanted", "c seen"),))
    group = GroupRecord(id="g", position=2, path="g.json", suite=None, type="body", state="complete",
                        grade_state="grade-error", variants={"baseline": DONE, "candidate": DONE}, review_questions=())
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r", notes=notes)
    assert v.outcome == "error"
    line = "  candidate: the scripted stand-in ran out of script steps on turn 2: " \
           "[scripted stand-in] Script exhausted: s.json has 1 turn(s)"
    assert v.error_text().splitlines()[:2] == ["group g: grade-error", line]
    assert v.headline() == "group g: the scripted stand-in ran out of script steps (candidate turn 2)"


def test_the_headline_lists_every_run_out_turn() -> None:
    """docs/usage.md: ``... ran out of script steps (baseline turn 1, candidate turn 1)``."""
    notes = (("baseline", 1, "[scripted stand-in] Script exhausted: a"), ("candidate", 1, "[scripted stand-in] Script exhausted: b"))
    v = verdict("pass", "fail", "pass-to-fail")
    v = judge(GroupRecord(id="g", position=2, path="g.json", suite=None, type="body", state="complete",
                          grade_state="graded", variants={"baseline": DONE, "candidate": DONE}, review_questions=()),
              GroupGrade("g", "graded", v.expectations, v.comparisons), group_dir="/g", fail_on="candidate",
              result_id="r", notes=notes)
    assert v.headline() == "failed c (path): the scripted stand-in ran out of script steps (baseline turn 1, candidate turn 1)"


def test_a_stored_grade_whose_comparison_disagrees_with_its_sides_heads_with_the_comparison() -> None:
    """A stored grade is untrusted: a ``pass-to-fail`` whose candidate side passed still fails
    the item under ``regression``, and the headline names the comparison, never nothing."""
    v = verdict("pass", "pass", "pass-to-fail", fail_on="regression")
    assert v.outcome == "failed"
    assert v.headline() == "failed comparison cmp: pass-to-fail"


def test_the_summary_row_shows_a_dash_for_a_variant_the_record_does_not_name() -> None:
    record = GroupRecord(id="g", position=2, path="g.json", suite=None, type="body", state="complete",
                         grade_state="graded", variants={"candidate": DONE}, review_questions=())
    v = judge(record, GroupGrade("g", "graded"), group_dir="/g", fail_on="candidate", result_id="r")
    assert v.summary_row() == ("2", "-", "complete", "-")


@pytest.mark.parametrize("state", ["complete", "not-selected", "invalid", "infrastructure-failed", "cancelled", "not-run"])
def test_a_variant_entry_is_an_error_exactly_when_its_state_makes_the_item_one(state: str) -> None:
    """The details never disagree with the outcome: a variant's entry is an error exactly when
    its state is one of the spec's error states, whatever state a verdict built in code holds
    (``not-run`` is a state ``result.json`` knows and the policy does not)."""
    v = verdict("pass", "pass", "pass-to-pass")
    v = dataclasses.replace(v, variants=(v.variants[0], dataclasses.replace(v.variants[1], state=state)))
    candidate = {e.name: e for e in v.entries()}["variant:candidate"]
    assert (candidate.outcome == "error") is (v.outcome == "error") is (state in ERROR_RUN_STATES)
    assert candidate.outcome == {"complete": "passed", "not-selected": "skipped", "not-run": "passed"}.get(state, "error")


def test_an_invalid_groups_record_is_judged_an_error_without_usage() -> None:
    """A suite entry whose group file could not be loaded has a ``group.json`` without usage
    (it never ran pi) and a grade-error grade: an error, never a crash."""
    from pytest_skill_eval.evidence.records import InvalidGroupRecord
    from pytest_skill_eval.grading.results import GradeError

    invalid = VariantStateRecord("invalid", "the group file could not be loaded")
    record = InvalidGroupRecord(ref="groups/broken.json", position=3, variants={"baseline": invalid, "candidate": invalid},
                                definition_errors=("groups/broken.json: /id: expected a string",))
    grade = GroupGrade("None", "grade-error", errors=(GradeError("system", None, None, "no grade was persisted"),))
    v = judge(record, grade, group_dir="/g", fail_on="candidate", result_id="r")
    assert (v.outcome, v.usage, v.words()) == ("error", None, "invalid, grade-error")
