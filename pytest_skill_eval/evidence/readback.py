"""Reading stored evidence back, with its structure checked: for views, list and regrade.

A stored file can parse as JSON and still not be what a reader expects: ``grade.json``
holding ``[]``, a ``run.json`` that is a string, a ``group.json`` without ``state``. A
reader must then say which file is wrong, what it expected and what it found, and go on
with everything else. :func:`conform` checks a parsed document against a :class:`Shape`
and returns a copy in which every part that does not fit is left out, so the renderers can
trust the types of what remains, plus one message per misfit.

Shapes describe only what the readers use; unknown fields pass through unchecked, so
evidence that gains a field stays readable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFINITION",
    "GRADE",
    "GROUP",
    "RESULT",
    "RUN",
    "TRANSCRIPT",
    "Shape",
    "conform",
    "found",
    "read_checked",
]


@dataclass(frozen=True)
class Shape:
    """What a JSON value must be: one of ``kinds``, and for objects and arrays their parts.

    ``kinds`` holds ``object``, ``array``, ``string``, ``number``, ``boolean``, ``null`` or
    ``any``. ``fields`` are an object's known fields (``required`` ones must be present),
    ``values`` the shape of every value of an object used as a map, ``items`` the shape of
    every array item.
    """

    kinds: tuple[str, ...]
    fields: Mapping[str, Shape] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    values: Shape | None = None
    items: Shape | None = None

    def describe(self) -> str:
        words = {"object": "an object", "array": "an array", "string": "a string", "number": "a number",
                 "boolean": "a boolean", "null": "null", "any": "any value"}
        return " or ".join(words[k] for k in self.kinds)


ANY = Shape(("any",))
STR = Shape(("string",))
NUM = Shape(("number",))
BOOL = Shape(("boolean",))
OPT_STR = Shape(("string", "null"))
OPT_NUM = Shape(("number", "null"))
STRINGS = Shape(("array",), items=STR)


def obj(fields: Mapping[str, Shape] | None = None, *required: str, values: Shape | None = None,
        null: bool = False) -> Shape:
    return Shape(("object", "null") if null else ("object",), dict(fields or {}), tuple(required), values=values)


def arr(items: Shape) -> Shape:
    return Shape(("array",), items=items)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else "any"


def found(value: Any) -> str:
    """What a misfit value is, for messages: ``an array``, ``a string "x"``, ``a number 5``."""
    kind = _kind(value)
    if kind in ("object", "array"):
        return "an object" if kind == "object" else "an array"
    text = json.dumps(value, ensure_ascii=True)
    text = text if len(text) <= 40 else text[:39] + "…"
    return {"string": f"a string {text}", "number": f"a number {text}", "boolean": text}.get(kind, "null")


_MISSING = object()


def _conform(value: Any, shape: Shape, pointer: str, problems: list[str]) -> Any:
    kind = _kind(value)
    if "any" not in shape.kinds and kind not in shape.kinds:
        if pointer:
            problems.append(f"at {pointer}: expected {shape.describe()}, found {found(value)}")
        else:  # the whole file
            problems.append(f"expected {shape.describe().replace('an object', 'a JSON object')}, found {found(value)}")
        return _MISSING
    if kind == "object" and (shape.fields or shape.values is not None):
        kept: dict[str, Any] = {}
        for name, item in value.items():
            part = shape.fields.get(name, shape.values)
            checked = item if part is None else _conform(item, part, f"{pointer}/{name}", problems)
            if checked is not _MISSING:
                kept[name] = checked
        for name in shape.required:
            if name not in value:
                where = f"at {pointer}: " if pointer else ""
                problems.append(f'{where}expected field "{name}" ({shape.fields[name].describe()}), found none')
        return kept
    if kind == "array" and shape.items is not None:
        items = [_conform(item, shape.items, f"{pointer}/{i}", problems) for i, item in enumerate(value)]
        return [item for item in items if item is not _MISSING]
    return value


def conform(value: Any, shape: Shape) -> tuple[Any, list[str]]:
    """*value* with every part that does not fit *shape* left out, and one message per misfit.

    The value itself is ``None`` when it does not fit at all (``[]`` where an object is
    expected). Messages read ``at /pointer: expected …, found …`` or ``expected field
    "/name" (…), found none``; the caller prefixes the file.
    """
    problems: list[str] = []
    kept = _conform(value, shape, "", problems)
    return (None if kept is _MISSING else kept), problems


def read_checked(path: Path, shape: Shape, shown: str | None = None) -> tuple[Any, list[str]]:
    """Read and check the evidence file *path*: ``(the conforming part or None, problems)``.

    An absent file is ``(None, [])``: a run stopped early is ordinary. A file that cannot
    be read or parsed is ``(None, [message])``. Messages start with *shown* (default: the
    path) and a colon.
    """
    label = shown if shown is not None else str(path)
    if not path.is_file():
        return None, []
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, [f"{label}: cannot read evidence file {path}: {exc}"]
    kept, problems = conform(value, shape)
    return kept, [f"{label}: {p}" for p in problems]


# --------------------------------------------------------------------------- the files

_EXPECTATION = obj({"id": STR, "kind": STR, "variant": OPT_STR, "status": STR, "expected": STR, "observed": STR,
                    "locations": STRINGS, "error": OPT_STR}, "id", "status")
_COMPARISON = obj({"id": STR, "baseline": OPT_STR, "candidate": OPT_STR, "transition": STR, "reason": OPT_STR},
                  "id", "transition")
_GRADE_ERROR = obj({"scope": STR, "owner": OPT_STR, "variant": OPT_STR, "message": STR})

#: ``grade.json`` and ``grade-regraded-<stamp>.json``
GRADE = obj({"group_id": OPT_STR, "state": STR, "expectations": arr(_EXPECTATION), "comparisons": arr(_COMPARISON),
             "errors": arr(_GRADE_ERROR)}, "state", "expectations", "comparisons", "errors")

#: ``group.json`` (an invalid suite entry has ``id: null``, ``ref`` and ``definition_errors``)
GROUP = obj({"id": OPT_STR, "ref": OPT_STR, "position": OPT_NUM, "path": OPT_STR, "type": OPT_STR, "state": STR,
             "grade_state": OPT_STR, "variants": obj(values=obj({"state": STR, "reason": OPT_STR}, "state")),
             "review_questions": STRINGS, "definition_errors": STRINGS, "suite": obj(null=True)},
            "state", "variants")

_SKILL = obj({"name": STR, "location": STR})
RUN = obj({
    "variant": STR, "state": STR, "reason": OPT_STR, "mode": OPT_STR,
    "paths": obj({"workspace": STR, "skills": STRINGS, "target_file": OPT_STR, "context": STRINGS}),
    "source": obj({"kind": STR, "ref": OPT_STR, "commit": OPT_STR, "root": OPT_STR}),
    "host": obj({"version": STR}),
    "model": obj({"provider": STR, "model": STR, "thinking": OPT_STR}),
    "tools": STRINGS,
    "registered_skills": obj({"prompt": arr(_SKILL), "commands": arr(obj({"name": STR}))}),
    "context_files": STRINGS,
    "started_at": OPT_NUM, "ended_at": OPT_NUM,
    "usage": obj({"totalTokens": NUM, "input": NUM, "output": NUM}),
    "fingerprints_changed": STRINGS,
    "redactions": obj(values=NUM),
}, "variant", "state")

_TOOL_CALL = obj({"id": STR, "name": STR, "arguments": obj(null=True), "result_text": OPT_STR, "is_error": BOOL,
                  "blocked": BOOL, "event_index": NUM}, "id", "name")
_TURN = obj({"index": NUM, "prompt": STR, "sent": STR, "response": STR, "stop_reason": OPT_STR, "error": OPT_STR,
             "settled": BOOL, "tool_calls": arr(_TOOL_CALL)}, "index", "prompt", "sent", "response")
TRANSCRIPT = obj({"turns": arr(_TURN)}, "turns")

#: ``result.json``, the batch summary
RESULT = obj({"result_id": STR, "state": STR,
              "groups": arr(obj({"dir": OPT_STR, "id": OPT_STR, "state": STR, "comparisons": obj(values=STR)}))},
             "state", "groups")

#: ``definition.json``: the path the group was loaded from and the document as loaded
DEFINITION = obj({"path": OPT_STR, "definition": obj()}, "definition")
