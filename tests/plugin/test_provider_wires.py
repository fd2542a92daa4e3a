"""pi's own Anthropic Messages and OpenAI Responses clients, driven the way a user would.

A group names a built-in provider and one of its catalog models (``anthropic/claude-sonnet-4-5``,
``openai/gpt-4.1``); ``--skill-eval-models`` points that built-in provider at the scripted
stand-in (pi's models.json: "A built-in provider ID changes that provider", and its
``baseUrl`` "also applies to the provider's built-in models"), and the key comes from
``environment.inherit`` or from ``--skill-eval-auth``, never from the models file. The
server records the auth header pi sent; the key must appear nowhere in the evidence.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.scripted.server import Api, ScriptedModelServer

from .helpers import AFTER, BEFORE, QUICKSTART, description_group, only_result, read_json, reads_skill, write_json

pytestmark = pytest.mark.pi

ARGS = ("-p", "no:cacheprovider")


@dataclass(frozen=True)
class Wire:
    api: Api
    provider: str
    model: str
    variable: str
    key_prefix: str

    def header(self, key: str) -> tuple[str, str]:
        if self.api == "anthropic-messages":
            return "x-api-key", key
        return "authorization", f"Bearer {key}"


WIRES = {
    "anthropic-messages": Wire("anthropic-messages", "anthropic", "claude-sonnet-4-5", "ANTHROPIC_API_KEY",
                               "sk-ant-api03-"),
    "openai-responses": Wire("openai-responses", "openai", "gpt-4.1", "OPENAI_API_KEY", "sk-proj-"),
}


@pytest.fixture(params=sorted(WIRES))
def wire(request: pytest.FixtureRequest) -> Wire:
    return WIRES[request.param]


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as started:
        yield started


@pytest.fixture
def key(wire: Wire) -> str:
    return wire.key_prefix + "skill-eval-" + secrets.token_hex(16)


def _models_file(project: Path, server: ScriptedModelServer, wire: Wire) -> Path:
    # only the base URL: the key must come from inherit or the auth file
    return write_json(project / "provider-models.json",
                      {"providers": {wire.provider: {"baseUrl": server.base_url_for(wire.api)}}})


def _credential(route: str, wire: Wire, key: str, group: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Give *key* to the run by *route*; the pytest arguments that go with it."""
    if route == "inherit":
        monkeypatch.setenv(wire.variable, key)
        group["runtime"] = {"host": "pi", "session": False, "extensions": [],
                            "environment": {"literal": {}, "inherit": [wire.variable]}}
        return []
    monkeypatch.delenv(wire.variable, raising=False)
    auth = tmp_path_factory.mktemp("auth") / "auth.json"
    auth.write_text(json.dumps({wire.provider: {"type": "api_key", "key": key}}), encoding="utf-8")
    return [f"--skill-eval-auth={auth}"]


def _assert_key_only_on_the_wire(project: Path, server: ScriptedModelServer, wire: Wire, key: str) -> None:
    records = server.requests()
    assert records, "pi never reached the scripted server"
    name, value = wire.header(key)
    assert {r.api for r in records} == {wire.api}
    assert all(r.headers.get(name) == value for r in records), [r.headers.get(name) for r in records]
    leaks = [str(p) for p in (project / ".skill-eval").rglob("*")
             if p.is_file() and key.encode() in p.read_bytes()]
    assert leaks == [], "the key reached the evidence"


def _run_json(project: Path, gid: str, variant: str = "candidate") -> dict[str, Any]:
    return dict(read_json(only_result(project) / "groups" / f"001-{gid}" / variant / "run.json"))


@pytest.mark.parametrize("route", ["inherit", "auth"])
def test_description_group_grades_through_the_providers_own_client(
        pytester: pytest.Pytester, project: Path, server: ScriptedModelServer, wire: Wire, key: str, route: str,
        monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    server.register(wire.model, QUICKSTART / "scripts" / "release-notes-activation.json")
    group = description_group("improves", BEFORE, AFTER, reads_skill(), model=f"{wire.provider}/{wire.model}")
    extra = _credential(route, wire, key, group, monkeypatch, tmp_path_factory)
    write_json(project / "groups" / "improves.json", group)
    models = _models_file(project, server, wire)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/improves.json", f"--skill-eval-models={models}",
                                           *extra, *ARGS)
    result.assert_outcomes(passed=1)
    assert "fail-to-pass" in result.stdout.str()
    assert key not in result.stdout.str() + result.stderr.str()
    run = _run_json(project, "improves")
    assert run["state"] == "complete"
    assert run["model"]["used"] == [{"provider": wire.provider, "model": wire.model}]
    _assert_key_only_on_the_wire(project, server, wire, key)


