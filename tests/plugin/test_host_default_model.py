"""An omitted ``model`` is pi's own default, and a missing credential names the fix here.

Real pi in both modes. The scripted stand-in serves a custom provider from
``--skill-eval-models``, so pi's own model choice can be observed without any key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .helpers import (
    AFTER,
    BEFORE,
    description_group,
    only_result,
    read_json,
    write_json,
)

pytestmark = pytest.mark.pi

ARGS = ("-p", "no:cacheprovider")
SCRIPT: dict[str, Any] = {"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "answered by the host's default"}]}]}


def _body(group_id: str, model: str | None) -> dict[str, Any]:
    group = description_group(group_id, BEFORE, AFTER, [])
    group.update(type="body", input={"turns": ["First.", "Second."]}, tools=["read"])
    if model is None:
        del group["model"]
    else:
        group["model"] = {"model": model}
    return group


def _description(group_id: str, model: str | None) -> dict[str, Any]:
    group = description_group(group_id, BEFORE, AFTER, [])
    if model is None:
        del group["model"]
    else:
        group["model"] = {"model": model}
    return group


@pytest.mark.parametrize("build", [_description, _body], ids=["json-mode", "rpc-mode"])
def test_missing_credential_names_the_fix_that_works_here(pytester: pytest.Pytester, project: Path, build: Any) -> None:
    write_json(project / "groups" / "paid.json", build("paid", "anthropic/claude-sonnet-4-5"))
    result = pytester.runpytest_subprocess("--skill-eval", "groups/paid.json", *ARGS)
    result.assert_outcomes(errors=1)
    run = read_json(only_result(project) / "groups" / "001-paid" / "candidate" / "run.json")
    reason = run["reason"]
    assert "No API key found for anthropic" in reason
    assert "/login" not in reason
    assert "runtime.environment.inherit" in reason and "ANTHROPIC_API_KEY" in reason and "--skill-eval-auth" in reason
    assert "/login" not in result.stdout.str()


@pytest.mark.parametrize("build", [_description, _body], ids=["json-mode", "rpc-mode"])
def test_omitted_model_is_the_hosts_default_and_the_run_records_what_pi_used(
        pytester: pytest.Pytester, project: Path, build: Any) -> None:
    from pytest_skill_eval.scripted.server import ScriptedModelServer

    write_json(project / "local-script.json", {**SCRIPT, "turns": SCRIPT["turns"] * 2})
    with ScriptedModelServer() as server:
        server.register("local-model", project / "local-script.json")
        write_json(project / "my-models.json", {"providers": {"local": server.provider_config(["local-model"])}})
        write_json(project / "groups" / "default.json", build("default", None))
        result = pytester.runpytest_subprocess("--skill-eval", "groups/default.json", "--skill-eval-models", "my-models.json",
                                               *ARGS)
        result.assert_outcomes(passed=1)
        assert server.requests(), "pi chose the only provider with a credential"
    run = read_json(only_result(project) / "groups" / "001-default" / "candidate" / "run.json")
    assert run["model"]["declared"] is None
    assert (run["model"]["provider"], run["model"]["model"]) == ("local", "local-model")
    assert "--provider" not in run["argv"] and "--model" not in run["argv"]


def test_omitted_model_without_any_credential(pytester: pytest.Pytester, project: Path) -> None:
    write_json(project / "groups" / "nomodel.json", _description("nomodel", None))
    # a script named after the group exists: it must not be used as a silent stand-in
    write_json(project / "groups" / "scripts" / "nomodel.json", SCRIPT)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/nomodel.json", *ARGS)
    result.assert_outcomes(errors=1)
    run = read_json(only_result(project) / "groups" / "001-nomodel" / "candidate" / "run.json")
    assert run["state"] != "complete"
    assert "No models available" in run["reason"] and "/login" not in run["reason"]
    assert "runtime.environment.inherit" in run["reason"] and "--skill-eval-auth" in run["reason"]
    assert run["model"]["declared"] is None and run["model"]["provider"] is None


def test_plan_says_what_an_omitted_model_means(pytester: pytest.Pytester, project: Path) -> None:
    write_json(project / "groups" / "nomodel.json", _description("nomodel", None))
    result = pytester.runpytest_subprocess("--skill-eval", "groups/nomodel.json", "--collect-only", "-v", *ARGS)
    assert "model pi's default (omitted)" in result.stdout.str()


def test_example_suites_name_the_scripted_model_explicitly() -> None:
    examples = Path(__file__).resolve().parents[2] / "example_suites"
    groups = [p for p in examples.rglob("groups/*.json")]
    assert groups
    for path in groups:
        model = json.loads(path.read_text())["model"]["model"]
        assert model.startswith("scripted/"), path
