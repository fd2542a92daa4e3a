"""The Anthropic Messages and OpenAI Responses wire modules (pure), and the server's routing.

Requests are in the shapes pi 1.6 sends (pi-ai ``anthropic-messages.js`` ``convertMessages``,
``openai-responses-shared.js`` ``convertResponsesMessages``); replies are read back the way
pi's clients read them: events by type, text joined from deltas, tool arguments from
``input_json_delta`` / ``function_call_arguments.delta``, usage from the final event.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from pytest_skill_eval.scripted import anthropic_messages, chat_completions, openai_responses
from pytest_skill_eval.scripted.format import Fault, parse_script
from pytest_skill_eval.scripted.replies import RETRY_AFTER_SECONDS, Reply, plan_reply
from pytest_skill_eval.scripted.server import ScriptedModelServer
from pytest_skill_eval.scripted.wires import APIS, PATHS, WIRES, Wire

SYSTEM = (
    "<available_skills>\n  <skill>\n    <name>demo</name>\n    <description>Demo task.</description>\n"
    "    <location>/skills/demo/SKILL.md</location>\n  </skill>\n</available_skills>\n\n<cwd>\n/ws\n</cwd>"
)
SCRIPT = parse_script({"schema": "skill-eval-script/1", "turns": [
    {"steps": [
        {"text": "Reading the skill first, as it says.", "tool_calls": [
            {"name": "read", "arguments": {"path": "{{skill:demo.location}}"}},
            {"name": "read", "arguments": {"path": "{{cwd}}/notes.txt"}}]},
        {"text": "Both read.", "usage": {"cache_read": 70, "cache_write": 30, "reasoning": 4}},
    ]},
    {"rules": [{"when": {"last_tool_result_contains": "NOTES"}, "steps": [{"text": "never at step 0"}]}],
     "steps": [{"text": "Second turn."}]},
]}, "wires.json")


def anthropic_request(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 100, "stream": True,
            "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
            "messages": list(messages)}


def responses_request(*items: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "stream": True, "store": False,
            "input": [{"role": "system", "content": SYSTEM}, *items]}


ANTHROPIC_TOOL_ROUND = (
    {"role": "user", "content": [{"type": "text", "text": "Run the demo."}]},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "call_1_0_0", "name": "read", "input": {"path": "/skills/demo/SKILL.md"}},
        {"type": "tool_use", "id": "call_1_0_1", "name": "read", "input": {"path": "/ws/notes.txt"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_1_0_0", "content": [{"type": "text", "text": "SKILL"}],
         "is_error": False},
        {"type": "tool_result", "tool_use_id": "call_1_0_1", "content": [{"type": "text", "text": "NOTES"}],
         "is_error": False}]},
)
RESPONSES_TOOL_ROUND = (
    {"role": "user", "content": [{"type": "input_text", "text": "Run the demo."}]},
    {"type": "message", "role": "assistant", "status": "completed", "id": "msg_1",
     "content": [{"type": "output_text", "text": "Reading.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1_0_0", "call_id": "call_1_0_0", "name": "read", "arguments": "{}"},
    {"type": "function_call", "id": "fc_1_0_1", "call_id": "call_1_0_1", "name": "read", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_1_0_0", "output": "SKILL"},
    {"type": "function_call_output", "call_id": "call_1_0_1",
     "output": [{"type": "input_text", "text": "NOTES"}]},
)


@pytest.mark.parametrize(("read", "body", "expected"), [
    (anthropic_messages.read_request, anthropic_request(ANTHROPIC_TOOL_ROUND[0]), (1, 0, (), ())),
    (anthropic_messages.read_request, anthropic_request(*ANTHROPIC_TOOL_ROUND), (1, 1, ("SKILL", "NOTES"),
                                                                               ("SKILL", "NOTES"))),
    (anthropic_messages.read_request,
     anthropic_request(*ANTHROPIC_TOOL_ROUND, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                       {"role": "user", "content": "Again."}),
     (2, 0, ("SKILL", "NOTES"), ())),
    (openai_responses.read_request, responses_request(RESPONSES_TOOL_ROUND[0]), (1, 0, (), ())),
    (openai_responses.read_request, responses_request(*RESPONSES_TOOL_ROUND), (1, 1, ("SKILL", "NOTES"),
                                                                              ("SKILL", "NOTES"))),
    (openai_responses.read_request,
     responses_request(*RESPONSES_TOOL_ROUND, {"type": "message", "role": "assistant", "content": []},
                       {"role": "user", "content": [{"type": "input_text", "text": "Again."}]}),
     (2, 0, ("SKILL", "NOTES"), ())),
], ids=["anthropic-first", "anthropic-tool-round", "anthropic-turn-2", "responses-first", "responses-tool-round",
        "responses-turn-2"])
def test_requests_read_into_the_same_conversation(read: Any, body: dict[str, Any],
                                                  expected: tuple[int, int, tuple[str, ...], tuple[str, ...]]) -> None:
    conversation = read(body)
    assert (conversation.turn, conversation.step, conversation.tool_results,
            conversation.latest_tool_results) == expected
    assert conversation.cwd == "/ws"
    assert [s.location for s in conversation.skills] == ["/skills/demo/SKILL.md"]
    assert conversation.user_messages[0] == "Run the demo."


def test_system_prompt_and_instructions() -> None:
    plain = anthropic_messages.read_request({"model": "m", "system": "plain", "messages": []})
    assert plain.system_prompt == "plain" and plain.turn == 0
    both = openai_responses.read_request({"model": "m", "instructions": "one",
                                          "input": [{"role": "developer", "content": "two"}]})
    assert both.system_prompt == "one\n\ntwo"


def test_requests_the_wires_cannot_answer() -> None:
    assert anthropic_messages.request_problem({"model": "m", "messages": []}) is None
    assert anthropic_messages.request_problem({"model": "m", "input": []}) is not None
    assert openai_responses.request_problem({"model": "m", "input": []}) is None
    assert openai_responses.request_problem([]) is not None


def _reply(read: Any, body: dict[str, Any]) -> Reply:
    return plan_reply(SCRIPT, body, read(body))


def _anthropic_view(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """What pi's client makes of the events: text, tool calls, stop reason, usage."""
    assert [name for name, payload in events] == [payload["type"] for name, payload in events]
    assert events[0][0] == "message_start" and events[-1][0] == "message_stop"
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    stop = None
    for name, payload in events:
        if name == "message_start":
            usage.update(payload["message"]["usage"])
        elif name == "content_block_start":
            blocks[payload["index"]] = {**payload["content_block"], "json": ""}
        elif name == "content_block_delta":
            delta = payload["delta"]
            block = blocks[payload["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                assert delta["type"] == "input_json_delta"
                block["json"] += delta["partial_json"]
        elif name == "message_delta":
            stop = payload["delta"]["stop_reason"]
            usage.update(payload["usage"])
    return {"blocks": [blocks[i] for i in sorted(blocks)], "stop": stop, "usage": usage}


def test_anthropic_stream_of_text_and_parallel_tool_calls() -> None:
    reply = _reply(anthropic_messages.read_request, anthropic_request(ANTHROPIC_TOOL_ROUND[0]))
    view = _anthropic_view(anthropic_messages.stream_events(reply, "m", "msg_1"))
    assert view["stop"] == "tool_use"
    text, *calls = view["blocks"]
    assert (text["type"], text["text"]) == ("text", "Reading the skill first, as it says.")
    assert [(c["type"], c["id"], c["name"], json.loads(c["json"])) for c in calls] == [
        ("tool_use", "call_1_0_0", "read", {"path": "/skills/demo/SKILL.md"}),
        ("tool_use", "call_1_0_1", "read", {"path": "/ws/notes.txt"}),
    ]
    assert len([e for e in anthropic_messages.stream_events(reply, "m", "msg_1")
                if e[0] == "content_block_delta"]) > 3, "text and arguments arrive in several deltas"


def test_anthropic_usage_carries_cache_and_reasoning_tokens() -> None:
    reply = _reply(anthropic_messages.read_request, anthropic_request(*ANTHROPIC_TOOL_ROUND))
    view = _anthropic_view(anthropic_messages.stream_events(reply, "m", "msg_2"))
    assert view["stop"] == "end_turn" and view["blocks"][0]["text"] == "Both read."
    usage = view["usage"]
    assert (usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]) == (70, 30)
    assert usage["output_tokens_details"] == {"thinking_tokens": 4}
    assert usage["input_tokens"] == reply.usage.prompt_tokens
    assert usage["output_tokens"] == len("Both read.") // 4 + 4


def _responses_view(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    text, arguments, done = "", dict[str, str](), list[dict[str, Any]]()
    for event in events:
        if event["type"] == "response.output_text.delta":
            text += event["delta"]
        elif event["type"] == "response.function_call_arguments.delta":
            arguments[event["item_id"]] = arguments.get(event["item_id"], "") + event["delta"]
        elif event["type"] == "response.output_item.done":
            done.append(event["item"])
    return {"text": text, "arguments": arguments, "done": done, "final": events[-1]["response"]}


def test_responses_stream_of_text_and_parallel_tool_calls() -> None:
    reply = _reply(openai_responses.read_request, responses_request(RESPONSES_TOOL_ROUND[0]))
    view = _responses_view(openai_responses.stream_events(reply, "m", "resp_1"))
    assert view["text"] == "Reading the skill first, as it says."
    assert {k: json.loads(v) for k, v in view["arguments"].items()} == {
        "fc_1_0_0": {"path": "/skills/demo/SKILL.md"}, "fc_1_0_1": {"path": "/ws/notes.txt"}}
    message, *calls = view["done"]
    assert message["content"][0]["text"] == view["text"]
    assert [(c["type"], c["call_id"], c["id"], c["status"]) for c in calls] == [
        ("function_call", "call_1_0_0", "fc_1_0_0", "completed"), ("function_call", "call_1_0_1", "fc_1_0_1", "completed")]
    assert view["final"]["status"] == "completed" and view["final"]["output"] == view["done"]


def test_responses_usage_counts_cached_input_and_reasoning_output() -> None:
    reply = _reply(openai_responses.read_request, responses_request(*RESPONSES_TOOL_ROUND))
    usage = _responses_view(openai_responses.stream_events(reply, "m", "resp_2"))["final"]["usage"]
    # OpenAI counts cached tokens inside input_tokens; pi subtracts them again
    assert usage["input_tokens"] == reply.usage.prompt_tokens + 70 + 30
    assert usage["input_tokens_details"] == {"cached_tokens": 70, "cache_write_tokens": 30}
    assert usage["output_tokens_details"] == {"reasoning_tokens": 4}
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_a_reply_without_extra_usage_reports_zeros() -> None:
    reply = _reply(openai_responses.read_request, responses_request(RESPONSES_TOOL_ROUND[0]))
    assert (reply.usage.cache_read, reply.usage.cache_write, reply.usage.reasoning) == (0, 0, 0)
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


@pytest.mark.parametrize(("wire", "fault", "status", "kind"), [
    (anthropic_messages, "rate-limit", 429, "rate_limit_error"),
    (anthropic_messages, "overloaded", 529, "overloaded_error"),
    (anthropic_messages, "http-500", 500, "api_error"),
    (openai_responses, "rate-limit", 429, "requests"),
    (openai_responses, "overloaded", 503, "server_error"),
    (openai_responses, "http-500", 500, "server_error"),
    (chat_completions, "rate-limit", 429, "requests"),
    (chat_completions, "overloaded", 503, "server_error"),
])
def test_fault_errors_are_the_apis_own(wire: Any, fault: str, status: int, kind: str) -> None:
    got_status, body = wire.fault_error(fault)
    assert got_status == status
    error = body["error"]
    assert error["type"] == kind and error["message"].startswith("[scripted stand-in] scripted fault " + fault)
    if wire is anthropic_messages:
        assert body["type"] == "error"
    else:
        assert set(error) == {"message", "type", "param", "code"}
    if wire is openai_responses and fault == "rate-limit":
        assert f"Please try again in {RETRY_AFTER_SECONDS}s." in error["message"]


def test_broken_streams_stop_short() -> None:
    reply = _reply(anthropic_messages.read_request, anthropic_request(ANTHROPIC_TOOL_ROUND[0]))
    broken = anthropic_messages.broken_stream(reply, "m", "msg_3")
    assert [name for name, _ in broken["disconnect"]] == ["message_start", "content_block_start", "content_block_delta"]
    assert [p["delta"]["stop_reason"] for name, p in broken["no-finish-reason"] if name == "message_delta"] == [None]
    responses = openai_responses.broken_stream(reply, "m", "resp_3")
    assert all(e["type"] != "response.completed" for kind in responses.values() for e in kind)


# ------------------------------------------------------------------- over HTTP


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedModelServer]:
    (tmp_path / "s.json").write_text(json.dumps({"schema": "skill-eval-script/1", "turns": [
        {"steps": [{"text": "hello"}]}]}))
    (tmp_path / "rl.json").write_text(json.dumps({"schema": "skill-eval-script/1", "turns": [
        {"steps": [{"fault": "rate-limit"}]}]}))
    with ScriptedModelServer(api="anthropic-messages") as running:
        running.register("s", tmp_path / "s.json")
        running.register("rl", tmp_path / "rl.json")
        yield running


def _post(url: str, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **headers})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def test_the_path_picks_the_wire_and_the_headers_are_recorded(server: ScriptedModelServer) -> None:
    root = server.base_url_for("anthropic-messages")
    status, headers, data = _post(root, "/v1/messages?beta=true", anthropic_request(
        {"role": "user", "content": "hi"}) | {"model": "s"}, {"x-api-key": "k-1"})
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert b"event: message_start\n" in data and b'"text": "hello"' in data
    status, _, data = _post(root, "/v1/responses", responses_request(
        {"role": "user", "content": "hi"}) | {"model": "s"}, {"authorization": "Bearer k-2"})
    assert status == 200 and b"event: response.completed\n" in data
    first, second = server.requests()
    assert (first.api, first.headers["x-api-key"]) == ("anthropic-messages", "k-1")
    assert (second.api, second.headers["authorization"]) == ("openai-responses", "Bearer k-2")
    assert first.reply is not None and first.reply.text == "hello"


