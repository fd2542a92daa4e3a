"""A compiled "is this document valid?" answer, in front of jsonschema's full error list.

Most documents the package validates are valid (every definition of a suite that loads,
every evidence file of a result that ``view`` reads), and for those jsonschema's
interpreting validator is most of the cost of collecting or viewing a large run.
`fastjsonschema <https://github.com/horejsek/python-fastjsonschema>`_ compiles a schema to
Python code that answers the same question many times faster.

The rule is one-sided: only "valid" is taken from the compiled check. A document it refuses
is checked again by jsonschema, which finds and words every problem
(:func:`pytest_skill_eval.schemas.problems`). So a compiled check that is stricter than
jsonschema costs time, never a wrong answer; one that is more lenient would let a bad
document through, and this module exists to make sure it is not:

* fastjsonschema implements draft 7; the packaged schemas are draft 2020-12. :func:`lower`
  rewrites the 2020-12 keywords that draft 7 spells differently (``prefixItems``,
  ``dependentRequired``, ``$ref`` beside other keywords; ``const`` as a one-value ``enum``,
  which fastjsonschema matches alike) and refuses any schema that uses a 2020-12 keyword
  draft 7 has no equivalent for. A refused schema gets no compiled
  check: jsonschema alone decides, as before.
* ``format`` is not asserted (jsonschema's default), defaults are never filled in, and
  the schema is compiled as one bundle (:func:`bundle`) whose every ``$ref`` is a local
  pointer; a reference to anything but a packaged schema refuses it, so compiling never
  touches the network.

``tests/definitions/test_fast_schema.py`` holds the two validators to agreement on every
example document and on mutations of each.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import sys
import types
from collections.abc import Callable, Mapping
from importlib.util import MAGIC_NUMBER
from typing import Any, Protocol

from pytest_skill_eval.errors import UnsupportedSchemaError

__all__ = ["CodeStore", "bundle", "compile_check", "lower"]


class CodeStore(Protocol):
    """Where compiled checks are kept between processes (the evaluator's cache directory).

    *key* names one check exactly (:func:`code_key`); ``load`` answers None for a check
    it does not hold or will not vouch for, and ``save`` may fail silently.
    """

    def load(self, key: str) -> bytes | None: ...

    def save(self, key: str, data: bytes) -> None: ...

Check = Callable[[Any], bool]
"""True when the document is valid; False when it may not be (ask jsonschema)."""

#: 2020-12 keywords with no draft-7 spelling: a schema using one gets no compiled check.
_UNLOWERABLE = frozenset({
    "unevaluatedProperties", "unevaluatedItems", "dependentSchemas", "$dynamicRef", "$dynamicAnchor",
    "$recursiveRef", "$recursiveAnchor", "$anchor", "minContains", "maxContains", "contentSchema",
    "$vocabulary",
})

#: keywords whose value is one subschema
_ONE = ("additionalProperties", "items", "contains", "propertyNames", "not", "if", "then", "else",
        "additionalItems")
#: keywords whose value is a list of subschemas
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
#: keywords whose value maps names to subschemas
_NAMED = ("properties", "patternProperties", "$defs", "definitions")
#: keywords beside ``$ref`` that only annotate (no constraint), kept beside it
_ANNOTATIONS = frozenset({"$id", "$schema", "$comment", "title", "description", "default", "examples",
                          "deprecated", "readOnly", "writeOnly"})


#: annotations dropped from the lowered schema (each is only text a reader sees)
_DROPPED = frozenset({"title", "description", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly"})


def lower(schema: Any, ref: Callable[[str], str] = lambda r: r) -> Any:
    """*schema* (draft 2020-12) as the draft-7 schema that accepts exactly the same documents,
    each ``$ref`` rewritten by *ref*.

    Raises :class:`UnsupportedSchemaError` for a keyword draft 7 has no equivalent for.
    """
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, Mapping):
        raise UnsupportedSchemaError(f"a schema must be an object or a boolean, not {type(schema).__name__}")
    used = _UNLOWERABLE.intersection(schema)
    if used:
        raise UnsupportedSchemaError(f"no draft-7 equivalent for {', '.join(sorted(used))}")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key.startswith("x-") or key in _DROPPED:
            continue  # annotations (the package's own and JSON Schema's): no constraint, and
            # fastjsonschema copies each subschema into its generated code
        if key in _ONE:
            out[key] = lower(value, ref)
        elif key in _MANY:
            if not isinstance(value, list):
                raise UnsupportedSchemaError(f"{key} must be an array")
            out[key] = [lower(v, ref) for v in value]
        elif key in _NAMED:
            if not isinstance(value, Mapping):
                raise UnsupportedSchemaError(f"{key} must be an object")
            out[key] = {name: lower(v, ref) for name, v in value.items()}
        elif key == "$ref":
            if not isinstance(value, str):
                raise UnsupportedSchemaError("$ref must be a string")
            out[key] = ref(value)
        elif key == "const":
            # the same rule (fastjsonschema matches both alike); its const code needs the
            # detailed exceptions this module turns off
            if "enum" in schema:
                raise UnsupportedSchemaError("const beside enum")
            out["enum"] = [value]
        elif key == "dependentRequired":
            out["dependencies"] = dict(value)
        else:
            out[key] = value
    if "prefixItems" in out:
        # 2020-12: prefixItems for the first positions, items for the rest.
        # draft 7:  items as an array for the first positions, additionalItems for the rest.
        prefix = out.pop("prefixItems")
        rest = out.pop("items", None)
        if "additionalItems" in out:
            raise UnsupportedSchemaError("additionalItems beside prefixItems")
        out["items"] = prefix
        if rest is not None:
            out["additionalItems"] = rest
    if "$ref" in out and set(out) - _ANNOTATIONS - {"$ref", "$defs", "definitions"}:
        # draft 7 ignores every keyword beside $ref; 2020-12 applies them all
        reference = {"$ref": out.pop("$ref")}
        kept = {k: out.pop(k) for k in list(out) if k in _ANNOTATIONS or k in ("$defs", "definitions")}
        out = {**kept, "allOf": [reference, out]}
    return out


def bundle(target: Mapping[str, Any], documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """*target* and every packaged schema it refers to, lowered, as one self-contained schema.

    Each document goes under ``$defs`` at ``/$defs/<n>`` and every ``$ref`` becomes a local
    pointer into it, so the compiled check never resolves a URI (fastjsonschema would fetch
    an unknown one over the network). Raises :class:`UnsupportedSchemaError` for a reference to
    anything but a packaged schema or a pointer into one.
    """
    slots: dict[str, str] = {}
    lowered: dict[str, Any] = {}

    def slot(uri: str) -> str:
        if uri not in documents:
            raise UnsupportedSchemaError(f"a reference outside the packaged schemas: {uri}")
        if uri not in slots:
            slots[uri] = f"doc{len(slots)}"
            doc = {k: v for k, v in documents[uri].items() if k not in ("$id", "$schema")}
            lowered[slots[uri]] = lower(doc, lambda r: local(uri, r))
        return slots[uri]

    def local(current: str | None, ref: str) -> str:
        base, _, pointer = ref.partition("#")
        if pointer and not pointer.startswith("/"):
            raise UnsupportedSchemaError(f"a reference by anchor: {ref}")
        if not base:
            if current is None:
                raise UnsupportedSchemaError(f"a local reference in a target without an $id: {ref}")
            base = current
        return f"#/$defs/{slot(base)}{pointer}"

    own = target.get("$id")
    if isinstance(own, str) and own in documents:
        root: Any = {"$ref": f"#/$defs/{slot(own)}"}
    else:
        root = lower({k: v for k, v in target.items() if k not in ("$id", "$schema")}, lambda r: local(None, r))
        if "$defs" in root:
            raise UnsupportedSchemaError("a target with its own $defs and no packaged $id")
    return {**root, "$defs": lowered}


#: how fastjsonschema is asked to compile (part of every check's key)
_OPTIONS: dict[str, Any] = {"use_formats": False, "use_default": False, "detailed_exceptions": False}


def _no_fetch(uri: str) -> Any:
    raise UnsupportedSchemaError(f"no schema is fetched: {uri}")


_HANDLERS = {scheme: _no_fetch for scheme in ("urn", "http", "https", "file", "ftp", "data")}


def code_key(bundled: Any, compiler_version: str) -> str:
    """The name of the compiled code of the *bundled* schema: everything it depends on
    (the schema, the compile options, fastjsonschema's and Python's bytecode versions)."""
    spelled = json.dumps(["schema-check/1", compiler_version, sys.version, MAGIC_NUMBER.hex(), _OPTIONS, bundled],
                         sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(spelled.encode("ascii")).hexdigest()


def compile_check(target: Mapping[str, Any], documents: Mapping[str, Mapping[str, Any]],
                  store: CodeStore | None = None) -> Check | None:
    """The compiled check of *target*, or None when it cannot be trusted (or built).

    *documents* maps each packaged schema's ``$id`` to the schema, for ``$ref`` between them.
    With a *store*, the Python code fastjsonschema generates for it is compiled once and
    kept there (generating and compiling it costs 1-8 ms a schema, in every process).
    """
    try:
        import fastjsonschema
    except ImportError:  # pragma: no cover - a declared dependency; jsonschema decides alone
        return None
    try:
        bundled = bundle(target, documents)
    except UnsupportedSchemaError:
        return None
    validate = _compiled(bundled, fastjsonschema, store)
    if validate is None:
        return None

    def check(doc: Any) -> bool:
        try:
            validate(doc)
        except Exception:  # refused, or a compiled check that trips over a document
            return False
        return True

    return check


def _compiled(bundled: Any, fastjsonschema: Any, store: CodeStore | None) -> Callable[[Any], Any] | None:
    """fastjsonschema's ``validate`` for *bundled*: its generated module, from *store* when it
    holds it, else generated and compiled now (and saved)."""
    key = code_key(bundled, fastjsonschema.VERSION) if store is not None else ""
    code = _stored_code(store.load(key)) if store is not None else None
    if code is None:
        try:
            source = fastjsonschema.compile_to_code(bundled, handlers=_HANDLERS, **_OPTIONS)
            code = compile(source, "<compiled schema check>", "exec")
        except Exception:  # a definition fastjsonschema itself refuses: jsonschema decides alone
            return None
        if store is not None:
            store.save(key, marshal.dumps(code))
    namespace: dict[str, Any] = {}
    try:
        exec(code, namespace)  # the generated module: its imports and patterns, then the functions
    except Exception:
        return None
    validate = namespace.get("validate")
    return validate if callable(validate) else None


def _stored_code(data: bytes | None) -> types.CodeType | None:
    if data is None:
        return None
    try:
        code = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None
