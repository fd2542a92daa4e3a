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
from typing import Any

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
    check_depth(value, max_depth=max_depth)
    return value


def check_depth(value: Any, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse *value* when arrays and objects nest deeper than *max_depth* (an explicit
    stack: a value of any depth is measured without recursion)."""
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

