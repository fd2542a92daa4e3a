"""Kind-specific expectation shapes: validated once into a :data:`~.checks.Check`, or explained.

Definition loading checks only the fields every expectation shares; the spec puts the
kind-specific checks at grade time so a malformed expectation becomes ``grade-error``
evidence instead of changing the subject run. The same function serves a pre-run
check (:func:`check_expectation`), so authors can avoid spending a run on a typo.

Every problem reads ``<pointer>/<field>: expected …, found …``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pytest_skill_eval.definitions.model import Expectation, Group, Variant
from pytest_skill_eval.definitions.rules import json_int
from pytest_skill_eval.errors import did_you_mean
from pytest_skill_eval.grading.checks import CHECK_TYPES, Check
from pytest_skill_eval.grading.jsonvalue import parse_pointer, show
from pytest_skill_eval.jsonpointer import escape as _escape

KINDS: tuple[str, ...] = (
    "skill-read",
    "resource-read",
    "path",
    "changed-paths",
    "file-text",
    "json",
    "response-text",
    "tool-call",
    "context-text",
)

EXPECTS: dict[str, tuple[str, ...]] = {
    "skill-read": ("never", "on-turn", "by-turn", "not-before-turn"),
    "resource-read": ("read", "not-read"),
    "path": ("exists", "absent"),
    "changed-paths": ("equals", "excludes"),
    "file-text": ("contains", "not-contains", "equals"),
    "json": ("available", "missing", "valid", "malformed", "field-present", "field-absent", "field-equals"),
    "response-text": ("contains", "not-contains", "equals"),
    "tool-call": ("called", "succeeded", "failed", "not-called"),
    "context-text": ("contains", "not-contains", "equals"),
}

COMMON_FIELDS: tuple[str, ...] = ("id", "kind", "variant", "expect", "comparison", "turn")

KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "skill-read": (),
    "resource-read": ("resource", "index", "path"),
    "path": ("path",),
    "changed-paths": ("paths",),
    "file-text": ("path", "value"),
    "json": ("path", "pointer", "value"),
    "response-text": ("value",),
    "tool-call": ("tool", "argumentContains", "argumentNotContains"),
    "context-text": ("value", "surface", "request"),
}

RESOURCES: tuple[str, ...] = ("workspace", "skill", "context")
SURFACES: tuple[str, ...] = ("system-prompt", "provider-context")
TIMED_SKILL_READS: tuple[str, ...] = ("on-turn", "by-turn", "not-before-turn")
_ID = re.compile(r"[a-z](?:[a-z0-9]|-(?=[a-z0-9]))*")
_ABSENT: Any = object()
_WORKSPACE_PATH = 'a relative workspace path (slash-separated, without ".", ".." or empty segments)'


def _is_relative_path(value: Any) -> bool:
    """A slash-separated path below its root, spelled exactly as evidence file maps spell it."""
    if not isinstance(value, str) or value == "" or value.startswith("/") or "\x00" in value:
        return False
    return all(segment not in ("", ".", "..") for segment in value.split("/"))


def _one_of(values: tuple[str, ...]) -> str:
    return "one of " + ", ".join(f'"{v}"' for v in values)


class _Parsing:
    """One expectation being validated: collects ``<pointer>/<field>: expected …, found …``
    messages in check order, and the validated kind-specific fields."""

    def __init__(self, prefix: str, raw: dict[str, Any]) -> None:
        self.prefix = prefix
        self.raw = raw
        self.expect: str | None = None
        self.variant: Variant | None = None
        self.items: list[str] = []
        self.fields: dict[str, Any] = {}

    def get(self, name: str) -> Any:
        """The raw field, or the absent marker (distinct from an explicit null)."""
        return self.raw.get(name, _ABSENT)

    def add(self, field: str, expected: str, found: Any = _ABSENT, *, item: int | None = None,
            known: tuple[str, ...] = ()) -> None:
        """One problem; *known* are the valid values (or names) a close *found* is suggested from."""
        shown = "nothing" if found is _ABSENT else show(found)
        where = _escape(field) if item is None else f"{_escape(field)}/{item}"
        self.items.append(f"{self.prefix}/{where}: expected {expected}, found {shown}{did_you_mean(found, known)}")

    def add_one_of(self, field: str, values: tuple[str, ...], found: Any = _ABSENT) -> None:
        self.add(field, _one_of(values), found, known=values)


def parse_check(group: Group, expectation: Expectation) -> tuple[Check | None, list[str]]:
    """Validate *expectation* against its kind and *group*; return the check or the problems."""
    raw = expectation.raw
    if not isinstance(raw, dict):
        return None, [f"{expectation.pointer}: expected an expectation object, found {show(raw)}"]
    p = _Parsing(expectation.pointer, raw)

    kind = expectation.kind
    known_kind = isinstance(kind, str) and kind in EXPECTS
    if not known_kind:
        p.add_one_of("kind", KINDS, p.get("kind"))
    expect = expectation.expect
    if known_kind and isinstance(expect, str) and expect in EXPECTS[kind]:
        p.expect = expect
    elif known_kind:
        p.add_one_of("expect", EXPECTS[kind], p.get("expect"))
    variant_name = expectation.variant
    if isinstance(variant_name, str) and variant_name in ("baseline", "candidate"):
        p.variant = group.variant(variant_name)
    else:
        p.add_one_of("variant", ("baseline", "candidate"), p.get("variant"))
    comparison = expectation.comparison
    if comparison is not None and not (
        isinstance(comparison, str) and len(comparison) <= 64 and _ID.fullmatch(comparison)
    ):
        p.add("comparison", "a comparison ID (lowercase letters, digits and single hyphens, at most 64 characters)",
              comparison)
    turn = _check_turn(group, expectation, kind if known_kind else None, p)
    if not known_kind:
        return None, p.items

    _KIND_CHECKERS[kind](p)
    allowed = set(COMMON_FIELDS) | set(KIND_FIELDS[kind])
    for name in sorted(k for k in raw if k not in allowed):
        p.add(name, f"no such field on a {kind} expectation (its fields: {_field_list(kind)})", raw[name])
        p.items[-1] += did_you_mean(name, COMMON_FIELDS + KIND_FIELDS[kind])
    if p.items or p.expect is None or p.variant is None:
        return None, p.items
    # every field was checked above against the kind's type (expect among EXPECTS[kind], ...)
    fields: dict[str, Any] = {"expect": p.expect, "variant": variant_name, "turn": turn, **p.fields}
    return CHECK_TYPES[kind](**fields), []


def check_expectation(group: Group, expectation: Expectation) -> list[str]:
    """Return the kind-specific shape problems of *expectation* (empty when it can be graded)."""
    return parse_check(group, expectation)[1]


def _field_list(kind: str) -> str:
    return ", ".join(sorted(COMMON_FIELDS + KIND_FIELDS[kind]))


def _check_turn(group: Group, expectation: Expectation, kind: str | None, p: _Parsing) -> int | None:
    found = expectation.turn
    count = len(group.prompts)
    # Worded as the definition loader words its own turn-range check.
    range_text = "turn 1 (the input has one turn)" if count == 1 else f"a turn from 1 to {count}"
    if found is None:
        if kind == "skill-read" and p.expect in TIMED_SKILL_READS:
            p.add("turn", f'{range_text} for expect "{p.expect}"')
        return None
    turn = json_int(found)
    if turn is None or not 1 <= turn <= count:
        p.add("turn", range_text, found)
        return None
    if kind is not None and kind != "skill-read" and group.type == "description":
        p.add("turn", "no turn on a description group (only skill-read takes a turn there)", turn)
        return None
    if kind == "skill-read" and p.expect == "never":
        p.add("turn", 'no turn with expect "never"', turn)
        return None
    return turn


def _check_skill_read(p: _Parsing) -> None:
    if p.variant is not None and p.variant.target is None:
        p.add("variant", "a variant with a target skill", f"{p.variant.name} (its target is null)")


def _check_resource_read(p: _Parsing) -> None:
    resource = p.get("resource")
    if resource not in RESOURCES:
        p.add_one_of("resource", RESOURCES, resource)
        resource = None
    p.fields["resource"] = resource
    index = p.get("index")
    if resource == "workspace" and index is not _ABSENT:
        p.add("index", 'no index for resource "workspace"', index)
    elif resource in ("skill", "context") and p.variant is not None:
        items = p.variant.skills if resource == "skill" else p.variant.context
        noun = "skills" if resource == "skill" else "context items"
        number = json_int(index)
        if number is not None and 0 <= number < len(items):
            p.fields["index"] = number
        else:
            p.add("index", f"an index into the {len(items)} declared {noun} of {p.variant.name}", index)
    path = p.get("path")
    # "." names a context item itself, which may be a single file rather than a directory.
    if _is_relative_path(path) or (resource == "context" and path == "."):
        p.fields["path"] = path
    else:
        p.add("path", f"a relative path inside the {resource or 'selected'} resource", path)


def _check_workspace_path(p: _Parsing) -> None:
    path = p.get("path")
    if _is_relative_path(path):
        p.fields["path"] = path
    else:
        p.add("path", _WORKSPACE_PATH, path)


def _check_text_value(p: _Parsing) -> None:
    value = p.get("value")
    if isinstance(value, str):
        p.fields["value"] = value
    else:
        p.add("value", "a string", value)


def _check_changed_paths(p: _Parsing) -> None:
    paths = p.get("paths")
    if not isinstance(paths, list):
        p.add("paths", "an array of relative workspace paths", paths)
        return
    seen: set[str] = set()
    for i, path in enumerate(paths):
        if not _is_relative_path(path):
            p.add("paths", _WORKSPACE_PATH, path, item=i)
        elif path in seen:
            p.add("paths", "a path not listed before", path, item=i)
        else:
            seen.add(path)
    p.fields["paths"] = tuple(path for path in paths if isinstance(path, str))


def _check_file_text(p: _Parsing) -> None:
    _check_workspace_path(p)
    _check_text_value(p)


def _check_json(p: _Parsing) -> None:
    _check_workspace_path(p)
    pointer = p.get("pointer")
    if p.expect in ("field-present", "field-absent", "field-equals"):
        tokens = parse_pointer(pointer) if isinstance(pointer, str) else None
        if tokens is None:
            p.add("pointer", 'a JSON Pointer ("" or starting with "/", with "~" only as ~0 or ~1)', pointer)
        else:
            p.fields["pointer"], p.fields["tokens"] = pointer, tokens
    elif pointer is not _ABSENT and p.expect is not None:
        p.add("pointer", f'no pointer with expect "{p.expect}"', pointer)
    value = p.get("value")
    if p.expect == "field-equals":
        if value is _ABSENT:
            p.add("value", "a JSON value to compare with (null is allowed)")
        else:
            p.fields["value"] = value
    elif value is not _ABSENT and p.expect is not None:
        p.add("value", f'no value with expect "{p.expect}"', value)


def _check_string_list(p: _Parsing, name: str) -> tuple[str, ...]:
    values = p.get(name)
    if values is _ABSENT:
        return ()
    if not isinstance(values, list):
        p.add(name, "an array of strings", values)
        return ()
    for i, value in enumerate(values):
        if not isinstance(value, str):
            p.add(name, "a string", value, item=i)
    return tuple(v for v in values if isinstance(v, str))


def _check_tool_call(p: _Parsing) -> None:
    tool = p.get("tool")
    if isinstance(tool, str) and tool:
        p.fields["tool"] = tool
    else:
        p.add("tool", "a tool name", tool)
    p.fields["contains"] = _check_string_list(p, "argumentContains")
    p.fields["not_contains"] = _check_string_list(p, "argumentNotContains")


def _check_context_text(p: _Parsing) -> None:
    _check_text_value(p)
    surface = p.raw.get("surface", "system-prompt")
    if surface in SURFACES:
        p.fields["surface"] = surface
    else:
        p.add_one_of("surface", SURFACES, surface)
    request = p.raw.get("request", "last")
    number = json_int(request)
    if isinstance(request, str) and request in ("first", "last"):
        p.fields["request"] = request
    elif number is not None and number >= 1:
        p.fields["request"] = number
    else:
        p.add("request", '"first", "last" or a positive request number', request)


_KIND_CHECKERS: dict[str, Callable[[_Parsing], None]] = {
    "skill-read": _check_skill_read,
    "resource-read": _check_resource_read,
    "path": _check_workspace_path,
    "changed-paths": _check_changed_paths,
    "file-text": _check_file_text,
    "json": _check_json,
    "response-text": _check_text_value,
    "tool-call": _check_tool_call,
    "context-text": _check_context_text,
}
