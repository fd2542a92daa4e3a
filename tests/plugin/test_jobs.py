"""``--skill-eval-jobs K``: several groups at once in one pytest process, through the real pi host.

The same suite run with one job and with three stores the same evidence (normalised as
tools/compare_evidence.py normalises two runs of the same code) and reports the same
verdicts in the same item order; with three jobs the runs of different groups overlap in
time, while each group keeps the spec's order (a run persisted before its counterpart
starts). Ctrl-C cancels every running group and leaves no pi behind; ``-x`` starts no
queued group. No test here asserts a duration.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any
from xml.etree import ElementTree

import psutil
import pytest

from .helpers import GROUPS, QUICKSTART, only_result, read_json, suite, write_json

TOOL = Path(__file__).resolve().parents[2] / "tools" / "compare_evidence.py"
TRIALS = QUICKSTART.parent / "trials"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_evidence", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _pytest(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=root,
                          capture_output=True, text=True, env={**os.environ, **(env or {})})


def _copy_project(project: Path, dest: Path) -> Path:
    shutil.copytree(project, dest, ignore=shutil.ignore_patterns(".skill-eval", "scratch"))
    return dest


def _result(root: Path) -> Path:
    (found,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir() and not p.name.startswith("."))
    return found


def _reports(stdout: str) -> list[str]:
    """The ``-v`` verdict lines of the group items, in the order pytest printed them."""
    return [line.split(" [")[0].rstrip() for line in stdout.splitlines() if "::" in line and (" PASSED" in line
            or " FAILED" in line or " ERROR" in line)]


def _junit_order(path: Path) -> list[tuple[str, str]]:
    root = ElementTree.parse(path).getroot()
    return [(str(tc.get("name")), next((t for t in ("failure", "error", "skipped") if tc.find(t) is not None),
                                       "passed")) for tc in root.iter("testcase")]


def _mixed_suite(project: Path) -> None:
    """Six groups: the quickstart's two (JSON and RPC mode) and four policy groups."""
    write_json(project / "mixed.json", suite("mixed", [
        "groups/release-notes-activation.json", "groups/improves.json", "groups/release-notes-body.json",
        "groups/regresses.json", "groups/missing-script.json", "groups/stays-failing.json"]))


@pytest.mark.pi
def test_three_jobs_store_and_report_what_one_job_does(project: Path, tmp_path: Path, pi_host: Any) -> None:
    _mixed_suite(project)
    runs = {}
    for jobs in (1, 3):
        root = _copy_project(project, tmp_path / f"jobs-{jobs}")
        done = _pytest(root, "--skill-eval", "mixed.json", "-v", "--skill-eval-seed", "same",
                       "--junitxml=report.xml", *(["--skill-eval-jobs", str(jobs)] if jobs > 1 else []))
        assert done.returncode == 1, done.stdout + done.stderr  # a failed candidate, an invalid group
        runs[jobs] = (root, done)
    (one, one_run), (three, three_run) = runs[1], runs[3]
    assert _reports(three_run.stdout) == _reports(one_run.stdout)
    assert len(_reports(one_run.stdout)) == 6
    assert _junit_order(three / "report.xml") == _junit_order(one / "report.xml")
    tool = _tool()
    roots = (str(one), str(three))
    want, got = tool.digest_result(_result(one), roots), tool.digest_result(_result(three), roots)
    assert sorted(got) == sorted(want)
    assert [name for name in want if want[name] != got[name]] == []


@pytest.mark.pi
def test_three_jobs_interleave_trials_of_groups_and_keep_their_counts(tmp_path: Path, pi_host: Any) -> None:
    """Weighted choices are keyed by arm and seed, not by the order requests arrive in."""
    runs = {}
    for jobs in (1, 3):
        root = tmp_path / f"trials-{jobs}"
        shutil.copytree(TRIALS, root, ignore=shutil.ignore_patterns(".skill-eval"))
        done = _pytest(root, "--skill-eval-trials", "3", *(["--skill-eval-jobs", str(jobs)] if jobs > 1 else []))
        runs[jobs] = (root, done)
    assert runs[3][1].returncode == runs[1][1].returncode, runs[3][1].stdout
    tool = _tool()
    roots = (str(runs[1][0]), str(runs[3][0]))
    want, got = (tool.digest_result(_result(runs[n][0]), roots) for n in (1, 3))
    assert sorted(got) == sorted(want)
    assert [name for name in want if want[name] != got[name]] == []


def _slow_groups(project: Path, count: int) -> list[str]:
    """*count* description groups whose stand-in waits a second before each reply."""
    script = read_json(QUICKSTART / "scripts" / "release-notes-activation.json")
    write_json(project / "scripts" / "slow.json", {**script, "latency": {"first_token_delay": 1.0}})
    ids = [f"slow-{n}" for n in range(1, count + 1)]
    for gid in ids:
        write_json(project / "groups" / f"{gid}.json", dict(GROUPS["improves"], id=gid, model={"model": "scripted/slow"}))
    write_json(project / "slow.json", suite("slow", [f"groups/{gid}.json" for gid in ids]))
    return ids


