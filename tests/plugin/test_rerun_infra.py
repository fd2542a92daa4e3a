"""--skill-eval-rerun-infra: an infrastructure-failed variant runs again from scratch, every attempt kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import GROUPS, only_result, read_json, write_json

pytestmark = pytest.mark.pi

FAILING = {"schema": "skill-eval-script/1", "turns": [{"steps": [{"fault": "http-500"}]}]}


def _failing_group(project: Path) -> Path:
    write_json(project / "scripts" / "down.json", FAILING)
    return write_json(project / "groups" / "down.json",
                      dict(GROUPS["improves"], id="down", model={"model": "scripted/down"}))


def test_each_attempt_is_kept_and_the_last_run_lists_them(project: Path, pytester: pytest.Pytester) -> None:
    _failing_group(project)
    result = pytester.runpytest("--skill-eval", "groups/down.json", "-p", "no:cacheprovider",
                                "--skill-eval-variant", "candidate", "--skill-eval-rerun-infra", "2")
    result.assert_outcomes(errors=1)
    gdir = only_result(project) / "groups" / "001-down"
    final = read_json(gdir / "candidate" / "run.json")
    assert final["state"] == "infrastructure-failed"
    assert [(a["attempt"], a["state"], a["evidence"]) for a in final["attempts"]] == [
        (1, "infrastructure-failed", "candidate-attempts/1"), (2, "infrastructure-failed", "candidate-attempts/2")]
    for attempt in (1, 2):
        kept = read_json(gdir / "candidate-attempts" / str(attempt) / "run.json")
        assert kept["state"] == "infrastructure-failed" and "attempts" not in kept
        assert kept["reason"] == final["attempts"][attempt - 1]["reason"]
        assert (gdir / "candidate-attempts" / str(attempt) / "events.jsonl").is_file()
    assert not (gdir / "baseline-attempts").exists()
    # every attempt was a pi run: the group's usage counts all three, none reported usage (HTTP 500)
    usage = read_json(gdir / "group.json")["usage"]
    assert usage["runs"] == 3
    assert (usage["candidate"]["messages"], usage["candidate"]["messagesWithoutTokens"]) == (3, 3)
    assert usage["candidate"]["totalTokens"] is None and usage["candidate"]["cost"] is None


def test_without_the_option_nothing_is_run_again(project: Path, pytester: pytest.Pytester) -> None:
    _failing_group(project)
    result = pytester.runpytest("--skill-eval", "groups/down.json", "-p", "no:cacheprovider", "--skill-eval-variant",
                                "candidate")
    result.assert_outcomes(errors=1)
    gdir = only_result(project) / "groups" / "001-down"
    assert "attempts" not in read_json(gdir / "candidate" / "run.json")
    assert not (gdir / "candidate-attempts").exists()


def test_a_bad_count_is_a_usage_error(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-rerun-infra", "-1", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--skill-eval-rerun-infra expects a whole number of reruns of at least 0, found '-1'*"])
