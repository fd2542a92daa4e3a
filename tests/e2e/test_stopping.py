"""``--skill-eval-stop`` end to end: the trials example through the real pi host, with a fixed seed.

The stand-in's weighted choices depend on the seed, group, variant and trial only, so a run
that stops early draws exactly the first trials of the full run: curtailment must give the
same verdicts with fewer runs, and a rerun and an xdist run the same stopping decisions.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

TRIALS = Path(__file__).resolve().parents[2] / "example_suites" / "trials"

pytestmark = pytest.mark.pi


def _results(root: Path) -> list[Path]:
    return sorted(p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture
def trials_suite(pytester: pytest.Pytester, pi_host: object) -> Path:
    shutil.copytree(TRIALS, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".skill-eval"))
    return pytester.path


def _verdicts(group_dir: Path, pass_rate: float) -> dict[str, bool]:
    """Each expectation's pass-rate verdict (below the rate?) from the stored aggregate."""
    aggregate = _json(group_dir / "aggregate.json")
    return {e["id"]: e["passes"] / (e["passes"] + e["fails"]) < pass_rate for e in aggregate["expectations"]}


@pytest.mark.parametrize(("pass_rate", "stops"), [("0.75", True), ("1", False)])
def test_curtail_gives_the_full_runs_verdicts_with_fewer_trials(trials_suite: Path, pytester: pytest.Pytester,
                                                              pass_rate: str, stops: bool) -> None:
    common = ["-p", "no:cacheprovider", "-v", "-k", "activation", "--skill-eval-trials", "12",
              "--skill-eval-pass-rate", pass_rate]
    full = pytester.runpytest_subprocess(*common)
    curtailed = pytester.runpytest_subprocess(*common, "--skill-eval-stop", "curtail", "--junitxml=junit.xml")
    assert full.ret == curtailed.ret
    first, second = _results(trials_suite)
    full_dir, cut_dir = (r / "groups" / "001-changelog-activation" for r in (first, second))
    assert not (full_dir / "stopping.json").exists()
    stopping = _json(cut_dir / "stopping.json")
    ran = stopping["ran"]
    assert stopping["mode"] == "curtail" and stopping["stopped"] is stops and (ran < 12) is stops
    assert [c["trial"] for c in stopping["checks"]] == list(range(1, ran + 1))
    assert _verdicts(full_dir, float(pass_rate)) == _verdicts(cut_dir, float(pass_rate))
    assert _json(cut_dir / "group.json")["trials"] == {"planned": 12, "ran": ran}
    # trials a stop rule did not run are not missing data: the comparison is decided over those that ran
    decided = {c["comparison"]: c for c in _json(second / "result.json")["decision"]["comparisons"]}
    assert decided["reads-skill"]["decision"] != "indecisive" and decided["reads-skill"]["coverage"] == 1.0
    assert decided["reads-skill"]["planned"] == ran
    assert sorted(p.name for p in (cut_dir / "trials").iterdir()) == [f"{n:03d}" for n in range(1, ran + 1)]
    # the trials that ran are the full run's first trials, draw for draw
    for number in range(1, ran + 1):
        assert (_json(full_dir / "trials" / f"{number:03d}" / "grade.json")
                == _json(cut_dir / "trials" / f"{number:03d}" / "grade.json"))
    if stops:
        text = f"stopped after {ran} of 12 trials (curtail): no remaining trial can change a verdict"
        curtailed.stdout.fnmatch_lines([f"*({ran} of 12 trials, stopped by curtail*", f"*stopping   {text}*"])
    else:
        # the candidate passed every trial: under pass rate 1 only the last trial decides
        text = ("ran all 12 trials (curtail: no earlier stop; last open: expectation candidate-reads-skill "
                "is not decided yet)")
        curtailed.stdout.fnmatch_lines(["*(12 trials*", f"*stopping   {text}*"])
    block = next(t for t in ElementTree.parse(trials_suite / "junit.xml").iter("testsuite")
                 if str(t.get("name")).endswith("::changelog-activation"))
    props = {p.get("name"): p.get("value") for p in block.iter("property")}
    assert props["skill_eval.stopping"] == text
    view = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "view", "latest", "--group", "1"],
                          cwd=trials_suite, capture_output=True, text=True)
    assert view.returncode == 0, view.stderr
    assert f"stopping  {text}" in view.stdout


def test_sequential_stops_for_a_clear_difference_and_xdist_rerun_and_jobs_reach_the_same_stop(
        trials_suite: Path, pytester: pytest.Pytester) -> None:
    args = ["-p", "no:cacheprovider", "-v", "--skill-eval-stop", "sequential", "--skill-eval-fail-on", "regression"]
    first = pytester.runpytest_subprocess(*args, "-n", "2")
    first.assert_outcomes(passed=2)
    (result,) = _results(trials_suite)
    activation = _json(result / "groups" / "001-changelog-activation" / "stopping.json")
    assert activation["stopped"] is True and activation["ran"] < 20
    assert activation["reason"].startswith("comparison reads-skill: candidate better, p = ")
    (looks,) = [c["looks"] for c in activation["comparisons"]]
    assert looks[-1]["decision"] == "better" and looks[-1]["statistic"] >= looks[-1]["boundary"]
    assert all(look["decision"] == "continue" for look in looks[:-1])
    body = _json(result / "groups" / "002-changelog-body" / "stopping.json")
    # pass-to-pass in every trial: no discordant pair, futile once none can reach alpha
    assert body["stopped"] is True and "futile" in body["reason"]
    assert _json(result / "result.json")["provenance"]["stop"] == "sequential"

    rerun = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "rerun", result.name], cwd=trials_suite,
                           capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    again = next(r for r in _results(trials_suite) if r != result)
    for group in ("001-changelog-activation", "002-changelog-body"):
        assert _json(again / "groups" / group / "stopping.json") == _json(result / "groups" / group / "stopping.json")

    lanes = pytester.runpytest_subprocess(*args, "--skill-eval-jobs", "2")
    lanes.assert_outcomes(passed=2)
    third = next(r for r in _results(trials_suite) if r not in (result, again))
    for group in ("001-changelog-activation", "002-changelog-body"):
        assert _json(third / "groups" / group / "stopping.json") == _json(result / "groups" / group / "stopping.json")

    # shards: each group runs in one of them, and stops where the whole run stopped it
    shards = []
    for k in (1, 2):
        before = set(_results(trials_suite))
        pytester.runpytest_subprocess(*args, "--skill-eval-shard", f"{k}/2")
        (new,) = [r for r in _results(trials_suite) if r not in before]
        shards.append(new)
    for group in ("001-changelog-activation", "002-changelog-body"):
        stored = [s / "groups" / group / "stopping.json" for s in shards if (s / "groups" / group / "stopping.json").exists()]
        assert len(stored) == 1 and _json(stored[0]) == _json(result / "groups" / group / "stopping.json")

    report = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "report", result.name, "-o", "r.html"],
                            cwd=trials_suite, capture_output=True, text=True)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "stopped after" in (trials_suite / "r.html").read_text()
