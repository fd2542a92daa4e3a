"""Emulated model latency: when each record of a streamed reply is due (pure).

A real model is slow in two ways: it thinks before its first token (time to first token)
and then streams its output at some rate (tokens per second). The stand-in emulates both
so that suites can be timed as they would run against a real provider, without one.

The schedule is computed from the output characters each stream record carries (text
deltas, tool-call names and argument pieces), counted as :data:`CHARS_PER_TOKEN`
characters per token, the same count the deterministic usage reports. The first record
(and with it the response headers) is due after the first-token delay; output token *k*
(counted from 0) is due ``k / tokens_per_second`` later, and a record leaves once its last
token is due. Records that carry no output go with the record before them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["CHARS_PER_TOKEN", "Latency", "model_seconds", "schedule"]

CHARS_PER_TOKEN = 4
"""Characters per token, as in the deterministic usage (``completion_tokens`` = characters ÷ 4)."""


@dataclass(frozen=True, slots=True)
class Latency:
    """How slow the stand-in is: seconds before the first token, then output tokens per second.

    ``None`` means "not set here": a step's setting falls back to the script's ``latency``,
    and that to the server's (:meth:`over`). Unset everywhere, a reply is immediate.
    """

    first_token_delay: float | None = None
    tokens_per_second: float | None = None

    def __post_init__(self) -> None:
        if self.first_token_delay is not None and not 0 <= self.first_token_delay <= 3600:
            raise ValueError(f"first_token_delay: expected 0 to 3600 seconds, found {self.first_token_delay!r}")
        if self.tokens_per_second is not None and not self.tokens_per_second > 0:
            raise ValueError(f"tokens_per_second: expected a rate above 0, found {self.tokens_per_second!r}")

    def over(self, default: Latency) -> Latency:
        """These settings, each unset one taken from *default*."""
        return Latency(
            default.first_token_delay if self.first_token_delay is None else self.first_token_delay,
            default.tokens_per_second if self.tokens_per_second is None else self.tokens_per_second,
        )

    @property
    def is_immediate(self) -> bool:
        return not self.first_token_delay and self.tokens_per_second is None


def schedule(output_chars: Sequence[int], latency: Latency) -> tuple[float, ...]:
    """Seconds after the request arrived at which each record is due, in stream order.

    *output_chars* holds, per record, how many output characters it carries (0 for
    envelope records such as a role chunk, ``message_start`` or a usage chunk). The
    result never decreases; without a rate every record is due at the first-token delay.
    """
    return tuple(due_times(output_chars, latency))


def due_times(output_chars: Iterable[int], latency: Latency) -> Iterator[float]:
    """:func:`schedule` one record at a time, for a stream that is not built whole."""
    first = latency.first_token_delay or 0.0
    rate = latency.tokens_per_second
    sent = 0
    for chars in output_chars:
        sent += chars
        tokens = sent / CHARS_PER_TOKEN
        yield first + (max(tokens - 1, 0.0) / rate if rate else 0.0)


def model_seconds(output_chars: int, latency: Latency) -> float:
    """The emulated model time of one reply of *output_chars* characters: when its last token is due."""
    return schedule([output_chars], latency)[0]
