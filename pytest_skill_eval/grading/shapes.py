"""Kind-specific expectation shapes: validated once into a :class:`Check`, or explained.

Definition loading checks only the fields every expectation shares; the spec puts the
kind-specific checks at grade time so a malformed expectation becomes ``grade-error``
evidence instead of changing the subject run. The same function serves a pre-run
check (:func:`check_expectation`), so authors can avoid spending a run on a typo.

Every problem reads ``<pointer>/<field>: expected …, found …``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..definitions import Expectation, Group, Variant
from .jsonvalue import parse_pointer, show

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


@dataclass(frozen=True, slots=True)
class Check:
    """One expectation after validation: only the fields its kind uses are meaningful."""

    kind: str
    expect: str
    variant: str
    turn: int | None
    path: str = ""
    paths: tuple[str, ...] = ()
    value: Any = None
    pointer: str = ""
    tokens: tuple[str, ...] = ()
    resource: str = ""
    index: int | None = None
    tool: str = ""
    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    surface: str = "system-prompt"
    request: str | int = "last"


def _is_int(value: Any) -> bool:
    # bool is an int subclass in Python but not a number in JSON.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_relative_path(value: Any) -> bool:
    """A slash-separated path below its root, spelled exactly as evidence file maps spell it."""
    if not isinstance(value, str) or value == "" or value.startswith("/") or "\x00" in value:
        return False
    return all(segment not in ("", ".", "..") for segment in value.split("/"))


def _one_of(values: tuple[str, ...]) -> str:
    return "one of " + ", ".join(f'"{v}"' for v in values)


def _escape(field: str) -> str:
    return field.replace("~", "~0").replace("/", "~1")


class _Problems:
    """Collects ``<pointer>/<field>: expected …, found …`` messages in check order."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.items: list[str] = []

    def add(self, field: str, expected: str, found: Any = _ABSENT, *, item: int | None = None) -> None:
        shown = "nothing" if found is _ABSENT else show(found)
        where = _escape(field) if item is None else f"{_escape(field)}/{item}"
        self.items.append(f"{self.prefix}/{where}: expected {expected}, found {shown}")


def parse_check(group: Group, expectation: Expectation) -> tuple[Check | None, list[str]]:
    """Validate *expectation* against its kind and *group*; return the check or the problems."""
    raw = expectation.raw
    problems = _Problems(expectation.pointer)
    if not isinstance(raw, dict):
        return None, [f"{expectation.pointer}: expected an expectation object, found {show(raw)}"]

    kind = expectation.kind
    known_kind = isinstance(kind, str) and kind in EXPECTS
    if not known_kind:
        problems.add("kind", _one_of(KINDS), raw.get("kind", _ABSENT))
    expect = expectation.expect
    if known_kind and not (isinstance(expect, str) and expect in EXPECTS[kind]):
        problems.add("expect", _one_of(EXPECTS[kind]), raw.get("expect", _ABSENT))
        expect = None
    variant_name = expectation.variant
    known_variant = isinstance(variant_name, str) and variant_name in ("baseline", "candidate")
    if not known_variant:
        problems.add("variant", _one_of(("baseline", "candidate")), raw.get("variant", _ABSENT))
    comparison = expectation.comparison
    if comparison is not None and not (
        isinstance(comparison, str) and len(comparison) <= 64 and _ID.fullmatch(comparison)
    ):
        problems.add(
            "comparison",
            "a comparison ID (lowercase letters, digits and single hyphens, at most 64 characters)",
            comparison,
        )
    turn = _check_turn(group, expectation, kind if known_kind else None, expect, problems)
    if not known_kind:
        return None, problems.items

    fields: dict[str, Any] = {}
    variant: Variant | None = group.variant(variant_name) if known_variant else None
    _KIND_CHECKERS[kind](raw, expect, variant, problems, fields)
    allowed = set(COMMON_FIELDS) | set(KIND_FIELDS[kind])
    for name in sorted(k for k in raw if k not in allowed):
        problems.add(name, f"no such field on a {kind} expectation (its fields: {_field_list(kind)})", raw[name])
    if problems.items or expect is None or not known_variant:
        return None, problems.items
    return Check(kind=kind, expect=expect, variant=variant_name, turn=turn, **fields), []


def check_expectation(group: Group, expectation: Expectation) -> list[str]:
    """Return the kind-specific shape problems of *expectation* (empty when it can be graded)."""
    return parse_check(group, expectation)[1]


def _field_list(kind: str) -> str:
    return ", ".join(sorted(COMMON_FIELDS + KIND_FIELDS[kind]))


def _check_turn(group: Group, expectation: Expectation, kind: str | None, expect: str | None, problems: _Problems) -> int | None:
    turn = expectation.turn
    count = len(group.prompts)
    range_text = f"a turn number from 1 to {count}"
    if turn is None:
        if kind == "skill-read" and expect in TIMED_SKILL_READS:
            problems.add("turn", f'{range_text} for expect "{expect}"')
        return None
    if not _is_int(turn) or not 1 <= turn <= count:
        problems.add("turn", range_text, turn)
        return None
    if kind is not None and kind != "skill-read" and group.type == "description":
        problems.add("turn", "no turn on a description group (only skill-read takes a turn there)", turn)
        return None
    if kind == "skill-read" and expect == "never":
        problems.add("turn", 'no turn with expect "never"', turn)
        return None
    return turn


