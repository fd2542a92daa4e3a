"""Host-free: what counts as "pi did not report" (pytest_skill_eval/usage.py), how sums keep
unavailable figures unavailable, and how every surface words them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_skill_eval.usage import (
    UNAVAILABLE,
    Usage,
    VariantUsage,
    cost_text,
    message_usage,
    money,
    tokens_text,
    total,
    usage_lines,
    usage_properties,
    usage_text,
)

#: what pi 1.6's providers put in a message before (or without) any usage from the provider
PI_DEFAULT = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _reported(tokens: int, cost: float, *, from_provider: bool = False) -> dict[str, Any]:
    return {"input": tokens, "output": 1, "cacheRead": 0, "cacheWrite": 0, "reasoning": 0, "totalTokens": tokens + 1,
            "cost": {"total": cost, "totalFromProvider": from_provider}}


def test_pi_s_defaults_are_not_a_report() -> None:
    """A stream without a usage chunk, an HTTP error, an abort: pi's zeros mean nothing was reported."""
    for usage in (PI_DEFAULT, None, "none", {}, {"cost": 4}, {"input": "many"}):
        assert message_usage(usage) == Usage(messages=1, messages_without_tokens=1, messages_without_cost=1), usage


def test_tokens_without_pricing_have_no_cost_and_a_provider_cost_is_a_cost() -> None:
    unpriced = message_usage(_reported(100, 0))
    assert (unpriced.total_tokens, unpriced.cost, unpriced.messages_without_cost) == (101, None, 1)
    priced = message_usage(_reported(100, 0.0125))
    assert (priced.cost, priced.messages_without_tokens, priced.messages_without_cost) == (0.0125, 0, 0)
    # OpenRouter's own figure: a real 0 (a free route) is a cost pi was told
    assert message_usage(_reported(100, 0, from_provider=True)).cost == 0.0


def test_reasoning_is_reported_only_as_a_number() -> None:
    assert message_usage(_reported(5, 0)).reasoning == 0
    without = {k: v for k, v in _reported(5, 0).items() if k != "reasoning"}
    assert message_usage(without).reasoning is None
    # a message that reported no tokens reports no reasoning, whatever it carries
    assert message_usage({**PI_DEFAULT, "reasoning": 0}).reasoning is None


def test_total_tokens_falls_back_to_the_parts() -> None:
    usage = message_usage({"input": 7, "output": 3, "cacheRead": 2, "cacheWrite": 1})
    assert (usage.total_tokens, usage.cost) == (13, None)


def test_partial_sums_are_the_reported_parts_and_say_how_many_did_not_report() -> None:
    summed = total([message_usage(_reported(100, 0.5)), message_usage(PI_DEFAULT), message_usage(_reported(10, 0))])
    assert (summed.input, summed.total_tokens, summed.cost) == (110, 112, 0.5)
    assert (summed.messages, summed.messages_without_tokens, summed.messages_without_cost) == (3, 1, 2)
    assert tokens_text(summed) == "112 (1 of 3 messages did not report)"
    assert cost_text(summed) == "$0.5000 (2 of 3 messages did not report)"
    nothing = total([message_usage(PI_DEFAULT)])
    assert usage_text(nothing) == "tokens unavailable, cost unavailable"
    assert total([]) == Usage() and tokens_text(total([])) == UNAVAILABLE


_figure = st.one_of(st.none(), st.integers(0, 10**9))
_usages = st.builds(Usage, _figure, _figure, _figure, _figure, _figure,
                    st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False)), _figure,
                    st.integers(0, 100), st.integers(0, 100), st.integers(0, 100))


@given(st.lists(_usages, max_size=6))
def test_a_figure_is_unavailable_exactly_when_no_part_reported_it(parts: list[Usage]) -> None:
    summed = total(parts)
    for field in ("input", "output", "cache_read", "cache_write", "total_tokens", "reasoning", "cost"):
        values = [getattr(p, field) for p in parts if getattr(p, field) is not None]
        if not values:
            assert getattr(summed, field) is None
        elif field == "cost":
            assert summed.cost == pytest.approx(sum(values))
        else:
            assert getattr(summed, field) == sum(values)
    assert summed.messages == sum(p.messages for p in parts)
    assert Usage.from_json(summed.to_json()) == summed


def test_old_evidence_reads_as_written() -> None:
    old = {"input": 10.0, "output": 2.0, "cacheRead": 0.0, "cacheWrite": 0.0, "totalTokens": 12.0, "cost": 0.0}
    assert Usage.from_json(old) == Usage(10, 2, 0, 0, 12, 0.0)


def test_every_surface_says_unavailable_never_zero() -> None:
    silent = VariantUsage(message_usage(PI_DEFAULT), Usage(), 1)
    assert usage_lines(silent, "  ") == ["  usage            tokens unavailable, cost unavailable"]  # once, not three times
    props = dict(usage_properties(silent))
    assert {v for k, v in props.items() if not k.endswith(("messages", "_tokens", "_cost"))} == {UNAVAILABLE}
    assert props["skill_eval.usage.total.messages_without_tokens"] == "1"
    assert silent.to_json()["total"]["cost"] is None
    priced = VariantUsage(message_usage(_reported(100, 0.0125)), message_usage(_reported(10, 0.00002)), 2)
    assert dict(usage_properties(priced))["skill_eval.usage.total.cost"] == repr(0.0125 + 0.00002)
    assert usage_text(priced.candidate) == ("tokens 11 (input 10, output 1, cache read 0, cache write 0, reasoning 0), "
                                            "cost $2e-05")
    assert money(0) == "$0.0000" and money(0.012345) == "$0.0123"


def test_usage_without_any_cost_is_one_line_and_priced_usage_three() -> None:
    # the scripted stand-in reports tokens but no cost: one line, each variant's tokens in it
    unpriced = VariantUsage(Usage(90, 10, 0, 0, 100, None, messages=2, messages_without_cost=2),
                            Usage(95, 10, 0, 0, 105, None, messages=2, messages_without_cost=2))
    assert usage_lines(unpriced, "    ") == [
        "    usage            tokens 205 (baseline 100, candidate 105), cost unavailable"]
    priced = VariantUsage(Usage(90, 10, 0, 0, 100, 0.001, messages=1), Usage(95, 10, 0, 0, 105, 0.002, messages=1))
    assert [line.split("  ")[1] for line in usage_lines(priced, "  ")] == ["usage baseline", "usage candidate",
                                                                          "usage total"]
    assert usage_lines(priced, "  ")[2].endswith("cost $0.0030")
