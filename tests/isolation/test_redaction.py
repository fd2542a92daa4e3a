"""Redaction end to end: real pi, the scripted model echoing secrets, a SIGKILL mid-turn.

The whole evidence tree and the scratch area must hold no copy of any inherited value or
auth-file secret: not raw, not JSON-escaped (``\\"``, ``\\\\``, ``\\n``, ``\\uXXXX``), not
split across streamed deltas; and every JSON file still parses.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

pytestmark = pytest.mark.pi

SKILL = "---\nname: target\ndescription: Target skill.\n---\n# target\n\nBody of target.\n"
QUOTED = 'quote"and\\backslash-4711'
MULTILINE = "first line\nsecond-line-ünïcødé-секрет"
SPLIT = "TOKENVALUE-0123456789-abcdefghijklmnopqrstuvwxyz"  # longer than one 24-character delta
AUTH = "auth-key-Zq9!xV7#redact-me"
SECRETS = {"EVAL_RED_QUOTED": QUOTED, "EVAL_RED_MULTILINE": MULTILINE, "EVAL_RED_SPLIT": SPLIT}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _spellings(value: str) -> list[bytes]:
    """Raw, and JSON-escaped once and twice (JSON text inside a JSON string), ASCII-only or not."""
    forms = {value}
    for _ in range(2):
        forms |= {json.dumps(f, ensure_ascii=a)[1:-1] for f in forms for a in (False, True)}
    return sorted(f.encode("utf-8") for f in forms)


def _leaks(root: Path, values: list[str]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path.relative_to(root)}: {form!r}" for v in values for form in _spellings(v) if form in data]
    return found


def _assert_json_parses(root: Path) -> None:
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        if path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
        elif path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").splitlines():
                json.loads(line)


def _joined_deltas(events: Path) -> str:
    """Every streamed delta of the run, concatenated per block kind and content index."""
    blocks: dict[tuple[str, Any], str] = {}
    for line in events.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        event = data.get("assistantMessageEvent") if data.get("type") == "message_update" else None
        if isinstance(event, dict) and str(event.get("type", "")).endswith("_delta"):
            key = (event["type"], event.get("contentIndex"))
            blocks[key] = blocks.get(key, "") + str(event.get("delta") or "")
    return "\n".join(blocks.values())


def _group(gid: str, *, inherit: list[str], prompts: list[str], expectations: list[dict[str, Any]]) -> dict[str, Any]:
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    return {
        "schema_version": 1, "kind": "group", "id": gid, "type": "body",
        "input": {"turns": prompts} if len(prompts) > 1 else {"prompt": prompts[0]},
        "fixture": "fixtures/ws", "tools": ["read", "write"],
        "variants": {"baseline": variant, "candidate": variant},
        "expectations": expectations, "review_questions": [], "model": {"model": f"scripted/{gid}"},
        "runtime": {"host": "pi", "session": True, "extensions": [],
                    "environment": {"literal": {"PROBE_MODE": "on"}, "inherit": inherit}},
    }


def _setup(root: Path, group: dict[str, Any], script: dict[str, Any]) -> None:
    _write(root / "skills" / "target" / "SKILL.md", SKILL)
    _write(root / "fixtures" / "ws" / "config.txt", f"token={QUOTED}\n")
    _write(root / "groups" / f"{group['id']}.json", json.dumps(group))
    _write(root / "groups" / "scripts" / f"{group['id']}.json", json.dumps(script))
    _write(root / "auth.json", json.dumps({"scripted-unused": {"type": "api_key", "key": AUTH}}))


ECHO = f"Echo {QUOTED} and {MULTILINE} and {SPLIT} done."
OUT = {"token": SPLIT, "quoted": QUOTED, "status": "complete"}


@pytest.fixture
def scratch(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    tmp = pytester.path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return tmp


def test_echoed_secrets_never_reach_evidence_and_json_stays_valid(pytester: pytest.Pytester, pi_host: object,
                                                                  scratch: Path) -> None:
    root = pytester.path
    expectations: list[dict[str, Any]] = [
        {"id": "status", "kind": "json", "variant": "candidate", "path": "out.json", "expect": "field-equals",
         "pointer": "/status", "value": "complete"},
        {"id": "token-kept", "kind": "file-text", "variant": "candidate", "path": "out.json", "turn": 1,
         "expect": "contains", "value": "TOKENVALUE"},
    ]
    group = _group("echo", inherit=sorted(SECRETS), prompts=[f"Write {SPLIT} to out.json."], expectations=expectations)
    script = {"schema": "skill-eval-script/1", "turns": [{"steps": [
        {"text": ECHO, "tool_calls": [{"name": "write", "arguments": {"path": "out.json", "content": json.dumps(OUT)}},
                                      {"name": "read", "arguments": {"path": "config.txt"}}]},
        {"text": ECHO},
    ]}]}
    _setup(root, group, script)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/echo.json", "-p", "no:cacheprovider",
                                           "--skill-eval-auth", str(root / "auth.json"))
    evidence_root = root / ".skill-eval"
    (res,) = (p for p in (evidence_root / "runs").iterdir() if p.is_dir())
    gdir = res / "groups" / "001-echo"
    values = [*SECRETS.values(), AUTH]
    assert _leaks(evidence_root, values) == []
    assert _leaks(scratch, values) == []
    _assert_json_parses(evidence_root)
    for variant in ("baseline", "candidate"):
        joined = _joined_deltas(gdir / variant / "events.jsonl")
        assert "<redacted>" in joined
        for value in values:
            assert value not in joined and json.dumps(value)[1:-1] not in joined
    run = json.loads((gdir / "candidate" / "run.json").read_text())
    assert run["state"] == "complete"
    assert run["redactions"]["workspace/out.json"] == 2
    assert run["redactions"]["turns/1/workspace/out.json"] == 2
    assert run["redactions"]["workspace-initial/config.txt"] == 1
    assert run["redactions"]["workspace/config.txt"] == 1
    assert run["redactions"]["events.jsonl"] > 0
    assert json.loads((gdir / "candidate" / "workspace" / "out.json").read_text())["status"] == "complete"
    grade = json.loads((gdir / "grade.json").read_text())
    by_id = {e["id"]: e for e in grade["expectations"]}
    assert by_id["status"]["status"] == "pass", by_id["status"]
    assert by_id["token-kept"]["status"] == "fail"
    assert "redacted" in by_id["token-kept"]["observed"]
    assert "turns/1/workspace/out.json" in by_id["token-kept"]["observed"]
    assert grade["state"] != "grade-error"
    out = result.stdout.str() + result.stderr.str()
    assert all(v not in out for v in values)
    assert "redacted" in out  # the failing expectation says its file was redacted


def test_short_inherited_value_makes_the_variant_invalid_before_the_subject_starts(
        pytester: pytest.Pytester, pi_host: object, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_FLAG", "true")
    group = _group("short", inherit=["AUDIT_FLAG"], prompts=["Go."], expectations=[])
    _setup(pytester.path, group, {"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "ok"}]}]})
    result = pytester.runpytest_subprocess("--skill-eval", "groups/short.json", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    (res,) = (p for p in (pytester.path / ".skill-eval" / "runs").iterdir() if p.is_dir())
    _assert_json_parses(res)
    run = json.loads((res / "groups" / "001-short" / "candidate" / "run.json").read_text())
    assert run["state"] == "invalid"
    assert "AUDIT_FLAG" in run["reason"] and "environment.literal" in run["reason"] and "8" in run["reason"]
    assert run["runtime"]["environment"]["inherit"] == ["AUDIT_FLAG"]
    assert not (res / "groups" / "001-short" / "candidate" / "events.jsonl").exists()


def test_sigkill_mid_turn_leaves_no_secret_and_the_next_run_removes_stale_scratch(
        pytester: pytest.Pytester, pi_host: object, scratch: Path) -> None:
    root = pytester.path
    expectations = [{"id": "t1", "kind": "path", "variant": "candidate", "path": "out.json", "turn": 1, "expect": "exists"}]
    group = _group("killed", inherit=sorted(SECRETS), prompts=["One.", "Two."], expectations=expectations)
    script = {"schema": "skill-eval-script/1", "turns": [
        {"steps": [{"text": ECHO, "tool_calls": [{"name": "write", "arguments": {"path": "out.json", "content": json.dumps(OUT)}}]},
                   {"text": ECHO}]},
        {"steps": [{"fault": "stall"}]},
    ]}
    _setup(root, group, script)
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--skill-eval", "groups/killed.json", "-p", "no:cacheprovider",
                             "--skill-eval-variant", "candidate", "--skill-eval-auth", str(root / "auth.json")],
                            cwd=root, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((root / ".skill-eval" / "runs").glob("*/groups/*/candidate/turns/1/workspace")):
        time.sleep(0.1)
    assert list((root / ".skill-eval" / "runs").glob("*/groups/*/candidate/turns/1/workspace")), "turn 1 never settled"
    pi_pids = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    psutil.wait_procs([psutil.Process(p) for p in pi_pids if psutil.pid_exists(p)], timeout=10)
    evidence_root = root / ".skill-eval"
    values = [*SECRETS.values(), AUTH]
    assert _leaks(evidence_root, values) == []
    scratch_root = scratch / f"skill-eval-{os.getuid()}"
    assert oct(scratch_root.stat().st_mode & 0o777) == "0o700"
    left = [p for p in scratch_root.iterdir() if p.name.startswith(f"run-{proc.pid}-")]
    assert left, "the killed evaluator left its scratch behind (precondition)"
    assert (left[0] / "candidate" / "agent" / "auth.json").exists()

    # a later session removes the scratch whose owner is dead
    group2 = _group("later", inherit=[], prompts=["Go."], expectations=[])
    _write(root / "groups" / "later.json", json.dumps(group2))
    _write(root / "groups" / "scripts" / "later.json",
           json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "ok"}]}]}))
    later = pytester.runpytest_subprocess("--skill-eval", "groups/later.json", "-p", "no:cacheprovider")
    later.assert_outcomes(passed=1)
    assert not left[0].exists()
    assert _leaks(scratch, values) == []
    for path in evidence_root.rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))


def test_host_crash_mid_turn_keeps_partial_evidence_redacted(pytester: pytest.Pytester, pi_host: object,
                                                             scratch: Path) -> None:
    root = pytester.path
    _write(root / "ext" / "crash.mjs",
           "export default function (pi) { pi.on('tool_call', async (event) => {\n"
           "  if (event.toolName === 'read') { console.error('dying with ' + process.env.EVAL_RED_SPLIT); process.exit(7); }\n"
           "}); }\n")
    expectations = [{"id": "t1", "kind": "file-text", "variant": "candidate", "path": "out.json", "turn": 1,
                     "expect": "contains", "value": "complete"}]
    group = _group("crash", inherit=sorted(SECRETS), prompts=["One.", "Two."], expectations=expectations)
    group["runtime"]["extensions"] = [{"entry": "ext/crash.mjs", "resources": ["ext"]}]
    script = {"schema": "skill-eval-script/1", "turns": [
        {"steps": [{"text": ECHO, "tool_calls": [{"name": "write", "arguments": {"path": "out.json", "content": json.dumps(OUT)}}]},
                   {"text": ECHO}]},
        {"steps": [{"text": ECHO, "tool_calls": [{"name": "read", "arguments": {"path": "config.txt"}}]}, {"text": "never"}]},
    ]}
    _setup(root, group, script)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/crash.json", "-p", "no:cacheprovider",
                                           "--skill-eval-variant", "candidate")
    result.assert_outcomes(errors=1)
    evidence_root = root / ".skill-eval"
    (res,) = (p for p in (evidence_root / "runs").iterdir() if p.is_dir())
    run = json.loads((res / "groups" / "001-crash" / "candidate" / "run.json").read_text())
    assert run["state"] == "infrastructure-failed" and run["returncode"] == 7
    assert "dying with <redacted>" in (res / "groups" / "001-crash" / "candidate" / "stderr.txt").read_text()
    values = [*SECRETS.values(), AUTH]
    assert _leaks(evidence_root, values) == []
    assert _leaks(scratch, values) == []
    _assert_json_parses(evidence_root)
    joined = _joined_deltas(res / "groups" / "001-crash" / "candidate" / "events.jsonl")
    assert all(v not in joined for v in values)
