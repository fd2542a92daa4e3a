"""Spend no paid run on a definition that cannot succeed.

Before any subject starts, the plugin resolves every selected variant's sources and
checks every expectation's shape; problems are pytest warnings at collection naming
file and JSON pointer, and the run proceeds as the spec says. ``--skill-eval-strict``
(ini ``skill_eval_strict``) refuses to start any subject instead. Real pi, scripted model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import (
    BEFORE,
    description_group,
    only_result,
    read_json,
    reads_skill,
    suite,
    write_json,
)

pytestmark = pytest.mark.pi

ARGS = ("-p", "no:cacheprovider", "-W", "default")


def _broken(project: Path) -> None:
    group = description_group("broken", BEFORE, "skills/no-such-skill", [
        *reads_skill(),
        {"id": "candidate-says", "kind": "response-text", "variant": "candidate", "expect": "contains"},
    ])
    write_json(project / "groups" / "broken.json", group)
    write_json(project / "mixed.json", suite("mixed", ["groups/improves.json", "groups/broken.json"]))


def test_problems_are_warnings_at_collection_and_the_run_proceeds(pytester: pytest.Pytester, project: Path) -> None:
    _broken(project)
    result = pytester.runpytest_subprocess("--skill-eval", "mixed.json", *ARGS)
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "SkillEvalCheckWarning" in out
    assert "groups/broken.json: /variants/candidate/skills/0: skills/no-such-skill: not found under the definition root" in out
    assert "groups/broken.json: /expectations/2/value: expected a string, found nothing" in out
    # the run still follows the spec: the broken variant invalid, the malformed check a grade-error
    group_dir = only_result(project) / "groups" / "002-broken"
    assert read_json(group_dir / "candidate" / "run.json")["state"] == "invalid"
    assert read_json(group_dir / "grade.json")["state"] == "grade-error"


def test_clean_definitions_raise_no_warning(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest_subprocess("--skill-eval", "policy.json", "-k", "improves", *ARGS)
    result.assert_outcomes(passed=1)
    assert "SkillEvalCheckWarning" not in result.stdout.str()


def test_strict_refuses_to_start_any_subject(pytester: pytest.Pytester, project: Path) -> None:
    _broken(project)
    result = pytester.runpytest_subprocess("--skill-eval", "mixed.json", "--skill-eval-strict", *ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--skill-eval-strict: refusing to start any subject: the pre-run check found 2 problems" in err
    assert "groups/broken.json: /variants/candidate/skills/0: " in err
    assert "groups/broken.json: /expectations/2/value: expected a string, found nothing" in err
    assert not (project / ".skill-eval" / "runs").exists() or not any(
        p.is_dir() for p in (project / ".skill-eval" / "runs").iterdir()), "no subject may start"


def test_strict_from_the_ini_file(pytester: pytest.Pytester, project: Path) -> None:
    _broken(project)
    (project / "pytest.ini").write_text("[pytest]\nskill_eval_strict = true\n")
    result = pytester.runpytest_subprocess("--skill-eval", "mixed.json", *ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "refusing to start any subject" in result.stderr.str()


def test_strict_counts_an_invalid_group_definition(pytester: pytest.Pytester, project: Path) -> None:
    write_json(project / "groups" / "bad.json", {"schema_version": 1, "kind": "group", "id": "Bad"})
    write_json(project / "bad-suite.json", suite("bad-suite", ["groups/improves.json", "groups/bad.json"]))
    result = pytester.runpytest_subprocess("--skill-eval", "bad-suite.json", "--skill-eval-strict", *ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "groups/bad.json: /id: " in result.stderr.str()


def test_strict_with_clean_definitions_runs(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest_subprocess("--skill-eval", "policy.json", "-k", "improves", "--skill-eval-strict", *ARGS)
    result.assert_outcomes(passed=1)


def test_strict_checks_only_selected_groups_and_variants(pytester: pytest.Pytester, project: Path) -> None:
    _broken(project)
    deselected = pytester.runpytest_subprocess("--skill-eval", "mixed.json", "-k", "improves", "--skill-eval-strict", *ARGS)
    deselected.assert_outcomes(passed=1, deselected=1)
    baseline_only = pytester.runpytest_subprocess("--skill-eval", "mixed.json", "-k", "broken", "--skill-eval-strict",
                                                  "--skill-eval-variant", "baseline", *ARGS)
    # the broken candidate source is not selected, but a malformed check is a grade-error whatever runs
    assert baseline_only.ret == pytest.ExitCode.USAGE_ERROR
    err = baseline_only.stderr.str()
    assert "found 1 problem:" in err and "/expectations/2/value" in err and "/variants/candidate" not in err


def test_strict_under_xdist_starts_no_subject_and_exits_as_a_usage_error(pytester: pytest.Pytester, project: Path) -> None:
    _broken(project)
    result = pytester.runpytest_subprocess("--skill-eval", "mixed.json", "--skill-eval-strict", "-n", "2", *ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert "refusing to start any subject" in result.stdout.str()
    assert not (project / ".skill-eval" / "runs").exists() or not any(
        p.is_dir() for p in (project / ".skill-eval" / "runs").iterdir()), "no subject may start"


def test_check_option_sees_the_runs_environment_and_auth_file(pytester: pytest.Pytester, project: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    group = description_group("paid", BEFORE, "skills/release-notes", reads_skill(), model="anthropic/claude-sonnet-4-5")
    group["runtime"] = {"host": "pi", "session": False, "extensions": [],
                        "environment": {"literal": {}, "inherit": ["ANTHROPIC_API_KEY"]}}
    write_json(project / "groups" / "paid.json", group)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    missing = pytester.runpytest_subprocess("--skill-eval", "groups/paid.json", "--skill-eval-check", *ARGS)
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*provider anthropic gets no credential*"])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-value-not-real-0123")
    present = pytester.runpytest_subprocess("--skill-eval", "groups/paid.json", "--skill-eval-check", *ARGS)
    present.assert_outcomes(passed=1)
    assert "sk-ant-test-value-not-real-0123" not in present.stdout.str()


def test_warnings_filter_that_makes_the_check_an_error_refuses_like_strict(pytester: pytest.Pytester,
                                                                           project: Path) -> None:
    _broken(project)
    result = pytester.runpytest_subprocess("--skill-eval", "mixed.json", "-p", "no:cacheprovider",
                                           "-W", "error::pytest_skill_eval.plugin.hooks.SkillEvalCheckWarning")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert "SkillEvalCheckWarning is an error here: refusing to start any subject" in result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
