"""Property tests: whatever the bytes, the loader answers with DefinitionError or a Group/Suite.

Documents are mutations of the spec's examples (wrong types, missing and extra keys,
hostile path strings) plus random JSON and random bytes. Any other exception is a
loader bug: a user would see a traceback instead of ``file: /pointer: expected …``.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_skill_eval.definitions.loading import load_definition, load_group, load_suite, load_suite_groups
from pytest_skill_eval.definitions.model import (
    Expectation,
    ExtensionBundle,
    Group,
    GroupRef,
    ModelSpec,
    Runtime,
    RuntimeEnvironment,
    Source,
    Suite,
    Variant,
    VariantName,
)
from pytest_skill_eval.errors import DefinitionError
from pytest_skill_eval.paths import check_relative, normalize_relative

from .support import BASES, spec_doc, write_json, write_suite_tree

NASTY_STRINGS = [
    "",
    ".",
    "..",
    "../x",
    "/abs",
    "C:x",
    "a//b",
    "a/",
    "a\\b",
    "a\x00b",
    "\ud800",
    "end-to-end",
    "bash",
    "PATH",
    "PI_CODING_AGENT_DIR",
    "API_KEY",
    "git",
    "working-tree",
    "baseline",
    "candidate",
    "x" * 100,
]
SCHEMA_KEYS = [
    "schema_version", "kind", "id", "type", "input", "prompt", "turns", "fixture", "tools", "variants",
    "baseline", "candidate", "source", "ref", "skills", "target", "context", "expectations", "variant",
    "comparison", "turn", "expect", "review_questions", "model", "thinking", "runtime", "host", "session",
    "extensions", "entry", "resources", "environment", "literal", "inherit", "groups",
]  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=10)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(NASTY_STRINGS)
    | st.text(max_size=12)
)
keys = st.sampled_from(SCHEMA_KEYS) | st.text(max_size=8)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)


def _locations(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_locations(value, (*path, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_locations(value, (*path, index)))
    return found


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    doc: Any = spec_doc(draw(st.sampled_from(sorted(BASES))))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        path = draw(st.sampled_from(_locations(doc)))
        operation = draw(st.sampled_from(["replace", "delete", "add", "empty"]))
        if not path:
            if operation == "replace":
                doc = draw(json_values)
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if operation == "replace":
            parent[last] = draw(json_values)
        elif operation == "delete":
            del parent[last]
        elif operation == "empty":
            parent[last] = type(parent[last])() if isinstance(parent[last], (dict, list, str)) else None
        elif isinstance(parent[last], dict):
            parent[last][draw(keys)] = draw(json_values)
        elif isinstance(parent[last], list):
            parent[last].append(draw(json_values))
    return doc


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("root")
    write_suite_tree(root)
    return root


def _assert_loads_or_reports(path: Path, root: Path) -> None:
    for load in (load_definition, load_group, load_suite):
        try:
            result = load(path, root)
        except DefinitionError as error:
            assert error.problems, "a DefinitionError always lists its problems"
            for problem in error.problems:
                assert problem.message.startswith("expected "), problem
                assert problem.pointer == "" or problem.pointer.startswith("/"), problem
                assert "valid under" not in problem.message and "required property" not in problem.message
            str(error).encode("utf-8")  # printable: no lone surrogates in the report
        else:
            assert isinstance(result, (Group, Suite))


SETTINGS = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(doc=mutated_documents())
def test_mutated_examples_only_ever_raise_definition_error(root: Path, doc: Any) -> None:
    path = root / "mutant.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _assert_loads_or_reports(path, root)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=json_values)
def test_random_json_only_ever_raises_definition_error(root: Path, doc: Any) -> None:
    path = root / "random.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _assert_loads_or_reports(path, root)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=64) | st.text(max_size=64).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_random_bytes_only_ever_raise_definition_error(root: Path, data: bytes) -> None:
    path = root / "bytes.json"
    path.write_bytes(data)
    _assert_loads_or_reports(path, root)


def test_deep_nesting_is_a_definition_error(root: Path) -> None:
    path = root / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(DefinitionError, match="expected JSON this loader can read, found nesting too deep to parse"):
        load_group(path, root)


def _variant(name: VariantName, doc: dict[str, Any]) -> Variant:
    source = doc["source"]
    return Variant(name, Source(source["kind"], source.get("ref")), tuple(doc["skills"]),
                   doc["target"], tuple(doc["context"]))


def _mirror(doc: dict[str, Any], path: Path, root: Path) -> Group | Suite:
    """What the spec says a valid document loads as, field by field, with its defaults."""
    if doc["kind"] == "suite":
        refs = tuple(GroupRef(n, ref, root / ref) for n, ref in enumerate(doc["groups"], start=1))
        return Suite(path, doc["id"], refs)
    given = doc["input"]
    runtime = doc.get("runtime", {})
    environment = runtime.get("environment", {})
    model = doc.get("model")
    return Group(
        path=path,
        id=doc["id"],
        type=doc["type"],
        prompts=(given["prompt"],) if "prompt" in given else tuple(given["turns"]),
        input_kind="prompt" if "prompt" in given else "turns",
        fixture=doc["fixture"],
        tools=tuple(doc["tools"]),
        baseline=_variant("baseline", doc["variants"]["baseline"]),
        candidate=_variant("candidate", doc["variants"]["candidate"]),
        expectations=tuple(
            Expectation(e["id"], e["kind"], e["variant"], e["expect"], e.get("comparison"), e.get("turn"),
                        f"/expectations/{i}", e)
            for i, e in enumerate(doc["expectations"])
        ),
        review_questions=tuple(doc["review_questions"]),
        model=ModelSpec(model["model"], model.get("thinking")) if model else None,
        runtime=Runtime(
            host=runtime.get("host", "pi"),
            session=runtime.get("session", False),
            extensions=tuple(ExtensionBundle(x["entry"], tuple(x["resources"])) for x in runtime.get("extensions", [])),
            environment=RuntimeEnvironment(tuple(sorted(environment.get("literal", {}).items())),
                                           tuple(environment.get("inherit", []))),
        ),
        raw=doc,
    )


@pytest.mark.parametrize("base", list(BASES))
def test_spec_examples_load_unchanged(root: Path, base: str) -> None:
    """Each spec example loads as exactly what it says, and the loader changes nothing in it."""
    doc = spec_doc(base)
    path = write_json(root / f"{base}.json", doc)
    loaded = load_definition(path, root)
    assert loaded == _mirror(doc, path, root)
    assert doc == spec_doc(base)  # the document was not modified by loading
    if isinstance(loaded, Group):
        assert loaded.raw == doc
        assert [e.raw for e in loaded.expectations] == doc["expectations"]
        assert load_group(path, root) == loaded
    else:
        assert load_suite(path, root) == loaded
        _, groups = load_suite_groups(loaded, root)
        assert [g.id for g in groups] == ["natural-activation", "body-behavior"]


@settings(max_examples=1000, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(["a", "b", ".", "/", "\\", ":", "C", "\x00"]), max_size=12) | st.text(max_size=12),
    base=st.sampled_from(["", "a", "a/b", ".skill-eval/suite"]),
)
def test_accepted_paths_never_leave_the_root(text: str, base: str) -> None:
    problem = check_relative(text, base)
    if problem is None:
        normal = normalize_relative(text, base)
        assert normal not in ("", ".", "..") and not normal.startswith(("../", "/"))
        assert posixpath.normpath(posixpath.join("/root", normal)).startswith("/root/")
        assert "\\" not in normal and "\x00" not in normal
    else:
        assert problem.startswith("expected ")