@pytest.mark.pi
def test_groups_run_at_once_and_each_keeps_its_order(project: Path, pi_host: Any) -> None:
    ids = _slow_groups(project, 3)
    done = _pytest(project, "--skill-eval", "slow.json", "--skill-eval-jobs", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    groups = only_result(project) / "groups"
    spans = {}
    for position, gid in enumerate(ids, start=1):
        gdir = groups / f"{position:03d}-{gid}"
        base, cand = (read_json(gdir / v / "run.json") for v in ("baseline", "candidate"))
        # spec: a run's evidence is persisted before its counterpart starts
        assert (gdir / "baseline" / "run.json").stat().st_mtime <= cand["started_at"]
        # grade and group evidence come after both runs
        assert (gdir / "grade.json").stat().st_mtime_ns <= (gdir / "group.json").stat().st_mtime_ns
        assert (gdir / "candidate" / "run.json").stat().st_mtime <= (gdir / "grade.json").stat().st_mtime
        spans[gid] = (base["started_at"], cand["ended_at"])
    # the groups ran at the same time: every group started before any other ended
    assert max(start for start, _ in spans.values()) < min(end for _, end in spans.values()), spans


def _stalling_groups(project: Path, count: int) -> list[str]:
    write_json(project / "scripts" / "stalls.json",
               {"schema": "skill-eval-script/1", "turns": [{"steps": [{"fault": "stall"}]}]})
    ids = [f"stall-{n}" for n in range(1, count + 1)]
    for gid in ids:
        write_json(project / "groups" / f"{gid}.json", dict(GROUPS["improves"], id=gid, model={"model": "scripted/stalls"}))
    return ids


@pytest.mark.pi
def test_ctrl_c_cancels_every_running_group_and_leaves_no_pi(
        project: Path, pi_host: Any, processes_in: Callable[[Path], list[psutil.Process]]) -> None:
    ids = _stalling_groups(project, 4)
    write_json(project / "four.json", suite("four", [f"groups/{gid}.json" for gid in ids]))
    scratch = project / "scratch"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--skill-eval", "four.json", "-p", "no:cacheprovider",
                             "--skill-eval-jobs", "3"], cwd=project, env={**os.environ, "TMPDIR": str(scratch)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while len(processes_in(scratch)) < 3:  # three lanes, each in a stalled pi
            assert proc.poll() is None and time.monotonic() < deadline, "three groups never started"
            time.sleep(0.1)
        time.sleep(1.0)  # let each pi reach its stalled model request
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=120)[0].decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert processes_in(scratch) == [], "no pi outlives its run"
    result_dir = only_result(project)
    summary = read_json(result_dir / "result.json")
    assert summary["state"] == "cancelled", out
    by_id = {g["id"]: g for g in summary["groups"]}
    assert list(by_id) == ids and {g["state"] for g in by_id.values()} == {"cancelled"}
    for gid in ids[:3]:
        group = read_json(result_dir / "groups" / f"{by_id[gid]['position']:03d}-{gid}" / "group.json")
        assert group["variants"]["baseline"]["state"] == "cancelled", gid
        assert group["variants"]["candidate"] == {"state": "cancelled", "reason": "cancelled before it started"}
        baseline = read_json(result_dir / "groups" / f"{by_id[gid]['position']:03d}-{gid}" / "baseline" / "run.json")
        assert baseline["reason"] == "cancelled by the user (KeyboardInterrupt)"
    queued = by_id[ids[3]]
    assert queued["dir"] is None and queued["reason"] == "cancelled before it started"
    assert not (result_dir / "groups" / f"004-{ids[3]}").exists(), "cancellation starts no queued subject"


@pytest.mark.pi
def test_exitfirst_starts_no_queued_group_and_lets_running_ones_finish(project: Path, pi_host: Any) -> None:
    stalls = _stalling_groups(project, 2)
    write_json(project / "x.json", suite("x", ["groups/regresses.json", *(f"groups/{g}.json" for g in stalls),
                                               "groups/improves.json"]))
    # two lanes: regresses fails; its lane takes stall-2, the other runs stall-1; improves stays queued
    done = _pytest(project, "--skill-eval", "x.json", "-x", "--skill-eval-jobs", "2", "--skill-eval-stall-timeout", "3")
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert "1 failed" in last and "passed" not in last and "error" not in last, done.stdout
    summary = read_json(only_result(project) / "result.json")
    states = [(g["id"], g["state"]) for g in summary["groups"]]
    # the running groups finished (a stalled subject is infrastructure, after 3 s without progress)
    assert states == [("regresses", "complete"), ("stall-1", "invalid"), ("stall-2", "invalid"), ("improves", "not-run")]
    assert summary["groups"][3]["reason"] == "not run: pytest stopped early (stopping after 1 failures)"
    assert summary["state"] == "partially-complete"