def _check_skill_read(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    if variant is not None and variant.target is None:
        problems.add("variant", "a variant with a target skill", f"{variant.name} (its target is null)")


def _check_resource_read(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    resource = raw.get("resource", _ABSENT)
    if resource not in RESOURCES:
        problems.add("resource", _one_of(RESOURCES), resource)
        resource = None
    fields["resource"] = resource
    index = raw.get("index", _ABSENT)
    if resource == "workspace" and index is not _ABSENT:
        problems.add("index", 'no index for resource "workspace"', index)
    elif resource in ("skill", "context") and variant is not None:
        items = variant.skills if resource == "skill" else variant.context
        noun = "skills" if resource == "skill" else "context items"
        if not (_is_int(index) and 0 <= index < len(items)):
            problems.add("index", f"an index into the {len(items)} declared {noun} of {variant.name}", index)
        else:
            fields["index"] = index
    path = raw.get("path", _ABSENT)
    # "." names a context item itself, which may be a single file rather than a directory.
    if _is_relative_path(path) or (resource == "context" and path == "."):
        fields["path"] = path
    else:
        problems.add("path", f"a relative path inside the {resource or 'selected'} resource", path)


def _check_workspace_path(raw: dict[str, Any], problems: _Problems, fields: dict[str, Any]) -> None:
    path = raw.get("path", _ABSENT)
    if _is_relative_path(path):
        fields["path"] = path
    else:
        problems.add("path", 'a relative workspace path (slash-separated, without ".", ".." or empty segments)', path)


def _check_text_value(raw: dict[str, Any], problems: _Problems, fields: dict[str, Any]) -> None:
    value = raw.get("value", _ABSENT)
    if isinstance(value, str):
        fields["value"] = value
    else:
        problems.add("value", "a string", value)


def _check_path(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    _check_workspace_path(raw, problems, fields)


def _check_changed_paths(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    paths = raw.get("paths", _ABSENT)
    if not isinstance(paths, list):
        problems.add("paths", "an array of relative workspace paths", paths)
        return
    seen: set[str] = set()
    for i, path in enumerate(paths):
        if not _is_relative_path(path):
            problems.add("paths", 'a relative workspace path (slash-separated, without ".", ".." or empty segments)', path, item=i)
        elif path in seen:
            problems.add("paths", "a path not listed before", path, item=i)
        else:
            seen.add(path)
    fields["paths"] = tuple(p for p in paths if isinstance(p, str))


def _check_file_text(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    _check_workspace_path(raw, problems, fields)
    _check_text_value(raw, problems, fields)


def _check_json(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    _check_workspace_path(raw, problems, fields)
    needs_pointer = expect in ("field-present", "field-absent", "field-equals")
    pointer = raw.get("pointer", _ABSENT)
    if needs_pointer:
        tokens = parse_pointer(pointer) if isinstance(pointer, str) else None
        if tokens is None:
            problems.add("pointer", 'a JSON Pointer ("" or starting with "/", with "~" only as ~0 or ~1)', pointer)
        else:
            fields["pointer"], fields["tokens"] = pointer, tokens
    elif pointer is not _ABSENT and expect is not None:
        problems.add("pointer", f'no pointer with expect "{expect}"', pointer)
    value = raw.get("value", _ABSENT)
    if expect == "field-equals":
        if value is _ABSENT:
            problems.add("value", "a JSON value to compare with (null is allowed)")
        else:
            fields["value"] = value
    elif value is not _ABSENT and expect is not None:
        problems.add("value", f'no value with expect "{expect}"', value)


def _check_response_text(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    _check_text_value(raw, problems, fields)


def _check_string_list(raw: dict[str, Any], name: str, problems: _Problems) -> tuple[str, ...]:
    values = raw.get(name, _ABSENT)
    if values is _ABSENT:
        return ()
    if not isinstance(values, list):
        problems.add(name, "an array of strings", values)
        return ()
    for i, value in enumerate(values):
        if not isinstance(value, str):
            problems.add(name, "a string", value, item=i)
    return tuple(v for v in values if isinstance(v, str))


def _check_tool_call(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    tool = raw.get("tool", _ABSENT)
    if isinstance(tool, str) and tool:
        fields["tool"] = tool
    else:
        problems.add("tool", "a tool name", tool)
    fields["contains"] = _check_string_list(raw, "argumentContains", problems)
    fields["not_contains"] = _check_string_list(raw, "argumentNotContains", problems)


def _check_context_text(raw: dict[str, Any], expect: str | None, variant: Variant | None, problems: _Problems, fields: dict[str, Any]) -> None:
    _check_text_value(raw, problems, fields)
    surface = raw.get("surface", "system-prompt")
    if surface in SURFACES:
        fields["surface"] = surface
    else:
        problems.add("surface", _one_of(SURFACES), surface)
    request = raw.get("request", "last")
    if request in ("first", "last") or (_is_int(request) and request >= 1):
        fields["request"] = request
    else:
        problems.add("request", '"first", "last" or a positive request number', request)


_KIND_CHECKERS = {
    "skill-read": _check_skill_read,
    "resource-read": _check_resource_read,
    "path": _check_path,
    "changed-paths": _check_changed_paths,
    "file-text": _check_file_text,
    "json": _check_json,
    "response-text": _check_response_text,
    "tool-call": _check_tool_call,
    "context-text": _check_context_text,
}
