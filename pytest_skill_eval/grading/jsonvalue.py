"""JSON documents as grading sees them: strict parsing, RFC 6901 pointers, JSON equality."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_skill_eval.errors import MalformedJSONError, show
from pytest_skill_eval.jsonpointer import parse as parse_pointer
from pytest_skill_eval.safe_text import neutralise

__all__ = ["MalformedJSONError", "parse_document", "parse_pointer", "show"]

# RFC 6901 array index: "0" or a number without leading zeros.
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_MISSING = object()


def _reject_constant(name: str) -> Any:
    # Python accepts NaN/Infinity; RFC 8259 JSON (and every other consumer) does not.
    raise ValueError(f"{name} is not JSON")


def parse_document(data: bytes) -> Any:
    """Parse *data* as strict UTF-8 JSON or raise :class:`MalformedJSONError` saying why.

    A byte order mark is not accepted (``JSON.parse`` rejects it too); with duplicate
    object keys the last one wins, as in every mainstream parser.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedJSONError(f"not UTF-8 (invalid byte at offset {exc.start})") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise MalformedJSONError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:
        raise MalformedJSONError(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise MalformedJSONError("nested too deeply to parse") from None


def resolve_pointer(document: Any, tokens: tuple[str, ...]) -> tuple[bool, Any]:
    """Return ``(True, value)`` when *tokens* identify a value in *document*, else ``(False, None)``.

    On arrays only canonical indices below the length match; ``-`` (the element after
    the last) never matches because it names a value that does not exist.
    """
    current = document
    for token in tokens:
        if isinstance(current, dict):
            current = current.get(token, _MISSING)
            if current is _MISSING:
                return False, None
        elif isinstance(current, list):
            if not _ARRAY_INDEX.fullmatch(token) or int(token) >= len(current):
                return False, None
            current = current[int(token)]
        else:
            return False, None
    return True, current


def json_equal(a: Any, b: Any) -> bool:
    """JSON value equality: numbers compare by value (``1 == 1.0``), booleans are not numbers.

    Objects compare by key set and values regardless of key order; arrays by position.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if type(a) is not type(b):
        return False
    return bool(a == b)


def _escape_unprintable(quoted: str) -> str:
    # json.dumps leaves DEL, C1 controls, bidi, line/paragraph separators and other spaces as
    # they are: the one neutralising rule escapes them (the backslashes JSON wrote stay single)
    return neutralise(quoted, one_line=True)


def excerpt(text: str, start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` as one quoted, escaped line: what a failed text check found.

    JSON string escaping, plus every control, format and separator character as
    ``\\uXXXX``, so text the subject wrote can never move the cursor, recolour the
    terminal or reorder what follows. An ``…`` outside the quotes marks each cut.
    """
    end = len(text) if end is None else min(end, len(text))
    start = max(0, start)
    quoted = _escape_unprintable(json.dumps(text[start:end], ensure_ascii=False))
    return ("…" if start > 0 else "") + quoted + ("…" if end < len(text) else "")


def as_text(value: Any) -> str:
    """*value* itself when it is a string, else its short JSON rendering (ids in results)."""
    return value if isinstance(value, str) else show(value)
