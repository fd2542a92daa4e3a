"""The OpenAI Responses wire format of the stand-in (pure): requests in, SSE events out.

pi's ``openai-responses`` client (pi-ai ``api/openai-responses.js`` and
``openai-responses-shared.js``) posts ``{model, input, tools, stream: true, store: false}``
to ``{baseUrl}/responses``; ``input`` holds ``{role: "system"|"developer"|"user", content}``
messages, ``{type: "message", role: "assistant"}``, ``function_call`` and ``reasoning``
items of earlier replies, and ``function_call_output`` items. It reads
``response.created``, ``response.output_item.added`` / ``.done``,
``response.output_text.delta``, ``response.function_call_arguments.delta`` / ``.done`` and
``response.completed`` (usage with ``input_tokens_details.cached_tokens`` and
``output_tokens_details.reasoning_tokens``). HTTP errors carry OpenAI's
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pytest_skill_eval.scripted.conversation import Conversation, Role, build_conversation, content_text
from pytest_skill_eval.scripted.replies import RETRY_AFTER_SECONDS, STAND_IN_TAG, PlannedToolCall, Reply
from pytest_skill_eval.scripted.sse import fault_records, payload_of

API = "openai-responses"
PATH = "/v1/responses"
TEXT_PIECE = 24
ARGUMENT_PIECE = 32

#: The status of each fault that fails the request before any event is sent.
FAULT_STATUS = {"http-500": 500, "rate-limit": 429, "overloaded": 503}
_ASSISTANT_ITEMS = frozenset({"function_call", "reasoning", "custom_tool_call"})


def request_problem(body: Any) -> str | None:
    """Why *body* is not a Responses request the stand-in can answer, or None."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not isinstance(body.get("input"), list):
        return 'expected a JSON object with a string "model" and an "input" array'
    return None


def read_request(body: Mapping[str, Any]) -> Conversation:
    """What the script can see of a Responses request.

    ``instructions`` and system or developer messages are the system prompt; a user
    message is a user turn; consecutive assistant items (text message, function calls,
    reasoning) are one model reply; each ``function_call_output`` is one tool result.
    """
    system_parts: list[str] = []
    if isinstance(body.get("instructions"), str):
        system_parts.append(body["instructions"])
    entries: list[tuple[Role, str]] = []
    in_reply = False
    items = body.get("input")
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        kind, role = item.get("type", "message"), item.get("role")
        assistant = kind in _ASSISTANT_ITEMS or (kind == "message" and role == "assistant")
        if assistant and not in_reply:
            entries.append(("assistant", ""))
        in_reply = assistant
        if kind == "function_call_output" or kind == "custom_tool_call_output":
            entries.append(("tool", content_text(item.get("output"))))
        elif kind == "message" and role in ("system", "developer"):
            system_parts.append(content_text(item.get("content")))
        elif kind == "message" and role == "user":
            entries.append(("user", content_text(item.get("content"))))
    return build_conversation(system_parts, entries)


# ------------------------------------------------------------------------- replies


def item_id(call: PlannedToolCall) -> str:
    """The ``fc_`` item id of a function call (pi replays only ids with that prefix)."""
    return "fc_" + call.id.removeprefix("call_")


def _usage(reply: Reply) -> dict[str, Any]:
    usage = reply.usage
    cached: dict[str, int] = {"cached_tokens": usage.cache_read}
    if usage.cache_write:
        cached["cache_write_tokens"] = usage.cache_write  # pi reads it; OpenAI itself does not send it
    input_tokens = usage.prompt_tokens + usage.cache_read + usage.cache_write
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": cached,
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": input_tokens + usage.completion_tokens,
    }


def _message_item(response_id: str, text: str | None) -> dict[str, Any]:
    done = text is not None
    return {
        "id": f"msg_{response_id.removeprefix('resp_')}", "type": "message", "role": "assistant",
        "status": "completed" if done else "in_progress",
        "content": [{"type": "output_text", "text": text, "annotations": []}] if done else [],
    }


def _call_item(call: PlannedToolCall, done: bool) -> dict[str, Any]:
    return {
        "id": item_id(call), "type": "function_call", "status": "completed" if done else "in_progress",
        "call_id": call.id, "name": call.name, "arguments": call.arguments if done else "",
    }


def _output(reply: Reply, response_id: str) -> list[dict[str, Any]]:
    items = [_message_item(response_id, reply.text)] if reply.text or not reply.tool_calls else []
    return items + [_call_item(call, True) for call in reply.tool_calls]


def _response(reply: Reply, model: str, response_id: str, status: str, output: list[Any]) -> dict[str, Any]:
    return {
        "id": response_id, "object": "response", "created_at": 0, "status": status, "model": model,
        "output": output, "usage": _usage(reply) if status == "completed" and reply.reports_usage else None,
    }


def created(reply: Reply, model: str, response_id: str) -> dict[str, Any]:
    return {"type": "response.created", "response": _response(reply, model, response_id, "in_progress", [])}


