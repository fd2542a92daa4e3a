"""A FIFO in the workspace is neither opened by the subject's tools nor by evidence capture.

Only trusted bundle code can make one (the subject's read/write/edit cannot), but reading
one blocks forever, so the guard refuses it and the snapshot leaves it out: a run with a
FIFO in its workspace completes, its evidence persists, and the counterpart still runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .test_isolation import (
    SKILL,
    _group,
    _run,
    _run_json,
    _script,
    _transcript,
    _variant,
    _write,
)

pytestmark = pytest.mark.pi


@pytest.fixture
def root(pytester: pytest.Pytester, pi_host: object) -> pytest.Pytester:
    _write(pytester.path / "skills" / "target" / "SKILL.md", SKILL.format(name="target", description="Target skill."))
    return pytester


def test_a_fifo_in_the_workspace_is_refused_and_left_out_of_evidence(root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # an inherited secret makes every snapshot go through the redacting copy
    monkeypatch.setenv("EVAL_FIFO_SECRET", "fifo-secret-value-1234")
    _write(root.path / "ext" / "fifo.mjs",
           "import { execFileSync } from 'node:child_process';\n"
           "export default function (pi) { pi.on('session_start', async () => {"
           " execFileSync('mkfifo', ['pipe']); }); }\n")
    _write(root.path / "fixtures" / "ws" / "plain.txt", "PLAIN")
    group = _group("fifo", prompts=["Go."], tools=["read", "write", "edit"], fixture="fixtures/ws",
                   baseline=_variant(["skills/target"], 0), candidate=_variant(["skills/target"], 0),
                   runtime={"host": "pi", "session": False, "extensions": [{"entry": "ext/fifo.mjs", "resources": ["ext"]}],
                            "environment": {"literal": {}, "inherit": ["EVAL_FIFO_SECRET"]}})
    calls: list[dict[str, Any]] = [{"tool_calls": [{"name": "read", "arguments": {"path": "pipe"}}]},
                                   {"tool_calls": [{"name": "write", "arguments": {"path": "pipe", "content": "x"}}]},
                                   {"tool_calls": [{"name": "read", "arguments": {"path": "plain.txt"}}]},
                                   {"text": "done"}]
    result, gdir = _run(root, group, _script(calls), "--skill-eval-stall-timeout=20")
    result.assert_outcomes(passed=1)
    for variant in ("baseline", "candidate"):
        run = _run_json(gdir, variant)
        assert run["state"] == "complete", run["reason"]
        blocked = [c["blocked"] for c in _transcript(gdir, variant)[0]["tool_calls"]]
        assert blocked == [True, True, False]
        reasons = [c["result_text"] for c in _transcript(gdir, variant)[0]["tool_calls"][:2]]
        assert all(r.startswith("skill-eval guard blocked") and "a FIFO" in r for r in reasons), reasons
        snapshot = gdir / variant / "workspace"
        assert sorted(p.name for p in snapshot.iterdir()) == ["plain.txt"]
    assert json.loads((gdir / "grade.json").read_text())["state"] != "grade-error"
