"""Bounded JSON reading: the one parse every reader of a file the tool does not trust goes through.

Definitions, scripts and every stored evidence file (records, transcripts, manifests, events)
are parsed here. A document larger than :data:`MAX_BYTES` or nested deeper than
:data:`MAX_DEPTH` is refused with a :class:`JSONBoundsError` that says what was found, so a
hostile file ends in the caller's located error (file, pointer, expected, found), never in
a ``RecursionError`` trace or a process that eats the machine's memory.

The depth bound sits far above anything the tool writes (a transcript nests a model's tool
arguments about six levels down) and far below Python's recursion limit, so every
recursive consumer after the parse (schema checks, surrogate checks, rendering) is safe.
Pure: no I/O; callers read the bytes (see ``evidence.safe_io``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NoReturn

from pytest_skill_eval.errors import JSONBoundsError
from pytest_skill_eval.jsonpointer import escape

#: deepest nesting of arrays and objects a document may have (the root value is depth 1)
MAX_DEPTH = 200

#: largest JSON document read whole, in bytes (64 MiB)
MAX_BYTES = 64 << 20


def check_size(size: int, *, limit: int = MAX_BYTES) -> None:
    """Refuse a document of *size* bytes when it is over *limit*."""
    if size > limit:
        raise JSONBoundsError(f"a document of {size} bytes or more, over the {limit}-byte limit of a JSON file")


def loads(data: str | bytes, *, limit: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
          object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
          parse_constant: Callable[[str], Any] | None = None) -> Any:
    """Parse one JSON document within the size and depth bounds.

    Raises :class:`JSONBoundsError` for a document over the bounds (with the pointer of
    the first value nested too deep), and ``json.JSONDecodeError`` (a ValueError) for text
    that is not JSON; the hooks are ``json.loads``'s own.
    """
    check_size(len(data), limit=limit)
    try:
        value = json.loads(data, object_pairs_hook=object_pairs_hook, parse_constant=parse_constant)
    except RecursionError:
        raise JSONBoundsError(f"nesting too deep to parse (more than {max_depth} levels)") from None
    if _brackets(data) > max_depth:
        check_depth(value, max_depth=max_depth)
    return value


def _brackets(data: str | bytes) -> int:
    """How many ``[`` and ``{`` *data* holds: at least the depth of what it parses to.

    Every array and object of the value was opened by one of them, so a text with no more
    than the bound cannot nest deeper (a count at C speed; most files pass here). In bytes
    of any encoding ``json.loads`` takes (UTF-8, -16, -32) each of them holds its ASCII byte.
    """
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def check_depth(value: Any, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse *value* when arrays and objects nest deeper than *max_depth* (an explicit
    stack: a value of any depth is measured without recursion).

    One level at a time, pointers unbuilt; only a value that is too deep is walked again
    to name where (the pointer the error carries is the same either way).
    """
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 1
    while level:
        if depth > max_depth:
            _deep_pointer(value, max_depth)
        below: list[Any] = []
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                if isinstance(child, (dict, list)):
                    below.append(child)
        level, depth = below, depth + 1


def _deep_pointer(value: Any, max_depth: int) -> NoReturn:
    """Raise the error of a value known to nest deeper than *max_depth*, located."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, pointer = stack.pop()
        if isinstance(node, dict):
            children: Any = node.items()
        elif isinstance(node, list):
            children = enumerate(node)
        else:
            continue
        if depth > max_depth:
            raise JSONBoundsError(f"nesting too deep to read (more than {max_depth} levels)", pointer)
        for key, child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1, f"{pointer}/{escape(str(key))}"))
    raise JSONBoundsError(f"nesting too deep to read (more than {max_depth} levels)")

