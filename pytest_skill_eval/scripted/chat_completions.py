"""The OpenAI chat-completions wire format of the stand-in's replies (pure).

pi's ``openai-completions`` client reads ``chat.completion.chunk`` server-sent events; plain
HTTP clients get one ``chat.completion`` object. The server (:mod:`.server`) decides when
and how to send them, faults included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_skill_eval.scripted.replies import Reply

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


def output_chars(chunk: dict[str, Any]) -> int:
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
