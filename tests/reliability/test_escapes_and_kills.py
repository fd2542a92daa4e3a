"""Reliability: path-escape attempts through the model's tool calls, and a SIGKILLed evaluator.

The definition-side escape corpus lives in tests/definitions (containment tests).
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

SKILL = "---\nname: target\ndescription: Target.\n---\nBody.\n"

# (tool, arguments) the stand-in model tries; every one must come back blocked.
ESCAPES: list[tuple[str, dict[str, Any]]] = [
    ("read", {"path": "/etc/passwd"}),
    ("read", {"path": "/etc/hostname"}),
    ("read", {"path": "/proc/self/environ"}),
    ("read", {"path": "../host-extensions/guard.mjs"}),
    ("read", {"path": "../agent/settings.json"}),
    ("read", {"path": "../agent/models.json"}),
    ("read", {"path": "../home/tmp"}),
    ("read", {"path": "../../baseline/agent/auth.json"}),
    ("read", {"path": "../../../../../../../../../etc/passwd"}),
    ("read", {"path": "./../host-extensions/guard.mjs"}),
    ("read", {"path": "sub/../../host-extensions/guard.mjs"}),
    ("read", {"path": "@/etc/passwd"}),
    ("read", {"path": "@../host-extensions/guard.mjs"}),
    ("read", {"path": "~/.bashrc"}),
    ("read", {"path": "~"}),
    ("read", {"path": "link/secret.txt"}),
    ("read", {"path": "link"}),
    ("read", {"path": ""}),
    ("write", {"path": "/tmp/skill-eval-escape.txt", "content": "x"}),
    ("write", {"path": "../escape.txt", "content": "x"}),
    ("write", {"path": "sub/../../escape.txt", "content": "x"}),
    ("write", {"path": "link/escape.txt", "content": "x"}),
    ("write", {"path": "~/escape.txt", "content": "x"}),
    ("write", {"path": "@../escape.txt", "content": "x"}),
    ("write", {"path": "{{skill:target.location}}", "content": "overwritten"}),
    ("write", {"path": "{{skill:target.dir}}/new.md", "content": "x"}),
    ("edit", {"path": "{{skill:target.location}}", "edits": [{"oldText": "Body", "newText": "Hacked"}]}),
    ("edit", {"path": "../host-extensions/guard.mjs", "edits": [{"oldText": "{", "newText": "["}]}),
    ("edit", {"path": "link/secret.txt", "edits": [{"oldText": "OUT", "newText": "IN"}]}),
]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _group(gid: str, **extra: object) -> dict[str, Any]:
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    doc: dict[str, Any] = {"schema_version": 1, "kind": "group", "id": gid, "type": "body", "input": {"prompt": "Go."},
           "fixture": "fixtures/ws", "tools": ["read", "write", "edit"],
           "variants": {"baseline": variant, "candidate": variant}, "expectations": [], "review_questions": [],
           "model": {"model": f"scripted/{gid}"}}
    doc.update(extra)
    return doc


def test_every_escape_through_tool_calls_is_blocked_and_recorded(pytester: pytest.Pytester, pi_host: object,
                                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    assert len(ESCAPES) >= 25
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("OUTSIDE-SECRET")
    root = pytester.path
    _write(root / "skills" / "target" / "SKILL.md", SKILL)
    _write(root / "fixtures" / "ws" / "inside.txt", "inside")
    _write(root / "fixtures" / "ws" / "sub" / "keep.txt", "keep")
    _write(root / "ext" / "link.mjs", "import fs from 'node:fs';\n"
           f"export default function (pi) {{ pi.on('session_start', async () => {{ fs.symlinkSync({json.dumps(str(outside))}, 'link'); }}); }}\n")
    group = _group("escapes", runtime={"host": "pi", "session": False, "extensions": [{"entry": "ext/link.mjs", "resources": ["ext"]}],
                                       "environment": {"literal": {}, "inherit": []}})
    steps = [{"tool_calls": [{"name": tool, "arguments": args}]} for tool, args in ESCAPES] + [{"text": "done"}]
    _write(root / "groups" / "escapes.json", json.dumps(group))
    _write(root / "groups" / "scripts" / "escapes.json", json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": steps}]}))
    result = pytester.runpytest_subprocess("--skill-eval", "groups/escapes.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    (res,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    for variant in ("baseline", "candidate"):
        vdir = res / "groups" / "001-escapes" / variant
        calls = json.loads((vdir / "transcript.json").read_text())["turns"][0]["tool_calls"]
        assert len(calls) == len(ESCAPES)
        unblocked = [(c["name"], c["arguments"], c["result_text"]) for c in calls if not c["blocked"]]
        assert unblocked == []
        assert json.loads((vdir / "run.json").read_text())["state"] == "complete", "declared resources stayed intact"
        assert "OUTSIDE-SECRET" not in (vdir / "events.jsonl").read_text()
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not Path("/tmp/skill-eval-escape.txt").exists()
    assert (root / "skills" / "target" / "SKILL.md").read_text() == SKILL


def test_sigkilled_evaluator_leaves_parseable_evidence_and_no_orphans(pytester: pytest.Pytester, pi_host: object) -> None:
    root = pytester.path
    _write(root / "skills" / "target" / "SKILL.md", SKILL)
    _write(root / "fixtures" / "ws" / "inside.txt", "inside")
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    group = _group("killed", variants={"baseline": {**variant, "skills": [], "target": None}, "candidate": variant},
                   type="description", fixture=None, tools=["read"])
    script = {"schema": "skill-eval-script/1", "turns": [{"rules": [{"when": {"skill_listed": "target"}, "steps": [{"fault": "stall"}]}],
                                                          "steps": [{"text": "baseline done"}]}]}
    _write(root / "groups" / "killed.json", json.dumps(group))
    _write(root / "groups" / "scripts" / "killed.json", json.dumps(script))
    scratch = root / "scratch"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--skill-eval", "groups/killed.json", "-p", "no:cacheprovider"],
                            cwd=root, env={**os.environ, "TMPDIR": str(scratch)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    pi_pids: list[int] = []
    while time.monotonic() < deadline and not pi_pids:
        if list((root / ".skill-eval" / "runs").glob("*/groups/*/baseline/run.json")):
            pi_pids = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        time.sleep(0.1)
    assert pi_pids, "the candidate's pi never started"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    gone, alive = psutil.wait_procs([psutil.Process(p) for p in pi_pids if psutil.pid_exists(p)], timeout=10)
    assert alive == [], "pi outlived a SIGKILLed evaluator"
    (res,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    for path in res.rglob("*"):
        if path.is_file() and path.suffix == ".json" and "workspace" not in path.parts:
            json.loads(path.read_text())
        assert not path.name.endswith(".tmp"), f"torn temporary file left: {path}"
    baseline = json.loads((res / "groups" / "001-killed" / "baseline" / "run.json").read_text())
    assert baseline["state"] == "complete"
    view = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "view", str(res)], cwd=root, capture_output=True, text=True)
    assert view.returncode == 0, view.stderr
    assert "baseline" in view.stdout
