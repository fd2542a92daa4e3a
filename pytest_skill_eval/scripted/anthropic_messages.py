"""The Anthropic Messages wire format of the stand-in (pure): requests in, SSE events out.

pi's ``anthropic-messages`` client (pi-ai ``api/anthropic-messages.js``) posts
``{model, system, messages, tools, max_tokens, stream: true}`` to ``{baseUrl}/v1/messages``
and reads named server-sent events: ``message_start`` (usage with cache reads and writes),
``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``) /
``content_block_stop``, ``message_delta`` (``stop_reason`` and the final usage, reasoning
as ``output_tokens_details.thinking_tokens``) and ``message_stop``. An ``event: error``
record or an HTTP error with ``{"type": "error", "error": {"type", "message"}}`` is a
failed request. The server (:mod:`.server`) decides when to send what, faults included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pytest_skill_eval.scripted.conversation import Conversation, Role, build_conversation, content_text
from pytest_skill_eval.scripted.replies import STAND_IN_TAG, Reply
from pytest_skill_eval.scripted.sse import fault_records, payload_of

API = "anthropic-messages"
PATH = "/v1/messages"
TEXT_PIECE = 24
ARGUMENT_PIECE = 32

#: The ``error.type`` Anthropic sends with each HTTP status.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
#: The status of each fault that fails the request before any event is sent.
FAULT_STATUS = {"http-500": 500, "rate-limit": 429, "overloaded": 529}
_FAULT_MESSAGES = {
    "http-500": "Internal server error",
    "rate-limit": "This request would exceed your organization's rate limit. Please try again later.",
    "overloaded": "Overloaded",
}


def request_problem(body: Any) -> str | None:
    """Why *body* is not a Messages request the stand-in can answer, or None."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
        return 'expected a JSON object with a string "model" and a "messages" array'
    return None


def read_request(body: Mapping[str, Any]) -> Conversation:
    """What the script can see of a Messages request.

    ``system`` (a string or text blocks) and any ``role: "system"`` message pi inserts
    later are the system prompt; a user message holding ``tool_result`` blocks carries
    tool results, any other user message is a user turn; each assistant message is one
    model reply.
    """
    system_parts: list[str] = []
    system = body.get("system")
    if system is not None:
        system_parts.append(content_text(system))
    entries: list[tuple[Role, str]] = []
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), message.get("content")
        if role == "system":
            system_parts.append(content_text(content))
        elif role == "assistant":
            entries.append(("assistant", ""))
        elif role == "user":
            blocks = content if isinstance(content, list) else []
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            if results:
                entries.extend(("tool", content_text(b.get("content"))) for b in results)
            else:
                entries.append(("user", content_text(content)))
    return build_conversation(system_parts, entries)


# ------------------------------------------------------------------------- replies


def _usage(reply: Reply) -> dict[str, Any]:
    usage = reply.usage
    if not reply.reports_usage:
        return {}  # pi reads message_start's usage unguarded: an empty object, not none
    return {
        "input_tokens": usage.prompt_tokens,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"thinking_tokens": usage.reasoning},
    }


def stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.tool_calls else "end_turn"


def _message(reply: Reply, model: str, response_id: str, content: list[Any], stop: str | None) -> dict[str, Any]:
    return {
        "id": response_id, "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop, "stop_sequence": None, "usage": _usage(reply),
    }


def message_start(reply: Reply, model: str, response_id: str) -> tuple[str, dict[str, Any]]:
    message = _message(reply, model, response_id, [], None)
    if reply.reports_usage:
        message["usage"] = {**message["usage"], "output_tokens": 0}
        del message["usage"]["output_tokens_details"]
    return "message_start", {"type": "message_start", "message": message}


def text_delta(index: int, text: str) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {"type": "content_block_delta", "index": index,
                                   "delta": {"type": "text_delta", "text": text}}


def text_start(index: int) -> tuple[str, dict[str, Any]]:
    return "content_block_start", {"type": "content_block_start", "index": index,
                                   "content_block": {"type": "text", "text": ""}}


