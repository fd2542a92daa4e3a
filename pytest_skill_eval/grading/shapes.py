"""Kind-specific expectation shapes: validated once into a :data:`~.checks.Check`, or explained.

Definition loading checks only the fields every expectation shares; the spec puts the
kind-specific checks at grade time so a malformed expectation becomes ``grade-error``
evidence instead of changing the subject run. The same function serves a pre-run
check (:func:`check_expectation`), so authors can avoid spending a run on a typo.

Every problem reads ``<pointer>/<field>: expected …, found …``.

What JSON Schema can state is in ``schemas/expectation.schema.json`` and worded by the one
translation of schema errors (:mod:`pytest_skill_eval.schemas`): each kind's expect values
and fields, paths, pointers, the request selector. This module keeps

* the rules that depend on the group: the turn range and which expectations take a turn,
  a target skill for skill-read, a declared skill or context item for resource-read;
* two wordings the translation does not produce (see :func:`_unknown_fields` and
  :func:`_repeated_paths`);
* the order of the messages: common fields first (kind, expect, variant, comparison,
  turn), then the kind's fields in their documented order, then unknown fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_skill_eval import jsonpointer, schemas
from pytest_skill_eval.definitions.model import VARIANTS, Expectation, Group, Variant
from pytest_skill_eval.definitions.rules import json_int
from pytest_skill_eval.errors import did_you_mean
from pytest_skill_eval.grading.checks import CHECK_TYPES, Check
from pytest_skill_eval.grading.jsonvalue import parse_pointer, show

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

TIMED_SKILL_READS: tuple[str, ...] = ("on-turn", "by-turn", "not-before-turn")
FIELD_CHECKS: tuple[str, ...] = ("field-present", "field-absent", "field-equals")
_SCHEMA = "expectation"
_ABSENT: Any = object()
#: the common fields in the order their problems are listed (before the kind's fields)
_COMMON_ORDER: tuple[str, ...] = ("kind", "expect", "variant", "comparison", "turn")


class _Problems:
    """The problems of one expectation, each with its place in the listed order."""

    def __init__(self, prefix: str, kind: str | None) -> None:
        self.prefix = prefix
        self.kind_fields = KIND_FIELDS[kind] if kind is not None else ()
        self.found: list[tuple[tuple[int, int, int], str]] = []
        self.schema_items: set[tuple[str, int]] = set()
        """(field, index) of every array item the schema refused"""

    def _place(self, field: str, item: int | None, phase: int | None) -> tuple[int, int, int]:
        if phase is None:
            phase = 0 if field in _COMMON_ORDER else 1
        order = (_COMMON_ORDER, self.kind_fields, ())[phase]
        rank = order.index(field) if field in order else len(order)
        return phase, rank, -1 if item is None else item

    def add(self, field: str, expected: str, found: Any = _ABSENT, *, item: int | None = None,
            known: tuple[str, ...] = (), hint: str = "", phase: int | None = None) -> None:
        """One problem worded here; *known* are the valid values a close *found* is suggested from.

        *phase* places a problem among the common fields (0), the kind's (1) or the unknown
        ones (2); by default a common field's problem is listed with the common fields.
        """
        shown = "nothing" if found is _ABSENT else show(found)
        where = jsonpointer.child(self.prefix, field) if item is None else jsonpointer.child(self.prefix, field, item)
        message = f"{where}: expected {expected}, found {shown}{did_you_mean(found, known)}{hint}"
        self.found.append((self._place(field, item, phase), message))

    def add_schema(self, raw: dict[str, Any], definition: str) -> None:
        """Every violation of one ``$defs`` entry of ``expectation.schema.json``, worded by the
        one translation of schema errors."""
        for problem in schemas.problems(_SCHEMA, raw, definition):
            tokens = jsonpointer.parse(problem.pointer) or ("",)
            item = int(tokens[1]) if len(tokens) > 1 and tokens[1].isdigit() else None
            if item is not None:
                self.schema_items.add((tokens[0], item))
            self.found.append((self._place(tokens[0], item, None), f"{self.prefix}{problem.pointer}: {problem.message}"))

    def listed(self) -> list[str]:
        return [message for _, message in sorted(self.found, key=lambda entry: entry[0])]


def parse_check(group: Group, expectation: Expectation) -> tuple[Check | None, list[str]]:
    """Validate *expectation* against its kind and *group*; return the check or the problems."""
    raw = expectation.raw
    if not isinstance(raw, dict):
        return None, [f"{expectation.pointer}: expected an expectation object, found {show(raw)}"]
    kind = expectation.kind
    known_kind = isinstance(kind, str) and kind in EXPECTS
    expect = expectation.expect
    valid_expect = expect if known_kind and isinstance(expect, str) and expect in EXPECTS[kind] else None
    variant_name = expectation.variant
    variant = group.variant(variant_name) if isinstance(variant_name, str) and variant_name in VARIANTS else None

    p = _Problems(expectation.pointer, kind if known_kind else None)
    # The common fields, then the kind's own: validating the whole schema would give the
    # same problems, but it tests the kind against each of the nine kinds.
    p.add_schema(raw, "common")
    if known_kind:
        p.add_schema(raw, kind)
    turn = _check_turn(group, expectation, kind if known_kind else None, valid_expect, p)
    if not known_kind:
        return None, p.listed()
    rule = _GROUP_RULES.get(kind)
    if rule is not None:
        rule(p, raw, variant)
    _unknown_fields(p, raw, kind)
    problems = p.listed()
    if problems or valid_expect is None or variant is None:
        return None, problems
    # the schema and the rules above checked every field against the kind's type
    fields: dict[str, Any] = {"expect": valid_expect, "variant": variant_name, "turn": turn,
                              **_FIELDS[kind](raw, valid_expect)}
    return CHECK_TYPES[kind](**fields), []


def check_expectation(group: Group, expectation: Expectation) -> list[str]:
    """Return the kind-specific shape problems of *expectation* (empty when it can be graded)."""
    return parse_check(group, expectation)[1]


def _check_turn(group: Group, expectation: Expectation, kind: str | None, expect: str | None,
                p: _Problems) -> int | None:
    # Hand-written: the range and the rules depend on the group (its prompts and type).
    found = expectation.turn
    count = len(group.prompts)
    # Worded as the definition loader words its own turn-range check.
    range_text = "turn 1 (the input has one turn)" if count == 1 else f"a turn from 1 to {count}"
    if found is None:
        if kind == "skill-read" and expect in TIMED_SKILL_READS:
            p.add("turn", f'{range_text} for expect "{expect}"')
        return None
    turn = json_int(found)
    if turn is None or not 1 <= turn <= count:
        p.add("turn", range_text, found)
        return None
    if kind is not None and kind != "skill-read" and group.type == "description":
        p.add("turn", "no turn on a description group (only skill-read takes a turn there)", turn)
        return None
    if kind == "skill-read" and expect == "never":
        p.add("turn", 'no turn with expect "never"', turn)
        return None
    return turn


def _unknown_fields(p: _Problems, raw: dict[str, Any], kind: str) -> None:
    # Hand-written: additionalProperties would read "expected one of the fields …, found
    # unknown field …"; grade errors name the kind, its fields and the value found.
    allowed = COMMON_FIELDS + KIND_FIELDS[kind]
    fields = ", ".join(sorted(allowed))
    for name in sorted(k for k in raw if k not in allowed):
        p.add(name, f"no such field on a {kind} expectation (its fields: {fields})", raw[name],
              hint=did_you_mean(name, allowed), phase=2)


# --- rules that depend on the group, or word what the schema cannot -------------------


def _target_skill(p: _Problems, raw: dict[str, Any], variant: Variant | None) -> None:
    if variant is not None and variant.target is None:
        p.add("variant", "a variant with a target skill", f"{variant.name} (its target is null)", phase=1)


def _declared_index(p: _Problems, raw: dict[str, Any], variant: Variant | None) -> None:
    # The schema refuses an index for the workspace; a skill or context index must name
    # one of the variant's declared items.
    resource = raw.get("resource")
    if resource not in ("skill", "context") or variant is None:
        return
    items = variant.skills if resource == "skill" else variant.context
    noun = "skills" if resource == "skill" else "context items"
    index = raw.get("index", _ABSENT)
    number = json_int(index)
    if number is None or not 0 <= number < len(items):
        p.add("index", f"an index into the {len(items)} declared {noun} of {variant.name}", index)


def _repeated_paths(p: _Problems, raw: dict[str, Any], variant: Variant | None) -> None:
    # Hand-written: uniqueItems would read "expected each item once, found … again (first
    # at …)", and would also count paths the schema already refused.
    paths = raw.get("paths")
    if not isinstance(paths, list):
        return
    seen: set[str] = set()
    for i, path in enumerate(paths):
        if ("paths", i) in p.schema_items:
            continue
        if path in seen:
            p.add("paths", "a path not listed before", path, item=i)
        else:
            seen.add(path)


_GROUP_RULES: dict[str, Callable[[_Problems, dict[str, Any], Variant | None], None]] = {
    "skill-read": _target_skill,
    "resource-read": _declared_index,
    "changed-paths": _repeated_paths,
}


# --- the validated fields of each kind --------------------------------------------------


def _resource_read(raw: dict[str, Any], expect: str) -> dict[str, Any]:
    resource = raw["resource"]
    index = None if resource == "workspace" else json_int(raw["index"])
    return {"resource": resource, "index": index, "path": raw["path"]}


def _json(raw: dict[str, Any], expect: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"path": raw["path"]}
    if expect in FIELD_CHECKS:
        fields["pointer"], fields["tokens"] = raw["pointer"], parse_pointer(raw["pointer"])
    if expect == "field-equals":
        fields["value"] = raw["value"]
    return fields


def _context_text(raw: dict[str, Any], expect: str) -> dict[str, Any]:
    request = raw.get("request", "last")
    return {"value": raw["value"], "surface": raw.get("surface", "system-prompt"),
            "request": request if isinstance(request, str) else json_int(request)}


_FIELDS: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {
    "skill-read": lambda raw, expect: {},
    "resource-read": _resource_read,
    "path": lambda raw, expect: {"path": raw["path"]},
    "changed-paths": lambda raw, expect: {"paths": tuple(raw["paths"])},
    "file-text": lambda raw, expect: {"path": raw["path"], "value": raw["value"]},
    "json": _json,
    "response-text": lambda raw, expect: {"value": raw["value"]},
    "tool-call": lambda raw, expect: {"tool": raw["tool"], "contains": tuple(raw.get("argumentContains", ())),
                                      "not_contains": tuple(raw.get("argumentNotContains", ()))},
    "context-text": _context_text,
}
