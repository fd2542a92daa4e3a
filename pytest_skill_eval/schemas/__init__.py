"""The packaged JSON Schemas and the one translation of their errors.

Every document the package validates (suite and group definitions, scripted-model
scripts, the kind-specific shape of each expectation at grade time) is checked against a
schema file in this directory, and every violation is reported the same way: a
:class:`~pytest_skill_eval.errors.Problem` at the offending JSON pointer reading
``expected …, found …``.

Schemas may carry four annotations the translation honours:

``x-expected``
    how a message names what the (sub)schema accepts, e.g. ``"a non-empty prompt string"``;
``x-reserved``
    for an ``enum``: values that are refused for a reason worth saying, ``{value: why}``;
``x-checked-by-loader``
    keywords whose failure a loader words itself (the translation stays silent on them);
``x-found``
    at a schema's root, ``"json"``: messages show the found value as short compact JSON
    (:func:`~pytest_skill_eval.errors.show`) and a missing field as ``nothing``, as grade
    errors word them (``expectation.schema.json``). Without it, containers are named by
    kind and a missing field reads ``no "<name>" field``.

jsonschema is imported on first validation, so a plain pytest run never pays for it. A
document is first put to a compiled check (:mod:`pytest_skill_eval.schemas.fast`); only
one it refuses is validated by jsonschema, whose errors are the ones translated.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from pytest_skill_eval import jsonpointer
from pytest_skill_eval.errors import Problem, did_you_mean, json_text, show

if TYPE_CHECKING:
    import jsonschema

    from pytest_skill_eval.schemas.fast import CodeStore

__all__ = ["describe", "join_quoted", "problems", "quote", "schema", "use_code_store"]

SHOWN_CHARACTERS = 80
"""Longest string a message shows whole."""

_TYPE_WORDS = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """The packaged schema ``<name>.schema.json``."""
    text = resources.files(__package__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@functools.cache
def _by_id() -> dict[str, dict[str, Any]]:
    """Every packaged schema by its ``$id``, so one may refer to another's ``$defs``."""
    names = [entry.name.removesuffix(".schema.json") for entry in resources.files(__package__).iterdir()
             if entry.name.endswith(".schema.json")]
    return {schema(name)["$id"]: schema(name) for name in names if "$id" in schema(name)}


def _target(name: str, definition: str | None) -> dict[str, Any]:
    return schema(name) if definition is None else {"$ref": f"{schema(name)['$id']}#/$defs/{definition}"}


@functools.cache
def _validator(name: str, definition: str | None = None) -> jsonschema.Draft202012Validator:
    import jsonschema
    from referencing import Registry, Resource

    registry: Registry[Any] = Registry().with_resources(
        (uri, Resource.from_contents(document)) for uri, document in _by_id().items())
    return jsonschema.Draft202012Validator(_target(name, definition), registry=registry)


@functools.cache
def _fast_check(name: str, definition: str | None = None) -> Callable[[Any], bool] | None:
    from pytest_skill_eval.schemas.fast import compile_check

    return compile_check(_target(name, definition), _by_id(), _code_store)


_code_store: CodeStore | None = None


def use_code_store(store: CodeStore | None) -> None:
    """Keep the compiled checks in *store* from now on (the shells pass the evaluator's cache)."""
    global _code_store
    _code_store = store
    _fast_check.cache_clear()


def problems(name: str, doc: Any, definition: str | None = None) -> list[Problem]:
    """Every violation of schema *name* by *doc*, worded as problems (unsorted, each once).

    With *definition*, *doc* is checked against that entry of the schema's ``$defs`` only
    (worded with the schema's annotations, pointers still relative to *doc*).
    """
    check = _fast_check(name, definition)
    if check is not None and check(doc):
        return []  # valid by the compiled check: only "valid" is ever taken from it (schemas.fast)
    root = schema(name)
    found: list[Problem] = []
    for error in _validator(name, definition).iter_errors(doc):
        found.extend(_translate(error, root))
    # jsonschema reports each missing required field as its own error, and each error is
    # translated into one problem per missing field
    return list(dict.fromkeys(found))


def quote(text: str) -> str:
    return json_text(text)


def join_quoted(values: Sequence[str]) -> str:
    return ", ".join(quote(value) for value in values)


def describe(value: Any) -> str:
    """Name a found value: scalars as JSON, long strings cut, containers by kind."""
    if isinstance(value, dict):
        return "an object" if value else "an empty object"
    if isinstance(value, list):
        return "an array" if value else "an empty array"
    if isinstance(value, str) and len(value) > SHOWN_CHARACTERS:
        return quote(value[: SHOWN_CHARACTERS - 20]) + f"… ({len(value)} characters)"
    return json_text(value)


