"""The first line of a failure (pytest's short summary shows it): pure, from grade documents."""

from __future__ import annotations

from typing import Any

from pytest_skill_eval.evidence.records import (
    GroupRecord,
    HostRunRecord,
    ModelRecord,
    RunRecord,
    TranscriptRecord,
    TranscriptTurn,
    Usage,
    VariantStateRecord,
)
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GroupGrade
from pytest_skill_eval.observation import Turn
from pytest_skill_eval.policy import judge, one_line, stand_in_notes


def _expectation(ident: str, variant: str, status: Any, observed: str, kind: str = "path") -> ExpectationResult:
    return ExpectationResult(ident, kind, variant, status, "x", observed)


_DONE = VariantStateRecord("complete", None)
GROUP = GroupRecord(id="g", position=1, path="g.json", suite=None, type="body", state="complete", grade_state="graded",
                    variants={"baseline": _DONE, "candidate": _DONE}, review_questions=())
GRADE = GroupGrade(
    "g", "graded",
    expectations=(
        _expectation("b-out", "baseline", "fail", "out.md does not exist"),
        _expectation("c-out", "candidate", "fail", "out.md does not exist"),
        _expectation("c-log", "candidate", "fail", "log\nfile\tis \x1b[2Jmissing\\"),
        _expectation("c-ok", "candidate", "pass", "fine"),
    ),
    comparisons=(ComparisonResult("out", "b-out", "c-out", "fail-to-fail"),),
)


def _run(provider: str) -> RunRecord:
    ran = HostRunRecord(registered_tools=(), context_files=(), host={}, mode="rpc",
                        model=ModelRecord(provider, "s", None, f"{provider}/s"), argv=(), env={}, tools=(),
                        registered_skills={}, registered_context=(), returncode=0, started_at=0.0, ended_at=1.0,
                        turn_times=(), usage=Usage(), fingerprints_changed=())
    return RunRecord(variant="candidate", group="g", state="complete", reason=None, ran=ran)


def _transcript(*responses: str) -> TranscriptRecord:
    return TranscriptRecord(tuple(TranscriptTurn(Turn(i, "p", "p", r), Usage(), None, None, (0, 1))
                                  for i, r in enumerate(responses, start=1)))


def test_headline_names_every_failing_check_with_what_was_observed() -> None:
    verdict = judge(GROUP, GRADE, group_dir="/r/groups/001-g", fail_on="candidate", result_id="r")
    assert verdict.headline() == (
        "failed c-out (path): out.md does not exist; c-log (path): log\\nfile\\tis \\u001b[2Jmissing\\"
    )
    assert verdict.failure_text().splitlines()[0] == verdict.headline()
    assert verdict.failure_text().splitlines()[1] == "group g: fail-to-fail (--skill-eval-fail-on=candidate)"


def test_headline_marks_baseline_checks_under_fail_on_any() -> None:
    verdict = judge(GROUP, GRADE, group_dir="/r/groups/001-g", fail_on="any", result_id="r")
    assert verdict.headline().startswith("failed c-out (path): out.md does not exist; c-log (path): ")
    assert verdict.headline().endswith("; baseline b-out (path): out.md does not exist")


def test_headline_of_a_regression_only_policy_names_the_candidate_side() -> None:
    grade = GroupGrade("g", "graded", expectations=GRADE.expectations,
                       comparisons=(ComparisonResult("out", "b-out", "c-out", "pass-to-fail"),))
    verdict = judge(GROUP, grade, group_dir="/r/groups/001-g", fail_on="regression", result_id="r")
    assert verdict.headline() == "failed c-out (path): out.md does not exist"


def test_stand_in_notes_come_only_from_scripted_runs_that_ran_out() -> None:
    transcript = _transcript("fine", "[scripted stand-in] Script exhausted: s.json has 1 turn(s)")
    scripted = _run("scripted")
    assert stand_in_notes("candidate", scripted, transcript) == (
        ("candidate", 2, "[scripted stand-in] Script exhausted: s.json has 1 turn(s)"),)
    assert stand_in_notes("candidate", _run("openai"), transcript) == ()
    assert stand_in_notes("candidate", None, transcript) == ()
    assert stand_in_notes("candidate", scripted, None) == ()
    assert stand_in_notes("candidate", RunRecord(variant="candidate", group="g", state="invalid", reason="x"), transcript) == ()
    notes = stand_in_notes("candidate", scripted, transcript)
    verdict = judge(GROUP, GRADE, group_dir="/r/groups/001-g", fail_on="candidate", result_id="r", notes=notes)
    assert verdict.headline() == "failed c-out (path), c-log (path): the scripted stand-in ran out of script steps (candidate turn 2)"
    assert "  candidate: the scripted stand-in ran out of script steps on turn 2: [scripted stand-in] Script exhausted:" \
        in verdict.failure_text()


def test_one_line() -> None:
    assert one_line("a\\b\tc\rd\ne\x9b\u202e") == "a\\b\\tc\\rd\\ne\\u009b\\u202e"


def test_an_excerpt_a_grade_escaped_is_not_escaped_again() -> None:
    """Issue 30 item 7: a failure excerpt shows ``\\n`` for a newline, never ``\\\\n``."""
    from pytest_skill_eval.grading.jsonvalue import excerpt

    shown = excerpt("line one\nline\ttwo \x1b[2J")
    assert shown == '"line one\\nline\\ttwo \\u001b[2J"'
    assert one_line(shown) == shown
    grade = GroupGrade("g", "graded", expectations=(_expectation("c-says", "candidate", "fail", f"it reads {shown}"),))
    verdict = judge(GROUP, grade, group_dir="/r/groups/001-g", fail_on="candidate", result_id="r")
    assert verdict.headline() == f"failed c-says (path): it reads {shown}"
    assert f"observed: it reads {shown}" in verdict.failure_text()
