"""Token usage and cost as pi reports them, summed per turn, run, variant, group and result.

Pure: no I/O. Every surface (``run.json``, ``transcript.json``, ``group.json``,
``result.json``, the ``-v`` lines, the terminal summary table, the JUnit properties,
``skill-eval view``, the step summary and the HTML report) builds its figures from
:func:`message_usage` and :func:`total` and shows them with :func:`usage_text`, so they
agree everywhere.

What "pi did not report" means (decided from pi 1.6's providers, docs/evidence.md):

- pi gives every assistant message a ``usage`` object, even when the provider sent none:
  the providers start from ``input``, ``output``, ``cacheRead``, ``cacheWrite`` and
  ``totalTokens`` all 0 and only overwrite them from the provider's usage chunk
  (``chunk.usage`` on chat completions, ``message_start``/``message_delta`` on Anthropic
  messages, ``response.completed`` on OpenAI responses). A message sent after a prompt
  always has input tokens, so **a message whose token counts are all 0 (or absent) did
  not report tokens**: its tokens are unavailable, not 0. That covers a stream without a
  usage chunk, an HTTP error and a request aborted before the provider said anything.
- pi computes ``cost`` from the model's rates in ``models.json`` or its built-in
  registry (``calculateCost``: tokens × rate / 1e6); a model without pricing has rates 0,
  so its cost is 0 whatever it used. **A message whose cost total is 0 did not report a
  cost** (unavailable, not $0.00) unless the provider gave the figure itself
  (``cost.totalFromProvider``, e.g. OpenRouter). A model that is really free is shown as
  unavailable too: pi's messages cannot tell the two apart.
- ``reasoning`` (a part of ``output``) is reported when a message that reported tokens
  carries a number for it.

A sum is ``None`` ("unavailable") when no message in it reported the figure; otherwise it
is the sum of the messages that did, and :attr:`Usage.messages_without_tokens` /
:attr:`Usage.messages_without_cost` say how many did not, so a partial sum is never
mistaken for a complete one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pytest_skill_eval.codec import Layout, Stored, meta

__all__ = ["UNAVAILABLE", "Usage", "VariantUsage", "breakdown_text", "cost_text", "message_usage", "money",
           "tokens_text", "total", "usage_lines", "usage_properties", "usage_text"]

#: how every surface shows a figure pi did not report (JSON: ``null``)
UNAVAILABLE = "unavailable"

_TOKEN_KEYS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _count(value: Any) -> int:
    return _int(value) or 0


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def _add_cost(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b


@dataclass(frozen=True, slots=True)
class Usage(Stored):
    """Token usage and cost of some assistant messages; ``None``: no message reported it."""

    # read leniently: also the shape evidence had before "unavailable" existed (numbers, 0
    # for anything unreported, no message counts) is taken as it was written
    input: int | None = field(default=None, metadata=meta(read=_int))
    output: int | None = field(default=None, metadata=meta(read=_int))
    cache_read: int | None = field(default=None, metadata=meta(key="cacheRead", read=_int))
    cache_write: int | None = field(default=None, metadata=meta(key="cacheWrite", read=_int))
    total_tokens: int | None = field(default=None, metadata=meta(key="totalTokens", read=_int))
    cost: float | None = field(default=None, metadata=meta(read=_float))
    #: reasoning tokens (a part of ``output``)
    reasoning: int | None = field(default=None, metadata=meta(read=_int))
    #: assistant messages counted
    messages: int = field(default=0, metadata=meta(read=_count))
    #: of those, how many reported no tokens (their tokens are not in the sums)
    messages_without_tokens: int = field(default=0, metadata=meta(key="messagesWithoutTokens", read=_count))
    #: of those, how many reported no cost (their cost is not in :attr:`cost`)
    messages_without_cost: int = field(default=0, metadata=meta(key="messagesWithoutCost", read=_count))

    @property
    def tokens_reported(self) -> bool:
        return self.total_tokens is not None

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            _add(self.input, other.input), _add(self.output, other.output),
            _add(self.cache_read, other.cache_read), _add(self.cache_write, other.cache_write),
            _add(self.total_tokens, other.total_tokens), _add_cost(self.cost, other.cost),
            _add(self.reasoning, other.reasoning), self.messages + other.messages,
            self.messages_without_tokens + other.messages_without_tokens,
            self.messages_without_cost + other.messages_without_cost,
        )


def message_usage(usage: Any) -> Usage:
    """One assistant message's usage from pi's ``message.usage`` (see the module docstring)."""
    if not isinstance(usage, Mapping):
        return Usage(messages=1, messages_without_tokens=1, messages_without_cost=1)
    counts = {key: _int(usage.get(key)) or 0 for key in _TOKEN_KEYS}
    if not any(counts.values()):
        return Usage(messages=1, messages_without_tokens=1, messages_without_cost=1)
    total_tokens = counts["totalTokens"] or counts["input"] + counts["output"] + counts["cacheRead"] + counts["cacheWrite"]
    cost_block = usage.get("cost")
    cost: float | None = None
    if isinstance(cost_block, Mapping):
        value = _float(cost_block.get("total"))
        if value is not None and (value != 0 or cost_block.get("totalFromProvider") is True):
            cost = value
    return Usage(counts["input"], counts["output"], counts["cacheRead"], counts["cacheWrite"], total_tokens, cost,
                 _int(usage.get("reasoning")), messages=1,
                 messages_without_cost=0 if cost is not None else 1)


def total(usages: Iterable[Usage]) -> Usage:
    """The sum of *usages* (figures no part reported stay ``None``)."""
    out = Usage()
    for usage in usages:
        out = out + usage
    return out


@dataclass(frozen=True, slots=True)
class VariantUsage(Stored):
    """Usage per variant and in total, summed over every pi run (trials and reruns included)."""

    #: ``total`` is stored too (written, recomputed on read)
    STORED: ClassVar[Layout] = Layout(order=("baseline", "candidate", "total", "runs"))
    baseline: Usage = Usage()
    candidate: Usage = Usage()
    #: pi runs summed (run records with a host part)
    runs: int = field(default=0, metadata=meta(read=int))

    @property
    def total(self) -> Usage:
        return self.baseline + self.candidate

    def __add__(self, other: VariantUsage) -> VariantUsage:
        return VariantUsage(self.baseline + other.baseline, self.candidate + other.candidate, self.runs + other.runs)

    def variant(self, name: str) -> Usage:
        return self.baseline if name == "baseline" else self.candidate


# ----------------------------------------------------------------------------- showing


def _unreported(missing: int, messages: int) -> str:
    return f" ({missing} of {messages} message{'s' if messages != 1 else ''} did not report)" if missing else ""


def tokens_text(usage: Usage) -> str:
    """``1234`` / ``1234 (1 of 3 messages did not report)`` / ``unavailable``."""
    if usage.total_tokens is None:
        return UNAVAILABLE
    return f"{usage.total_tokens}{_unreported(usage.messages_without_tokens, usage.messages)}"


def money(value: float) -> str:
    """``$0.0123``; small non-zero figures keep their significant digits."""
    return f"${value:.4f}" if value == 0 or abs(value) >= 0.0001 else f"${value:.2g}"


def cost_text(usage: Usage) -> str:
    """``$0.0123`` / ``$0.0123 (1 of 3 messages did not report)`` / ``unavailable``."""
    if usage.cost is None:
        return UNAVAILABLE
    return f"{money(usage.cost)}{_unreported(usage.messages_without_cost, usage.messages)}"


def _figure(value: int | None) -> str:
    return UNAVAILABLE if value is None else str(value)


def breakdown_text(usage: Usage) -> str:
    """``input 100, output 10, cache read 0, cache write 0, reasoning 0`` (each may be unavailable)."""
    return (f"input {_figure(usage.input)}, output {_figure(usage.output)}, cache read {_figure(usage.cache_read)}, "
            f"cache write {_figure(usage.cache_write)}, reasoning {_figure(usage.reasoning)}")


def usage_text(usage: Usage) -> str:
    """One line: ``tokens 110 (input 100, …), cost $0.0012``; ``tokens unavailable, cost unavailable``."""
    if usage.total_tokens is None:
        return f"tokens {UNAVAILABLE}, cost {cost_text(usage)}"
    return f"tokens {tokens_text(usage)} ({breakdown_text(usage)}), cost {cost_text(usage)}"


def usage_lines(usage: VariantUsage, indent: str = "  ") -> list[str]:
    """``-v`` / failure lines: the usage of each variant and the group's total.

    With no cost reported at all (the scripted stand-in, a model without pricing) the three
    lines would each end ``cost unavailable``: one line says it once, with each variant's
    tokens (the per-message breakdown stays in ``skill-eval view`` and the report).
    """
    if usage.total.cost is None:
        if usage.total.total_tokens is None:
            return [f"{indent}{'usage':<16} tokens {UNAVAILABLE}, cost {UNAVAILABLE}"]
        sides = ", ".join(f"{name} {tokens_text(part)}" for name, part in (("baseline", usage.baseline),
                                                                          ("candidate", usage.candidate)))
        return [f"{indent}{'usage':<16} tokens {tokens_text(usage.total)} ({sides}), cost {cost_text(usage.total)}"]
    return [f"{indent}{'usage ' + name:<16} {usage_text(part)}"
            for name, part in (("baseline", usage.baseline), ("candidate", usage.candidate), ("total", usage.total))]


def _property_value(value: float | None, *, money_figure: bool = False) -> str:
    if value is None:
        return UNAVAILABLE
    return repr(float(value)) if money_figure else str(value)


def usage_properties(usage: VariantUsage, prefix: str = "skill_eval.usage") -> list[tuple[str, str]]:
    """JUnit properties: ``skill_eval.usage.<baseline|candidate|total>.<figure>``; a figure pi
    did not report is ``unavailable``, never 0."""
    props: list[tuple[str, str]] = []
    for name, part in (("baseline", usage.baseline), ("candidate", usage.candidate), ("total", usage.total)):
        at = f"{prefix}.{name}"
        props += [
            (f"{at}.tokens", _property_value(part.total_tokens)),
            (f"{at}.input", _property_value(part.input)),
            (f"{at}.output", _property_value(part.output)),
            (f"{at}.cache_read", _property_value(part.cache_read)),
            (f"{at}.cache_write", _property_value(part.cache_write)),
            (f"{at}.reasoning", _property_value(part.reasoning)),
            (f"{at}.cost", _property_value(part.cost, money_figure=True)),
            (f"{at}.messages", str(part.messages)),
            (f"{at}.messages_without_tokens", str(part.messages_without_tokens)),
            (f"{at}.messages_without_cost", str(part.messages_without_cost)),
        ]
    return props
