"""Each evidence schema and its record name the same keys, at every level a record stores.

A record's stored keys come from its dataclass fields through the codec (renamed keys,
inline records, nested objects and written properties included,
:func:`pytest_skill_eval.codec.stored_keys`);
the schema's are its ``properties`` (with its ``then``/``else`` branches and ``$ref``s
resolved). A field added to one and not the other fails here, before a file is refused on
read or a key is silently dropped on write.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any, get_args, get_origin

import pytest

from pytest_skill_eval import codec
from pytest_skill_eval.evidence import records
from pytest_skill_eval.evidence.stop_records import StoppingRecord
from pytest_skill_eval.grading.aggregate import ComparisonRate, ExpectationRate, TrialGrade
from pytest_skill_eval.grading.results import GradeError, GroupGrade


def _load_schemas() -> dict[str, dict[str, Any]]:
    folder = resources.files("pytest_skill_eval") / "schemas"
    out = {}
    for entry in folder.iterdir():
        if entry.name.startswith("evidence-") and entry.name.endswith(".schema.json"):
            out[entry.name.removesuffix(".schema.json")] = json.loads(entry.read_text(encoding="utf-8"))
    return out


SCHEMAS = _load_schemas()
BY_ID = {schema["$id"]: schema for schema in SCHEMAS.values()}

#: every evidence schema and the records it checks (group.json has two shapes)
RECORDS: dict[str, tuple[type, ...]] = {
    "evidence-run": (records.RunRecord,),
    "evidence-group": (records.GroupRecord, records.InvalidGroupRecord),
    "evidence-result": (records.ResultRecord,),
    "evidence-definition": (records.DefinitionRecord,),
    "evidence-transcript": (records.TranscriptRecord,),
    "evidence-context-observations": (records.ContextObservations,),
    "evidence-selection": (records.SelectionRecord,),
    "evidence-fingerprints": (records.FingerprintsRecord,),
    "evidence-manifest": (records.ManifestRecord,),
    "evidence-grade": (GroupGrade,),
    "evidence-aggregate": (TrialGrade,),
    "evidence-stopping": (StoppingRecord,),
}
#: schemas of files no record reads (``merge.json`` is written and read as plain JSON by ``skill-eval merge``,
#: and ``reuse.json``, read as plain JSON by ``evidence/reuse_records``)
NO_RECORD = {"evidence-merge", "evidence-reuse"}


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """*schema* with its ``$ref`` followed (local or to another evidence schema), and the root it is in."""
    while "$ref" in schema:
        target, _, pointer = schema["$ref"].partition("#")
        if target:
            root = BY_ID[target]
        schema = root
        for part in pointer.strip("/").split("/") if pointer.strip("/") else []:
            schema = schema[part]
    return schema, root


def _branches(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """*schema* and every branch that can add properties to it (then/else/allOf/anyOf/oneOf), resolved."""
    schema, root = _resolve(schema, root)
    yield schema, root
    for key in ("then", "else"):
        if key in schema:
            yield from _branches(schema[key], root)
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(key, ()):
            yield from _branches(branch, root)


def _properties(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]]:
    found: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for branch, branch_root in _branches(schema, root):
        for key, sub in branch.get("properties", {}).items():
            found.setdefault(key, []).append((sub, branch_root))
    return found


def _record_in(hint: Any) -> tuple[str, type] | None:
    """Where a nested record sits in a field's type: ``("", X)``, ``("items", X)`` or ``("values", X)``."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return "", hint
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Union, types.UnionType):
        found = [r for r in (_record_in(a) for a in args) if r is not None]
        return found[0] if found else None
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        inner = _record_in(args[0])
        return ("items", inner[1]) if inner is not None and inner[0] == "" else None
    if origin in (dict, Mapping):
        inner = _record_in(args[1])
        return ("values", inner[1]) if inner is not None and inner[0] == "" else None
    return None


def _nested(kind: type) -> dict[str, tuple[str, type]]:
    """The stored keys of *kind* that hold a record (inline records' own fields included)."""
    hints = typing.get_type_hints(kind)
    out: dict[str, tuple[str, type]] = {}
    for f in dataclasses.fields(kind):
        spec = f.metadata.get(codec.META)
        if spec is not None and spec.parent is not None:
            continue
        where = _record_in(hints[f.name])
        if spec is not None and spec.inline is not None and where is not None:
            out.update(_nested(where[1]))
        elif where is not None:
            out[(spec.key if spec is not None and spec.key else f.name)] = where
    return out


def _within(kind: type) -> list[str]:
    """The nested objects *kind*'s fields are stored in (``meta(within=...)``)."""
    names = [spec.within for f in dataclasses.fields(kind) if (spec := f.metadata.get(codec.META)) is not None
             and spec.within is not None]
    return list(dict.fromkeys(names))


def _differ(stored: set[str], properties: Mapping[str, object], where: str, names: str) -> list[str]:
    if stored == set(properties):
        return []
    return [f"{where} ({names}): only in the record {sorted(stored - set(properties))}, "
            f"only in the schema {sorted(set(properties) - stored)}"]


