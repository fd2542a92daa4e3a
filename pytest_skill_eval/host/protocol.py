"""Pure parsing of pi's JSONL stream: framing, records, and the normalized transcript.

Nothing here touches a process or a file: bytes and dicts in, frozen values out.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_skill_eval.observation import ToolCall, Turn
from pytest_skill_eval.usage import Usage, message_usage, total


class LineSplitter:
    """Split a byte stream into records on ``\\n`` only.

    pi's strings may hold U+2028/U+2029, which text-mode line readers treat as line
    breaks; splitting bytes on LF alone is the only framing that matches the host.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        self._buffer += chunk
        lines: list[bytes] = []
        while (cut := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:cut])
            del self._buffer[: cut + 1]
            if line.endswith(b"\r"):
                line = line[:-1]
            lines.append(line)
        return lines

    def rest(self) -> bytes:
        """Bytes after the last LF (a record cut off by a crash)."""
        return bytes(self._buffer)


@dataclass(frozen=True, slots=True)
class Record:
    """One stdout record: a parsed object, or the raw text that failed to parse."""

    index: int
    data: dict[str, Any] | None = field(compare=False, hash=False)
    raw: str
    error: str | None = None

    @property
    def type(self) -> str | None:
        return self.data.get("type") if self.data else None


def parse_record(index: int, line: bytes) -> Record:
    text = line.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return Record(index, None, text, f"not JSON: {exc.msg}")
    except RecursionError:  # a model's tool arguments nested past the parser: a record, not a crash
        return Record(index, None, text, "not JSON this reader can take: nesting too deep to parse")
    if not isinstance(data, dict):
        return Record(index, None, text, "not a JSON object")
    return Record(index, data, text)


def _message(data: dict[str, Any]) -> dict[str, Any]:
    """The ``message`` of a record, or ``{}`` when it has none or it is not an object."""
    message = data.get("message")
    return message if isinstance(message, dict) else {}


