"""The pure redactor: strings, JSON values, streamed deltas, file bytes, the length rule."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_skill_eval.redaction import MARKER, Redactor, redact_events, unsafe_reason

SECRET = 'a"b\\c\nd-ü-секрет'


def test_every_spelling_is_replaced_and_counted() -> None:
    r = Redactor.of([SECRET])
    text = f"raw {SECRET} json {json.dumps(SECRET)} ascii {json.dumps(SECRET, ensure_ascii=True)}"
    clean, n = r.text(text)
    assert n == 3 and SECRET not in clean and clean.count(MARKER) == 3


def test_json_values_are_redacted_on_decoded_strings_and_stay_serialisable() -> None:
    r = Redactor.of([SECRET])
    clean, n = r.json({"k": [SECRET, {SECRET: 1}], "flag": True, "n": 3})
    assert n == 2 and clean == {"k": [MARKER, {MARKER: 1}], "flag": True, "n": 3}
    json.loads(json.dumps(clean))


def test_file_bytes_keep_json_valid() -> None:
    r = Redactor.of([SECRET])
    data = json.dumps({"token": SECRET, "status": "complete"}).encode()
    clean, n = r.data(data)
    assert n == 1 and json.loads(clean) == {"token": MARKER, "status": "complete"}


@pytest.mark.parametrize("cut", [[3, 9], [1], [5, 6, 7, 30], [0, 0, 12]])
def test_a_secret_split_across_deltas_is_not_recoverable_by_joining(cut: list[int]) -> None:
    secret = "TOKENVALUE-0123456789"
    text = f"x {secret} y {secret}"
    pieces, last = [], 0
    for c in cut:
        pieces.append(text[last:c])
        last = c
    pieces.append(text[last:])
    r = Redactor.of([secret])
    clean, n = r.deltas(pieces)
    assert n == 2 and len(clean) == len(pieces)
    assert "".join(clean) == r.text(text)[0] == f"x {MARKER} y {MARKER}"


def test_events_redact_deltas_per_block_and_keep_clean_lines_verbatim() -> None:
    secret = "TOKENVALUE-0123456789"

    def update(kind: str, **extra: object) -> tuple[dict[str, Any], str]:
        data: dict[str, Any] = {"type": "message_update", "assistantMessageEvent": {"type": kind, "contentIndex": 0, **extra}}
        return data, json.dumps(data)

    records: list[tuple[dict[str, Any] | None, str]] = [({"type": "agent_start"}, '{"type":  "agent_start"}'), update("text_start"),
               update("text_delta", delta="say TOKENV"), update("text_delta", delta="ALUE-0123456789 ok"),
               update("text_end", content=f"say {secret} ok"), (None, f"garbage {secret}")]
    lines, n = redact_events(Redactor.of([secret]), records)
    assert lines[0] == '{"type":  "agent_start"}'
    deltas = [json.loads(line)["assistantMessageEvent"]["delta"] for line in lines[2:4]]
    assert "".join(deltas) == f"say {MARKER} ok"
    assert secret not in "".join(lines) and n == 3


@pytest.mark.parametrize("value", ["true", "1", "", "short7!", "00000000", "abababab"])
def test_short_or_common_values_are_unsafe(value: str) -> None:
    assert unsafe_reason(value) is not None


@pytest.mark.parametrize("value", ["s3cr3t-v4lue", "sk-abcdefgh", "ünïcødé"])
def test_long_varied_values_are_safe(value: str) -> None:
    assert unsafe_reason(value) is None


def test_json_inside_json_is_redacted_too() -> None:
    r = Redactor.of([SECRET])
    twice = json.dumps(json.dumps({"token": SECRET}))
    clean, n = r.text(twice)
    assert n == 1 and json.loads(json.loads(clean)) == {"token": MARKER}


def test_an_unterminated_block_is_redacted_at_the_end_of_the_stream() -> None:
    secret = "TOKENVALUE-0123456789"
    records: list[tuple[dict[str, Any] | None, str]] = []
    for piece in ("abc TOKEN", "VALUE-01", "23456789 x"):
        data = {"type": "message_update", "assistantMessageEvent": {"type": "toolcall_delta", "contentIndex": 1, "delta": piece}}
        records.append((data, json.dumps(data)))
    lines, n = redact_events(Redactor.of([secret]), records)
    joined = "".join(json.loads(line)["assistantMessageEvent"]["delta"] for line in lines)
    assert n == 1 and joined == f"abc {MARKER} x"


def test_partial_message_snapshots_lose_an_unfinished_secret_prefix() -> None:
    secret = "TOKENVALUE-0123456789"
    snapshots = ["say TOK", "say TOKENVALUE-01", f"say {secret} ok"]
    records: list[tuple[dict[str, Any] | None, str]] = []
    for text in snapshots:
        message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        data = {"type": "message_update", "message": message,
                "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "", "partial": message}}
        records.append((data, json.dumps(data)))
    lines, _ = redact_events(Redactor.of([secret]), records)
    texts = [json.loads(line)["message"]["content"][0]["text"] for line in lines]
    assert texts == [f"say {MARKER}", f"say {MARKER}", f"say {MARKER} ok"]
    assert all("TOK" not in line for line in lines)
