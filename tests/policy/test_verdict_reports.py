"""What a single run's verdict reports besides its outcome, host-free: the details docs/usage.md
fixes for the JUnit properties and the failure and error texts that the outcome table does not
look at."""

from __future__ import annotations

from pytest_skill_eval.evidence.records import GroupRecord, VariantStateRecord
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GroupGrade
from pytest_skill_eval.policy import FailOn, Verdict, judge
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
