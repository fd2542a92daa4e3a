"""The chat-completions wire's records exactly (fast, host-free): the chunk envelope, the
whole completion, a broken stream's text chunk, and the output characters pacing counts."""

from __future__ import annotations

from pytest_skill_eval.scripted import chat_completions as cc
from pytest_skill_eval.scripted.conversation import content_text
from pytest_skill_eval.scripted.format import Fault
from pytest_skill_eval.scripted.replies import PlannedToolCall, Reply, ReplyUsage

ENVELOPE = {"id": "r1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "system_fingerprint": "skill-eval-scripted-stand-in"}


def _reply(text: str = "hi", calls: tuple[PlannedToolCall, ...] = (), fault: Fault | None = None) -> Reply:
    return Reply(1, 0, "fault" if fault else "scripted", None, None, text, calls, fault, ReplyUsage(3, 2),
                 reports_usage=False)


def test_chunks_share_the_envelope() -> None:
    chunks = cc.stream_chunks(_reply(), "m", "r1")
    assert chunks == [
        {**ENVELOPE, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
        {**ENVELOPE, "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]},
        {**ENVELOPE, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    assert cc.text_chunk(chunks[0], "x") == {
        **ENVELOPE, "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}]}


def test_whole_completion() -> None:
    call = PlannedToolCall("call_1", "read", '{"path":"a"}')
    assert cc.whole_completion(_reply("", (call,)), "m", "r1") == {
        "id": "r1", "object": "chat.completion", "created": 0, "model": "m",
        "system_fingerprint": "skill-eval-scripted-stand-in",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path":"a"}'}}],
        }}],
    }


def test_a_request_failing_fault_streamed_anyway_is_the_plain_stream() -> None:
    # the server answers such a fault with its HTTP error; the stream itself stays whole
    records = list(cc.stream_records(_reply(fault="http-500"), "m", "r1"))
    assert records == [*map(cc.encode, cc.stream_chunks(_reply(), "m", "r1")), cc.DONE]


def test_chunk_chars_counts_every_choice() -> None:
    assert cc.chunk_chars({"choices": [{"delta": {"content": "ab"}}, {"delta": {"content": "c"}}]}) == 3


def test_content_text_keeps_the_text_parts_only() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}, "odd", {"text": 1},
             {"type": "text", "text": "b"}]
    assert content_text(parts) == "a\nb"
    assert content_text(None) == ""
