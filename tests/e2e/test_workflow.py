"""The workflow example suite: multi-turn activation over RPC, declared context, resources."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

WORKFLOW = Path(__file__).resolve().parents[2] / "example_suites" / "workflow"

pytestmark = pytest.mark.pi


def test_workflow_suite_transitions_and_evidence(pytester: pytest.Pytester, pi_host: object) -> None:
    shutil.copytree(WORKFLOW, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".skill-eval"))
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "*suite.json::natural-activation PASSED fail-to-pass*",
        "*suite.json::contract-output PASSED pass-to-pass, fail-to-pass*",
    ])
    (res,) = (p for p in (pytester.path / ".skill-eval" / "runs").iterdir() if p.is_dir())
    activation = res / "groups" / "001-natural-activation"
    for variant in ("baseline", "candidate"):
        run = json.loads((activation / variant / "run.json").read_text())
        assert run["mode"] == "rpc", "an ordered multi-turn description group runs in one RPC process"
        turns = json.loads((activation / variant / "transcript.json").read_text())["turns"]
        assert [t["sent"] for t in turns] == [t["prompt"] for t in turns], "description groups are never delivered explicitly"
    contract = res / "groups" / "002-contract-output"
    assert json.loads((contract / "baseline" / "run.json").read_text())["registered_context"] == []
    assert len(json.loads((contract / "candidate" / "run.json").read_text())["registered_context"]) == 1
    observed = json.loads((contract / "candidate" / "context-observations.json").read_text())
    assert [o["request"] for o in observed] == [1, 2, 3]
    assert all("Every output file is JSON" in o["system_prompt"] for o in observed)
    assert json.loads((contract / "candidate" / "workspace" / "rollback.json").read_text())["status"] == "planned"
    assert (contract / "baseline" / "workspace" / "rollback.md").exists()
