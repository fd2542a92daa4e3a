"""The protocol parser on recorded real pi streams and on hand-made edge streams (host-free).

tests/host/streams/ holds pi 1.6 stdout records (``<group>.events.jsonl``) recorded through
the real host and the scripted stand-in by ``record.py`` there, with the turns the
evaluator built from them at the time (``<group>.transcript.json``). Each recorded turn
is also described here by hand (response, stop reason, error, calls), so a re-recording
that changes what pi emits shows up as a reviewed diff, not as a silent new truth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.evidence.records import TranscriptTurn, Usage
from pytest_skill_eval.host.protocol import (
    LineSplitter,
    Record,
    TurnSpan,
    assistant_text,
    build_turn,
    parse_record,
    provider_error,
    registered_context,
    registered_skills,
    system_sections,
    usage_totals,
)
from pytest_skill_eval.observation import ToolCall, Turn

STREAMS = Path(__file__).parent / "streams"
GUARD = ("skill-eval guard blocked",)
RECORDED = sorted(p.name.removesuffix(".events.jsonl") for p in STREAMS.glob("*.events.jsonl"))
CHANGE_MD = "# Change 1.4.0\n\n- Added: `--dry-run` flag for the deploy command.\n- Fixed: a crash when the config file is empty.\n"
HTTP_500 = '500: {"message":"[scripted stand-in] scripted fault http-500","type":"server_error","code":"server_error"}'

#: group -> per turn: (response, stop_reason, error, settled, [(tool, is_error, blocked)])
FACTS: dict[str, list[tuple[str, str | None, str | None, bool, list[tuple[str, bool, bool]]]]] = {
    "release-notes-activation": [("Following the release-notes skill: Added, Changed and Fixed sections drafted.",
                                  "stop", None, True, [("read", False, False)])],
    "release-notes-body": [
        ("I read CHANGE.md: one addition and one fix. Ready to finish.", "stop", None, True, [("read", False, False)]),
        ("Release notes finished and recorded in result.json.", "stop", None, True, [("write", False, False)]),
    ],
    "release-notes-errors": [("Tried a few reads.\nWrote one file.", "stop", None, True,
                              [("read", True, True), ("read", True, False), ("write", False, False)])],
    # a tool round, then the provider fails: the error is the turn's, the text is the earlier one
    "tool-then-http-500": [("Let me look first.", "error", HTTP_500, True, [("read", False, False)])],
    "disconnect": [("[scripted stand-in] partial reply before a disconnect", "error",
                    "terminated: other side closed (UND_ERR_SOCKET)", True, [])],
    "malformed": [("", "error", "Error reading response: malformed server-sent event JSON.", True, [])],
    "no-finish-reason": [("[scripted stand-in] reply without a finish_reason", "error",
                          "Stream ended without finish_reason", True, [])],
    # the model request hangs; the harness ends the run: an unsettled turn, no final message
    "stall": [("", "toolUse", None, False, [("read", False, False)])],
    "parallel-calls-then-exhausted": [
        ("Two reads, one failed.", "stop", None, True, [("read", False, False), ("read", True, False)]),
        ("Second turn.", "stop", None, True, []),
    ],
}


def load(name: str) -> tuple[bytes, dict[str, Any]]:
    return (STREAMS / f"{name}.events.jsonl").read_bytes(), json.loads((STREAMS / f"{name}.transcript.json").read_text())


def split(payload: bytes, size: int) -> list[bytes]:
    splitter = LineSplitter()
    lines: list[bytes] = []
    for at in range(0, len(payload), size):
        lines += splitter.feed(payload[at : at + size])
    assert splitter.rest() == b""
    return lines


def test_every_recorded_stream_is_described() -> None:
    assert set(RECORDED) == set(FACTS)


@pytest.mark.parametrize("name", RECORDED)
@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 30])
def test_recorded_stream_frames_identically_in_any_chunking(name: str, chunk: int) -> None:
    payload, _ = load(name)
    lines = split(payload, chunk)
    assert lines == payload.split(b"\n")[:-1]
    records = [parse_record(i, line) for i, line in enumerate(lines)]
    assert all(r.error is None and r.data is not None for r in records)


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_stream_builds_the_recorded_turns(name: str) -> None:
    payload, transcript = load(name)
    records = [parse_record(i, line) for i, line in enumerate(split(payload, 4096))]
    for recorded, facts in zip(transcript["turns"], FACTS[name], strict=True):
        start, end = recorded["events"]
        span = TurnSpan(recorded["index"], recorded["prompt"], recorded["sent"], start, end, recorded["settled"])
        turn = build_turn(span, records, GUARD)
        response, stop_reason, error, settled, calls = facts
        assert (turn.response, turn.stop_reason, turn.error, turn.settled) == (response, stop_reason, error, settled)
        assert [(c.name, c.is_error, c.blocked) for c in turn.tool_calls] == calls
        assert all(records[c.event_index].type == "tool_execution_start" for c in turn.tool_calls)
        assert all(c.turn == turn.index for c in turn.tool_calls)
        stored = TranscriptTurn(turn, usage_totals(records, start, end), 1.0, 2.0, (start, end))
        timing = ("started_at", "ended_at")  # the recorded streams keep no wall-clock times
        assert {k: v for k, v in stored.to_json().items() if k not in timing} == recorded
        assert TranscriptTurn.from_json(stored.to_json()) == stored
        assert usage_totals(records, start, end).to_json() == recorded["usage"]
        # a failed provider call is what the driver turns into infrastructure-failed
        assert provider_error(records[start:end]) == (error if stop_reason == "error" else None)


def test_recorded_tool_results_and_usage() -> None:
    payload, transcript = load("release-notes-body")
    records = [parse_record(i, line) for i, line in enumerate(split(payload, 4096))]
    start, end = transcript["turns"][0]["events"]
    turn = build_turn(TurnSpan(1, "p", "s", start, end, True), records, GUARD)
    assert turn.tool_calls[0].result_text == CHANGE_MD
    assert turn.tool_calls[0].arguments == {"path": "CHANGE.md"}
    assert turn.tool_calls[0].id == "call_1_0_0"
    usage = usage_totals(records, start, end)
    assert usage.input and usage.output and usage.total_tokens == usage.input + usage.output
    # the whole stream is the sum of its turns
    whole = usage_totals(records)
    second = usage_totals(records, *transcript["turns"][1]["events"])
    assert whole == usage + second


def test_recorded_blocked_read_names_the_guard() -> None:
    payload, transcript = load("release-notes-errors")
    records = [parse_record(i, line) for i, line in enumerate(split(payload, 4096))]
    start, end = transcript["turns"][0]["events"]
    blocked = build_turn(TurnSpan(1, "p", "s", start, end, True), records, GUARD).tool_calls[0]
    assert blocked.arguments == {"path": "/etc/hostname"}
    assert (blocked.result_text or "").startswith("skill-eval guard blocked")
    # without the guard's prefixes nothing counts as blocked
    assert not any(c.blocked for c in build_turn(TurnSpan(1, "p", "s", start, end, True), records).tool_calls)


def test_recorded_registered_skills_and_system_sections() -> None:
    payload, _ = load("release-notes-body")
    records = [parse_record(i, line) for i, line in enumerate(split(payload, 4096))]
    sections = system_sections(records)
    assert {"preamble", "tools", "skills"} <= set(sections)
    first = records[0].data  # the get_commands response
    assert first is not None
    skills = registered_skills(records, first["data"]["commands"])
    assert [s["name"] for s in skills["prompt"]] == ["release-notes"]
    assert skills["prompt"][0]["location"].endswith("/release-notes/SKILL.md")
    assert skills["prompt"][0]["description"].startswith("Write release notes")
    assert skills["commands"] == [{"name": "skill:release-notes", "path": skills["prompt"][0]["location"]}]
    assert registered_context(records) == []


# -- framing -------------------------------------------------------------------------

def test_an_empty_line_does_not_stop_splitting() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a":1}\n\n{"b":2}\n\n') == [b'{"a":1}', b"", b'{"b":2}', b""]
    assert splitter.feed(b"\n") == [b""]
    assert splitter.feed(b'\n{"c":3}\n') == [b"", b'{"c":3}']
    assert splitter.rest() == b""


def test_crlf_and_lone_cr() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"a\r") == []
    assert splitter.feed(b"\nb\rc\r\n\r\n") == [b"a", b"b\rc", b""]
    assert splitter.feed(b"tail\r") == [] and splitter.rest() == b"tail\r"


def test_a_record_split_across_many_chunks() -> None:
    record = json.dumps({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": "é\u2028x"}]}},
                        ensure_ascii=False).encode()
    splitter = LineSplitter()
    out: list[bytes] = []
    for byte in record + b"\n" + record[:10]:
        out += splitter.feed(bytes([byte]))
    assert out == [record] and splitter.rest() == record[:10]
    assert parse_record(0, out[0]).data == json.loads(record)


def test_parse_record_keeps_index_raw_and_reason() -> None:
    good = parse_record(5, b'{"type": "agent_start"}')
    assert (good.index, good.raw, good.error, good.type) == (5, '{"type": "agent_start"}', None, "agent_start")
    assert good.data == {"type": "agent_start"}
    untyped = parse_record(0, b'{"x": 1}')
    assert untyped.type is None and untyped.error is None
    empty = parse_record(1, b"")
    assert (empty.data, empty.raw, empty.type) == (None, "", None)
    assert (empty.error or "").startswith("not JSON: ")
    binary = parse_record(2, b'"\xff"')
    assert (binary.data, binary.raw, binary.error) == (None, '"\ufffd"', "not a JSON object")
    assert parse_record(3, b"null").error == "not a JSON object"
    assert parse_record(4, b"{}").type is None


# -- turns from hand-made streams -------------------------------------------------------

def records_of(*events: dict[str, Any] | str) -> list[Record]:
    return [parse_record(i, (e if isinstance(e, str) else json.dumps(e)).encode()) for i, e in enumerate(events)]


def assistant(text: str | None, stop: str, error: str | None = None, **extra: Any) -> dict[str, Any]:
    content = [] if text is None else [{"type": "text", "text": text}]
    message: dict[str, Any] = {"role": "assistant", "stopReason": stop, "content": content, **extra}
    if error is not None:
        message["errorMessage"] = error
    return {"type": "message_end", "message": message}


def turn_of(*events: dict[str, Any] | str, blocked: tuple[str, ...] = GUARD) -> Turn:
    records = records_of(*events)
    return build_turn(TurnSpan(1, "p", "s", 0, len(records), True), records, blocked)


def test_the_last_assistant_message_is_the_response() -> None:
    turn = turn_of(assistant("first, with a tool call", "toolUse"), assistant("second", "toolUse"),
                   assistant("the answer", "stop"), {"type": "agent_settled"})
    assert (turn.response, turn.stop_reason, turn.error) == ("the answer", "stop", None)


def test_a_final_stop_without_text_empties_the_response() -> None:
    assert turn_of(assistant("thinking aloud", "toolUse"), assistant(None, "stop")).response == ""
    assert turn_of(assistant("cut", "toolUse"), assistant("", "length")).response == ""
    assert turn_of(assistant("cut", "toolUse"), assistant("long", "length")).stop_reason == "length"


def test_a_toolUse_message_without_text_keeps_the_earlier_text() -> None:
    turn = turn_of(assistant("Let me look.", "toolUse"), assistant(None, "toolUse"))
    assert (turn.response, turn.stop_reason) == ("Let me look.", "toolUse")


def test_a_provider_error_after_text_is_the_turns_error() -> None:
    turn = turn_of(assistant("Let me look.", "toolUse"), assistant(None, "error", "500: boom"))
    assert (turn.response, turn.stop_reason, turn.error) == ("Let me look.", "error", "500: boom")
    # a later successful message replaces the error
    recovered = turn_of(assistant(None, "error", "500: boom"), assistant("fine", "stop"))
    assert (recovered.response, recovered.stop_reason, recovered.error) == ("fine", "stop", None)


def test_an_abort_is_kept_with_its_message() -> None:
    turn = turn_of(assistant("partial", "aborted", "Request was aborted"), {"type": "agent_settled", "aborted": True})
    assert (turn.response, turn.stop_reason, turn.error) == ("partial", "aborted", "Request was aborted")
    # an errorMessage on a message that did not fail is not an error
    assert turn_of(assistant("ok", "stop", "stale")).error is None


def test_a_turn_with_no_message_end_does_not_crash() -> None:
    turn = turn_of({"type": "agent_start"}, {"type": "turn_start"},
                   {"type": "message_start", "message": {"role": "assistant", "content": []}})
    assert (turn.response, turn.stop_reason, turn.error, turn.tool_calls) == ("", None, None, ())
    empty = build_turn(TurnSpan(2, "p", "s", 0, 0, False), [])
    assert (empty.index, empty.prompt, empty.sent, empty.response, empty.settled) == (2, "p", "s", "", False)


def test_odd_message_end_records_do_not_crash() -> None:
    turn = turn_of(
        assistant("kept", "stop"),
        {"type": "message_end"},
        {"type": "message_end", "message": None},
        {"type": "message_end", "message": "text"},
        {"type": "message_end", "message": ["a"]},
        {"type": "message_end", "message": {"role": "assistant", "stopReason": "stop", "content": "not a list"}},
        {"type": "message_end", "message": {"role": "user", "stopReason": "error", "content": [{"type": "text", "text": "u"}]}},
        "not json at all",
        "[1, 2]",
    )
    assert (turn.response, turn.stop_reason, turn.error) == ("", "stop", None)
    assert provider_error(records_of({"type": "message_end", "message": "x"})) is None
    assert usage_totals(records_of({"type": "message_end", "message": ["x"]})) == Usage(), "no assistant message"


def test_assistant_text_joins_text_blocks_only() -> None:
    message = {"content": [{"type": "text", "text": "a"}, {"type": "toolCall", "text": "no"}, "raw",
                           {"type": "text", "text": 3}, {"type": "text"}, {"type": "text", "text": "b"}]}
    assert assistant_text(message) == "ab"
    assert assistant_text({}) == "" and assistant_text({"content": None}) == ""


def test_only_the_span_counts() -> None:
    records = records_of(assistant("before", "stop"), assistant("inside", "stop"), assistant("after", "stop"))
    turn = build_turn(TurnSpan(3, "p", "s", 1, 2, True), records)
    assert turn.response == "inside" and turn.index == 3


def test_tool_calls_pair_starts_with_ends_in_order() -> None:
    turn = turn_of(
        {"type": "tool_execution_start", "toolCallId": "b", "toolName": "read", "args": {"path": "x"}},
        {"type": "tool_execution_start", "toolCallId": "a", "toolName": "write", "args": "not an object"},
        {"type": "tool_execution_end", "toolCallId": "a", "isError": True,
         "result": {"content": [{"type": "text", "text": "skill-eval guard blocked: "}, {"type": "text", "text": "w"}]}},
        {"type": "tool_execution_end", "toolCallId": "nobody", "isError": True, "result": {}},
        {"type": "tool_execution_end", "toolCallId": "b", "isError": False, "result": "plain"},
        {"type": "tool_execution_start", "toolCallId": "c", "toolName": "read", "args": {}},
        {"type": "tool_execution_end", "toolCallId": "c", "isError": True,
         "result": {"content": [{"type": "image"}, {"type": "text", "text": 5}, "x"]}},
        {"type": "tool_execution_start", "toolCallId": "d", "toolName": "bash"},
        assistant("done", "stop"),
    )
    assert [(c.id, c.name, c.arguments, c.result_text, c.is_error, c.blocked, c.event_index, c.turn)
            for c in turn.tool_calls] == [
        ("b", "read", {"path": "x"}, None, False, False, 0, 1),
        ("a", "write", {}, "skill-eval guard blocked: w", True, True, 1, 1),
        ("c", "read", {}, "", True, False, 5, 1),
        ("d", "bash", {}, None, False, False, 7, 1),
    ]


def test_a_repeated_start_replaces_the_call_but_keeps_its_place() -> None:
    turn = turn_of(
        {"type": "tool_execution_start", "toolCallId": "a", "toolName": "read", "args": {"path": "1"}},
        {"type": "tool_execution_start", "toolCallId": "b", "toolName": "read", "args": {"path": "2"}},
        {"type": "tool_execution_start", "toolCallId": "a", "toolName": "write", "args": {"path": "3"}},
    )
    assert [(c.id, c.name, c.arguments, c.event_index) for c in turn.tool_calls] == [
        ("a", "write", {"path": "3"}, 2), ("b", "read", {"path": "2"}, 1)]


def test_blocked_needs_an_error_and_a_prefix() -> None:
    end = {"type": "tool_execution_end", "toolCallId": "a",
           "result": {"content": [{"type": "text", "text": "skill-eval guard blocked: read of /etc"}]}}
    start = {"type": "tool_execution_start", "toolCallId": "a", "toolName": "read", "args": {}}
    assert not turn_of(start, {**end, "isError": False}).tool_calls[0].blocked
    assert turn_of(start, {**end, "isError": True}).tool_calls[0].blocked
    assert not turn_of(start, {**end, "isError": True}, blocked=()).tool_calls[0].blocked
    assert turn_of(start, {**end, "isError": True}, blocked=("nope", "skill-eval")).tool_calls[0].blocked
    no_text = {"type": "tool_execution_end", "toolCallId": "a", "isError": True, "result": None}
    assert not turn_of(start, no_text).tool_calls[0].blocked


# -- provider errors, usage -----------------------------------------------------------------

def test_provider_error_is_decided_by_the_last_assistant_message() -> None:
    assert provider_error(records_of(assistant(None, "error", "500: boom"), assistant("ok", "stop"))) is None
    assert provider_error(records_of(assistant("ok", "stop"), assistant(None, "error", "500: boom"))) == "500: boom"
    later_user = {"type": "message_end", "message": {"role": "user", "content": []}}
    assert provider_error(records_of(assistant(None, "error", "e"), later_user, {"type": "agent_settled"})) == "e"
    assert provider_error(records_of(assistant(None, "error"))) == "unknown provider error"
    assert provider_error(records_of(assistant(None, "aborted", "Request was aborted"))) is None
    assert provider_error(records_of({"type": "agent_start"}, "junk")) is None
    assert provider_error([]) is None


def test_usage_totals_sum_assistant_messages_in_range() -> None:
    usage = {"input": 10, "output": 2, "cacheRead": 1, "cacheWrite": 3, "totalTokens": 16, "cost": {"total": 0.25}}
    records = records_of(
        assistant("a", "toolUse", usage=usage),
        {"type": "message_end", "message": {"role": "user", "usage": usage}},
        {"type": "message_start", "message": {"role": "assistant", "usage": usage}},
        # b: its input is no number, but its output is a count, so b reported tokens (and no cost)
        assistant("b", "stop", usage={"input": "many", "output": 1, "cost": {"total": "x"}}),
        assistant("c", "stop", usage="none"),
        assistant("d", "stop", usage={"cost": 4}),
        assistant("e", "stop", usage=usage),
    )
    whole = usage_totals(records)
    assert (whole.input, whole.output, whole.cache_read, whole.cache_write, whole.total_tokens) == (20, 5, 2, 6, 33)
    assert whole.cost == 0.5
    # a, b, c, d, e: c and d reported no tokens; b, c and d no cost
    assert (whole.messages, whole.messages_without_tokens, whole.messages_without_cost) == (5, 2, 3)
    tail = usage_totals(records, 1)
    assert (tail.input, tail.total_tokens, tail.cost, tail.messages) == (10, 17, 0.25, 4)
    assert usage_totals(records, 0, 1).output == 2
    assert usage_totals([]) == Usage(), "no message: every figure unavailable, nothing counted"
    assert usage_totals([]).to_json()["totalTokens"] is None


# -- transcript JSON, prompt sections -------------------------------------------------------

def test_transcript_turn_json_round_trip() -> None:
    turn = Turn(2, "p", "s", "r", (ToolCall(2, "c1", "read", {"path": "a"}, "x", True, True, 9),), "error", "boom", False)
    stored = TranscriptTurn(turn, Usage(input=3, cost=0.5, messages=1, messages_without_tokens=0), 1.0, None, (4, None))
    data = stored.to_json()
    assert data == {"index": 2, "prompt": "p", "sent": "s", "response": "r", "stop_reason": "error", "error": "boom",
                    "settled": False, "tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "a"},
                                                      "result_text": "x", "is_error": True, "blocked": True,
                                                      "event_index": 9}],
                    "usage": {"input": 3, "output": None, "cacheRead": None, "cacheWrite": None, "totalTokens": None,
                              "cost": 0.5, "reasoning": None, "messages": 1, "messagesWithoutTokens": 0,
                              "messagesWithoutCost": 0},
                    "started_at": 1.0, "ended_at": None, "events": [4, None]}
    back = TranscriptTurn.from_json(data)
    assert back == stored and back.turn.tool_calls[0].arguments == {"path": "a"}


def test_system_sections_come_from_the_last_system_message() -> None:
    records = records_of(
        {"type": "message_start", "message": {"role": "system", "sections": {"skills": "old"}}},
        {"type": "message_start", "message": {"role": "user", "sections": {"skills": "user"}}},
        {"type": "message_start", "message": {"role": "system", "sections": "not a dict"}},
        {"type": "message_end", "message": {"role": "system", "sections": {"skills": "end"}}},
        {"type": "message_start", "message": {"role": "system", "sections": {
            "skills": "new", "count": 3,
            "project_context": '<project_instructions path="/r/a&amp;b.md">x</project_instructions>'
                               '<project_instructions path="/r/AGENTS.md">y</project_instructions>'}}},
    )
    sections = system_sections(records)
    assert sections == {"skills": "new", "project_context": sections["project_context"]}
    assert registered_context(records) == ["/r/a&b.md", "/r/AGENTS.md"]
    assert system_sections(records[:2]) == {"skills": "old"}
    assert system_sections([]) == {} and registered_context([]) == []


def test_registered_skills_without_commands_and_with_several_skills() -> None:
    block = ("<skill>\n<name>a</name>\n<description>one\ntwo</description>\n<location>/a/SKILL.md</location>\n</skill>"
             "<skill><name>b&lt;</name><description></description><location>/b/SKILL.md</location></skill>")
    records = records_of({"type": "message_start", "message": {"role": "system", "sections": {"skills": block}}})
    assert registered_skills(records, None) == {"prompt": [
        {"name": "a", "description": "one\ntwo", "location": "/a/SKILL.md"},
        {"name": "b<", "description": "", "location": "/b/SKILL.md"}]}
    assert registered_skills([], [{"name": "x", "source": "skill"}]) == {
        "prompt": [], "commands": [{"name": "x", "path": None}]}


def test_unparseable_records_inside_a_turn_are_skipped_not_the_end() -> None:
    turn = turn_of("garbage", "[]", assistant("after the junk", "stop"),
                   {"type": "tool_execution_start", "toolCallId": "t", "toolName": "read", "args": {}},
                   {"type": "tool_execution_end", "toolCallId": "t", "isError": True,
                    "result": {"content": [{"type": "text"}, {"type": "text", "text": "denied"}]}})
    assert turn.response == "after the junk"
    assert [(c.result_text, c.is_error) for c in turn.tool_calls] == [("denied", True)]


def test_an_error_without_result_text_is_never_blocked() -> None:
    start = {"type": "tool_execution_start", "toolCallId": "a", "toolName": "read", "args": {}}
    end = {"type": "tool_execution_end", "toolCallId": "a", "isError": True, "result": None}
    assert not turn_of(start, end, blocked=("XX",)).tool_calls[0].blocked


def test_failed_records_keep_their_index() -> None:
    assert parse_record(7, b"{oops").index == 7
    assert parse_record(8, b"[1]").index == 8


def test_only_system_message_starts_define_the_sections() -> None:
    records = records_of(
        "junk",
        {"type": "message_start", "message": {"role": "system", "sections": {"skills": "start"}}},
        {"type": "message_end", "message": {"role": "system", "sections": {"skills": "end"}}},
        {"type": "message_update", "message": {"role": "system", "sections": {"skills": "update"}}},
    )
    assert system_sections(records) == {"skills": "start"}
