"""``--skill-eval-reuse-baseline`` end to end: the trials example through the real pi host, with a fixed seed.

Reuse must give the verdicts (the whole aggregate) a rerun of the baseline with the same seed
gives, and refuse, naming the first differing field, for each difference in turn, and for a
hostile stored result; a refused group runs its baseline normally.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TRIALS = Path(__file__).resolve().parents[2] / "example_suites" / "trials"
GROUP = "001-changelog-activation"

pytestmark = pytest.mark.pi


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _newest(root: Path) -> Path:
    return sorted(p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())[-1]


@pytest.fixture
def stored(pytester: pytest.Pytester, pi_host: object) -> Path:
    """The trials example's activation group, 4 trials, stored once."""
    shutil.copytree(TRIALS, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".skill-eval"))
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "activation", "--skill-eval-trials", "4"
                                  ).assert_outcomes(passed=1)
    return _newest(pytester.path)


def test_reused_baseline_runs_give_the_verdicts_of_running_them_again(stored: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", "-k", "activation", "--skill-eval-trials", "4",
                                           "--skill-eval-reuse-baseline", stored.name)
    result.assert_outcomes(passed=1)
    reused = _newest(pytester.path)
    assert reused != stored
    assert _json(reused / "groups" / GROUP / "aggregate.json") == _json(stored / "groups" / GROUP / "aggregate.json")
    record = _json(reused / "groups" / GROUP / "reuse.json")
    assert (record["source_result"], record["source_group"], record["reused"], record["reason"]) == (
        stored.name, f"groups/{GROUP}", True, None)
    assert [r["trial"] for r in record["runs"]] == [1, 2, 3, 4]
    assert [r["source"] for r in record["runs"]] == [f"groups/{GROUP}/trials/{n:03d}/baseline" for n in range(1, 5)]
    for n in range(1, 5):
        source, copy = (r / "groups" / GROUP / "trials" / f"{n:03d}" / "baseline" for r in (stored, reused))
        assert (copy / "events.jsonl").read_bytes() == (source / "events.jsonl").read_bytes()
        run = _json(copy / "run.json")
        for stored_file in run["snapshot"]["files"].values():
            digest = stored_file["sha256"]
            assert (reused / "objects" / digest[:2] / digest).is_file()
    text = f"baseline reused from {stored.name} (groups/{GROUP}, trials 1-4)"
    assert f"    baseline   complete ({text}) [4 complete]" in result.stdout.lines
    assert _json(reused / "groups" / GROUP / "group.json")["variants"]["baseline"]["reason"] == text

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_skill_eval", *args], cwd=pytester.path,
                              capture_output=True, text=True)

    view = cli("view", reused.name, "--group", "1")
    assert view.returncode == 0 and text in view.stdout, view.stdout + view.stderr
    report = cli("report", reused.name, "-o", "r.html")
    assert report.returncode == 0 and text in (pytester.path / "r.html").read_text(), report.stderr
    regrade = cli("regrade", reused.name)
    assert regrade.returncode == 0, regrade.stdout + regrade.stderr
    # a reused run is a stored run like any other: rerun runs it again from the inputs it recorded
    rerun = cli("rerun", reused.name)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert (_json(_newest(pytester.path) / "groups" / GROUP / "aggregate.json")
            == _json(stored / "groups" / GROUP / "aggregate.json"))


def _description(root: Path) -> None:
    skill = root / "skills-before" / "changelog" / "SKILL.md"
    skill.write_text(skill.read_text().replace("description: ", "description: Changed. ", 1))


def _prompt(root: Path) -> None:
    path = root / "groups" / "changelog-activation.json"
    path.write_text(path.read_text().replace("Please update the changelog", "Please update our changelog"))


def _tampered_object(stored: Path) -> None:
    run = _json(stored / "groups" / GROUP / "trials" / "001" / "baseline" / "run.json")
    digest = next(iter(run["snapshot"]["files"].values()))["sha256"]
    path = stored / "objects" / digest[:2] / digest
    os.chmod(path, 0o644)
    data = path.read_bytes()
    path.unlink()  # the object may share its inode with evidence files
    path.write_bytes(data + b"tampered")


def _planted_link(stored: Path) -> None:
    (stored / "groups" / GROUP / "trials" / "001" / "baseline" / "extra").symlink_to("/etc/passwd")


@pytest.mark.parametrize(("change", "args", "reason"), [
    (None, ["--skill-eval-seed", "another"], "baseline not reused: seed differs: stored 'trials-example', now 'another'"),
    (None, ["--skill-eval-trials", "6"], "baseline not reused: the stored group ran 4 baseline run(s), this run plans 6 trials"),
    (_description, [], "baseline not reused: skills differs at /resources~1skills~10~1changelog~1SKILL.md: stored "),
    (_prompt, [], "baseline not reused: input differs at /prompt: stored 'Please update the changelog"),
    (_tampered_object, [], "baseline not reused: objects/"),
    (_planted_link, [], "baseline not reused: "),
], ids=["seed", "trials", "skills", "input", "tampered-object", "planted-link"])
def test_each_difference_refuses_reuse_by_name_and_the_baseline_runs(
        stored: Path, pytester: pytest.Pytester, change: Any, args: list[str], reason: str) -> None:
    if change in (_tampered_object, _planted_link):
        change(stored)
    elif change is not None:
        change(pytester.path)
    trials = [] if "--skill-eval-trials" in args else ["--skill-eval-trials", "2"]
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", "-k", "activation", *trials, *args,
                                           "--skill-eval-reuse-baseline", stored.name)
    assert result.ret in (0, 1), result.stdout.str()
    ran = _newest(pytester.path)
    record = _json(ran / "groups" / GROUP / "reuse.json")
    assert record["reused"] is False and record["runs"] == []
    assert record["reason"].startswith(reason), record["reason"]
    group = _json(ran / "groups" / GROUP / "group.json")
    assert group["variants"]["baseline"]["state"] == "complete"
    assert group["variants"]["baseline"]["reason"] == record["reason"]
    # the baseline ran here: its run is not the stored one
    trial = ran / "groups" / GROUP / "trials" / "001" / "baseline"
    assert _json(trial / "run.json")["started_at"] != _json(
        stored / "groups" / GROUP / "trials" / "001" / "baseline" / "run.json")["started_at"]
    if change is _planted_link:
        assert "symlink" in record["reason"] or "link" in record["reason"]
    if change is _tampered_object:
        assert "sha256" in record["reason"]


def test_a_single_run_reuses_the_stored_first_trial(stored: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", "-k", "activation", "--skill-eval-trials", "1",
                                           "--skill-eval-reuse-baseline", stored.name)
    assert result.ret in (0, 1), result.stdout.str()
    single = _newest(pytester.path) / "groups" / GROUP
    record = _json(single / "reuse.json")
    assert record["reused"] is True and [r["source"] for r in record["runs"]] == [f"groups/{GROUP}/trials/001/baseline"]
    assert (single / "baseline" / "events.jsonl").read_bytes() == (
        stored / "groups" / GROUP / "trials" / "001" / "baseline" / "events.jsonl").read_bytes()
    # the same draws as the stored first trial: the same grade
    assert _json(single / "grade.json") == _json(stored / "groups" / GROUP / "trials" / "001" / "grade.json")
    text = f"baseline reused from {stored.name} (groups/{GROUP}, trial 1)"
    assert _json(single / "group.json")["variants"]["baseline"]["reason"] == text
