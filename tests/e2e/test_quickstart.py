"""The quickstart suite end to end: real pi, real scripted model over HTTP, real evidence."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import psutil
import pytest

QUICKSTART = Path(__file__).resolve().parents[2] / "example_suites" / "quickstart"

pytestmark = pytest.mark.pi


def _pi_processes_under(root: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if proc.cwd().startswith(str(root)) and any("pi" in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.fixture
def quickstart(pytester: pytest.Pytester, pi_host: object) -> pytest.Pytester:
    shutil.copytree(QUICKSTART, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".skill-eval"))
    return pytester


def _only_result(root: Path) -> Path:
    results = [p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    assert len(results) == 1, results
    return results[0]


def test_quickstart_reports_real_fail_to_pass_transitions(quickstart: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = quickstart.path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the subjects' workspaces land here
    result = quickstart.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "*suite.json::release-notes-activation PASSED fail-to-pass*",
        "*comparison reads-skill: fail-to-pass*",
        "*suite.json::release-notes-body PASSED fail-to-pass*",
        "*comparison result-exists: fail-to-pass*",
        "*view it with: skill-eval view *",
    ])
    assert _pi_processes_under(scratch) == []
    # only the private scratch root stays (it is shared by later runs), empty
    assert [p.name for p in scratch.iterdir()] == [f"skill-eval-{os.getuid()}"]
    assert list((scratch / f"skill-eval-{os.getuid()}").iterdir()) == [], "per-run scratch directories are removed"

    result_dir = _only_result(quickstart.path)
    # evidence stays out of the skill's repository
    assert (quickstart.path / ".skill-eval" / "runs" / ".gitignore").read_text().splitlines()[-1] == "*"
    git = subprocess.run(["git", "init", "-q"], cwd=quickstart.path, check=True)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", ".skill-eval"], cwd=quickstart.path,
                            capture_output=True, text=True, check=True)
    assert git.returncode == 0 and status.stdout == ""
    summary = json.loads((result_dir / "result.json").read_text())
    assert summary["state"] == "complete"
    assert [g["comparisons"] for g in summary["groups"]] == [{"reads-skill": "fail-to-pass"}, {"result-exists": "fail-to-pass"}]

    body = result_dir / "groups" / "002-release-notes-body"
    run = json.loads((body / "candidate" / "run.json").read_text())
    assert run["state"] == "complete"
    assert run["host"]["version"].startswith("1.6.")
    assert run["mode"] == "rpc"
    assert "--no-context-files" in run["argv"] and "--no-extensions" in run["argv"]
    transcript = json.loads((body / "candidate" / "transcript.json").read_text())
    assert transcript["turns"][0]["sent"].startswith("/skill:release-notes ")
    assert transcript["turns"][1]["sent"] == "Finish the release notes."
    assert json.loads((body / "candidate" / "workspace" / "result.json").read_text())["status"] == "complete"
    assert not (body / "baseline" / "workspace" / "result.json").exists()
    assert (body / "candidate" / "turns" / "2" / "workspace" / "result.json").exists()
    assert (body / "candidate" / "final-response.txt").read_text() == "Release notes finished and recorded in result.json."

    activation = result_dir / "groups" / "001-release-notes-activation"
    run = json.loads((activation / "baseline" / "run.json").read_text())
    assert run["mode"] == "json"
    descriptions = [s["description"] for s in run["registered_skills"]["prompt"]]
    assert descriptions == ["Formatting conventions for Markdown documents."]
    grade = json.loads((activation / "grade.json").read_text())
    statuses = {e["id"]: e["status"] for e in grade["expectations"]}
    assert statuses == {"baseline-reads-skill": "fail", "candidate-reads-skill": "pass"}
    events = (activation / "candidate" / "events.jsonl").read_bytes().splitlines()
    assert all(json.loads(line) for line in events)


def test_candidate_regression_fails_the_item(quickstart: pytest.Pytester) -> None:
    # Swap the variants: the candidate now has the worse description, so the
    # comparison is a regression and the candidate expectation fails the item.
    path = quickstart.path / "groups" / "release-notes-activation.json"
    doc = json.loads(path.read_text())
    variants = doc["variants"]
    variants["baseline"]["skills"], variants["candidate"]["skills"] = variants["candidate"]["skills"], variants["baseline"]["skills"]
    path.write_text(json.dumps(doc))
    result = quickstart.runpytest_subprocess("-v", "-p", "no:cacheprovider", "-k", "activation")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines([
        "*release-notes-activation FAILED pass-to-fail*",
        "*candidate-reads-skill (skill-read): fail*",
        "*expected:*",
        "*observed:*",
    ])


def test_missing_script_is_an_error_not_a_pass(quickstart: pytest.Pytester) -> None:
    path = quickstart.path / "groups" / "release-notes-activation.json"
    doc = json.loads(path.read_text())
    doc["model"] = {"model": "scripted/no-such-script"}
    path.write_text(json.dumps(doc))
    result = quickstart.runpytest_subprocess("-p", "no:cacheprovider", "-k", "activation")
    result.assert_outcomes(errors=1, deselected=1)
    result.stdout.fnmatch_lines(["*baseline: invalid: no script for model 'scripted/no-such-script'*"])
    run = json.loads((_only_result(quickstart.path) / "groups" / "001-release-notes-activation" / "candidate" / "run.json").read_text())
    assert run["state"] == "invalid"


def test_invalid_suite_entry_is_recorded_as_an_invalid_group(quickstart: pytest.Pytester) -> None:
    (quickstart.path / "groups" / "broken.json").write_text('{"schema_version": 1, "kind": "group", "id": "x"}')
    suite = json.loads((quickstart.path / "suite.json").read_text())
    suite["groups"].insert(1, "groups/broken.json")
    (quickstart.path / "suite.json").write_text(json.dumps(suite))
    result = quickstart.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2, errors=1)
    res = _only_result(quickstart.path)
    summary = json.loads((res / "result.json").read_text())
    assert summary["state"] == "partially-complete"
    broken = [g for g in summary["groups"] if g["position"] == 2]
    assert broken == [{"dir": "002-invalid-broken", "id": None, "position": 2, "state": "invalid", "reason": None,
                       "grade_state": None, "variants": {"baseline": "invalid", "candidate": "invalid"}, "comparisons": {},
                       "usage": None}]
    group = json.loads((res / "groups" / "002-invalid-broken" / "group.json").read_text())
    assert any(line.endswith('/fixture: expected null or a relative fixture path, found no "fixture" field')
               for line in group["definition_errors"])
    # the groups after the broken entry keep their suite positions
    assert (res / "groups" / "003-release-notes-body" / "grade.json").exists()


def test_evidence_that_cannot_be_persisted_stops_queued_work_and_publishes_no_summary(quickstart: pytest.Pytester) -> None:
    # Block the first group's evidence directory with a file right before it runs.
    quickstart.makeconftest("""
        from pytest_skill_eval.plugin.session import SESSION_KEY

        def pytest_runtest_setup(item):
            if item.name == "release-notes-activation":
                groups = item.config.stash[SESSION_KEY].result_dir / "groups"
                groups.mkdir(parents=True, exist_ok=True)
                (groups / "001-release-notes-activation").write_text("in the way")
    """)
    result = quickstart.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "*skill-eval: no result.json written: evidence could not be persisted*",
        "*group release-notes-activation: evidence could not be persisted: *; no queued group starts*",
        "*Interrupted: skill-eval: evidence could not be persisted*",
    ])
    res = _only_result(quickstart.path)
    assert not (res / "result.json").exists()
    assert not (res / "groups" / "002-release-notes-body").exists(), "the queued group never started"


def test_a_users_own_runs_gitignore_is_left_alone(quickstart: pytest.Pytester) -> None:
    own = quickstart.path / ".skill-eval" / "runs" / ".gitignore"
    own.parent.mkdir(parents=True)
    own.write_text("# mine\n!keep/\n")
    quickstart.runpytest_subprocess("-p", "no:cacheprovider", "-k", "activation").assert_outcomes(passed=1)
    assert own.read_text() == "# mine\n!keep/\n"
