"""Trials end to end: the trials example suite through the real pi host, with a fixed seed.

The scripted stand-in's weighted choices are drawn per arm (group, variant, trial) from the
seed, so the counts below are exact for the seed ``trials-example`` (the suite's
``pytest.ini``) and do not depend on which xdist worker ran a group.
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


def _result(root: Path) -> Path:
    (res,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    return res


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture
def trials_suite(pytester: pytest.Pytester, pi_host: object) -> Path:
    shutil.copytree(TRIALS, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".skill-eval"))
    return pytester.path


def test_the_trials_example_gives_the_seeded_counts_under_xdist(trials_suite: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider", "-n", "2", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines_random([
        "*PASSED 7/20 -> 19/20 (p=0.00014) (20 trials; better) suite.json::changelog-activation*",
        "*PASSED pass-to-pass (20 trials; underpowered) suite.json::changelog-body*",
    ])
    res = _result(trials_suite)
    summary = _json(res / "result.json")
    assert (summary["trials"], summary["seed"]) == (20, "trials-example")
    assert [g["comparisons"] for g in summary["groups"]] == [
        {"reads-skill": "7/20 -> 19/20 (p=0.00014)"}, {"writes-changelog": "pass-to-pass"}]
    assert [g["trials"] for g in summary["groups"]] == [{"planned": 20, "ran": 20}] * 2
    assert [g["lost_runs"] for g in summary["groups"]] == [{"baseline": 0, "candidate": 0}] * 2
    # the decision: one case higher, one tie; the sign test over cases, per comparison Fisher with Holm
    decision = summary["decision"]
    assert (decision["test"], decision["counts"]) == ("exact sign test", {"higher": 1, "lower": 0, "ties": 1})
    assert decision["decision"] == "underpowered" and decision["p_value"] == 1.0
    activation_decision = decision["comparisons"][0]
    assert activation_decision["decision"] == "better"
    assert activation_decision["adjusted_p_value"] == pytest.approx(2 * activation_decision["p_value"])
    assert activation_decision["line"] == "better: 7/20 -> 19/20, p = 0.00014 (holm 0.00027)"

    activation = res / "groups" / "001-changelog-activation"
    aggregate = _json(activation / "aggregate.json")
    rates = {e["id"]: (e["passes"], e["fails"], e["not_graded"], e["flaky"]) for e in aggregate["expectations"]}
    assert rates == {"baseline-reads-skill": (7, 13, 0, True), "candidate-reads-skill": (19, 1, 0, True)}
    (comparison,) = aggregate["comparisons"]
    assert comparison["p_value"] == pytest.approx(0.00014, rel=0.05) and comparison["saturated"] is False
    assert sorted(p.name for p in (activation / "trials").iterdir()) == [f"{n:03d}" for n in range(1, 21)]
    # the order of the variants alternates by trial; each trial's runs are whole runs
    for number in (1, 2):
        trial = activation / "trials" / f"{number:03d}"
        starts = {v: _json(trial / v / "run.json")["started_at"] for v in ("baseline", "candidate")}
        first = "baseline" if number % 2 else "candidate"
        assert min(starts, key=lambda v: starts[v]) == first
        assert _json(trial / "grade.json")["state"] == "graded"
    group = _json(activation / "group.json")
    assert (group["grade_file"], group["trials"]) == ("aggregate.json", {"planned": 20, "ran": 20})

    body = _json(res / "groups" / "002-changelog-body" / "aggregate.json")
    flaky = next(e for e in body["expectations"] if e["id"] == "baseline-mentions-csv")
    assert (flaky["passes"], flaky["fails"], flaky["flaky"]) == (13, 7, True)
    assert body["comparisons"][0]["saturated"] is True

    block = next(t for t in ElementTree.parse(trials_suite / "junit.xml").iter("testsuite")
                 if str(t.get("name")).endswith("::changelog-activation"))
    props = {p.get("name"): p.get("value") for p in block.iter("property")}
    assert props["skill_eval.trials"] == "20/20"
    assert props["skill_eval.comparison.reads-skill"] == "7/20 -> 19/20 (p=0.00014)"
    assert props["skill_eval.comparison.reads-skill.decision"] == "better: 7/20 -> 19/20, p = 0.00014 (holm 0.00027)"
    details = next(t for t in ElementTree.parse(trials_suite / "junit.xml").iter("testsuite")
                   if t.get("name") == "skill-eval details")
    result_props = {p.get("name"): p.get("value") for p in details.findall("properties/property")}
    assert result_props["skill_eval.decision"] == decision["line"]
    assert result_props["skill_eval.decision.comparison.changelog-activation/reads-skill"] == activation_decision["line"]
    assert str(props["skill_eval.expectation.candidate-reads-skill"]).startswith("candidate 19/20 (95 %, 95 % CI 76-99 %)")


def test_another_seed_draws_other_counts_and_a_pass_rate_of_one_fails_the_candidate(
        trials_suite: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "activation", "--skill-eval-seed", "another",
                                           "--skill-eval-pass-rate", "1")
    aggregate = _json(_result(trials_suite) / "groups" / "001-changelog-activation" / "aggregate.json")
    counts = {e["id"]: e["passes"] for e in aggregate["expectations"]}
    assert counts != {"baseline-reads-skill": 7, "candidate-reads-skill": 19}
    if counts["candidate-reads-skill"] < 20:
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*failed candidate-reads-skill (skill-read): passed */20, below 100 %*"])
    else:  # pragma: no cover - the seed would have to draw 20 of 20
        result.assert_outcomes(passed=1)


def test_view_shows_the_aggregate_then_a_trial_and_regrade_reproduces_every_trial(
        trials_suite: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "body", "--skill-eval-trials", "3")
    result.assert_outcomes(passed=1)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_skill_eval", *args], cwd=trials_suite,
                              capture_output=True, text=True)

    view = cli("view", "latest", "--group", "2")
    assert view.returncode == 0, view.stderr
    assert "aggregate graded over 3 of 3 trials" in view.stdout
    assert "--trial K (K from 1 to 3)" in view.stdout
    assert "-- baseline" not in view.stdout  # runs are per trial: --trial picks one
    trial = cli("view", "latest", "--group", "2", "--trial", "2", "--variant", "candidate")
    assert trial.returncode == 0, trial.stderr
    assert "== trial 2 of 3" in trial.stdout and "-- candidate [complete]" in trial.stdout
    assert "groups/002-changelog-body/trials/002/candidate/run.json" in trial.stdout
    out_of_range = cli("view", "latest", "--group", "2", "--trial", "4")
    assert out_of_range.returncode == 2
    assert "--trial 4 is out of range: group 002-changelog-body ran 3 of 3 trials" in out_of_range.stderr
    regrade = cli("regrade", "latest")
    assert regrade.returncode == 0, regrade.stdout + regrade.stderr
    assert "changelog-body: graded, identical to aggregate.json" in regrade.stdout
    assert "trials     3 regraded, 0 differ from their grade.json" in regrade.stdout
    group = _result(trials_suite) / "groups" / "002-changelog-body"
    assert len(list(group.glob("aggregate-regraded-*.json"))) == 1
    assert len(list(group.glob("trials/*/grade-regraded-*.json"))) == 3


def _digest(result: Path, root: Path) -> dict[str, str]:
    """The result's files as tools/compare_evidence.py normalises them (ids, times, scratch paths)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare_evidence", TRIALS.parents[1] / "tools" / "compare_evidence.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return {path.relative_to(result).as_posix(): tool._entry(path, str(root))
            for path in sorted(result.rglob("*")) if path.is_file()}


def test_one_trial_writes_exactly_what_a_run_without_trials_writes(pytester: pytest.Pytester, pi_host: object) -> None:
    quickstart = TRIALS.parent / "quickstart"
    digests = []
    for extra in ([], ["--skill-eval-trials", "1"]):
        root = pytester.path / ("plain" if not extra else "one-trial")
        shutil.copytree(quickstart, root, ignore=shutil.ignore_patterns(".skill-eval"))
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *extra], cwd=root,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        digests.append(_digest(_result(root), root))
    for digest in digests:
        summary = json.loads(digest["result.json"])
        summary["provenance"].pop("argv")  # the argument lists differ by the option under test
        digest["result.json"] = json.dumps(summary)
    plain, one = digests
    assert plain.keys() == one.keys()
    assert [name for name in plain if plain[name] != one[name]] == []
