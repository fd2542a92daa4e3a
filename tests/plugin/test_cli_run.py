"""``skill-eval run``: the installed console script and the seed's exit-code contract."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.commands.cli import run_exit_code

from .helpers import GROUPS, only_result, read_json, result_dirs, write_json

SKILL_EVAL = Path(sys.executable).parent / "skill-eval"


def skill_eval(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SKILL_EVAL), *args], cwd=root, env=dict(os.environ), capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.mark.parametrize(
    ("pytest_code", "cancelled", "expected"),
    [
        (pytest.ExitCode.OK, False, 0),
        (pytest.ExitCode.TESTS_FAILED, False, 1),
        (pytest.ExitCode.INTERRUPTED, True, 2),
        (pytest.ExitCode.INTERRUPTED, False, 1),  # a definition could not be collected
        (pytest.ExitCode.INTERNAL_ERROR, False, 3),
        (pytest.ExitCode.USAGE_ERROR, False, 4),
        (pytest.ExitCode.NO_TESTS_COLLECTED, False, 5),
    ],
)
def test_exit_code_mapping(pytest_code: int, cancelled: bool, expected: int) -> None:
    assert run_exit_code(int(pytest_code), cancelled=cancelled, target="suite.json") == expected


@pytest.mark.pi
class TestRealRuns:
    @pytest.fixture(autouse=True)
    def _host(self, pi_host: Any) -> None:
        """Install the managed host once, before any command needs it."""

    def test_failed_checks_exit_zero(self, project: Path) -> None:
        done = skill_eval(project, "run", "policy.json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "pass-to-fail" in done.stdout and "fail-to-fail" in done.stdout
        result_dir = only_result(project)
        assert read_json(result_dir / "result.json")["state"] == "complete"
        assert f"skill-eval view {result_dir.name}" in done.stdout

    def test_group_and_variant_selection(self, project: Path) -> None:
        done = skill_eval(project, "run", "suite.json", "--group", "2", "--variant", "candidate", "--", "-v")
        assert done.returncode == 0, done.stdout + done.stderr
        group = read_json(only_result(project) / "groups" / "002-release-notes-body" / "group.json")
        assert group["variants"]["baseline"]["state"] == "not-selected"
        assert group["variants"]["candidate"]["state"] == "complete"
        assert [p.name for p in (only_result(project) / "groups").iterdir()] == ["002-release-notes-body"]

    def test_invalid_and_grade_error_exit_non_zero(self, project: Path) -> None:
        invalid = skill_eval(project, "run", "groups/missing-script.json")
        assert invalid.returncode == 1, invalid.stdout + invalid.stderr
        assert "no script for model 'scripted/no-such-script'" in invalid.stdout
        grade_error = skill_eval(project, "run", "groups/grade-error.json")
        assert grade_error.returncode == 1, grade_error.stdout + grade_error.stderr

    @pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
    def test_stopping_early_is_not_a_cancellation(self, project: Path, workers: list[str]) -> None:
        # errors.json: the first group is invalid (an item error), so -x stops before the others
        done = skill_eval(project, "run", "errors.json", "--", "-x", *workers)
        assert done.returncode == 1, done.stdout + done.stderr
        summary = read_json(only_result(project) / "result.json")
        assert summary["state"] == "partially-complete", summary

    def test_broken_definition_exits_one(self, project: Path) -> None:
        broken = dict(GROUPS["improves"])
        del broken["tools"]
        write_json(project / "broken.json", broken)
        done = skill_eval(project, "run", "broken.json")
        assert done.returncode == 1, done.stdout + done.stderr
        assert "/tools: expected" in done.stdout
        assert result_dirs(project) == []

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["run", "missing.json"], "--skill-eval missing.json: no such file or directory"),
            (["run", "suite.json", "--group", "9"], "--skill-eval-group 9 is out of range"),
            (["run", "groups/improves.json", "--group", "1"], "is a group definition"),
            (["run", "suite.json", "--variant", "neither"], "invalid choice: 'neither'"),
            (["run", "suite.json", "--shard", "3/2"], "--skill-eval-shard expects K/N, two whole numbers with "
                                                      "1 <= K <= N (e.g. 2/4), found '3/2'"),
        ],
    )
    def test_usage_errors_exit_four(self, project: Path, args: list[str], message: str) -> None:
        done = skill_eval(project, *args)
        assert done.returncode == 4, done.stdout + done.stderr
        assert message in done.stderr
        assert result_dirs(project) == []

    def test_an_empty_shard_exits_zero(self, project: Path) -> None:
        done = skill_eval(project, "run", "suite.json", "--shard", "3/3")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "shard 3/3 has no groups" in done.stdout

    def test_nothing_selected_exits_five(self, project: Path) -> None:
        done = skill_eval(project, "run", "suite.json", "--", "-k", "no-such-group")
        assert done.returncode == 5, done.stdout + done.stderr
        assert "skill-eval: nothing to run: no group of suite.json was selected" in done.stderr


@pytest.mark.pi
def test_ctrl_c_cancels_and_exits_two(project: Path, pi_host: Any) -> None:
    write_json(project / "scripts" / "stalls.json",
               {"schema": "skill-eval-script/1", "turns": [{"steps": [{"fault": "stall"}]}]})
    write_json(project / "groups" / "stalls.json",
               dict(GROUPS["improves"], id="stalls", model={"model": "scripted/stalls"}))
    proc = subprocess.Popen([str(SKILL_EVAL), "run", "groups/stalls.json"], cwd=project, env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not list(project.glob(".skill-eval/runs/*/groups/*/baseline/workspace-initial")):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never started"
            time.sleep(0.1)
        time.sleep(1.0)  # let pi reach the stalled model request
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, out + err
    summary = read_json(only_result(project) / "result.json")
    assert summary["state"] == "cancelled"
    group = read_json(only_result(project) / "groups" / "001-stalls" / "group.json")
    assert group["variants"]["baseline"]["state"] == "cancelled"
    assert group["variants"]["candidate"]["state"] == "cancelled"
