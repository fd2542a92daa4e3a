"""What a record field's type annotation says, and what a stored JSON value is, for the codec (pure).

:mod:`.codec` reads a stored value by its field's type: these answer whether the type takes
``null`` (:func:`nullable`), whether it is a union (:func:`is_union`), which values a
``Literal`` allows (:func:`literal_choices`), whether a JSON scalar is of a scalar type
(:func:`is_scalar`, with JSON Schema's integers), and how a stored value is shown in a
message (:func:`found`).
"""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin

from pytest_skill_eval.errors import show

__all__ = ["JSON_TYPES", "MISSING", "SCALARS", "literal_choices", "found", "is_scalar", "is_union", "nullable"]

MISSING: Any = object()
JSON_TYPES = ((bool, "boolean"), (str, "string"), (int, "number"), (float, "number"), (list, "array"),
               (dict, "object"))


def found(value: Any) -> str:
    """What a stored field holds, for messages: ``nothing``, ``null``, ``number 3``…"""
    if value is MISSING:
        return "nothing"
    if value is None:
        return "null"
    name = next((n for t, n in JSON_TYPES if isinstance(value, t)), type(value).__name__)
    return f"{name} {show(value)}"


def nullable(hint: Any) -> bool:
    return hint is Any or (is_union(hint) and type(None) in get_args(hint))


def is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


def literal_choices(hint: Any) -> tuple[Any, ...] | None:
    """The values of a ``Literal`` (or a union of them), else None."""
    if get_origin(hint) is Literal:
        return get_args(hint)
    if is_union(hint) and all(get_origin(a) is Literal for a in get_args(hint)):
        return tuple(v for a in get_args(hint) for v in get_args(a))
    return None


SCALARS: dict[Any, str] = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}


def is_scalar(hint: Any, value: Any) -> bool:
    if hint is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if hint is int:
        # JSON Schema's "integer" also takes 2.0; such a value is kept as it was stored
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if hint is float:
        return isinstance(value, int | float)
    return isinstance(value, hint)
