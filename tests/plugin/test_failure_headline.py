"""The first line of a failure (pytest's short summary shows it): pure, from grade documents."""

from __future__ import annotations

from typing import Any

from pytest_skill_eval.policy import judge, one_line, stand_in_notes


def _expectation(ident: str, variant: str, status: str, observed: str, kind: str = "path") -> dict[str, Any]:
    return {"id": ident, "kind": kind, "variant": variant, "status": status, "expected": "x", "observed": observed}


GROUP = {"id": "g", "position": 1, "state": "complete",
         "variants": {"baseline": {"state": "complete"}, "candidate": {"state": "complete"}}}
GRADE = {
    "state": "graded",
    "expectations": [
        _expectation("b-out", "baseline", "fail", "out.md does not exist"),
        _expectation("c-out", "candidate", "fail", "out.md does not exist"),
        _expectation("c-log", "candidate", "fail", "log\nfile\tis \x1b[2Jmissing\\"),
        _expectation("c-ok", "candidate", "pass", "fine"),
    ],
    "comparisons": [{"id": "out", "baseline": "b-out", "candidate": "c-out", "transition": "fail-to-fail"}],
    "errors": [],
}


def test_headline_names_every_failing_check_with_what_was_observed() -> None:
    verdict = judge(GROUP, GRADE, group_dir="/r/groups/001-g", fail_on="candidate", result_id="r")
    assert verdict.headline() == (
        "failed c-out (path): out.md does not exist; c-log (path): log\\nfile\\tis \\u001b[2Jmissing\\\\"
    )
    assert verdict.failure_text().splitlines()[0] == verdict.headline()
    assert verdict.failure_text().splitlines()[1] == "group g: fail-to-fail (--skill-eval-fail-on=candidate)"


def test_headline_marks_baseline_checks_under_fail_on_any() -> None:
    verdict = judge(GROUP, GRADE, group_dir="/r/groups/001-g", fail_on="any", result_id="r")
    assert verdict.headline().startswith("failed c-out (path): out.md does not exist; c-log (path): ")
    assert verdict.headline().endswith("; baseline b-out (path): out.md does not exist")


def test_headline_of_a_regression_only_policy_names_the_candidate_side() -> None:
    grade = dict(GRADE, comparisons=[{"id": "out", "baseline": "b-out", "candidate": "c-out", "transition": "pass-to-fail"}])
    verdict = judge(GROUP, grade, group_dir="/r/groups/001-g", fail_on="regression", result_id="r")
    assert verdict.headline() == "failed c-out (path): out.md does not exist"


def test_stand_in_notes_come_only_from_scripted_runs_that_ran_out() -> None:
    transcript = {"turns": [{"index": 1, "response": "fine"},
                            {"index": 2, "response": "[scripted stand-in] Script exhausted: s.json has 1 turn(s)"}]}
    scripted = {"model": {"provider": "scripted", "model": "s"}}
    assert stand_in_notes("candidate", scripted, transcript) == (
        ("candidate", 2, "[scripted stand-in] Script exhausted: s.json has 1 turn(s)"),)
    assert stand_in_notes("candidate", {"model": {"provider": "openai"}}, transcript) == ()
    assert stand_in_notes("candidate", "not a run", {"turns": 5}) == ()
    notes = stand_in_notes("candidate", scripted, transcript)
    verdict = judge(GROUP, GRADE, group_dir="/r/groups/001-g", fail_on="candidate", result_id="r", notes=notes)
    assert verdict.headline() == "failed c-out (path), c-log (path): the scripted stand-in ran out of script steps (candidate turn 2)"
    assert "  candidate: the scripted stand-in ran out of script steps on turn 2: [scripted stand-in] Script exhausted:" \
        in verdict.failure_text()


def test_one_line() -> None:
    assert one_line("a\\b\tc\rd\ne\x9b\u202e") == "a\\\\b\\tc\\rd\\ne\\u009b\\u202e"
