"""The guard's configuration cannot be redirected from the subject's environment (issue 11, part 3)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_skill_eval.engine.config import GUARD_PREFIX
from pytest_skill_eval.errors import LaunchRefusedError
from pytest_skill_eval.host.driver import run_json
from pytest_skill_eval.host.install import HostInstallation
from pytest_skill_eval.host.launch import (
    LaunchPlan,
    allowed_roots_config,
    configured_extension,
    write_agent_config,
)
from pytest_skill_eval.host.protocol import build_turn
from pytest_skill_eval.scripted import PROVIDER, ScriptedModelServer

pytestmark = pytest.mark.pi


def test_guard_config_in_the_subject_environment_does_not_open_the_guard(tmp_path: Path, pi_host: HostInstallation,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    workspace, agent_dir, home, outside = (tmp_path / n for n in ("workspace", "agent", "home", "outside"))
    for d in (workspace, outside):
        d.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-SECRET")
    # what a definition's literal environment might point the old guard at: everything allowed
    permissive = tmp_path / "permissive.json"
    permissive.write_text(json.dumps({"workspace": "/", "readRoots": ["/"], "deny": [], "context": []}))
    observer_out = tmp_path / "redirected.jsonl"
    steps = [{"tool_calls": [{"name": "read", "arguments": {"path": str(outside / "secret.txt")}}]},
             {"tool_calls": [{"name": "write", "arguments": {"path": str(outside / "new.txt"), "content": "x"}}]},
             {"tool_calls": [{"name": "write", "arguments": {"path": f"file://{outside}/new.txt", "content": "x"}}]},
             {"text": "done"}]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": steps}]}))
    private = tmp_path / "host-extensions"
    guard = configured_extension("guard.mjs", private, {**allowed_roots_config(workspace, []), "deny": [str(private)], "context": []})
    observer = configured_extension("observer.mjs", private, {"out": str(tmp_path / "observations.jsonl")})
    assert "SKILL_EVAL_GUARD_CONFIG" not in guard.read_text().replace("/*SKILL_EVAL_GUARD_CONFIG*/", "")
    with ScriptedModelServer() as server:
        server.register("env-guard", script)
        write_agent_config(agent_dir, home, {PROVIDER: server.provider_config(["env-guard"])})
        injected = (("SKILL_EVAL_GUARD_CONFIG", str(permissive)), ("SKILL_EVAL_OBSERVER_OUT", str(observer_out)))
        plan = LaunchPlan(host=pi_host, mode="json", workspace=workspace, agent_dir=agent_dir, home=home, skills=(),
                          extensions=(guard, observer), tools=("read", "write"), provider=PROVIDER, model="env-guard",
                          thinking=None, session_dir=None, prompts=("Go.",))
        # the launch layer refuses the names itself (tests/isolation/test_launch_hardening.py);
        # here both of its checks are bypassed, so the variables really reach pi
        with pytest.raises(LaunchRefusedError):
            dataclasses.replace(plan, literal_env=injected)
        own_env = LaunchPlan.env
        monkeypatch.setattr(LaunchPlan, "env", lambda self: {**own_env(self), **dict(injected)})
        assert plan.env()["SKILL_EVAL_GUARD_CONFIG"] == str(permissive)
        run = run_json(plan)
    assert run.outcome == "complete", run.failure
    (span,) = run.spans
    calls = build_turn(span, run.records, (GUARD_PREFIX,)).tool_calls
    assert [c.blocked for c in calls] == [True, True, True]
    assert all(c.result_text is not None and c.result_text.startswith(GUARD_PREFIX) for c in calls)
    assert "OUTSIDE-SECRET" not in run.raw_events().decode()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not observer_out.exists(), "the observer followed the environment"
    assert (tmp_path / "observations.jsonl").exists()


def test_configuration_is_inlined_as_a_literal_that_survives_hostile_strings(tmp_path: Path, pi_host: HostInstallation) -> None:
    import subprocess

    hostile = {"workspace": "/w */ \" ' ` ${x} \\ \u2028 \u2029 </script> \x00", "readRoots": ["\u00e9"], "deny": [], "context": []}
    guard = configured_extension("guard.mjs", tmp_path / "ext", hostile)
    body = guard.read_text()
    start = body.index("const config = ") + len("const config = ")
    literal = body[start:body.index(";\n", start)]
    assert json.loads(literal) == hostile
    # node parses the whole generated module (and its companion) without error
    check = subprocess.run([str(pi_host.node), "--check", str(guard)], check=False, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    probe = subprocess.run([str(pi_host.node), "--input-type=module", "-e", f"console.log(JSON.stringify({literal}))"],
                           check=False, capture_output=True, text=True)
    assert json.loads(probe.stdout) == hostile