def test_rate_limit_sends_retry_after_and_anthropics_error_body(server: ScriptedModelServer) -> None:
    status, headers, data = _post(server.base_url_for("anthropic-messages"), "/v1/messages",
                                  anthropic_request({"role": "user", "content": "hi"}) | {"model": "rl"}, {})
    assert (status, headers["retry-after"]) == (429, str(RETRY_AFTER_SECONDS))
    assert json.loads(data)["error"]["type"] == "rate_limit_error"
    assert server.requests()[-1].status == 429


def test_an_unknown_model_is_refused_in_the_wires_words(server: ScriptedModelServer) -> None:
    status, _, data = _post(server.base_url_for("anthropic-messages"), "/v1/messages",
                            anthropic_request() | {"model": "nope"}, {})
    assert status == 404 and json.loads(data)["error"]["type"] == "not_found_error"


def test_provider_config_per_wire(server: ScriptedModelServer) -> None:
    anthropic = server.provider_config(["s"])
    assert anthropic["api"] == "anthropic-messages" and not anthropic["baseUrl"].endswith("/v1")
    responses = server.provider_config(["s"], api="openai-responses")
    assert responses["api"] == "openai-responses" and responses["baseUrl"].endswith("/v1")
    assert server.provider_config(["s"], api="openai-completions")["compat"]["supportsStore"] is False
    with pytest.raises(ValueError, match="expected an api of"):
        ScriptedModelServer(api="google-generative-ai")  # type: ignore[arg-type]


