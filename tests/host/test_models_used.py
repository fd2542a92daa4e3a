"""models_used (the provider/model pairs that answered) and parse_record on a record nested past the parser."""

from __future__ import annotations

import json
from typing import Any

from pytest_skill_eval.host.protocol import Record, models_used, parse_record


def record(data: dict[str, Any] | None, index: int = 0) -> Record:
    return Record(index, data, json.dumps(data))


def end(role: str, provider: object, model: object) -> Record:
    return record({"type": "message_end", "message": {"role": role, "provider": provider, "model": model}})


def test_the_models_that_answered_in_first_use_order_once_each() -> None:
    records = [
        end("assistant", "anthropic", "claude"),
        end("user", "openai", "gpt"),  # only assistant messages answered
        record({"type": "message_start", "message": {"role": "assistant", "provider": "x", "model": "y"}}),
        end("assistant", "openai", "gpt"),
        end("assistant", "anthropic", "claude"),
        end("assistant", "openai", "gpt-mini"),
    ]
    assert models_used(records) == [{"provider": "anthropic", "model": "claude"}, {"provider": "openai", "model": "gpt"},
                                    {"provider": "openai", "model": "gpt-mini"}]


def test_records_that_name_no_model_are_passed_over() -> None:
    records = [
        parse_record(0, b"not json"),
        record({}),
        record({"type": "message_end"}),
        record({"type": "message_end", "message": None}),
        record({"type": "message_end", "message": ["assistant"]}),
        end("assistant", None, "m"),
        end("assistant", "p", 3),
        end("assistant", "p", "m"),
    ]
    assert models_used(records) == [{"provider": "p", "model": "m"}]
    assert models_used([]) == []


def test_a_record_nested_past_the_parser_is_a_record_with_a_reason() -> None:
    line = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    parsed = parse_record(7, line)
    assert (parsed.index, parsed.data, parsed.raw) == (7, None, line.decode())
    assert parsed.error == "not JSON this reader can take: nesting too deep to parse"