def test_body_group_with_tool_calls(pytester: pytest.Pytester, project: Path, server: ScriptedModelServer,
                                    wire: Wire, key: str, monkeypatch: pytest.MonkeyPatch,
                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    server.register(wire.model, QUICKSTART / "scripts" / "release-notes-body.json")
    group = read_json(QUICKSTART / "groups" / "release-notes-body.json")
    group["model"] = {"model": f"{wire.provider}/{wire.model}"}
    extra = _credential("inherit", wire, key, group, monkeypatch, tmp_path_factory)
    write_json(project / "groups" / "release-notes-body.json", group)
    models = _models_file(project, server, wire)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/release-notes-body.json",
                                           f"--skill-eval-models={models}", *extra, *ARGS)
    result.assert_outcomes(passed=1)
    res = only_result(project) / "groups" / "001-release-notes-body" / "candidate"
    turns = read_json(res / "transcript.json")["turns"]
    calls = [(c["name"], c["is_error"]) for t in turns for c in t["tool_calls"]]
    assert calls == [("read", False), ("write", False)]
    assert read_json(res / "workspace" / "result.json")["status"] == "complete"
    # the tool results went back to the model in this wire's own request shape
    last = server.requests()[-1]
    assert last.reply is not None and (last.reply.turn, last.reply.step) == (2, 1)
    _assert_key_only_on_the_wire(project, server, wire, key)


def test_usage_with_cache_and_reasoning_tokens_reaches_the_evidence(
        pytester: pytest.Pytester, project: Path, server: ScriptedModelServer, wire: Wire, key: str,
        monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    script = {"schema": "skill-eval-script/1", "turns": [{"steps": [
        {"text": "Counted.", "usage": {"cache_read": 700, "cache_write": 300, "reasoning": 40}}]}]}
    server.register(wire.model, write_json(project / "usage-script.json", script))
    group = description_group("usage", BEFORE, AFTER, [], model=f"{wire.provider}/{wire.model}")
    extra = _credential("inherit", wire, key, group, monkeypatch, tmp_path_factory)
    write_json(project / "groups" / "usage.json", group)
    models = _models_file(project, server, wire)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/usage.json", f"--skill-eval-models={models}",
                                           "--skill-eval-variant", "candidate", *extra, *ARGS)
    result.assert_outcomes(passed=1)
    (record,) = server.requests()
    assert record.reply is not None
    sent = record.reply.usage
    res = only_result(project) / "groups" / "001-usage" / "candidate"
    for usage in (_run_json(project, "usage")["usage"], read_json(res / "transcript.json")["turns"][0]["usage"]):
        assert (usage["cacheRead"], usage["cacheWrite"], usage["reasoning"]) == (700, 300, 40)
        assert usage["input"] == sent.prompt_tokens and usage["output"] == sent.completion_tokens
        assert usage["output"] >= 40, "reasoning tokens are a part of the output"


FAULT_REASONS = {
    ("anthropic-messages", "rate-limit"): "rate limited by the provider (429), pi does not report when to retry",
    ("openai-responses", "rate-limit"): "rate limited by the provider (429), retry after 20 s",
    ("anthropic-messages", "overloaded"): "provider overloaded (529)",
    ("openai-responses", "overloaded"): "provider overloaded (503)",
    ("anthropic-messages", "http-500"): "provider server error (500)",
    ("openai-responses", "http-500"): "provider server error (500)",
    ("anthropic-messages", "disconnect"): "the provider's stream was cut off before the reply ended",
    ("openai-responses", "disconnect"): "the provider's stream was cut off before the reply ended",
    # a broken stream pi reports in its own words only
    ("anthropic-messages", "malformed"): "model provider error: Could not parse Anthropic SSE event",
    ("openai-responses", "malformed"): "model provider error: Error reading response: malformed server-sent event",
    ("anthropic-messages", "no-finish-reason"): "model provider error: Anthropic stream ended without a stop reason",
    ("openai-responses", "no-finish-reason"): "the provider's stream was cut off before the reply ended",
}