def test_chat_completions_usage_details_only_when_a_step_asks() -> None:
    from pytest_skill_eval.scripted.chat_completions import stream_chunks
    from pytest_skill_eval.scripted.conversation import read_conversation

    def body(*messages: dict[str, Any]) -> dict[str, Any]:
        return {"model": "m", "messages": [{"role": "system", "content": SYSTEM}, *messages]}

    first = body({"role": "user", "content": "go"})
    plain = stream_chunks(plan_reply(SCRIPT, first, read_conversation(first)), "m", "c1")[-1]["usage"]
    assert set(plain) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    later = body({"role": "user", "content": "go"},
                 {"role": "assistant", "content": None, "tool_calls": []}, {"role": "tool", "content": "x"})
    reply = plan_reply(SCRIPT, later)
    usage = stream_chunks(reply, "m", "c2")[-1]["usage"]
    assert usage["prompt_tokens"] == reply.usage.prompt_tokens + 100
    assert usage["prompt_tokens_details"] == {"cached_tokens": 70, "cache_write_tokens": 30}
    assert usage["completion_tokens_details"] == {"reasoning_tokens": 4}


def test_every_api_is_a_wire_module_reached_by_its_path() -> None:
    assert list(WIRES) == list(APIS)
    assert sorted(PATHS.values()) == sorted(APIS)
    for path, api in PATHS.items():
        assert getattr(WIRES[api], "PATH", path) == path