def stream_events(reply: Reply, model: str, response_id: str) -> list[dict[str, Any]]:
    """The event payloads of a complete streamed reply, ``response.completed`` last."""
    events = [created(reply, model, response_id),
              {"type": "response.in_progress", "response": _response(reply, model, response_id, "in_progress", [])}]
    index = 0
    if reply.text or not reply.tool_calls:
        events += _text_item_events(response_id, index, reply.text)
        index += 1
    for call in reply.tool_calls:
        events.append({"type": "response.output_item.added", "output_index": index, "item": _call_item(call, False)})
        events += [
            {"type": "response.function_call_arguments.delta", "item_id": item_id(call), "output_index": index,
             "delta": piece}
            for piece in _pieces(call.arguments, ARGUMENT_PIECE)
        ]
        events.append({"type": "response.function_call_arguments.done", "item_id": item_id(call),
                       "output_index": index, "arguments": call.arguments})
        events.append({"type": "response.output_item.done", "output_index": index, "item": _call_item(call, True)})
        index += 1
    events.append({"type": "response.completed",
                   "response": _response(reply, model, response_id, "completed", _output(reply, response_id))})
    return _numbered(events)


def _text_item_events(response_id: str, index: int, text: str, *, done: bool = True) -> list[dict[str, Any]]:
    item = _message_item(response_id, None)
    part = {"type": "output_text", "text": "", "annotations": []}
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": index, "item": item},
        {"type": "response.content_part.added", "item_id": item["id"], "output_index": index, "content_index": 0,
         "part": part},
    ]
    events += [
        {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index, "content_index": 0,
         "delta": piece}
        for piece in _pieces(text, TEXT_PIECE)
    ]
    if done:
        events += [
            {"type": "response.output_text.done", "item_id": item["id"], "output_index": index, "content_index": 0,
             "text": text},
            {"type": "response.content_part.done", "item_id": item["id"], "output_index": index, "content_index": 0,
             "part": {**part, "text": text}},
            {"type": "response.output_item.done", "output_index": index, "item": _message_item(response_id, text)},
        ]
    return events


def broken_stream(reply: Reply, model: str, response_id: str) -> dict[str, list[dict[str, Any]]]:
    """What each streaming fault sends before it breaks the stream (or ends it wrongly)."""
    start = created(reply, model, response_id)
    partial = _text_item_events(response_id, 0, f"{STAND_IN_TAG} partial reply before a disconnect", done=False)
    unfinished = _text_item_events(response_id, 0, f"{STAND_IN_TAG} reply without a terminal response event")
    return {
        "stall": _numbered([start]),
        "disconnect": _numbered([start, *partial]),
        "no-finish-reason": _numbered([start, *unfinished]),
    }


def whole_response(reply: Reply, model: str, response_id: str) -> dict[str, Any]:
    """A non-streaming Responses object (pi always streams; plain HTTP clients may not)."""
    status = "in_progress" if reply.fault == "no-finish-reason" else "completed"
    return _response(reply, model, response_id, status, _output(reply, response_id))


def _numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def error_body(status: int, message: str, kind: str | None = None, code: str | None = None) -> dict[str, Any]:
    """OpenAI's error response body (the chat-completions wire sends the same shape)."""
    default = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind or default, "param": None, "code": code}}


def fault_error(fault: str) -> tuple[int, dict[str, Any]]:
    """Status and body of a fault that fails the request itself, worded as OpenAI words them."""
    status = FAULT_STATUS[fault]
    tag = f"{STAND_IN_TAG} scripted fault {fault}"
    if fault == "rate-limit":
        return status, error_body(
            status, f"{tag}: Rate limit reached for requests. Please try again in {RETRY_AFTER_SECONDS}s.",
            "requests", "rate_limit_exceeded")
    if fault == "overloaded":
        return status, error_body(status, f"{tag}: The engine is currently overloaded, please try again later.")
    return status, error_body(status, f"{tag}: The server had an error while processing your request.")


def stream_records(reply: Reply, model: str, response_id: str) -> list[bytes]:
    """The encoded records of a streamed reply (see :func:`~.sse.fault_records` for the faults)."""
    return fault_records(reply, lambda: stream_events(reply, model, response_id),
                         lambda: broken_stream(reply, model, response_id), encode,
                         b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", oops\n\n')


def whole(reply: Reply, model: str, response_id: str) -> dict[str, Any]:
    """The non-streaming answer (the server's common name for :func:`whole_response`)."""
    return whole_response(reply, model, response_id)


def truncated_whole(response_id: str) -> None:
    """A non-streamed ``malformed`` reply: none, the server hangs up (the stream carries the broken record)."""
    return None


def output_chars(record: bytes) -> int:
    """The output characters an encoded record carries: text and argument deltas, tool names (for pacing)."""
    payload = payload_of(record)
    if not isinstance(payload, dict):
        return 0
    if payload.get("type") in ("response.output_text.delta", "response.function_call_arguments.delta"):
        return len(payload.get("delta") or "")
    if payload.get("type") == "response.output_item.added":
        return len((payload.get("item") or {}).get("name") or "")
    return 0


def encode(payload: Mapping[str, Any]) -> bytes:
    """One server-sent event record, named after its ``type`` as OpenAI sends it."""
    return f"event: {payload['type']}\ndata: ".encode() + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start:start + size]
