"""Faults through the real host: provider errors, stalls, malformed streams, crashes, Ctrl-C.

Each asserts the run state, that directly observed partial evidence is preserved, that
every JSON file in the result parses, and that no pi process outlives the run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import psutil
import pytest

pytestmark = pytest.mark.pi

SKILL = "---\nname: target\ndescription: Target skill for fault tests.\n---\nBody.\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _setup(root: Path, gid: str, turns: list[list[dict[str, Any]]], *, prompts: list[str],
           runtime: dict[str, Any] | None = None, type_: str = "body",
           rules: list[dict[str, Any]] | None = None) -> None:
    _write(root / "skills" / "target" / "SKILL.md", SKILL)
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    group: dict[str, Any] = {
        "schema_version": 1, "kind": "group", "id": gid, "type": type_,
        "input": {"turns": prompts} if len(prompts) > 1 else {"prompt": prompts[0]},
        "fixture": None, "tools": ["read"],
        "variants": {"baseline": {**variant, "skills": [], "target": None}, "candidate": variant},
        "expectations": [], "review_questions": [], "model": {"model": f"scripted/{gid}"},
    }
    if runtime:
        group["runtime"] = runtime
    script_turns: list[dict[str, Any]] = [{"steps": steps} for steps in turns]
    if rules:
        script_turns[0]["rules"] = rules
    _write(root / "groups" / f"{gid}.json", json.dumps(group))
    _write(root / "groups" / "scripts" / f"{gid}.json", json.dumps({"schema": "skill-eval-script/1", "turns": script_turns}))


def _scratch(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scratch = root / "scratch"
    scratch.mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(scratch))
    return scratch


def _result(root: Path) -> Path:
    (result,) = [p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    for path in result.rglob("*.json"):
        if "workspace" not in path.parts:
            json.loads(path.read_text())  # every evidence JSON parses: writes are atomic
    from pytest_skill_eval.commands.view import render

    assert "== group 1 " in render(str(result), root)  # and the stored result still renders
    return result


def _run(result: Path, variant: str, gid: str) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((result / "groups" / f"001-{gid}" / variant / "run.json").read_text()))


@pytest.fixture
def root(pytester: pytest.Pytester, pi_host: object) -> pytest.Pytester:
    return pytester


@pytest.mark.parametrize(
    ("fault", "message", "partial"),
    [
        ("http-500", "model provider error: 500:", ""),
        ("malformed", "model provider error:", ""),
        # text streamed before the stream broke is directly observed and kept
        ("disconnect", "model provider error: terminated", "[scripted stand-in] partial reply before a disconnect"),
        ("no-finish-reason", "model provider error: Stream ended without finish_reason", "[scripted stand-in] reply without a finish_reason"),
        # the chat-completions wire words them as OpenAI does: the wait is in the body's text
        ("rate-limit", "rate limited by the provider (429), retry after 20 s (model provider error: 429: ", ""),
        ("overloaded", "provider overloaded (503), try again later (model provider error: 503: ", ""),
    ],
)
def test_provider_faults_are_infrastructure_failures_with_partial_evidence(
    root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fault: str, message: str, partial: str,
    processes_in: Callable[[Path], list[psutil.Process]],
) -> None:
    scratch = _scratch(root.path, monkeypatch)
    _setup(root.path, "fault", [[{"text": "turn one ok"}], [{"fault": fault}]], prompts=["One.", "Two."])
    result = root.runpytest_subprocess("--skill-eval", "groups/fault.json", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    res = _result(root.path)
    run = _run(res, "candidate", "fault")
    assert run["state"] == "infrastructure-failed"
    assert run["reason"].startswith("turn 2: ") and message in run["reason"]
    turns = json.loads((res / "groups" / "001-fault" / "candidate" / "transcript.json").read_text())["turns"]
    assert [t["response"] for t in turns] == ["turn one ok", partial]
    assert turns[1]["stop_reason"] == "error" and turns[1]["error"]
    assert turns[0]["settled"] is True
    assert _run(res, "baseline", "fault")["state"] == "infrastructure-failed", "a variant-local failure does not stop safe queued work"
    # no selected run completed: the group is invalid, not partially-complete (nothing of it is complete)
    assert json.loads((res / "groups" / "001-fault" / "group.json").read_text())["state"] == "invalid"
    assert json.loads((res / "result.json").read_text())["state"] == "invalid"
    assert processes_in(scratch) == []


def test_stalled_subject_is_stopped_by_no_progress_detection(
    root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, processes_in: Callable[[Path], list[psutil.Process]]
) -> None:
    scratch = _scratch(root.path, monkeypatch)
    _setup(root.path, "stall", [[{"fault": "stall"}]], prompts=["Go."])
    result = root.runpytest_subprocess("--skill-eval", "groups/stall.json", "-p", "no:cacheprovider",
                                       "--skill-eval-stall-timeout", "2", "--skill-eval-variant", "candidate")
    result.assert_outcomes(errors=1)
    run = _run(_result(root.path), "candidate", "stall")
    assert run["state"] == "infrastructure-failed"
    assert run["reason"] == "no progress from the host for 2 s (stalled subject)"
    events = (_result(root.path) / "groups" / "001-stall" / "candidate" / "events.jsonl").read_text()
    assert '"type":"agent_start"' in events.replace(" ", ""), "events observed before the stall are kept"
    assert processes_in(scratch) == []


def test_host_crash_mid_turn_keeps_partial_evidence(
    root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, processes_in: Callable[[Path], list[psutil.Process]]
) -> None:
    scratch = _scratch(root.path, monkeypatch)
    _write(root.path / "ext" / "crash.mjs",
           "export default function (pi) { pi.on('tool_call', async () => { process.exit(7); }); }\n")
    _setup(root.path, "crash", [[{"text": "fine"}], [{"tool_calls": [{"name": "read", "arguments": {"path": "x"}}]}, {"text": "never"}]],
           prompts=["One.", "Two."],
           runtime={"host": "pi", "session": False, "extensions": [{"entry": "ext/crash.mjs", "resources": ["ext"]}],
                    "environment": {"literal": {}, "inherit": []}})
    result = root.runpytest_subprocess("--skill-eval", "groups/crash.json", "-p", "no:cacheprovider", "--skill-eval-variant", "candidate")
    result.assert_outcomes(errors=1)
    res = _result(root.path)
    run = _run(res, "candidate", "crash")
    assert run["state"] == "infrastructure-failed"
    assert run["reason"] == "the host exited before the turn settled"
    assert run["returncode"] == 7
    turns = json.loads((res / "groups" / "001-crash" / "candidate" / "transcript.json").read_text())["turns"]
    assert [t["settled"] for t in turns] == [True, False]
    assert turns[0]["response"] == "fine"
    assert processes_in(scratch) == []


def test_turn_two_is_sent_only_after_turn_one_settled(root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _scratch(root.path, monkeypatch)
    _setup(root.path, "order", [[{"tool_calls": [{"name": "read", "arguments": {"path": "{{delivered.location}}"}}]}, {"text": "one"}],
                                [{"text": "two"}]], prompts=["One.", "Two."])
    result = root.runpytest_subprocess("--skill-eval", "groups/order.json", "-p", "no:cacheprovider", "--skill-eval-variant", "candidate")
    result.assert_outcomes(passed=1)
    gdir = _result(root.path) / "groups" / "001-order" / "candidate"
    records = [json.loads(line) for line in (gdir / "events.jsonl").read_text().splitlines()]
    types = [r.get("type") for r in records]
    first_settled = types.index("agent_settled")
    prompt_responses = [i for i, r in enumerate(records) if r.get("type") == "response" and r.get("command") == "prompt"]
    assert len(prompt_responses) == 2 and prompt_responses[1] > first_settled
    transcript = json.loads((gdir / "transcript.json").read_text())["turns"]
    assert transcript[0]["sent"] == "/skill:target One." and transcript[1]["sent"] == "Two."
    assert transcript[0]["tool_calls"][0]["arguments"]["path"].endswith("/skills/0/target/SKILL.md")


def test_sigint_cancels_and_keeps_the_first_variants_evidence(
    root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, processes_in: Callable[[Path], list[psutil.Process]]
) -> None:
    scratch = _scratch(root.path, monkeypatch)
    # the baseline (no skills) answers at once; the candidate (target listed) stalls
    _setup(root.path, "cancel", [[{"text": "baseline done"}]], prompts=["Go."], type_="description",
           rules=[{"when": {"skill_listed": "target"}, "steps": [{"fault": "stall"}]}])
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--skill-eval", "groups/cancel.json", "-p", "no:cacheprovider"],
                            cwd=root.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    run_dir = root.path / ".skill-eval" / "runs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if list(run_dir.glob("*/groups/*/baseline/run.json")) and processes_in(scratch):
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the candidate never started")
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output.decode()
    res = _result(root.path)
    assert _run(res, "baseline", "cancel")["state"] == "complete"
    assert (res / "groups" / "001-cancel" / "baseline" / "final-response.txt").read_text() == "baseline done"
    assert _run(res, "candidate", "cancel")["state"] == "cancelled"
    assert json.loads((res / "groups" / "001-cancel" / "group.json").read_text())["state"] == "cancelled"
    assert json.loads((res / "result.json").read_text())["state"] == "cancelled"
    assert processes_in(scratch) == []