def test_the_chat_completions_http_500_keeps_its_own_words() -> None:
    status, body = chat_completions.fault_error("http-500")
    assert status == 500 == chat_completions.FAULT_STATUS["http-500"]
    assert body == {"error": {"message": "[scripted stand-in] scripted fault http-500", "type": "server_error",
                              "code": "server_error"}}


@pytest.mark.parametrize("fault", ["stall", "disconnect", "malformed", "no-finish-reason"])
def test_chat_completions_broken_streams(fault: Fault) -> None:
    reply = _reply(chat_completions.read_request, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    broken = list(chat_completions.stream_records(dataclasses.replace(reply, fault=fault), "m", "chatcmpl-1"))
    ends = broken[-1] == chat_completions.DONE
    assert ends is (fault in ("malformed", "no-finish-reason")), "a stream that breaks never says [DONE]"
    assert chat_completions.output_chars(broken[0]) == 0
    if fault == "malformed":
        assert broken[1] == b'data: {"id": "chatcmpl-1", "choices": [\n\n'
    assert chat_completions.truncated_whole("chatcmpl-1") == b'{"id": "chatcmpl-1", "choices": ['
    others: list[Wire] = [anthropic_messages, openai_responses]
    assert [wire.truncated_whole("x") for wire in others] == [None, None], "the other wires hang up"
