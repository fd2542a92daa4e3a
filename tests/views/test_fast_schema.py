"""The compiled schema check never calls a document valid that jsonschema refuses.

``schemas.problems`` takes "valid" from the compiled check (``schemas.fast``) and asks
jsonschema for everything else, so the one thing that must hold is: compiled-valid implies
jsonschema-valid. It is checked on every definition the repository holds (example suites,
test suites) and every evidence file of a real run, and on mutations of each (a field
removed, a value of another type or of an awkward value, an unknown field, a list emptied
or with an item repeated): the mutations are where a validator that is too lenient shows.
Each original document must also pass the compiled check, or it would speed nothing up.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval import schemas
from pytest_skill_eval.errors import UnsupportedSchemaError
from pytest_skill_eval.schemas.fast import bundle, lower

from .conftest import StoredRun

REPO = Path(__file__).resolve().parents[2]
DEFINITION_ROOTS = [REPO / "example_suites", REPO / "tests" / "views" / "suite", REPO / "tests" / "report" / "hostile",
                    REPO / "tests" / "definitions" / "valid"]
PROBES: list[Any] = [None, True, False, 0, 1, -1, 1.0, 1.5, 2**40, "", "x", "1", "\ud800", "a" * 300, [], [1], {}, {"k": 1}]
MUTATIONS_PER_DOCUMENT = 400
EVIDENCE_SCHEMAS = {
    "run.json": "evidence-run", "group.json": "evidence-group", "result.json": "evidence-result",
    "definition.json": "evidence-definition", "transcript.json": "evidence-transcript",
    "context-observations.json": "evidence-context-observations", "selection.json": "evidence-selection",
    "fingerprints.json": "evidence-fingerprints", "grade.json": "evidence-grade", "aggregate.json": "evidence-aggregate",
    "merge.json": "evidence-merge",
}


def _paths(doc: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*at, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _paths(value, (*at, index))


def _get(doc: Any, at: tuple[Any, ...]) -> Any:
    for part in at:
        doc = doc[part]
    return doc


def _mutations(doc: Any, rng: random.Random) -> Iterator[Any]:
    paths = list(_paths(doc))
    candidates: list[tuple[str, tuple[Any, ...], Any]] = []
    for at in paths:
        node = _get(doc, at)
        if at:
            candidates += [("replace", at, probe) for probe in PROBES]
            if isinstance(at[-1], str):
                candidates.append(("delete", at, None))
        if isinstance(node, dict):
            candidates.append(("add", at, "zz-unknown"))
        if isinstance(node, list):
            candidates += [("empty", at, None), ("repeat", at, None)]
    rng.shuffle(candidates)
    for op, at, value in candidates[:MUTATIONS_PER_DOCUMENT]:
        out = copy.deepcopy(doc)
        parent: Any = _get(out, at[:-1]) if at else None
        node = _get(out, at)
        if op == "replace":
            parent[at[-1]] = copy.deepcopy(value)
        elif op == "delete":
            del parent[at[-1]]
        elif op == "add":
            node[value] = 1
        elif op == "empty":
            node.clear()
        elif node:
            node.append(copy.deepcopy(node[0]))
        else:
            continue
        yield out


def _agree(name: str, doc: Any, source: str, definition: str | None = None) -> None:
    check = schemas._fast_check(name, definition)
    assert check is not None, f"{name}: no compiled check"
    full = schemas._validator(name, definition)
    assert full.is_valid(doc), f"{source} is not valid to begin with"
    assert check(doc), f"{source}: the compiled check refuses a valid document (it would speed nothing up)"
    rng = random.Random(source)
    tried = lenient = 0
    for mutated in _mutations(doc, rng):
        tried += 1
        if check(mutated) and not full.is_valid(mutated):
            lenient += 1
            raise AssertionError(f"{source}: compiled check calls valid what jsonschema refuses:\n"
                                 f"{json.dumps(mutated, indent=1)[:2000]}")
    assert tried > 0 and lenient == 0


def _definitions() -> Iterator[tuple[str, Path]]:
    for root in DEFINITION_ROOTS:
        for path in sorted(root.rglob("*.json")):
            if ".skill-eval" in path.parts:
                continue
            doc = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(doc, dict):
                continue
            if doc.get("schema", "").startswith("skill-eval-script/"):
                yield "script", path
            elif "groups" in doc and "prompts" not in doc:
                yield "suite", path
            elif "expectations" in doc:
                yield "group", path


@pytest.mark.parametrize(("name", "path"), list(_definitions()), ids=lambda v: str(v).replace(str(REPO) + "/", ""))
def test_definitions_and_their_mutations(name: str, path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not schemas._validator(name).is_valid(doc):
        pytest.skip(f"{path} is an invalid definition on purpose")
    _agree(name, doc, str(path.relative_to(REPO)))
    if name == "group":
        for i, expectation in enumerate(doc["expectations"]):
            kind = expectation.get("kind")
            if kind in schemas.schema("expectation")["$defs"] and schemas._validator("expectation", kind).is_valid(expectation):
                _agree("expectation", expectation, f"{path.relative_to(REPO)}#/expectations/{i}", kind)


def test_every_example_suite_definition_is_covered() -> None:
    found = {path for _name, path in _definitions()}
    examples = {p for p in (REPO / "example_suites").rglob("*.json") if ".skill-eval" not in p.parts}
    assert examples <= found, sorted(str(p) for p in examples - found)


@pytest.mark.pi
def test_evidence_files_and_their_mutations(stored_run: StoredRun) -> None:
    seen: set[str] = set()
    for path in sorted(stored_run.result_dir.rglob("*.json")):
        inner = path.relative_to(stored_run.result_dir).parts[:-1]
        if any(part == "objects" or part.startswith("workspace") for part in inner):
            continue  # the agent's files and stored inputs, not evidence records
        name = "evidence-manifest" if path.name.endswith(".manifest.json") else EVIDENCE_SCHEMAS.get(path.name)
        if name is None:
            continue
        _agree(name, json.loads(path.read_bytes()), str(path.relative_to(stored_run.result_dir)))
        seen.add(name)
    assert {"evidence-run", "evidence-group", "evidence-result", "evidence-grade", "evidence-manifest",
            "evidence-selection", "evidence-definition"} <= seen, seen


def test_lowering_rewrites_what_draft_7_spells_differently() -> None:
    lowered = lower({"prefixItems": [{"type": "string"}], "items": False, "dependentRequired": {"a": ["b"]},
                     "x-expected": "anything", "description": "text",
                     "properties": {"prefixItems": {"$ref": "#/$defs/x", "minimum": 1}, "c": {"const": True}}})
    assert lowered == {"items": [{"type": "string"}], "additionalItems": False, "dependencies": {"a": ["b"]},
                       "properties": {"prefixItems": {"allOf": [{"$ref": "#/$defs/x"}, {"minimum": 1}]},
                                      "c": {"enum": [True]}}}


def test_const_beside_enum_gets_no_compiled_check() -> None:
    # const True with enum [1]: jsonschema accepts nothing (true is not 1); a merged enum
    # compared with Python's == would accept 1
    with pytest.raises(UnsupportedSchemaError):
        lower({"const": True, "enum": [1]})


@pytest.mark.parametrize("keyword", ["unevaluatedProperties", "dependentSchemas", "$dynamicRef", "minContains"])
def test_a_keyword_without_a_draft_7_equivalent_gets_no_compiled_check(keyword: str) -> None:
    with pytest.raises(UnsupportedSchemaError):
        lower({"properties": {"a": {keyword: {}}}})


def test_a_reference_outside_the_packaged_schemas_is_never_fetched() -> None:
    with pytest.raises(UnsupportedSchemaError, match="outside the packaged schemas"):
        bundle({"$ref": "https://example.invalid/schema.json"}, {})
    from pytest_skill_eval.schemas.fast import compile_check

    assert compile_check({"$ref": "https://example.invalid/schema.json"}, {}) is None
