"""--skill-eval-shard K/N in a pytest run: which groups a shard keeps, what it records, its exit code.

Nothing here runs a subject: --collect-only starts nothing, and a shard with no groups
starts nothing either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_skill_eval.definitions.sharding import assign_shards

from .test_collection import QUICKSTART_IDS, collected


def _shards(count: int) -> dict[str, int]:
    return assign_shards(QUICKSTART_IDS, count)


def test_the_shards_together_collect_every_group_once(project: Path, pytester: pytest.Pytester) -> None:
    seen: list[str] = []
    for index in (1, 2):
        result = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-shard", f"{index}/2",
                                    "--collect-only", "-q")
        assert result.ret == pytest.ExitCode.OK
        ids = collected(result)
        assert ids == [key for key, shard in _shards(2).items() if shard == index]
        seen += ids
    assert sorted(seen) == sorted(QUICKSTART_IDS)
    assert not (project / ".skill-eval" / "runs").exists(), "--collect-only writes no evidence"


def test_shard_applies_after_k(project: Path, pytester: pytest.Pytester) -> None:
    # -k leaves one group: the split is over what -k selected, so shard 1 of 2 gets it
    for index, expected in ((1, ["suite.json::release-notes-body"]), (2, [])):
        result = pytester.runpytest("--skill-eval", "suite.json", "-k", "body", "--skill-eval-shard", f"{index}/2",
                                    "--collect-only", "-q")
        assert collected(result) == expected


@pytest.mark.parametrize(("value", "detail"), [
    ("0/2", "found '0/2': K must be from 1 to 2"),
    ("3/2", "found '3/2': K must be from 1 to 2"),
    ("two/4", "found 'two/4'"),
    ("1/0", "found '1/0': N must be at least 1"),
])
def test_bad_shard_is_a_usage_error(project: Path, pytester: pytest.Pytester, value: str, detail: str) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", f"--skill-eval-shard={value}", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--skill-eval-shard expects K/N, two whole numbers with 1 <= K <= N (e.g. 2/4), {detail}*"])


def test_shard_needs_a_suite(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval-shard", "1/2", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--skill-eval-shard needs a suite or group: add --skill-eval PATH*"])


def test_trial_shards_need_one_seed_before_anything_runs(project: Path, pytester: pytest.Pytester) -> None:
    # each shard would draw its own seed, and merge refuses shards whose seeds differ: say so
    # before the shards spend their trials, not at merge time
    result = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-shard=1/2", "--skill-eval-trials=3",
                                "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--skill-eval-shard with --skill-eval-trials 3 needs --skill-eval-seed: *"
                                 "give every shard the same seed (e.g. --skill-eval-seed $GITHUB_RUN_ID)*"])
    seeded = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-shard=1/2", "--skill-eval-trials=3",
                                "--skill-eval-seed=ci-1", "--collect-only")
    assert seeded.ret == pytest.ExitCode.OK
    single = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-shard=1/2", "--collect-only")
    assert single.ret == pytest.ExitCode.OK  # one trial records no seed: nothing to agree on


@pytest.mark.parametrize("xdist", [False, True])
def test_an_empty_shard_exits_zero_and_records_the_split(project: Path, pytester: pytest.Pytester, xdist: bool) -> None:
    (empty,) = {1, 2, 3} - set(_shards(3).values())
    args = ["--skill-eval", "suite.json", "--skill-eval-shard", f"{empty}/3", *(["-n", "1"] if xdist else [])]
    result = pytester.runpytest_subprocess(*args) if xdist else pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"*skill-eval: shard {empty}/3 has no groups: the 2 selected group(s) went to the "
                                 "other shards; this is not an error (exit 0)*"])
    (res,) = (project / ".skill-eval" / "runs").glob("2*")
    selection = json.loads((res / "selection.json").read_text())
    assert selection["groups"] == []
    assert selection["shard"]["index"] == empty and selection["shard"]["count"] == 3
    assert [(g["key"], g["position"], g["shard"]) for g in selection["shard"]["groups"]] == [
        (key, position, _shards(3)[key]) for position, key in enumerate(QUICKSTART_IDS, start=1)]
    assert selection["shard"]["settings"] == {"fail_on": "candidate", "trials": 1, "seed": None,
                                              "pass_rate": 1.0, "alpha": 0.05}
    summary = json.loads((res / "result.json").read_text())
    assert summary["state"] == "complete" and summary["groups"] == []
    assert summary["shard"] == {"index": empty, "count": 3}
    from pytest_skill_eval.commands.view import render_checked

    text, problems = render_checked(res.name, project)
    assert not problems
    assert f"shard     {empty}/3: this result holds one shard's groups; skill-eval merge combines the shards" in text
    assert "no groups were persisted in this result" in text


def test_a_shard_of_nothing_selected_is_pytests_no_tests_ran(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "-k", "no-such-group", "--skill-eval-shard", "1/2")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "has no groups" not in result.stdout.str()


def test_without_shard_selection_and_result_carry_no_shard_key(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "-k", "no-such-group")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert not (project / ".skill-eval" / "runs").exists(), "an unsharded run that selects nothing writes nothing"
