"""The OpenAI chat-completions wire format of the stand-in's replies (pure).

pi's ``openai-completions`` client reads ``chat.completion.chunk`` server-sent events; plain
HTTP clients get one ``chat.completion`` object. Like the other wire modules it is a
:class:`~.wires.Wire`: the server (:mod:`.handler`) decides when to send what it builds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pytest_skill_eval.scripted import openai_responses
from pytest_skill_eval.scripted.conversation import Conversation, read_conversation
from pytest_skill_eval.scripted.replies import STAND_IN_TAG, Reply
from pytest_skill_eval.scripted.sse import payload_of

API = "openai-completions"
PATH = "/v1/chat/completions"
SERVER_NAME = "skill-eval-scripted-stand-in"
TEXT_PIECE = 24  # characters per content delta: small enough that pi sees real streaming
ARGUMENT_PIECE = 32


def stream_chunks(reply: Reply, model: str, response_id: str) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` payloads of a message reply, usage chunk last (none
    when the step says ``"usage": false``).

    Pure, for :class:`ScriptedModelServer` and its tests. Fault replies use the same
    pieces and break them as their fault requires.
    """
    return list(iter_chunks(reply, model, response_id))


def iter_chunks(reply: Reply, model: str, response_id: str) -> Iterator[dict[str, Any]]:
    """:func:`stream_chunks` one payload at a time: a long reply is never built whole
    (2 MB of text is ~87,000 chunk objects)."""

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**_envelope(model, response_id), "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(reply.text, TEXT_PIECE):
        yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        yield chunk({"tool_calls": [{
            "index": index, "id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]})
        for piece in _pieces(call.arguments, ARGUMENT_PIECE):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, reply.finish_reason)
    if reply.reports_usage:
        yield _usage_chunk(reply, model, response_id)


def chunk_chars(chunk: dict[str, Any]) -> int:
    """The output characters a chunk carries: content, tool-call names and argument pieces (for pacing)."""
    chars = 0
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        chars += len(delta.get("content") or "")
        for call in delta.get("tool_calls") or ():
            function = call.get("function") or {}
            chars += len(function.get("name") or "") + len(function.get("arguments") or "")
    return chars


def _envelope(model: str, response_id: str) -> dict[str, Any]:
    """The fields every ``chat.completion.chunk`` of one response shares."""
    return {
        "id": response_id,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "system_fingerprint": SERVER_NAME,
    }


def _usage_chunk(reply: Reply, model: str, response_id: str) -> dict[str, Any]:
    usage = reply.usage
    # OpenAI counts cached tokens inside prompt_tokens; pi subtracts them again
    counts: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens + usage.cache_read + usage.cache_write,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
    if usage.cache_read or usage.cache_write:  # only a step's "usage" adds these details
        counts["prompt_tokens_details"] = {"cached_tokens": usage.cache_read, "cache_write_tokens": usage.cache_write}
    if usage.reasoning:
        counts["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning}
    return {**_envelope(model, response_id), "choices": [], "usage": counts}


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start:start + size]


def whole_completion(reply: Reply, model: str, response_id: str) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` of *reply* (the ``no-finish-reason`` fault leaves it out)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in reply.tool_calls
        ]
    return {
        "id": response_id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "system_fingerprint": SERVER_NAME,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": None if reply.fault == "no-finish-reason" else reply.finish_reason,
        }],
        **({"usage": _usage_chunk(reply, model, response_id)["usage"]} if reply.reports_usage else {}),
    }


def text_chunk(first: dict[str, Any], text: str) -> dict[str, Any]:
    """A content delta shaped like the stream's *first* chunk (for the broken-stream faults)."""
    return {**first, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


# ---------------------------------------------------------------- the Wire members

#: statuses of the faults that fail the request itself: OpenAI's, as the Responses wire
FAULT_STATUS = openai_responses.FAULT_STATUS
DONE = b"data: [DONE]\n\n"
"""The record that ends an OpenAI chat-completions stream."""


def request_problem(body: Any) -> str | None:
    """Why *body* is not a chat-completions request the stand-in can answer, or None."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
        return 'expected a JSON object with a string "model" and a "messages" array'
    return None


def read_request(body: Mapping[str, Any]) -> Conversation:
    """What the script can see of a chat-completions request."""
    return read_conversation(body)


def encode(payload: Mapping[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def stream_records(reply: Reply, model: str, response_id: str) -> Iterator[bytes]:
    """The encoded records of a streamed reply, ``[DONE]`` last; a plain reply is built as
    it is sent. A streaming fault breaks the stream: ``stall`` and ``disconnect`` are what is
    sent before the server waits or hangs up; ``malformed`` puts a truncated JSON record
    after the first; ``no-finish-reason`` ends without a finish chunk."""
    if reply.fault is None:
        yield from map(encode, iter_chunks(reply, model, response_id))
        yield DONE
        return
    chunks = stream_chunks(reply, model, response_id)
    first = encode(chunks[0])
    if reply.fault == "stall":
        yield first
    elif reply.fault == "disconnect":
        yield first
        yield encode(text_chunk(chunks[0], f"{STAND_IN_TAG} partial reply before a disconnect"))
    elif reply.fault == "malformed":
        yield first
        yield b'data: {"id": "' + response_id.encode() + b'", "choices": [\n\n'
        yield from map(encode, chunks[1:])
        yield DONE
    elif reply.fault == "no-finish-reason":
        yield first
        yield encode(text_chunk(chunks[0], f"{STAND_IN_TAG} reply without a finish_reason"))
        yield encode(chunks[-1])
        yield DONE
    else:
        yield from map(encode, chunks)
        yield DONE


def whole(reply: Reply, model: str, response_id: str) -> dict[str, Any]:
    """The non-streaming answer (the server's common name for :func:`whole_completion`)."""
    return whole_completion(reply, model, response_id)


def truncated_whole(response_id: str) -> bytes:
    """A non-streamed ``malformed`` reply: a ``chat.completion`` cut short."""
    return b'{"id": "' + response_id.encode() + b'", "choices": ['


def fault_error(fault: str) -> tuple[int, dict[str, Any]]:
    """Status and body of a fault that fails the request itself (``http-500`` in the
    stand-in's own words, the others as the Responses wire words them)."""
    if fault == "http-500":
        message = f"{STAND_IN_TAG} scripted fault http-500"
        return 500, {"error": {"message": message, "type": "server_error", "code": "server_error"}}
    return openai_responses.fault_error(fault)


def output_chars(record: bytes) -> int:
    """The output characters an encoded record carries (for pacing): :func:`chunk_chars` of its payload."""
    payload = payload_of(record)
    return chunk_chars(payload) if isinstance(payload, dict) else 0