def assistant_text(message: dict[str, Any]) -> str:
    """Concatenated text blocks of an assistant message."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    parts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return "".join(p for p in parts if isinstance(p, str))


def _result_text(result: Any) -> str | None:
    if not isinstance(result, dict):
        return None
    texts = [c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"]
    return "".join(t for t in texts if isinstance(t, str))


@dataclass(frozen=True, slots=True)
class TurnSpan:
    """Which records belong to a declared turn, and how it ended."""

    index: int
    prompt: str
    sent: str
    start: int
    end: int
    settled: bool


def build_turn(span: TurnSpan, records: Sequence[Record], blocked_reasons: Iterable[str] = ()) -> Turn:
    """Normalize one turn's records into a :class:`Turn`.

    A tool call counts as blocked when its error result text starts with one of the
    guard's reason prefixes.
    """
    prefixes = tuple(blocked_reasons)
    calls: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    response = ""
    stop_reason: str | None = None
    error: str | None = None
    for rec in records[span.start : span.end]:
        data = rec.data
        if data is None:
            continue
        kind = data.get("type")
        if kind == "tool_execution_start":
            call_id = str(data.get("toolCallId"))
            if call_id not in calls:
                order.append(call_id)
            calls[call_id] = {
                "name": data.get("toolName"),
                "arguments": data.get("args") if isinstance(data.get("args"), dict) else {},
                "event_index": rec.index,
                "result_text": None,
                "is_error": False,
            }
        elif kind == "tool_execution_end":
            call = calls.get(str(data.get("toolCallId")))
            if call is not None:
                call["result_text"] = _result_text(data.get("result"))
                call["is_error"] = bool(data.get("isError"))
        elif kind == "message_end":
            message = _message(data)
            if message.get("role") == "assistant":
                stop_reason = message.get("stopReason")
                error = message.get("errorMessage") if stop_reason in ("error", "aborted") else None
                text = assistant_text(message)
                if text or stop_reason in ("stop", "length"):
                    response = text
    tool_calls = tuple(
        ToolCall(
            turn=span.index,
            id=call_id,
            name=str(calls[call_id]["name"]),
            arguments=calls[call_id]["arguments"],
            result_text=calls[call_id]["result_text"],
            is_error=calls[call_id]["is_error"],
            blocked=bool(
                calls[call_id]["is_error"]
                and prefixes
                and (calls[call_id]["result_text"] or "").startswith(prefixes)
            ),
            event_index=calls[call_id]["event_index"],
        )
        for call_id in order
    )
    return Turn(
        index=span.index,
        prompt=span.prompt,
        sent=span.sent,
        response=response,
        tool_calls=tool_calls,
        stop_reason=stop_reason,
        error=error,
        settled=span.settled,
    )


def provider_error(records: Sequence[Record]) -> str | None:
    """The error of the last assistant message in *records*, if the provider call failed."""
    for rec in reversed(records):
        data = rec.data
        if data and data.get("type") == "message_end":
            message = _message(data)
            if message.get("role") == "assistant":
                if message.get("stopReason") == "error":
                    return str(message.get("errorMessage") or "unknown provider error")
                return None
    return None


_STATUS = re.compile(r"^(?:[^\n(:]*\()?(?P<status>[1-5]\d\d)\b")
_TRY_AGAIN = re.compile(r"(?:try again in|retry after|retry-after:?)\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|m)?\b",
                        re.IGNORECASE)
_DROPPED = ("terminated", "other side closed", "UND_ERR_SOCKET", "stream ended before", "ECONNRESET", "socket hang up")


def provider_error_reason(error: str) -> str | None:
    """What a person can do about a failed provider request pi reported as *error*, or None.

    pi words the error by API: ``429 {"type":"error",…}`` (Anthropic), ``<provider> API
    error (429): {…}`` (OpenAI Responses), ``500: {…}`` (chat completions); a stream cut
    off mid-body reads ``terminated: other side closed``. pi does not pass on the
    ``retry-after`` header, so a wait is named only when the provider's own text gives
    one (OpenAI's "Please try again in 20s.").
    """
    match = _STATUS.search(error)
    status = int(match.group("status")) if match else None
    lowered = error.lower()
    if "request timed out" in lowered:
        return ("the provider did not answer within pi's request timeout: raise --skill-eval-provider-timeout "
                "(its default is the 14400 s emergency ceiling)")
    if status == 429:
        wait = _TRY_AGAIN.search(error)
        if wait is None:
            return "rate limited by the provider (429), pi does not report when to retry: wait before running again"
        unit = {"ms": "ms", "m": "min"}.get((wait.group("unit") or "s").lower(), "s")
        return f"rate limited by the provider (429), retry after {wait.group('value')} {unit}"
    if status in (529, 503) and ("overloaded" in lowered or status == 529):
        return f"provider overloaded ({status}), try again later"
    if status in (401, 403):
        return f"the provider refused the credential ({status}): check the key the group inherits or --skill-eval-auth gives"
    if status is not None and status >= 500:
        return f"provider server error ({status}), try again later"
    if any(marker.lower() in lowered for marker in _DROPPED):
        return "the provider's stream was cut off before the reply ended"
    return None


def models_used(records: Sequence[Record]) -> list[dict[str, str]]:
    """The provider/model pairs that answered, in first-use order, from assistant ``message_end`` records.

    pi names the model that actually answered on each assistant message, so this is what
    ran even when the group left the choice to pi.
    """
    seen: list[dict[str, str]] = []
    for rec in records:
        data = rec.data
        if not data or data.get("type") != "message_end":
            continue
        message = data.get("message") or {}
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        provider, model = message.get("provider"), message.get("model")
        if isinstance(provider, str) and isinstance(model, str):
            pair = {"provider": provider, "model": model}
            if pair not in seen:
                seen.append(pair)
    return seen


def usage_totals(records: Sequence[Record], start: int = 0, end: int | None = None) -> Usage:
    """Token usage and cost over the assistant ``message_end`` records in a range, each
    message read by :func:`pytest_skill_eval.usage.message_usage` (a figure pi did not
    report stays unavailable, never 0)."""
    found: list[Usage] = []
    for rec in records[start:end]:
        data = rec.data
        if not data or data.get("type") != "message_end":
            continue
        message = _message(data)
        if message.get("role") != "assistant":
            continue
        found.append(message_usage(message.get("usage")))
    return total(found)


_SKILL_BLOCK = re.compile(r"<skill>\s*<name>(.*?)</name>\s*<description>(.*?)</description>\s*<location>(.*?)</location>", re.DOTALL)


def system_sections(records: Sequence[Record]) -> dict[str, str]:
    """Sections of the last ``system`` message pi emitted (what it built as the prompt)."""
    sections: dict[str, str] = {}
    for rec in records:
        data = rec.data
        if data and data.get("type") == "message_start":
            message = _message(data)
            if message.get("role") == "system" and isinstance(message.get("sections"), dict):
                sections = {k: v for k, v in message["sections"].items() if isinstance(v, str)}
    return sections


_INSTRUCTIONS = re.compile(r'<project_instructions path="(.*?)">')


def registered_context(records: Sequence[Record]) -> list[str]:
    """Paths of the project instructions the host put in its prompt (declared context only)."""
    return [html.unescape(p) for p in _INSTRUCTIONS.findall(system_sections(records).get("project_context", ""))]


def registered_skills(records: Sequence[Record], commands: Sequence[dict[str, Any]] | None) -> dict[str, Any]:
    """The skills the host itself registered: its command list and its prompt's skill block."""
    listed = [
        {"name": html.unescape(n), "description": html.unescape(d), "location": html.unescape(loc)}
        for n, d, loc in _SKILL_BLOCK.findall(system_sections(records).get("skills", ""))
    ]
    result: dict[str, Any] = {"prompt": listed}
    if commands is not None:
        result["commands"] = [
            {"name": c.get("name"), "path": (c.get("sourceInfo") or {}).get("path")}
            for c in commands
            if c.get("source") == "skill"
        ]
    return result
