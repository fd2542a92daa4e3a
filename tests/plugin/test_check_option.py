"""--skill-eval-check: the pre-run check inside pytest, with no subject run and no evidence."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_check_passes_valid_groups_and_fails_what_would_be_grade_errors(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest_subprocess("--skill-eval", "errors.json", "--skill-eval-check", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "*errors.json::missing-script FAILED check failed*",
        "*errors.json::grade-error FAILED check failed*",
        "*errors.json::improves PASSED checked*",
    ])
    result.stdout.fnmatch_lines(["*error model scripted/no-such-script*no script for model *"])
    result.stdout.fnmatch_lines(["*error expectation candidate-says*would be grade-error: /expectations/0/value: expected a string, found nothing"])
    assert not (project / ".skill-eval").exists(), "a check writes no evidence"