def _compare(kinds: tuple[type, ...], schema: Mapping[str, Any], root: Mapping[str, Any], where: str,
             seen: list[str]) -> list[str]:
    """Differences between the keys *kinds* store and the properties *schema* names, recursively."""
    stored = {key for kind in kinds for key in codec.stored_keys(kind)}
    properties = _properties(schema, root)
    names = "/".join(k.__name__ for k in kinds)
    problems = _differ(stored, properties, where, names)
    seen.append(names)
    for kind in kinds:
        for name in _within(kind):
            for sub, sub_root in properties.get(name, ()):
                problems += _differ(set(codec.stored_keys(kind, within=name)), _properties(sub, sub_root),
                                    f"{where}/{name}", names)
            seen.append(f"{names}/{name}")
        for key, (shape, nested) in _nested(kind).items():
            for sub, sub_root in properties.get(key, ()):
                for branch, branch_root in _branches(sub, sub_root):
                    if shape == "items" and "items" in branch:
                        problems += _compare((nested,), branch["items"], branch_root, f"{where}/{key}/*", seen)
                    elif shape == "values" and isinstance(branch.get("additionalProperties"), Mapping):
                        problems += _compare((nested,), branch["additionalProperties"], branch_root,
                                             f"{where}/{key}/*", seen)
                    elif shape == "values":
                        for name, value in branch.get("properties", {}).items():
                            problems += _compare((nested,), value, branch_root, f"{where}/{key}/{name}", seen)
                    elif shape == "" and "properties" in branch:
                        problems += _compare((nested,), branch, branch_root, f"{where}/{key}", seen)
    return problems


def test_every_evidence_schema_is_named_here() -> None:
    assert set(SCHEMAS) == set(RECORDS) | NO_RECORD


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_each_schema_and_its_records_name_the_same_keys(name: str) -> None:
    schema = SCHEMAS[name]
    if schema.get("type") == "array":  # context-observations.json: the record is the whole array
        (kind,) = RECORDS[name]
        (field,) = dataclasses.fields(kind)
        nested = _record_in(typing.get_type_hints(kind)[field.name])
        assert nested is not None and nested[0] == "items"
        seen: list[str] = []
        assert _compare((nested[1],), schema["items"], schema, name, seen) == []
        return
    seen = []
    assert _compare(RECORDS[name], schema, schema, name, seen) == []
    assert len(seen) >= 1


def test_the_nested_records_are_compared_too() -> None:
    """The walk reaches the records a file nests, not only its top level."""
    seen: list[str] = []
    _compare((records.RunRecord,), SCHEMAS["evidence-run"], SCHEMAS["evidence-run"], "run", seen)
    assert {"RunPaths", "SourceRecord", "ModelRecord", "Usage", "AttemptRecord", "SnapshotRecord", "StoredFile",
            "StoredScript"} <= set(seen), seen
    seen = []
    _compare((records.TranscriptRecord,), SCHEMAS["evidence-transcript"], SCHEMAS["evidence-transcript"], "t", seen)
    assert {"TranscriptTurn", "ToolCall", "Usage"} <= set(seen), seen
    seen = []
    _compare((records.ResultRecord,), SCHEMAS["evidence-result"], SCHEMAS["evidence-result"], "result", seen)
    assert {"ResultGroup", "ProvenanceRecord", "VariantUsage", "ShardIndex", "TrialCount"} <= set(seen), seen
    seen = []
    _compare((TrialGrade,), SCHEMAS["evidence-aggregate"], SCHEMAS["evidence-aggregate"], "aggregate", seen)
    assert {"TrialGrade/trials", "ExpectationRate", "ComparisonRate", "GradeError"} <= set(seen), seen


def test_a_field_the_schema_does_not_name_is_found() -> None:
    """The check can fail: a record with one key more than its schema is reported."""

    @dataclasses.dataclass(frozen=True)
    class Wider:
        path: str
        definition: Mapping[str, Any]
        extra: int = 0

    problems = _compare((Wider,), SCHEMAS["evidence-definition"], SCHEMAS["evidence-definition"], "definition", [])
    assert problems == ["definition (Wider): only in the record ['extra'], only in the schema []"]


def test_a_key_of_a_nested_object_the_schema_does_not_name_is_found() -> None:
    """The walk compares a nested object's keys too (``aggregate.json``'s ``trials``)."""

    @dataclasses.dataclass(frozen=True)
    class Counted:
        group_id: str
        planned: int = dataclasses.field(metadata=codec.meta(within="trials"))
        spare: int = dataclasses.field(metadata=codec.meta(within="trials"))

    schema: dict[str, Any] = {"properties": {"group_id": {}, "trials": {"properties": {"planned": {}, "ran": {}}}}}
    problems = _compare((Counted,), schema, schema, "aggregate", [])
    assert problems == ["aggregate/trials (Counted): only in the record ['spare'], only in the schema ['ran']"]


def test_a_stored_trial_grade_has_every_key_its_schema_names() -> None:
    """The written properties (rates, interval, test, transition, flags) are in the file, at every level."""
    grade = TrialGrade("g", 2, 2, "graded",
                       (ExpectationRate("e", "path", "candidate", 1, 1, 0, 0),),
                       (ComparisonRate("c", "b", "e", 1, 2, 1, 2, False),),
                       (GradeError("group", None, None, "m"),), {"baseline": {"complete": 2}})
    stored = grade.to_json()
    schema = SCHEMAS["evidence-aggregate"]
    assert set(stored) == set(_properties(schema, schema))
    (trials, root), = _properties(schema, schema)["trials"]
    assert set(stored["trials"]) == set(_properties(trials, root))
    for key, item in (("expectations", stored["expectations"][0]), ("comparisons", stored["comparisons"][0]),
                      ("errors", stored["errors"][0])):
        (sub, root), = _properties(schema, schema)[key]
        sub, root = _resolve(sub, root)
        assert set(item) == set(_properties(sub["items"], root)), key
