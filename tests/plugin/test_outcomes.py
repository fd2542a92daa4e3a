"""Real runs through the pi host: outcomes under each fail-on policy, errors, reports.

Every group runs the real pi host against the scripted stand-in model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .helpers import (
    AFTER,
    BEFORE,
    description_group,
    junit_cases,
    junit_details,
    only_result,
    read_json,
    verdict_of,
    write_json,
)

pytestmark = pytest.mark.pi


@pytest.fixture(autouse=True)
def _host(pi_host: Any) -> None:
    """Install the managed host once, before any inner run needs it."""


def outcomes_by_group(result: pytest.RunResult) -> dict[str, str]:
    found = {}
    for line in result.outlines:
        for word in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(("policy.json::", "errors.json::", "suite.json::")) and f" {word}" in line:
                found[line.split(" ")[0].split("::")[1]] = word
    return found


def test_verbose_output_shows_states_expectations_and_transitions(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "-v")
    result.assert_outcomes(passed=2)
    result_dir = only_result(project)
    result.stdout.fnmatch_lines([
        "suite.json::release-notes-activation PASSED fail-to-pass*",
        "    baseline   complete",
        "    candidate  complete",
        "    baseline   fail        baseline-reads-skill (skill-read)",
        "    candidate  pass        candidate-reads-skill (skill-read)",
        "    comparison reads-skill: fail-to-pass",
        "    usage            tokens * (baseline *, candidate *), cost unavailable",
        "suite.json::release-notes-body PASSED fail-to-pass*",
        "*= skill-eval =*",
        "#  group  *outcome  baseline  candidate  tokens  cost         comparisons",
        "1  suite.json::release-notes-activation  passed   complete  complete   *  unavailable  reads-skill: fail-to-pass",
        "2  suite.json::release-notes-body  *passed   complete  complete   *  unavailable  result-exists: fail-to-pass",
        "   total  * unavailable",
        "transitions: 2 fail-to-pass",
        f"result {result_dir.name} (complete): {result_dir}",
        f"view it with: skill-eval view {result_dir.name} *",
    ])
    summary = read_json(result_dir / "result.json")
    assert summary["result_id"] == result_dir.name
    assert [g["id"] for g in summary["groups"]] == ["release-notes-activation", "release-notes-body"]


@pytest.mark.parametrize(
    ("fail_on", "expected", "ret"),
    [
        ("candidate", {"improves": "PASSED", "regresses": "FAILED", "stays-failing": "FAILED"}, 1),
        ("regression", {"improves": "PASSED", "regresses": "FAILED", "stays-failing": "PASSED"}, 1),
        ("any", {"improves": "FAILED", "regresses": "FAILED", "stays-failing": "FAILED"}, 1),
        ("never", {"improves": "PASSED", "regresses": "PASSED", "stays-failing": "PASSED"}, 0),
    ],
)
def test_fail_on_policies(project: Path, pytester: pytest.Pytester, fail_on: str, expected: dict[str, str], ret: int) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", f"--skill-eval-fail-on={fail_on}", "-v",
                                "--junitxml=report.xml")
    assert outcomes_by_group(result) == expected
    assert result.ret == ret
    result.stdout.fnmatch_lines(["policy.json::regresses * pass-to-fail*"])
    cases = junit_cases(project / "report.xml")
    # one testcase per group, failing exactly the groups the policy fails
    assert sorted(cases) == ["policy.json::improves", "policy.json::regresses", "policy.json::stays-failing"]
    failing_groups = {key.split("::")[1] for key, tc in cases.items() if verdict_of(tc) == "failure"}
    assert failing_groups == {g for g, word in expected.items() if word == "FAILED"}
    # the details say why, without a testcase of their own
    comparison = junit_details(project / "report.xml")["policy.json::regresses"]["skill_eval.entry.comparison:reads-skill"]
    assert comparison == ("reported: pass-to-fail (reported only)" if fail_on == "never" else "failed: pass-to-fail")


def test_ini_fail_on(project: Path, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nskill_eval_fail_on = never\n")
    result = pytester.runpytest("--skill-eval", "policy.json", "-k", "regresses")
    result.assert_outcomes(passed=1)


def test_failure_text_shows_expected_observed_and_evidence(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "-k", "stays-failing")
    result.assert_outcomes(failed=1)
    run_dir = only_result(project) / "groups" / "003-stays-failing" / "candidate"
    result.stdout.fnmatch_lines([
        "*group stays-failing: fail-to-fail (--skill-eval-fail-on=candidate)",
        "  comparison says-magic: fail-to-fail",
        "    [candidate] candidate-says-magic (response-text): fail",
        "        expected: *a phrase the script never says*",
        "        observed: *",
        f"        evidence: {run_dir}*",
        "FAILED fail-to-fail policy.json::stays-failing - failed candidate-says-magic*",
    ])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_short_summary_names_the_failed_checks_and_what_was_found(project: Path, pytester: pytest.Pytester,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # pytest trims the summary line to the terminal width
    result = pytester.runpytest("--skill-eval", "policy.json", "-rA", "-k", "regresses or stays-failing")
    result.assert_outcomes(failed=2, deselected=1)
    summary = result.outlines[result.outlines.index(next(x for x in result.outlines if "short test summary" in x)):]
    regresses = next(line for line in summary if "::regresses" in line)
    assert regresses.startswith("FAILED pass-to-fail policy.json::regresses - failed candidate-reads-skill (skill-read): "
                                "the target was not read in 1 turn"), regresses
    says = next(line for line in summary if "::stays-failing" in line)
    # only the candidate check fails the group under the default policy; what the response said is quoted
    assert says.startswith("FAILED fail-to-fail policy.json::stays-failing - failed candidate-says-magic (response-text): "
                           "the final response of turn 1 does not contain the text"), says
    assert '; it reads "Following the release-notes skill' in says, says
    assert "baseline-says-magic" not in says


def test_a_scripted_stand_in_that_ran_out_of_steps_says_so(project: Path, pytester: pytest.Pytester,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    # the script's only step is a tool call: the request after the tool result finds no step
    write_json(project / "scripts" / "runs-out.json", {"schema": "skill-eval-script/1", "turns": [
        {"steps": [{"tool_calls": [{"name": "read", "arguments": {"path": "notes.md"}}]}]}]})
    group = description_group("runs-out", BEFORE, AFTER, [
        {"id": "candidate-says-done", "kind": "response-text", "variant": "candidate", "expect": "contains", "value": "Done"},
    ], model="scripted/runs-out")
    write_json(project / "groups" / "runs-out.json", group)
    result = pytester.runpytest("--skill-eval", "groups/runs-out.json", "-rA")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        ("*candidate: the scripted stand-in ran out of script steps on turn 1: "
         "[[]scripted stand-in[]] Script exhausted: *runs-out.json has no step /turns/0/steps/1 (1 step(s) there)."),
    ])
    result.stdout.fnmatch_lines([
        ("FAILED * - failed candidate-says-done (response-text): "
         "the scripted stand-in ran out of script steps (baseline turn 1, candidate turn 1)"),
    ])
    result.stdout.fnmatch_lines(["*baseline: the scripted stand-in ran out of script steps on turn 1: *"])  # same script


def test_infrastructure_and_grade_problems_are_errors(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "errors.json", "--skill-eval-fail-on=never", "-v",
                                "--junitxml=report.xml")
    assert outcomes_by_group(result) == {"missing-script": "ERROR", "grade-error": "ERROR", "improves": "PASSED"}
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "errors.json::missing-script ERROR invalid*",
        "errors.json::grade-error ERROR grade-error*",
    ])
    result.stdout.fnmatch_lines([
        "*ERROR at setup of skill-eval group missing-script*",
        "group missing-script: invalid",
        "  baseline: invalid: no script for model 'scripted/no-such-script'*",
    ])
    result.stdout.no_fnmatch_line("*Traceback*")
    cases = junit_cases(project / "report.xml")
    assert verdict_of(cases["errors.json::missing-script"]) == "error"
    assert verdict_of(cases["errors.json::grade-error"]) == "error"
    assert len(cases) == 3
    details = junit_details(project / "report.xml")
    assert details["errors.json::missing-script"]["skill_eval.entry.variant:baseline"] == "error: invalid"
    assert details["errors.json::grade-error"]["skill_eval.entry.grade"] == "error: grade-error"
    assert details["errors.json::grade-error"]["skill_eval.entry.expectation:candidate-says"] == "error: grade-error"
    summary = read_json(only_result(project) / "result.json")
    assert summary["state"] == "partially-complete"


def test_variant_selection_records_not_selected_and_never_fails(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "--skill-eval-variant", "baseline",
                                "--skill-eval-fail-on=any", "-v", "--junitxml=report.xml", "-k", "improves or regresses")
    # under "any" the improves group fails on its baseline; the regresses baseline passes
    assert outcomes_by_group(result) == {"improves": "FAILED", "regresses": "PASSED"}
    result.stdout.fnmatch_lines(["policy.json::regresses PASSED baseline 1/1 pass, candidate not-selected*",
                                 "    candidate  not-selected*"])
    group = read_json(only_result(project) / "groups" / "002-regresses" / "group.json")
    assert group["variants"]["candidate"]["state"] == "not-selected"
    details = junit_details(project / "report.xml")["policy.json::regresses"]
    assert details["skill_eval.entry.variant:candidate"] == "skipped: not-selected"
    assert details["skill_eval.entry.expectation:candidate-reads-skill"].startswith("skipped: ")


def test_junit_entries_and_properties(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "--junitxml=report.xml", "-k", "activation")
    result.assert_outcomes(passed=1)
    result_dir = only_result(project)
    cases = junit_cases(project / "report.xml")
    assert sorted(cases) == ["suite.json::release-notes-activation"]
    assert cases["suite.json::release-notes-activation"].find("properties") is None  # not allowed there
    item = junit_details(project / "report.xml")["suite.json::release-notes-activation"]
    group_dir = (result_dir / "groups" / "001-release-notes-activation").relative_to(project)
    assert item["skill_eval.status"] == "fail-to-pass"
    assert item["skill_eval.result_id"] == result_dir.name
    assert item["skill_eval.evidence"] == group_dir.as_posix()
    assert item["skill_eval.variant.candidate"] == "complete"
    assert item["skill_eval.variant.candidate.evidence"] == (group_dir / "candidate").as_posix()
    assert item["skill_eval.expectation.baseline-reads-skill"] == "baseline fail"
    assert item["skill_eval.comparison.reads-skill"] == "fail-to-pass"
    # the baseline failing is reported, but under the default policy it fails nothing, and it is no skip
    assert item["skill_eval.entry.expectation:baseline-reads-skill"] == "reported: fail (reported only)"
    assert item["skill_eval.entry.expectation:baseline-reads-skill.status"] == "fail"
    assert item["skill_eval.entry.expectation:baseline-reads-skill.evidence"] == (group_dir / "baseline").as_posix()
    assert item["skill_eval.entry.comparison:reads-skill"] == "passed: fail-to-pass"
    assert item["skill_eval.entry.comparison:reads-skill.transition"] == "fail-to-pass"
    # entries are not tests: the terminal counts groups only
    result.stdout.no_fnmatch_line("*variant:baseline*")


def test_exitfirst_stops_after_the_first_failing_group(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "-x", "-k", "not improves")
    result.assert_outcomes(failed=1)
    assert [p.name for p in (only_result(project) / "groups").iterdir()] == ["002-regresses"]


def test_last_failed_reruns_only_failed_groups(project: Path, pytester: pytest.Pytester) -> None:
    first = pytester.runpytest("--skill-eval", "policy.json", "-p", "cacheprovider")
    first.assert_outcomes(passed=1, failed=2)
    again = pytester.runpytest("--skill-eval", "policy.json", "-p", "cacheprovider", "--lf", "-v")
    again.assert_outcomes(failed=2)
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 2 failures"])
    # with --junitxml too, the cache holds the failing groups and nothing else
    pytester.runpytest("--skill-eval", "policy.json", "-p", "cacheprovider", "--junitxml=report.xml")
    with_xml = pytester.runpytest("--skill-eval", "policy.json", "-p", "cacheprovider", "--lf")
    with_xml.assert_outcomes(failed=2)
    new_first = pytester.runpytest("--skill-eval", "policy.json", "-p", "cacheprovider", "--ff", "--collect-only", "-q")
    assert [line for line in new_first.outlines if "::" in line][-1] == "policy.json::improves"


def test_progress_is_live_at_verbose_and_silent_when_quiet(project: Path, pytester: pytest.Pytester) -> None:
    verbose = pytester.runpytest("--skill-eval", "suite.json", "-v", "-k", "body")
    verbose.stdout.fnmatch_lines([
        "    skill-eval: release-notes-body [[]baseline] preparing (*s)",
        "    skill-eval: release-notes-body [[]baseline] turn 1/2 settled (*s)",
        "    skill-eval: release-notes-body [[]candidate] turn 2/2 settled (*s)",
        "suite.json::release-notes-body PASSED fail-to-pass*",
    ])
    quiet = pytester.runpytest("--skill-eval", "suite.json", "-q", "-k", "body")
    quiet.stdout.no_fnmatch_line("*skill-eval: release-notes-body*")
    quiet.stdout.fnmatch_lines(["skill-eval result *: skill-eval view *"])


def test_progress_with_trials_is_one_line_per_group_not_one_per_run(project: Path, pytester: pytest.Pytester) -> None:
    # not a terminal: one line per group, instead of preparing/running/settled for each of 3 x 2 runs
    result = pytester.runpytest("--skill-eval", "suite.json", "-v", "--skill-eval-trials", "3")
    result.assert_outcomes(passed=2)
    lines = [line for line in result.stdout.lines if line.startswith("    skill-eval: ")]
    assert [line.split(" (")[0] for line in lines] == [
        "    skill-eval: release-notes-activation: running 3 trials of each selected variant",
        "    skill-eval: release-notes-body: running 3 trials of each selected variant",
    ]


def test_progress_with_trials_at_verbose_on_a_terminal_is_the_status_line() -> None:
    from types import SimpleNamespace

    from pytest_skill_eval.plugin.progress import LiveProgress

    def mode(verbosity: int, tty: bool, trials: int) -> str:
        reporter = SimpleNamespace(isatty=lambda: tty, hasmarkup=tty)
        config = SimpleNamespace(get_verbosity=lambda: verbosity,
                                 pluginmanager=SimpleNamespace(get_plugin=lambda name: reporter))
        return LiveProgress(config, enabled=True, trials=trials).mode  # type: ignore[arg-type]

    assert [mode(1, True, 20), mode(1, False, 20), mode(1, True, 1), mode(1, False, 1)] == [
        "status", "group", "lines", "lines"]
    assert [mode(0, True, 20), mode(0, False, 20), mode(-1, True, 20)] == ["status", "off", "off"]


def test_progress_never_lands_in_captured_output(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--skill-eval", "policy.json", "-v", "-k", "stays-failing", "-rA")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["    skill-eval: stays-failing [[]candidate] running pi (json mode)*"])
    result.stdout.no_fnmatch_line("*Captured stdout*")
