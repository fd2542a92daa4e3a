"""The scripted stand-in over real HTTP on 127.0.0.1 (urllib and http.client clients)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import pytest

from pytest_skill_eval.errors import ScriptError
from pytest_skill_eval.scripted import PROVIDER, STAND_IN_TAG, ScriptedModelServer
from pytest_skill_eval.scripted.server import HANDLER_THREAD_NAME

SYSTEM = (
    "<available_skills>\n  <skill>\n    <name>demo</name>\n    <description>Demo task.</description>\n"
    "    <location>/skills/demo/SKILL.md</location>\n  </skill>\n</available_skills>\n\n<cwd>\n/ws\n</cwd>"
)
LONG_TEXT = "The stand-in streams this sentence in several content deltas."

SCRIPTS: dict[str, dict[str, Any]] = {
    "chat": {"turns": [
        {"rules": [{"when": {"user_message_contains": "read"}, "steps": [
            {"tool_calls": [
                {"name": "read", "arguments": {"path": "{{skill:demo.location}}"}},
                {"name": "read", "arguments": {"path": "{{cwd}}/a-rather-long-file-name-to-split.txt"}},
            ]},
            {"text": "Read both."},
        ]}], "steps": [{"text": LONG_TEXT}]},
    ]},
    "http-500": {"turns": [{"steps": [{"fault": "http-500"}]}]},
    "stall": {"turns": [{"steps": [{"fault": "stall"}]}]},
    "malformed": {"turns": [{"steps": [{"fault": "malformed"}]}]},
    "disconnect": {"turns": [{"steps": [{"fault": "disconnect"}]}]},
    "no-finish-reason": {"turns": [{"steps": [{"fault": "no-finish-reason"}]}]},
}


@pytest.fixture(scope="module")
def script_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scripts")
    for name, body in SCRIPTS.items():
        (root / f"{name}.json").write_text(json.dumps({"schema": "skill-eval-script/1", **body}))
    return root


@pytest.fixture
def server(script_dir: Path) -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(keep_bodies=True) as running:
        for name in SCRIPTS:
            running.register(name, script_dir / f"{name}.json")
        yield running


def chat_body(model: str, *messages: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    return {
        "model": model,
        "stream": stream,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "system", "content": SYSTEM}, *messages],
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def post(server: ScriptedModelServer, body: Any, *, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(
        server.base_url + "/chat/completions", data=data,
        headers={"Content-Type": "application/json", "Authorization": "Bearer scripted-stand-in"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def sse_records(raw: bytes) -> list[str]:
    """The ``data:`` payloads of an SSE body; asserts the framing on the way."""
    text = raw.decode()
    assert text.endswith("\n\n")
    records = text[:-2].split("\n\n")
    assert all(r.startswith("data: ") and "\n" not in r for r in records), records
    return [r.removeprefix("data: ") for r in records]


def events(raw: bytes) -> list[dict[str, Any]]:
    records = sse_records(raw)
    assert records[-1] == "[DONE]"
    return [json.loads(r) for r in records[:-1]]


def handler_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == HANDLER_THREAD_NAME]


def wait_until(predicate: Any, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


# --------------------------------------------------------------------------- replies


def test_text_reply_is_framed_as_openai_sse(server: ScriptedModelServer) -> None:
    status, headers, raw = post(server, chat_body("chat", user("hello")))
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    assert headers["Transfer-Encoding"] == "chunked"
    assert "stand-in" in headers["Server"]
    chunks = events(raw)
    assert all(c["object"] == "chat.completion.chunk" and c["model"] == "chat" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"] == [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
    content = [c["choices"][0]["delta"]["content"] for c in chunks[1:-2]]
    assert len(content) > 1 and "".join(content) == LONG_TEXT
    assert chunks[-2]["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    reply = server.requests()[-1].reply
    assert reply is not None
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {
        "prompt_tokens": reply.usage.prompt_tokens,
        "completion_tokens": len(LONG_TEXT) // 4,
        "total_tokens": reply.usage.prompt_tokens + len(LONG_TEXT) // 4,
    }


def test_tool_calls_stream_as_indexed_fragments(server: ScriptedModelServer) -> None:
    status, _, raw = post(server, chat_body("chat", user("please read")))
    assert status == 200
    deltas = [c["choices"][0] for c in events(raw)[1:-1]]
    calls: dict[int, dict[str, Any]] = {}
    for choice in deltas[:-1]:
        (fragment,) = choice["delta"]["tool_calls"]
        if "id" in fragment:
            assert fragment["function"]["arguments"] == "" and fragment["type"] == "function"
            calls[fragment["index"]] = {"id": fragment["id"], "name": fragment["function"]["name"], "arguments": ""}
        else:
            calls[fragment["index"]]["arguments"] += fragment["function"]["arguments"]
    assert deltas[-1] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    assert len(deltas) > 5  # the long path was split into several argument fragments
    assert calls == {
        0: {"id": "call_1_0_0", "name": "read", "arguments": '{"path": "/skills/demo/SKILL.md"}'},
        1: {"id": "call_1_0_1", "name": "read", "arguments": '{"path": "/ws/a-rather-long-file-name-to-split.txt"}'},
    }


def test_requests_are_logged_with_turn_step_and_rule(server: ScriptedModelServer) -> None:
    post(server, chat_body("chat", user("please read")))
    tool_round = chat_body(
        "chat", user("please read"),
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "content": "x", "tool_call_id": "call_1_0_0"},
    )
    post(server, tool_round)
    post(server, chat_body("chat", user("hi")))
    post(server, chat_body("ghost", user("hi")))
    summary = [
        (r.model, r.status, r.reply and (r.reply.turn, r.reply.step, r.reply.rule, r.reply.source, r.reply.outcome))
        for r in server.requests()
    ]
    assert summary == [
        ("chat", 200, (1, 0, 0, "/turns/0/rules/0/steps/0", "scripted")),
        ("chat", 200, (1, 1, 0, "/turns/0/rules/0/steps/1", "scripted")),
        ("chat", 200, (1, 0, None, "/turns/0/steps/0", "scripted")),
        ("ghost", 404, None),
    ]
    assert server.requests()[0].body == chat_body("chat", user("please read"))


def test_exhausted_script_answers_plain_text(server: ScriptedModelServer) -> None:
    body = chat_body("chat", user("hi"), {"role": "assistant", "content": "x"}, user("again"))
    _, _, raw = post(server, body)
    chunks = events(raw)
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1])
    assert text.startswith(f"{STAND_IN_TAG} Script exhausted: ")
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


def test_non_streaming_request_gets_a_whole_completion(server: ScriptedModelServer) -> None:
    status, headers, raw = post(server, chat_body("chat", user("please read"), stream=False))
    completion = json.loads(raw)
    assert (status, headers["Content-Type"]) == (200, "application/json")
    (choice,) = completion["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert [c["function"]["arguments"] for c in choice["message"]["tool_calls"]] == [
        '{"path": "/skills/demo/SKILL.md"}', '{"path": "/ws/a-rather-long-file-name-to-split.txt"}',
    ]


def test_keep_alive_connection_serves_several_requests(server: ScriptedModelServer) -> None:
    url = urlsplit(server.base_url)
    assert url.hostname is not None
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        for _ in range(3):
            connection.request("POST", "/v1/chat/completions", json.dumps(chat_body("chat", user("hi"))))
            response = connection.getresponse()
            assert response.status == 200 and not response.will_close
            assert sse_records(response.read())[-1] == "[DONE]"
    finally:
        connection.close()


# ---------------------------------------------------------------------------- faults


def test_http_500_fault(server: ScriptedModelServer) -> None:
    status, headers, raw = post(server, chat_body("http-500", user("hi")))
    assert (status, headers["Content-Type"]) == (500, "application/json")
    assert json.loads(raw) == {"error": {
        "message": f"{STAND_IN_TAG} scripted fault http-500", "type": "server_error", "code": "server_error",
    }}
    assert server.requests()[-1].status == 500


def test_malformed_fault_sends_one_record_that_is_not_json(server: ScriptedModelServer) -> None:
    status, _, raw = post(server, chat_body("malformed", user("hi")))
    records = sse_records(raw)
    assert status == 200 and records[-1] == "[DONE]"
    broken = []
    for record in records[:-1]:
        try:
            json.loads(record)
        except json.JSONDecodeError:
            broken.append(record)
    assert broken == ['{"id": "chatcmpl-scripted-1", "choices": [']


def test_disconnect_fault_breaks_the_chunked_body(server: ScriptedModelServer) -> None:
    with pytest.raises(http.client.IncompleteRead) as raised:
        post(server, chat_body("disconnect", user("hi")))
    partial = raised.value.partial.decode()
    assert "partial reply before a disconnect" in partial and "[DONE]" not in partial


def test_no_finish_reason_fault(server: ScriptedModelServer) -> None:
    status, _, raw = post(server, chat_body("no-finish-reason", user("hi")))
    chunks = events(raw)
    assert status == 200
    assert all(choice["finish_reason"] is None for c in chunks for choice in c["choices"])
    assert "usage" in chunks[-1]


def open_stall(server: ScriptedModelServer) -> tuple[socket.socket, bytes]:
    """Start a stalled request on a raw socket; return it with what arrived before the stall."""
    url = urlsplit(server.base_url)
    body = json.dumps(chat_body("stall", user("hi"))).encode()
    sock = socket.create_connection((url.hostname, url.port), timeout=5)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    received = b""
    while b"\n\n\r\n" not in received:  # headers, then the first (role) chunk
        received += sock.recv(65536)
    return sock, received


def test_stall_sends_headers_and_one_chunk_then_nothing(server: ScriptedModelServer) -> None:
    sock, received = open_stall(server)
    try:
        assert received.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b'"role": "assistant"' in received
        sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            sock.recv(65536)
    finally:
        sock.close()


def test_stall_ends_when_the_client_hangs_up(server: ScriptedModelServer) -> None:
    sock, _ = open_stall(server)
    assert handler_threads()
    sock.close()
    assert wait_until(lambda: not handler_threads())


def test_stop_during_a_stall_returns_promptly(script_dir: Path) -> None:
    running = ScriptedModelServer().start()
    running.register("stall", script_dir / "stall.json")
    sock, _ = open_stall(running)
    try:
        started = time.monotonic()
        running.stop()
        assert time.monotonic() - started < 1.5
        sock.settimeout(2)
        assert sock.recv(65536) == b""  # connection closed, response never finished
        assert not handler_threads()
    finally:
        sock.close()


def test_concurrent_requests_are_answered_independently(server: ScriptedModelServer) -> None:
    stalled, _ = open_stall(server)  # one stuck request must not hold up the others
    try:
        def ask(i: int) -> str:
            prompt = "please read" if i % 2 else f"hello {i}"
            _, _, raw = post(server, chat_body("chat", user(prompt)))
            chunks = events(raw)
            return cast(str, chunks[-2]["choices"][0]["finish_reason"])

        with ThreadPoolExecutor(max_workers=8) as pool:
            reasons = list(pool.map(ask, range(16)))
        assert reasons == ["stop", "tool_calls"] * 8
        assert sum(r.model == "chat" for r in server.requests()) == 16
        assert len({r.reply.usage.prompt_tokens for r in server.requests() if r.reply}) > 1
    finally:
        stalled.close()


# ---------------------------------------------------------------------- bad requests


def test_unregistered_model_is_404_naming_the_id(server: ScriptedModelServer) -> None:
    status, _, raw = post(server, chat_body("no-such-model", user("hi")))
    assert status == 404
    error = json.loads(raw)["error"]
    assert error["code"] == "model_not_found"
    assert error["message"].startswith(
        "model 'no-such-model' is not registered with the scripted stand-in server (registered: chat, "
    )
    assert (server.requests()[-1].model, server.requests()[-1].status) == ("no-such-model", 404)


@pytest.mark.parametrize(
    ("path", "data", "status", "message"),
    [
        ("/chat/completions", b"{not json", 400, "request body is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ("/chat/completions", b'{"model": 3}', 400, 'expected a JSON object with a string "model" and a "messages" array'),
        ("/completions", b"{}", 404, "no such endpoint: POST /v1/completions"),
    ],
)
def test_bad_requests(server: ScriptedModelServer, path: str, data: bytes, status: int, message: str) -> None:
    req = urllib.request.Request(server.base_url + path, data=data)
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(req, timeout=5)
    assert raised.value.code == status
    assert json.loads(raised.value.read())["error"]["message"] == message


def test_models_endpoint_lists_registered_ids(server: ScriptedModelServer) -> None:
    with urllib.request.urlopen(server.base_url + "/models", timeout=5) as response:
        listed = json.loads(response.read())
    assert [m["id"] for m in listed["data"]] == sorted(SCRIPTS)


# ----------------------------------------------------------------- registration, config


def test_register_rules(script_dir: Path, tmp_path: Path) -> None:
    server = ScriptedModelServer()
    server.register("chat", script_dir / "chat.json")
    server.register("chat", script_dir / "." / "chat.json")  # same file again: fine
    with pytest.raises(ScriptError) as raised:
        server.register("chat", script_dir / "stall.json")
    assert str(raised.value) == (
        f"scripted model 'chat': expected one script per name, found it registered to "
        f"{script_dir / 'chat.json'} and now to {script_dir / 'stall.json'}"
    )
    with pytest.raises(ScriptError, match="expected letters, digits"):
        server.register("a/b", script_dir / "chat.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "skill-eval-script/1", "turns": [{"steps": [{}]}]}')
    with pytest.raises(ScriptError, match=r"bad\.json: /turns/0/steps/0: expected"):
        server.register("bad", bad)


def test_provider_config(server: ScriptedModelServer) -> None:
    config = server.provider_config(["chat", "stall", "chat"])
    model = {
        "reasoning": False, "input": ["text"], "contextWindow": 1_000_000, "maxTokens": 32_000,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }
    assert PROVIDER == "scripted"
    assert config == {
        "baseUrl": server.base_url,
        "api": "openai-completions",
        "apiKey": "scripted-stand-in",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False, "supportsStore": False},
        "models": [
            {"id": "chat", "name": "Scripted stand-in (not a real model): chat", **model},
            {"id": "stall", "name": "Scripted stand-in (not a real model): stall", **model},
        ],
    }
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    with pytest.raises(ScriptError, match="'ghost': expected a registered name"):
        server.provider_config(["ghost"])


def test_lifecycle() -> None:
    server = ScriptedModelServer()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url
    server.start()
    try:
        with pytest.raises(RuntimeError, match="already started"):
            server.start()
    finally:
        server.stop()
    server.stop()  # idempotent
    with pytest.raises(RuntimeError, match="not started"):
        server.provider_config([])
    with server:  # restartable after stop
        assert server.base_url