@pytest.mark.parametrize("fault", ["rate-limit", "overloaded", "http-500", "disconnect", "malformed", "no-finish-reason"])
def test_provider_errors_end_the_variant_with_an_actionable_reason(
        pytester: pytest.Pytester, project: Path, server: ScriptedModelServer, wire: Wire, key: str, fault: str,
        monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    script = {"schema": "skill-eval-script/1", "turns": [{"steps": [{"fault": fault}]}]}
    server.register(wire.model, write_json(project / "fault-script.json", script))
    group = description_group("fault", BEFORE, AFTER, [], model=f"{wire.provider}/{wire.model}")
    extra = _credential("auth", wire, key, group, monkeypatch, tmp_path_factory)
    write_json(project / "groups" / "fault.json", group)
    models = _models_file(project, server, wire)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/fault.json", f"--skill-eval-models={models}",
                                           "--skill-eval-variant", "candidate", *extra, *ARGS)
    result.assert_outcomes(errors=1)
    run = _run_json(project, "fault")
    assert run["state"] == "infrastructure-failed"
    assert run["reason"].startswith("turn 1: " + FAULT_REASONS[(wire.api, fault)]), run["reason"]
    assert "model provider error: " in run["reason"], "pi's own words follow the summary"
    assert len(server.requests()) == 1, "one fault is one failed request (pi's retries are off)"
    _assert_key_only_on_the_wire(project, server, wire, key)


#: pi 1.6's built-in rates (US dollars per million tokens) of the catalog models these wires use
BUILT_IN_RATES = {
    "anthropic-messages": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    "openai-responses": {"input": 2, "output": 8, "cacheRead": 0.5, "cacheWrite": 0},
}


def test_cost_comes_from_pi_s_built_in_pricing_and_a_reply_without_usage_is_counted_unreported(
        pytester: pytest.Pytester, project: Path, server: ScriptedModelServer, wire: Wire, key: str,
        monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A catalog model has pi's own rates, so its cost is a real figure; the second message
    sends no usage at all, so it is counted as not reported and adds nothing (not 0)."""
    script = {"schema": "skill-eval-script/1", "turns": [{"steps": [
        {"tool_calls": [{"name": "read", "arguments": {"path": "{{cwd}}/missing.md"}}],
         "usage": {"cache_read": 700, "cache_write": 300}},
        {"text": "Silent.", "usage": False}]}]}
    server.register(wire.model, write_json(project / "usage-script.json", script))
    group = description_group("priced", BEFORE, AFTER, [], model=f"{wire.provider}/{wire.model}")
    extra = _credential("inherit", wire, key, group, monkeypatch, tmp_path_factory)
    write_json(project / "groups" / "priced.json", group)
    models = _models_file(project, server, wire)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/priced.json", f"--skill-eval-models={models}",
                                           "--skill-eval-variant", "candidate", "-v", *extra, *ARGS)
    result.assert_outcomes(passed=1)
    first = server.requests()[0].reply
    assert first is not None
    usage = _run_json(project, "priced")["usage"]
    assert (usage["messages"], usage["messagesWithoutTokens"], usage["messagesWithoutCost"]) == (2, 1, 1)
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"]) == (first.usage.prompt_tokens, 700, 300)
    rates = BUILT_IN_RATES[wire.api]
    expected = sum(usage[k] * rates[k] for k in rates) / 1e6
    assert usage["cost"] == pytest.approx(expected) and usage["cost"] > 0
    summary = read_json(only_result(project) / "result.json")["usage"]
    assert summary["candidate"] == usage and summary["baseline"]["totalTokens"] is None, "baseline not selected"
    result.stdout.fnmatch_lines([
        "    usage baseline   tokens unavailable, cost unavailable",
        f"    usage candidate  tokens {usage['totalTokens']} (1 of 2 messages did not report) (*), "
        f"cost ${usage['cost']:.4f} (1 of 2 messages did not report)",
    ])
