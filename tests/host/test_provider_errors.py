"""What a person can do about a failed provider request, from pi's own error text (pure).

The texts are pi 1.6's, observed against the scripted server's faults (one per API's
wording): Anthropic's SDK message, pi's ``<provider> API error (<status>): <body>`` for
OpenAI Responses, ``<status>: <body>`` for chat completions, undici's dropped socket.
"""

from __future__ import annotations

import json

import pytest

from pytest_skill_eval.host.protocol import Record, provider_error_reason, usage_totals
from pytest_skill_eval.usage import Usage


@pytest.mark.parametrize(("error", "reason"), [
    ('429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your rate limit."}}',
     "rate limited by the provider (429), pi does not report when to retry: wait before running again"),
    ('openai API error (429): {"message":"Rate limit reached for requests. Please try again in 20s.","type":"requests"}',
     "rate limited by the provider (429), retry after 20 s"),
    ('429: {"message":"Rate limit reached. Please try again in 1.5s.","type":"requests"}',
     "rate limited by the provider (429), retry after 1.5 s"),
    ('429: {"message":"Please try again in 350ms."}', "rate limited by the provider (429), retry after 350 ms"),
    ('529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
     "provider overloaded (529), try again later"),
    ('openai API error (503): {"message":"The engine is currently overloaded, please try again later."}',
     "provider overloaded (503), try again later"),
    ('503: {"message":"Service unavailable"}', "provider server error (503), try again later"),
    ('500: {"message":"boom","type":"server_error"}', "provider server error (500), try again later"),
    ('401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
     "the provider refused the credential (401): check the key the group inherits or --skill-eval-auth gives"),
    ("terminated: other side closed (UND_ERR_SOCKET)",
     "the provider's stream was cut off before the reply ended"),
    ("Anthropic stream ended before message_stop",
     "the provider's stream was cut off before the reply ended"),
    ("Request timed out.: This operation was aborted (20)",
     "the provider did not answer within pi's request timeout: raise --skill-eval-provider-timeout "
     "(its default is the 14400 s emergency ceiling)"),
    ("Stream ended without finish_reason", None),
    ("Error reading response: malformed server-sent event JSON.", None),
    ('400 {"type":"error","error":{"type":"invalid_request_error","message":"bad"}}', None),
])
def test_provider_error_reason(error: str, reason: str | None) -> None:
    assert provider_error_reason(error) == reason


def _assistant(usage: dict[str, int]) -> Record:
    data = {"type": "message_end", "message": {"role": "assistant", "usage": usage}}
    return Record(0, data, json.dumps(data))


def test_reasoning_tokens_are_summed_when_reported_and_unavailable_when_not() -> None:
    plain = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "reasoning": 0, "totalTokens": 15}
    assert usage_totals([_assistant(plain)]).reasoning == 0, "pi reported 0 reasoning tokens"
    thinking = {**plain, "output": 9, "reasoning": 4, "cacheRead": 70, "cacheWrite": 30}
    totals = usage_totals([_assistant(plain), _assistant(thinking)])
    assert (totals.reasoning, totals.cache_read, totals.cache_write, totals.output) == (4, 70, 30, 14)
    assert Usage.from_json(totals.to_json()) == totals
    # Anthropic's messages carry reasoning only when the provider sent thinking tokens
    without = {k: v for k, v in plain.items() if k != "reasoning"}
    assert usage_totals([_assistant(without)]).reasoning is None
    assert usage_totals([_assistant(without), _assistant(thinking)]).reasoning == 4


def test_the_timeout_advice_and_the_option_help_name_the_ceiling_the_driver_applies(pytester: pytest.Pytester) -> None:
    from pytest_skill_eval.host.driver import DEFAULT_CEILING_SECONDS
    from pytest_skill_eval.host.launch import DEFAULT_PROVIDER_TIMEOUT_S

    assert DEFAULT_PROVIDER_TIMEOUT_S == DEFAULT_CEILING_SECONDS
    ceiling = f"{DEFAULT_CEILING_SECONDS:g}"
    advice = provider_error_reason("Request timed out.")
    assert advice is not None and f"its default is the {ceiling} s emergency ceiling" in advice
    help_text = pytester.runpytest("--help").stdout.str()
    assert f"(default: {ceiling}, the emergency ceiling;" in " ".join(help_text.split())
