"""Keeping secret values out of evidence: a pure redactor, no I/O.

The I/O modules (engine, evidence writers) call a :class:`Redactor` on everything they
are about to write, *before* it is serialised: decoded strings of host output, JSON values
recursively (keys and strings), the deltas of one streamed block, and the bytes of
workspace files. Nothing is ever rewritten after the fact.

Every secret is matched as itself and JSON-escaped (the text between the quotes of
``json.dumps(value, ensure_ascii=False)``, and with ``ensure_ascii=True``: ``\\uXXXX`` for
non-ASCII), escaped again up to :data:`ESCAPE_DEPTH` levels. The escaped spellings matter
for strings that hold JSON (tool arguments, a ``cat`` of a JSON file) and for workspace
files. Each occurrence is
replaced by :data:`MARKER`.

Values that cannot be kept out of evidence reliably are refused up front
(:func:`unsafe_reason`): shorter than :data:`MIN_SECRET_BYTES` bytes of UTF-8, or made of
fewer than :data:`MIN_DISTINCT_CHARS` distinct characters. Such a value would match
ordinary text everywhere (``true``, ``1``, ``00000000``) and corrupt evidence.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

MARKER = "<redacted>"

_T = TypeVar("_T")
MIN_SECRET_BYTES = 8
MIN_DISTINCT_CHARS = 4
#: shortest unfinished secret prefix cut from the end of a partial-message snapshot
SNAPSHOT_TAIL = 3


def unsafe_reason(value: str) -> str | None:
    """Why *value* is too short or too common to be redacted reliably, or None."""
    size = len(value.encode("utf-8"))
    if size < MIN_SECRET_BYTES:
        return f"it is {size} byte(s) long, fewer than {MIN_SECRET_BYTES}"
    if len(set(value)) < MIN_DISTINCT_CHARS:
        return f"it has fewer than {MIN_DISTINCT_CHARS} distinct characters"
    return None


#: how many levels of JSON escaping are matched: JSON text inside a JSON string (a tool
#: call's streamed arguments writing a JSON file) is two levels deep, plus one for luck
ESCAPE_DEPTH = 3


def spellings(value: str) -> set[str]:
    """The ways *value* can appear in evidence text: raw and JSON-escaped, up to ESCAPE_DEPTH levels."""
    forms, level = {value}, {value}
    for _ in range(ESCAPE_DEPTH):
        level = {json.dumps(f, ensure_ascii=a)[1:-1] for f in level for a in (False, True)} - forms
        forms |= level
    return {f for f in forms if f}


@dataclass(slots=True)
class Redactor:
    """Replaces every spelling of every secret by :data:`MARKER`, counting replacements."""

    secrets: tuple[str, ...]
    marker: str = MARKER
    _pattern: re.Pattern[str] | None = field(init=False, default=None)
    _bytes_pattern: re.Pattern[bytes] | None = field(init=False, default=None)
    _prefixes: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        forms = sorted({f for s in self.secrets if s for f in spellings(s)}, key=lambda f: (-len(f), f))
        self._prefixes = frozenset(f[:n] for f in forms for n in range(SNAPSHOT_TAIL, len(f)))
        if forms:
            # longest first: at one position an escaped spelling wins over the raw prefix of it
            self._pattern = re.compile("|".join(re.escape(f) for f in forms))
            encoded = sorted({f.encode("utf-8") for f in forms}, key=lambda f: (-len(f), f))
            self._bytes_pattern = re.compile(b"|".join(re.escape(f) for f in encoded))

    @classmethod
    def of(cls, values: Iterable[str]) -> Redactor:
        return cls(tuple(sorted({v for v in values if v})))

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def text(self, value: str) -> tuple[str, int]:
        """*value* with every secret replaced, and how many replacements were made."""
        if self._pattern is None:
            return value, 0
        return self._pattern.subn(self.marker, value)

    def snapshot(self, value: Any) -> tuple[Any, int]:
        """A partial-message snapshot (JSON): like :meth:`json`, and a string that ends in the
        first :data:`SNAPSHOT_TAIL` or more characters of a secret loses that tail to the
        marker, because the rest of the secret arrives in the next snapshot."""
        clean, total = self.json(value)
        if self._pattern is None:
            return clean, total

        def tails(item: Any) -> Any:
            nonlocal total
            if isinstance(item, str):
                cut = self._tail(item)
                if cut is not None:
                    total += 1
                    return item[:cut] + self.marker
                return item
            if isinstance(item, list):
                return [tails(i) for i in item]
            if isinstance(item, dict):
                return {k: tails(v) for k, v in item.items()}
            return item

        return tails(clean), total

    def _tail(self, value: str) -> int | None:
        """Where a trailing, unfinished secret spelling starts in *value*, if one does."""
        longest = max((len(p) for p in self._prefixes), default=0)
        for start in range(max(0, len(value) - longest), len(value) - SNAPSHOT_TAIL + 1):
            if value[start:] in self._prefixes:
                return start
        return None

    def spans(self, value: str) -> list[tuple[int, int]]:
        if self._pattern is None:
            return []
        return [m.span() for m in self._pattern.finditer(value)]

    def json(self, value: Any) -> tuple[Any, int]:
        """A JSON value with every key and string redacted (a new value; the input is untouched)."""
        if self._pattern is None:
            return value, 0
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            total, items = 0, []
            for item in value:
                clean, n = self.json(item)
                items.append(clean)
                total += n
            return items, total
        if isinstance(value, dict):
            total, out = 0, {}
            for key, item in value.items():
                clean_key, nk = self.text(key) if isinstance(key, str) else (key, 0)
                clean, n = self.json(item)
                out[clean_key] = clean
                total += nk + n
            return out, total
        return value, 0

    def record(self, value: _T) -> tuple[_T, int]:
        """A record (a frozen dataclass, nested records, tuples, mappings) with every string
        and mapping key in it redacted, as :meth:`json` redacts its stored form; the record
        itself when nothing was replaced."""
        if self._pattern is None:
            return value, 0
        clean: _T
        clean, n = self._walk(value)
        return clean, n

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes, total = {}, 0
            for f in dataclasses.fields(value):
                clean, n = self._walk(getattr(value, f.name))
                if n:
                    changes[f.name], total = clean, total + n
            return (dataclasses.replace(value, **changes) if changes else value), total
        if isinstance(value, tuple | list):
            total, items = 0, []
            for item in value:
                clean, n = self._walk(item)
                items.append(clean)
                total += n
            return ((tuple(items) if isinstance(value, tuple) else items) if total else value), total
        if isinstance(value, Mapping):
            total, out = 0, {}
            for key, item in value.items():
                clean_key, nk = self.text(key) if isinstance(key, str) else (key, 0)
                clean, n = self._walk(item)
                out[clean_key] = clean
                total += nk + n
            return (out if total else value), total
        return value, 0

    def deltas(self, pieces: list[str]) -> tuple[list[str], int]:
        """The deltas of one streamed block, redacted over their assembled text.

        The joined result equals ``text("".join(pieces))``: a secret split across deltas
        is replaced by one marker in the delta where it starts, and its remaining
        characters are dropped from the deltas that carried them.
        """
        assembled = "".join(pieces)
        spans = self.spans(assembled)
        if not spans:
            return list(pieces), 0
        out: list[str] = []
        start = 0
        for piece in pieces:
            end = start + len(piece)
            kept: list[str] = []
            pos = start
            for s, e in spans:
                if e <= pos or s >= end:
                    continue
                if s > pos:
                    kept.append(assembled[pos:s])
                if start <= s < end:
                    kept.append(self.marker)
                pos = min(e, end)
            if pos < end:
                kept.append(assembled[pos:end])
            out.append("".join(kept))
            start = end
        return out, len(spans)

    def data(self, raw: bytes) -> tuple[bytes, int]:
        """Bytes of a file (workspace, session) with every secret spelling replaced."""
        if self._bytes_pattern is None:
            return raw, 0
        return self._bytes_pattern.subn(self.marker.encode("utf-8"), raw)

    def stream_text(self, raw: bytes) -> tuple[bytes, int]:
        """Undecoded host output (stderr): decoded losslessly, redacted as text, re-encoded."""
        if self._pattern is None:
            return raw, 0
        clean, n = self.text(raw.decode("utf-8", "surrogateescape"))
        return clean.encode("utf-8", "surrogateescape"), n


_DELTA_FAMILIES = ("text", "thinking", "toolcall")


def _stream_event(data: dict[str, Any] | None) -> tuple[str, str, Any] | None:
    """``(family, phase, contentIndex)`` of a pi ``message_update`` stream event, else None."""
    if not data or data.get("type") != "message_update":
        return None
    event = data.get("assistantMessageEvent")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return None
    family, _, phase = event["type"].rpartition("_")
    if family not in _DELTA_FAMILIES or phase not in ("start", "delta", "end"):
        return None
    return family, phase, event.get("contentIndex")


def redact_events(redactor: Redactor, records: list[tuple[dict[str, Any] | None, str]]) -> tuple[list[str], int]:
    """Host stdout records (parsed object or None, raw line) as redacted lines for ``events.jsonl``.

    A record with nothing to redact is kept verbatim. A parsed record is redacted on its
    decoded strings and re-serialised, so the line stays valid JSON and escaping cannot hide
    a value. Streamed deltas (``text_delta``, ``thinking_delta``, ``toolcall_delta`` of pi's
    ``message_update``) are redacted over the assembled text of their block (from ``*_start``
    to ``*_end``, or the assistant ``message_end``, or the end of the stream) and mapped back
    onto the deltas: joining the stored deltas never yields a secret.
    """
    replaced: dict[int, str] = {}
    total = 0
    open_blocks: dict[tuple[str, Any], list[int]] = {}

    def close(key: tuple[str, Any]) -> None:
        nonlocal total
        members = open_blocks.pop(key, [])
        pieces = [str(records[i][0]["assistantMessageEvent"].get("delta") or "") for i in members]  # type: ignore[index]
        clean, n = redactor.deltas(pieces)
        total += n
        for i, piece, new in zip(members, pieces, clean, strict=False):
            if piece != new:
                replaced[i] = new

    if redactor.active:
        for index, (data, _raw) in enumerate(records):
            stream = _stream_event(data)
            if stream is not None:
                family, phase, content_index = stream
                key = (family, content_index)
                if phase == "start":
                    close(key)
                    open_blocks[key] = []
                elif phase == "delta" and isinstance(data["assistantMessageEvent"].get("delta"), str):  # type: ignore[index]
                    open_blocks.setdefault(key, []).append(index)
                elif phase == "end":
                    close(key)
            elif data and data.get("type") in _CLOSING_TYPES:
                for key in list(open_blocks):
                    close(key)
        for key in list(open_blocks):
            close(key)

    lines: list[str] = []
    for index, (data, raw) in enumerate(records):
        if not redactor.active:
            lines.append(raw)
            continue
        if data is None:
            clean_raw, n = redactor.text(raw)
            total += n
            lines.append(clean_raw)
            continue
        value: Any = data
        n = 0
        if index in replaced:
            value = {**data, "assistantMessageEvent": {**data["assistantMessageEvent"], "delta": replaced[index]}}
        if data.get("type") == "message_update":
            # hosts that repeat the partial message (``message``, ``assistantMessageEvent.partial``)
            # would otherwise show an unfinished secret's prefix at the end of a snapshot
            value, n = _snapshots(redactor, value)
        clean, m = redactor.json(value)
        n += m
        total += n
        if n or index in replaced:
            lines.append(json.dumps(clean, ensure_ascii=False, separators=(",", ":")))
        else:
            lines.append(raw)
    return lines, total


def _snapshots(redactor: Redactor, data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    total = 0
    out = dict(data)
    if "message" in out:
        out["message"], n = redactor.snapshot(out["message"])
        total += n
    event = out.get("assistantMessageEvent")
    if isinstance(event, dict) and "partial" in event:
        partial, n = redactor.snapshot(event["partial"])
        out["assistantMessageEvent"] = {**event, "partial": partial}
        total += n
    return out, total


_CLOSING_TYPES = ("message_end", "message_start", "agent_end", "turn_end")


@dataclass(slots=True)
class EventLines:
    """:func:`redact_events` one record at a time, for writing ``events.jsonl`` as pi runs.

    :meth:`feed` returns the lines that are final: every record at once when nothing is
    redacted, else the records up to the point where no streamed block is open (a block's
    deltas are redacted over its assembled text, so they wait for the block to close).
    The lines, joined over all calls and :meth:`finish`, and :attr:`count` equal what
    :func:`redact_events` gives for the whole list.
    """

    redactor: Redactor
    count: int = 0
    _pending: list[tuple[dict[str, Any] | None, str]] = field(default_factory=list)
    _open: set[tuple[str, Any]] = field(default_factory=set)

    def feed(self, data: dict[str, Any] | None, raw: str) -> list[str]:
        if not self.redactor.active:
            return [raw]
        self._pending.append((data, raw))
        stream = _stream_event(data)
        if stream is not None:
            family, phase, content_index = stream
            key = (family, content_index)
            if phase == "start":
                self._open.add(key)
            elif phase == "delta" and isinstance(data["assistantMessageEvent"].get("delta"), str):  # type: ignore[index]
                self._open.add(key)
            elif phase == "end":
                self._open.discard(key)
        elif data and data.get("type") in _CLOSING_TYPES:
            self._open.clear()
        return [] if self._open else self._flush()

    def finish(self) -> list[str]:
        """The lines still held back (blocks the stream left open end with it)."""
        self._open.clear()
        return self._flush()

    def _flush(self) -> list[str]:
        if not self._pending:
            return []
        lines, n = redact_events(self.redactor, self._pending)
        self.count += n
        self._pending = []
        return lines