def stream_events(reply: Reply, model: str, response_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event, payload)`` records of a complete streamed reply, ``message_stop`` last."""
    events = [message_start(reply, model, response_id), ("ping", {"type": "ping"})]
    index = 0
    if reply.text or not reply.tool_calls:
        events.append(text_start(index))
        events += [text_delta(index, piece) for piece in _pieces(reply.text, TEXT_PIECE)]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for call in reply.tool_calls:
        events.append(("content_block_start", {
            "type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
        }))
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": {"type": "input_json_delta", "partial_json": piece}})
            for piece in _pieces(call.arguments, ARGUMENT_PIECE)
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    events.append(message_delta(reply, stop_reason(reply)))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def message_delta(reply: Reply, stop: str | None) -> tuple[str, dict[str, Any]]:
    payload: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
    if reply.reports_usage:
        payload["usage"] = _usage(reply)
    return "message_delta", payload


def broken_stream(reply: Reply, model: str, response_id: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """What each streaming fault sends before it breaks the stream (or ends it wrongly)."""
    start = message_start(reply, model, response_id)
    return {
        "stall": [start],
        "disconnect": [start, text_start(0), text_delta(0, f"{STAND_IN_TAG} partial reply before a disconnect")],
        "no-finish-reason": [
            start, text_start(0), text_delta(0, f"{STAND_IN_TAG} reply without a stop_reason"),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            message_delta(reply, None), ("message_stop", {"type": "message_stop"}),
        ],
    }


def whole_message(reply: Reply, model: str, response_id: str) -> dict[str, Any]:
    """A non-streaming Messages response (pi always streams; plain HTTP clients may not)."""
    content: list[Any] = []
    if reply.text or not reply.tool_calls:
        content.append({"type": "text", "text": reply.text})
    content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": json.loads(c.arguments)}
                for c in reply.tool_calls]
    stop = None if reply.fault == "no-finish-reason" else stop_reason(reply)
    return _message(reply, model, response_id, content, stop)


def error_body(status: int, message: str) -> dict[str, Any]:
    """Anthropic's error response body for *status*."""
    kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def fault_error(fault: str) -> tuple[int, dict[str, Any]]:
    """Status and body of a fault that fails the request itself."""
    status = FAULT_STATUS[fault]
    return status, error_body(status, f"{STAND_IN_TAG} scripted fault {fault}: {_FAULT_MESSAGES[fault]}")


def stream_records(reply: Reply, model: str, response_id: str) -> list[bytes]:
    """The encoded records of a streamed reply (see :func:`~.sse.fault_records` for the faults)."""
    return fault_records(reply, lambda: stream_events(reply, model, response_id),
                         lambda: broken_stream(reply, model, response_id), lambda event: encode(*event),
                         b'event: content_block_delta\ndata: {"type": "content_block_delta", oops\n\n')


def whole(reply: Reply, model: str, response_id: str) -> dict[str, Any]:
    """The non-streaming answer (the server's common name for :func:`whole_message`)."""
    return whole_message(reply, model, response_id)


def truncated_whole(response_id: str) -> None:
    """A non-streamed ``malformed`` reply: none, the server hangs up (the stream carries the broken record)."""
    return None


def output_chars(record: bytes) -> int:
    """The output characters an encoded record carries: text and JSON deltas, tool names (for pacing)."""
    payload = payload_of(record)
    if not isinstance(payload, dict):
        return 0
    if payload.get("type") == "content_block_delta":
        delta = payload.get("delta") or {}
        return len(delta.get("text") or delta.get("partial_json") or "")
    if payload.get("type") == "content_block_start":
        return len((payload.get("content_block") or {}).get("name") or "")
    return 0


def encode(event: str, payload: Mapping[str, Any]) -> bytes:
    """One named server-sent event record."""
    return f"event: {event}\ndata: ".encode() + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start:start + size]