def test_jobs_must_be_a_whole_number_of_at_least_one(project: Path) -> None:
    for bad in ("0", "-1", "two", "1.5", ""):
        done = _pytest(project, "--skill-eval", "suite.json", f"--skill-eval-jobs={bad}", "--collect-only")
        assert done.returncode == pytest.ExitCode.USAGE_ERROR, (bad, done.stdout + done.stderr)
        assert "--skill-eval-jobs expects a whole number of groups to run at once of at least 1 (e.g. 4), found" \
            in done.stderr, bad
    (project / "pytest.ini").write_text("[pytest]\nskill_eval_jobs = many\n")
    done = _pytest(project, "--skill-eval", "suite.json", "--collect-only")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "skill_eval_jobs expects a whole number of groups to run at once of at least 1 (e.g. 4), found 'many'" \
        in done.stderr


def test_jobs_with_xdist_workers_is_a_usage_error_that_names_the_fix(project: Path) -> None:
    done = _pytest(project, "--skill-eval", "suite.json", "--skill-eval-jobs", "4", "-n", "2")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "cannot be combined with pytest-xdist" in done.stderr
    assert "Use -n 0 --skill-eval-jobs 4" in done.stderr
    assert not (project / ".skill-eval" / "runs").exists() or not any((project / ".skill-eval" / "runs").iterdir())
    # -n 0 starts no worker: the jobs run in this process
    done = _pytest(project, "--skill-eval", "suite.json", "--skill-eval-jobs", "4", "-n", "0", "--collect-only", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    # one job under xdist is today's behaviour
    done = _pytest(project, "--skill-eval", "suite.json", "--skill-eval-jobs", "1", "-n", "1", "--collect-only", "-q")
    assert done.returncode == 0, done.stdout + done.stderr


def test_jobs_ini_setting_is_read(project: Path) -> None:
    (project / "pytest.ini").write_text("[pytest]\nskill_eval_jobs = 2\n")
    done = _pytest(project, "--skill-eval", "suite.json", "-n", "2", "--collect-only")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--skill-eval-jobs 2 runs groups at once" in done.stderr


@pytest.mark.pi
def test_evidence_that_cannot_be_persisted_starts_no_later_group(project: Path, pytester: pytest.Pytester) -> None:
    """The failing group's lane stops the queue at once; the other lane's group finishes."""
    stall = _stalling_groups(project, 1)[0]
    write_json(project / "three.json", suite("three", ["groups/improves.json", f"groups/{stall}.json",
                                                       "groups/stays-failing.json"]))
    # grade.json and its fallback cannot be written for the first group (a directory is in the way)
    pytester.makeconftest("""
        from pytest_skill_eval.plugin.session import SESSION_KEY

        def pytest_runtest_setup(item):
            if item.name == "improves":
                gdir = item.config.stash[SESSION_KEY].result_dir / "groups" / "001-improves"
                for name in ("grade.json", "grade-fallback.json"):
                    (gdir / name).mkdir(parents=True)
    """)
    # two lanes: improves fails to publish while the stalled group (3 s per variant) still runs
    result = pytester.runpytest_subprocess("--skill-eval", "three.json", "-p", "no:cacheprovider",
                                           "--skill-eval-jobs", "2", "--skill-eval-stall-timeout", "3")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*skill-eval: no result.json written: evidence could not be persisted*"])
    result_dir = only_result(project)
    assert not (result_dir / "result.json").exists()
    assert read_json(result_dir / "groups" / f"002-{stall}" / "group.json")["state"] == "invalid", \
        "the group already running finished"
    assert not (result_dir / "groups" / "003-stays-failing").exists(), "no queued group starts"


@pytest.mark.pi
def test_longer_groups_start_first_and_reports_stay_in_item_order(project: Path, pi_host: Any) -> None:
    write_json(project / "mixed.json", suite("mixed", ["groups/improves.json", "groups/regresses.json",
                                                       "groups/release-notes-body.json"]))

    def baseline_starts() -> dict[str, float]:
        result_dir = sorted(p for p in (project / ".skill-eval" / "runs").iterdir() if p.is_dir())[-1]
        return {gdir.name.split("-", 1)[1]: read_json(gdir / "baseline" / "run.json")["started_at"]
                for gdir in (result_dir / "groups").iterdir()}

    # two lanes: the two-turn body group and the first one-turn group start; the second waits
    done = _pytest(project, "--skill-eval", "mixed.json", "--skill-eval-jobs", "2", "-v")
    assert _reports(done.stdout) == ["mixed.json::improves PASSED fail-to-pass", "mixed.json::regresses FAILED pass-to-fail",
                                     "mixed.json::release-notes-body PASSED fail-to-pass"], done.stdout
    starts = baseline_starts()
    assert starts["release-notes-body"] < starts["regresses"] and starts["improves"] < starts["regresses"], starts
    # with -x they start in item order, so the first failure stops the run as early as with one job
    done = _pytest(project, "--skill-eval", "mixed.json", "--skill-eval-jobs", "2", "-x")
    starts = baseline_starts()
    assert starts["improves"] < starts["release-notes-body"] and starts["regresses"] < starts["release-notes-body"], starts
