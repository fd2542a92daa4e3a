"""``result.json`` accounts for every selected group, however the run ended.

Spec (execution and evidence, persistence and states): group and batch states are
``complete``, ``partially-complete``, ``invalid`` and ``cancelled``; cancellation starts no
queued subject. A batch in which a selected group never ran is never ``complete``.
Every run here goes through the real pi host and the scripted stand-in model.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .helpers import GROUPS, only_result, read_json, suite, write_json

pytestmark = pytest.mark.pi


def _stalling_group(project: Path, group_id: str) -> None:
    """A group whose scripted model never answers: it runs until Ctrl-C."""
    write_json(project / "scripts" / f"{group_id}.json",
               {"schema": "skill-eval-script/1", "turns": [{"steps": [{"fault": "stall"}]}]})
    write_json(project / "groups" / f"{group_id}.json",
               dict(GROUPS["improves"], id=group_id, model={"model": f"scripted/{group_id}"}))


def _summary_by_id(result_dir: Path) -> dict[str | None, dict[str, Any]]:
    summary = read_json(result_dir / "result.json")
    return {g["id"]: g for g in summary["groups"]}


def _wait_for(predicate: Any, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 120
    while not predicate():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out = proc.communicate()[0].decode(errors="replace")
            pytest.fail(f"{what} never happened:\n{out}")
        time.sleep(0.1)


def test_exitfirst_lists_the_group_that_never_ran(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "-x", "-k", "not improves")
    result.assert_outcomes(failed=1)
    summary = read_json(only_result(project) / "result.json")
    assert summary["state"] == "partially-complete", "a batch in which a selected group never ran is not complete"
    assert [(g["id"], g["position"], g["state"]) for g in summary["groups"]] == [
        ("regresses", 2, "complete"), ("stays-failing", 3, "not-run")]
    queued = summary["groups"][1]
    assert queued["dir"] is None and queued["grade_state"] is None and queued["comparisons"] == {}
    assert queued["reason"] == "not run: pytest stopped early (stopping after 1 failures)"
    assert queued["variants"] == {"baseline": "not-run", "candidate": "not-run"}
    assert summary["groups"][0]["reason"] is None
    # the deselected group was never selected, so it is not listed
    assert "improves" not in _summary_by_id(only_result(project))


def test_maxfail_lists_every_selected_group_with_its_variant_selection(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "--maxfail", "1", "--skill-eval-variant", "candidate")
    result.assert_outcomes(passed=1, failed=1)
    groups = _summary_by_id(only_result(project))
    assert groups["stays-failing"]["state"] == "not-run"
    assert groups["stays-failing"]["variants"] == {"baseline": "not-selected", "candidate": "not-run"}
    assert read_json(only_result(project) / "result.json")["state"] == "partially-complete"


def test_ctrl_c_lists_the_queued_group_as_cancelled(project: Path) -> None:
    _stalling_group(project, "stalls")
    write_json(project / "two.json", suite("two", ["groups/stalls.json", "groups/improves.json"]))
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--skill-eval", "two.json", "-p", "no:cacheprovider"],
                            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _wait_for(lambda: list(project.glob(".skill-eval/runs/*/groups/001-stalls/baseline/workspace-initial")), proc,
              "the stalling group's start")
    time.sleep(1.0)  # let pi reach the stalled model request
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=120)[0].decode(errors="replace")
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    summary = read_json(only_result(project) / "result.json")
    assert summary["state"] == "cancelled"
    assert [(g["id"], g["state"]) for g in summary["groups"]] == [("stalls", "cancelled"), ("improves", "cancelled")]
    queued = summary["groups"][1]
    assert queued["dir"] is None and queued["position"] == 2
    assert queued["reason"] == "cancelled before it started"
    assert queued["variants"] == {"baseline": "cancelled", "candidate": "cancelled"}
    assert not (only_result(project) / "groups" / "002-improves").exists(), "cancellation starts no queued subject"


def test_ctrl_c_under_xdist_lists_every_selected_group(project: Path) -> None:
    """The controller collects nothing; it learns the selection from the workers."""
    ids = ["stall-a", "stall-b", "stall-c", "stall-d"]
    for gid in ids:
        _stalling_group(project, gid)
    write_json(project / "four.json", suite("four", [f"groups/{gid}.json" for gid in ids]))
    # a new session, so the SIGINT reaches controller and workers as a terminal's Ctrl-C does
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--skill-eval", "four.json", "-p", "no:cacheprovider", "-n", "2"],
                            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    _wait_for(lambda: len(list(project.glob(".skill-eval/runs/*/groups/*/baseline/workspace-initial"))) >= 2, proc,
              "two stalling groups' start")
    time.sleep(1.5)
    os.killpg(proc.pid, signal.SIGINT)
    out = proc.communicate(timeout=180)[0].decode(errors="replace")
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    result_dir = only_result(project)
    summary = read_json(result_dir / "result.json")
    assert summary["state"] == "cancelled", out
    assert [g["id"] for g in summary["groups"]] == ids, out
    assert [g["position"] for g in summary["groups"]] == [1, 2, 3, 4]
    assert {g["state"] for g in summary["groups"]} == {"cancelled"}
    for entry in summary["groups"]:
        if entry["dir"] is None:
            assert entry["reason"] == "cancelled before it started"
            assert not (result_dir / "groups" / f"{entry['position']:03d}-{entry['id']}").exists()


def test_hidden_staging_entries_are_ignored_and_swept(project: Path, pytester: pytest.Pytester) -> None:
    """What a killed writer leaves (hidden staging dirs, temp files) is never read as evidence."""
    pytester.makeconftest("""
        import json, os, tempfile
        from pathlib import Path
        from pytest_skill_eval.plugin.session import SESSION_KEY

        def pytest_runtest_teardown(item):
            # as a writer killed mid-copy leaves them: evidence.copy_tree_atomic's staging
            # directories and write_atomic's temporary files, beside the real entries
            groups = item.config.stash[SESSION_KEY].result_dir / "groups"
            stray = Path(tempfile.mkdtemp(prefix=".001-ghost.", dir=groups))
            (stray / "group.json").write_text(json.dumps({"id": "ghost", "state": "complete", "variants": {}}))
            variant = groups / "001-improves" / "candidate"
            part = Path(tempfile.mkdtemp(prefix=".workspace.", dir=variant))
            (part / "half.txt").write_text("torn")
            os.close(tempfile.mkstemp(prefix=".run.json.", suffix=".tmp", dir=variant)[0])
    """)
    result = pytester.runpytest("--skill-eval", "groups/improves.json")
    result.assert_outcomes(passed=1)
    result_dir = only_result(project)
    summary = read_json(result_dir / "result.json")
    assert [g["id"] for g in summary["groups"]] == ["improves"]
    assert summary["state"] == "complete"
    # the controller sweeps its own result once every writer is done
    copies = {"workspace", "workspace-initial", "session"}  # the subject's own dot files stay
    leftovers = [p for p in result_dir.rglob(".*") if not copies & set(p.relative_to(result_dir).parts[:-1])]
    assert leftovers == []


def test_exitfirst_under_xdist_lists_every_selected_group(project: Path, pytester: pytest.Pytester) -> None:
    """xdist stops with its own Interrupted; groups never sent to a worker are not-run, not cancelled."""
    ids = []
    for i in range(6):
        for kind in ("regresses", "improves"):
            ids.append(f"{kind}-{i}")
            write_json(project / "groups" / f"{ids[-1]}.json", dict(GROUPS[kind], id=ids[-1]))
    write_json(project / "many.json", suite("many", [f"groups/{gid}.json" for gid in ids]))
    pytester.runpytest_subprocess("--skill-eval", "many.json", "-p", "no:cacheprovider", "-n", "2", "-x")
    summary = read_json(only_result(project) / "result.json")
    assert [g["id"] for g in summary["groups"]] == ids
    states = [g["state"] for g in summary["groups"]]
    # each worker gets two groups at a time and the first one fails: most never start
    assert "not-run" in states and set(states) == {"complete", "not-run"}
    assert summary["state"] == "partially-complete"
    for entry in summary["groups"]:
        if entry["state"] == "not-run":
            assert entry["reason"] == "not run: pytest stopped early (stopping after 1 failures)"
            assert entry["dir"] is None


def test_ctrl_c_with_trials_starts_no_queued_trial_and_the_aggregate_counts_what_ran(project: Path) -> None:
    _stalling_group(project, "stalls")
    write_json(project / "one.json", suite("one", ["groups/stalls.json"]))
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--skill-eval", "one.json", "-p", "no:cacheprovider",
                             "--skill-eval-trials", "3"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _wait_for(lambda: list(project.glob(".skill-eval/runs/*/groups/001-stalls/trials/001/baseline/workspace-initial")),
              proc, "the first trial's start")
    time.sleep(1.0)  # let pi reach the stalled model request
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=120)[0].decode(errors="replace")
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    gdir = only_result(project) / "groups" / "001-stalls"
    assert sorted(p.name for p in (gdir / "trials").iterdir()) == ["001"], "no queued trial starts"
    trial = read_json(gdir / "trials" / "001" / "candidate" / "run.json")
    assert (trial["state"], trial["reason"]) == ("cancelled", "cancelled before it started")
    aggregate = read_json(gdir / "aggregate.json")
    assert aggregate["trials"] == {"planned": 3, "ran": 1}
    group = read_json(gdir / "group.json")
    assert group["state"] == "cancelled" and group["trials"] == {"planned": 3, "ran": 1}
    (entry,) = read_json(only_result(project) / "result.json")["groups"]
    assert (entry["state"], entry["trials"]) == ("cancelled", {"planned": 3, "ran": 1})
