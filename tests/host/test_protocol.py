"""Pure protocol parsing: framing, records, turns."""

from __future__ import annotations

import json
from typing import Any

from pytest_skill_eval.host.protocol import (
    LineSplitter,
    Record,
    TurnSpan,
    build_turn,
    parse_record,
    provider_error,
    registered_skills,
)


def test_splits_on_lf_only_and_keeps_unicode_line_separators() -> None:
    splitter = LineSplitter()
    payload = json.dumps({"text": "a\u2028b\u2029c"}, ensure_ascii=False).encode()
    lines = splitter.feed(payload[:5]) + splitter.feed(payload[5:] + b"\r\n{\"x\":1}\npartial")
    assert [json.loads(line) for line in lines] == [{"text": "a\u2028b\u2029c"}, {"x": 1}]
    assert splitter.rest() == b"partial"


def test_unparseable_record_is_kept_verbatim() -> None:
    rec = parse_record(3, b"{not json")
    assert rec.data is None and rec.raw == "{not json" and rec.error is not None and rec.error.startswith("not JSON")
    assert parse_record(0, b"[1]").error == "not a JSON object"


def _records(*events: dict[str, Any]) -> list[Record]:
    return [parse_record(i, json.dumps(e).encode()) for i, e in enumerate(events)]


def test_build_turn_collects_calls_results_and_blocked_flags() -> None:
    records = _records(
        {"type": "agent_start"},
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "read", "args": {"path": "a.txt"}},
        {"type": "tool_execution_end", "toolCallId": "c1", "toolName": "read", "isError": False,
         "result": {"content": [{"type": "text", "text": "hello"}]}},
        {"type": "tool_execution_start", "toolCallId": "c2", "toolName": "write", "args": {"path": "/etc/x"}},
        {"type": "tool_execution_end", "toolCallId": "c2", "toolName": "write", "isError": True,
         "result": {"content": [{"type": "text", "text": "skill-eval guard blocked: write of /etc/x"}]}},
        {"type": "message_end", "message": {"role": "assistant", "stopReason": "stop",
                                            "content": [{"type": "text", "text": "done"}]}},
        {"type": "agent_settled", "aborted": False},
    )
    turn = build_turn(TurnSpan(1, "p", "/skill:x p", 0, len(records), True), records, ("skill-eval guard blocked",))
    assert turn.response == "done" and turn.stop_reason == "stop" and turn.sent == "/skill:x p"
    assert [(c.name, c.result_text, c.is_error, c.blocked, c.event_index) for c in turn.tool_calls] == [
        ("read", "hello", False, False, 1),
        ("write", "skill-eval guard blocked: write of /etc/x", True, True, 3),
    ]


def test_provider_error_reads_the_last_assistant_message() -> None:
    ok = _records({"type": "message_end", "message": {"role": "assistant", "stopReason": "stop", "content": []}})
    failed = _records({"type": "message_end", "message": {"role": "assistant", "stopReason": "error", "errorMessage": "500: boom"}})
    assert provider_error(ok) is None
    assert provider_error(failed) == "500: boom"


def test_registered_skills_come_from_the_prompt_the_host_built() -> None:
    skills = (
        "<skills>\n<available_skills>\n  <skill>\n    <name>a&amp;b</name>\n"
        "    <description>Use &lt;x&gt;.</description>\n    <location>/r/a/SKILL.md</location>\n  </skill>\n"
        "</available_skills>\n</skills>"
    )
    records = _records({"type": "message_start", "message": {"role": "system", "sections": {"skills": skills}}})
    found = registered_skills(records, [{"name": "skill:a", "source": "skill", "sourceInfo": {"path": "/r/a/SKILL.md"}},
                                        {"name": "other", "source": "extension"}])
    assert found == {
        "prompt": [{"name": "a&b", "description": "Use <x>.", "location": "/r/a/SKILL.md"}],
        "commands": [{"name": "skill:a", "path": "/r/a/SKILL.md"}],
    }
