"""No short caps: pi's provider request timeout is the emergency ceiling unless given.

pi's clients would send 300 s; the tests scale it down: a stand-in whose first token comes
after 3 s still completes under the default, and ends ``infrastructure-failed`` with a
reason that names the timeout when ``--skill-eval-provider-timeout 1`` is given.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import GROUPS, only_result, read_json, write_json

pytestmark = pytest.mark.pi

SLOW = {
    "schema": "skill-eval-script/1",
    "turns": [{"steps": [{"text": "thought about it for a while", "first_token_delay": 3}]}],
}


def _slow_group(project: Path) -> None:
    write_json(project / "scripts" / "slow.json", SLOW)
    group = dict(GROUPS["improves"], id="slow", model={"model": "scripted/slow"}, expectations=[])
    write_json(project / "groups" / "slow.json", group)


def test_a_slow_first_token_does_not_fail_the_run_under_the_default_ceiling(project: Path,
                                                                            pytester: pytest.Pytester) -> None:
    _slow_group(project)
    result = pytester.runpytest("--skill-eval", "groups/slow.json", "-p", "no:cacheprovider",
                                "--skill-eval-variant", "candidate")
    result.assert_outcomes(passed=1)
    run = read_json(only_result(project) / "groups" / "001-slow" / "candidate" / "run.json")
    assert (run["state"], run["provider_timeout_s"]) == ("complete", 14400.0)


def test_an_explicit_short_timeout_ends_the_run_infrastructure_failed(project: Path, pytester: pytest.Pytester) -> None:
    _slow_group(project)
    result = pytester.runpytest("--skill-eval", "groups/slow.json", "-p", "no:cacheprovider",
                                "--skill-eval-variant", "candidate", "--skill-eval-provider-timeout", "1")
    result.assert_outcomes(errors=1)
    run = read_json(only_result(project) / "groups" / "001-slow" / "candidate" / "run.json")
    assert run["state"] == "infrastructure-failed" and run["provider_timeout_s"] == 1.0
    assert run["reason"].startswith("turn 1: the provider did not answer within pi's request timeout: "
                                    "raise --skill-eval-provider-timeout"), run["reason"]


@pytest.mark.parametrize(("value", "message"), [
    ("0", "--skill-eval-provider-timeout expects a timeout in seconds above 0 (e.g. 3600), found '0'"),
    ("soon", "--skill-eval-provider-timeout expects a timeout in seconds above 0 (e.g. 3600), found 'soon'"),
])
def test_a_bad_timeout_is_a_usage_error(project: Path, pytester: pytest.Pytester, value: str, message: str) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-provider-timeout", value, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])
