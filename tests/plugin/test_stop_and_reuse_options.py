"""``--skill-eval-stop`` and ``--skill-eval-reuse-baseline``: a bad value is a usage error before anything runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TRIALS = Path(__file__).resolve().parents[2] / "example_suites" / "trials"


@pytest.fixture(autouse=True)
def suite(pytester: pytest.Pytester) -> None:
    """A declared suite (nothing runs: the usage error comes first)."""
    shutil.copytree(TRIALS, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".skill-eval"))


def test_a_bad_stop_rule_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-o", "skill_eval_stop=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*skill_eval_stop expects one of off, curtail, sequential, found 'sometimes'*"])
    option = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval-stop", "sometimes")
    assert option.ret == pytest.ExitCode.USAGE_ERROR
    option.stderr.fnmatch_lines(["*--skill-eval-stop: invalid choice: 'sometimes'*"])


def test_a_result_to_reuse_that_is_not_there_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval-reuse-baseline", "nosuch")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--skill-eval-reuse-baseline: no stored result 'nosuch'*"])
    assert "Traceback" not in result.stderr.str()
