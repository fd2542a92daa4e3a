"""The pure helpers the server routes and paces with, fast and host-free: which status a
fault gets on each wire, and the JSON of an encoded server-sent-event record."""

from __future__ import annotations

from pytest_skill_eval.scripted import wires
from pytest_skill_eval.scripted.format import Fault
from pytest_skill_eval.scripted.replies import Reply, ReplyUsage
from pytest_skill_eval.scripted.sse import fault_records, payload_of


def test_fault_status_per_wire() -> None:
    assert wires.fault_status("anthropic-messages", "overloaded") == 529
    assert wires.fault_status("openai-responses", "overloaded") == 503
    assert wires.fault_status("openai-completions", "rate-limit") == 429
    # a streaming fault, or none, answers 200 and breaks the stream instead
    assert wires.fault_status("openai-completions", "stall") == 200
    assert wires.fault_status("anthropic-messages", None) == 200


def test_request_problem_is_the_wires() -> None:
    assert wires.request_problem("openai-completions", {"model": "m", "messages": []}) is None
    assert wires.request_problem("openai-completions", {"model": "m", "input": []}) == (
        'expected a JSON object with a string "model" and a "messages" array')


def test_payload_of_reads_the_data_line_only() -> None:
    assert payload_of(b'event: x\ndata: {"a": 1}\n\n') == {"a": 1}
    assert payload_of(b"data: [DONE]\n\n") is None
    assert payload_of(b'event: x\nid: 1\n\n') is None
    assert payload_of(b'data: {"a": [\ndata: {"b": 2}\n\n') is None  # the first data line decides


def _records(fault: Fault | None) -> list[bytes]:
    reply = Reply(1, 0, "fault" if fault else "scripted", None, None, "", (), fault, ReplyUsage(1, 1))
    return fault_records(reply, lambda: ["a", "b", "c"], lambda: {"stall": ["s"], "disconnect": ["d", "e"],
                                                                  "no-finish-reason": ["n"]},
                         str.encode, b"BAD")


def test_fault_records_break_the_stream_as_each_fault_says() -> None:
    assert _records(None) == [b"a", b"b", b"c"]
    assert _records("http-500") == [b"a", b"b", b"c"]  # fails the request: its stream is never sent
    assert _records("stall") == [b"s"]
    assert _records("disconnect") == [b"d", b"e"]
    assert _records("no-finish-reason") == [b"n"]
    assert _records("malformed") == [b"a", b"BAD", b"b", b"c"]  # the record that is not JSON comes second