def one_of(values: Sequence[Any]) -> str:
    if len(values) == 1:
        return json_text(values[0])
    return "one of " + ", ".join(json_text(value) for value in values)


def _translate(error: jsonschema.ValidationError, root: dict[str, Any]) -> Iterable[Problem]:
    """Rewrite one jsonschema error into ``expected …, found …`` problems."""
    pointer = jsonpointer.child("", *error.absolute_path)
    sub = error.schema if isinstance(error.schema, dict) else {}
    keyword = error.validator
    instance: Any = error.instance
    expected_value: Any = error.validator_value
    as_json = root.get("x-found") == "json"
    if keyword == "required":
        properties = sub.get("properties", {})
        return [
            Problem(jsonpointer.child(pointer, key),
                    f"expected {_expected(properties.get(key, {}), root)}, found "
                    + ("nothing" if as_json else f"no {quote(key)} field"))
            for key in expected_value
            if key not in instance
        ]
    if keyword == "dependentRequired":
        properties = sub.get("properties", {})
        return [
            Problem(jsonpointer.child(pointer, key),
                    f"expected {_expected(properties.get(key, {}), root)}, found "
                    + ("nothing" if as_json else f"no {quote(key)} field") + f" (required with {quote(present)})")
            for present, keys in expected_value.items()
            if present in instance
            for key in keys
            if key not in instance
        ]
    if keyword == "additionalProperties":
        known = list(sub.get("properties", {}))
        fields = f"only the field {quote(known[0])}" if len(known) == 1 else f"one of the fields {join_quoted(known)}"
        return [
            Problem(jsonpointer.child(pointer, key),
                    f"expected {fields}, found unknown field {quote(key)}{did_you_mean(key, known, cutoff=0.6)}")
            for key in instance
            if key not in known
        ]
    if keyword == "uniqueItems":
        seen: dict[str, int] = {}
        repeated = []
        for index, item in enumerate(instance):
            earlier = seen.setdefault(json.dumps(item, sort_keys=True), index)
            if earlier != index:
                repeated.append(Problem(
                    f"{pointer}/{index}",
                    f"expected each item once, found {describe(item)} again (first at {pointer}/{earlier})",
                ))
        # JSON Schema equality is looser than JSON text (1 == 1.0); never drop the error.
        return repeated or [Problem(pointer, "expected each item once, found a repeated item")]
    if keyword in sub.get("x-checked-by-loader", ()):
        return []  # the loader words this one
    if "propertyNames" in error.relative_schema_path:
        # jsonschema locates a bad property name at its parent object.
        pointer = jsonpointer.child(pointer, str(instance))
    found = show(instance) if as_json else describe(instance)
    if keyword in ("minProperties", "maxProperties") and isinstance(instance, dict) and instance:
        found = f"an object with the fields {join_quoted(list(instance))}"
    if keyword == "maxLength" and isinstance(instance, str) and len(instance) <= SHOWN_CHARACTERS:
        found = f"{found} ({len(instance)} characters)"
    if keyword == "enum":
        reserved = sub.get("x-reserved", {})
        note = f" ({reserved[instance]})" if isinstance(instance, str) and instance in reserved else ""
        hint = "" if note else did_you_mean(instance, [v for v in expected_value if isinstance(v, str)])
        return [Problem(pointer, f"expected {one_of(expected_value)}, found {found}{note}{hint}")]
    if keyword == "const":
        return [Problem(pointer, f"expected {json_text(expected_value)}, found {found}")]
    return [Problem(pointer, f"expected {_expected(sub, root)}, found {found}")]


def _expected(sub: Any, root: dict[str, Any]) -> str:
    """How a message names what *sub* accepts, following local ``$ref``s into *root*."""
    for _ in range(8):
        if not isinstance(sub, dict):
            break
        if "x-expected" in sub:
            return str(sub["x-expected"])
        if "enum" in sub:
            return one_of(sub["enum"])
        if "const" in sub:
            return json_text(sub["const"])
        ref = sub.get("$ref")
        if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
            break
        sub = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"))
    if isinstance(sub, dict):
        types = sub.get("type")
        if isinstance(types, str):
            return _TYPE_WORDS.get(types, types)
        if isinstance(types, list):
            return " or ".join(_TYPE_WORDS.get(str(t), str(t)) for t in types)
    return "a valid value"
