"""models_used (the provider/model pairs that answered), parse_record past the parser, more provider errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_skill_eval.host.protocol import Record, models_used, parse_record, provider_error_reason


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


@pytest.mark.parametrize(("error", "reason"), [
    ('429: {"message":"Please try again in 2m."}', "rate limited by the provider (429), retry after 2 min"),
    ('429: {"message":"Please try again in 20MS."}', "rate limited by the provider (429), retry after 20 ms"),
    ('529 {"message":"busy"}', "provider overloaded (529), try again later"),
    ('403 {"message":"forbidden"}',
     "the provider refused the credential (403): check the key the group inherits or --skill-eval-auth gives"),
    ('404 {"message":"not found"}', None),
])
def test_more_provider_errors_and_what_to_do(error: str, reason: str | None) -> None:
    assert provider_error_reason(error) == reason
