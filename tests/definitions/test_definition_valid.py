"""Valid definitions, starting with the spec's own examples verbatim, load into dataclasses."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_skill_eval.definitions.loading import load_definition, load_group, load_suite, load_suite_groups
from pytest_skill_eval.definitions.model import (
    Expectation,
    ExtensionBundle,
    Group,
    ModelSpec,
    Runtime,
    RuntimeEnvironment,
    Source,
    Suite,
    Variant,
)
from pytest_skill_eval.definitions.rules import check_group_document

from .support import VALID, apply_edits, spec_doc, write_json, write_suite_tree


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A definition root holding copies of the spec examples."""
    for example in VALID.glob("*.json"):
        (tmp_path / example.name).write_bytes(example.read_bytes())
    return tmp_path


def test_spec_common_shape_loads(root: Path) -> None:
    group = load_group(root / "spec-common-shape.json", root)
    assert group == Group(
        path=root / "spec-common-shape.json",
        id="one-behavioral-question",
        type="description",
        prompts=("Natural task prompt.",),
        input_kind="prompt",
        fixture=None,
        tools=("read",),
        baseline=Variant("baseline", Source("working-tree"), (), None, ()),
        candidate=Variant("candidate", Source("working-tree"), ("skills/target",), 0, ()),
        expectations=(),
        review_questions=(),
        model=ModelSpec("openai-codex/gpt-5.6-sol", "low"),
        runtime=Runtime(),
        raw={},
    )
    assert group.model is not None and (group.model.provider, group.model.model_id) == ("openai-codex", "gpt-5.6-sol")


def test_spec_description_example_loads(root: Path) -> None:
    group = load_group(root / "spec-description.json", root)
    assert group.id == "natural-activation"
    assert group.type == "description"
    assert group.input_kind == "turns"
    assert group.prompts == ("Help me inspect this ordinary change.", "Now prepare a deployment rollback.")
    assert group.baseline == Variant("baseline", Source("git", "before-description-change"), ("skills/target",), 0, ())
    assert group.candidate == Variant("candidate", Source("working-tree"), ("skills/target",), 0, ())
    assert group.variant("baseline") is group.baseline
    assert group.expectations[1] == Expectation(
        id="candidate-read-by-two",
        kind="skill-read",
        variant="candidate",
        expect="by-turn",
        comparison="target-read-by-two",
        turn=2,
        pointer="/expectations/1",
        raw={},
    )
    assert group.expectations[1].raw["comparison"] == "target-read-by-two"
    assert group.model is None


def test_spec_body_example_loads(root: Path) -> None:
    group = load_group(root / "spec-body.json", root)
    assert group.type == "body"
    assert group.fixture == "fixtures/task"
    assert group.tools == ("read", "write", "edit")
    assert group.baseline.skills == ("skills/support", "skills/target")
    assert group.baseline.target == 1
    assert group.candidate.context == ("context/contract.md",)
    assert [e.id for e in group.expectations] == ["baseline-result", "candidate-result", "candidate-status", "candidate-changes"]
    # Kind-specific fields stay raw for grading.
    assert group.expectations[2].raw["pointer"] == "/status"
    assert group.expectations[3].raw["paths"] == ["result.json"]
    assert group.review_questions == ("Did the second turn apply the first-turn guidance without redelivery?",)
    assert group.raw == json.loads((VALID / "spec-body.json").read_text())


def test_spec_runtime_profile_loads(root: Path) -> None:
    group = load_group(root / "spec-runtime.json", root)
    assert group.runtime == Runtime(
        host="pi",
        session=False,
        extensions=(ExtensionBundle("extensions/probe.mjs", ("extensions",)),),
        environment=RuntimeEnvironment(literal=(("PROBE_MODE", "injection-test"),), inherit=()),
    )
    assert "probe" in group.tools
    # The spec's Variant Environment example, used as this group's baseline.
    assert group.baseline == Variant("baseline", Source("git", "v1.2.3"), ("skills/target", "skills/support"), 0, ("context/base-guidance.md",))
    # The spec's JSON-states expectations, including a null expected value.
    assert group.expectations[-1].raw["value"] is None


def test_spec_suite_example_loads(tmp_path: Path) -> None:
    suite_path = write_suite_tree(tmp_path)
    suite = load_suite(suite_path, tmp_path)
    assert suite.id == "workflow-core"
    assert [(r.position, r.ref, r.path) for r in suite.groups] == [
        (1, "groups/natural-activation.json", tmp_path / "groups/natural-activation.json"),
        (2, "groups/body-behavior.json", tmp_path / "groups/body-behavior.json"),
    ]
    loaded, groups = load_suite_groups(suite, tmp_path)
    assert [g.id for g in groups] == ["natural-activation", "body-behavior"]
    assert [r.group_id for r in loaded.groups] == ["natural-activation", "body-behavior"]
    assert isinstance(load_definition(suite_path, tmp_path), Suite)


def test_suite_references_resolve_from_the_suite_directory(tmp_path: Path) -> None:
    write_json(tmp_path / "shared" / "g.json", spec_doc("body"))
    suite_path = write_json(
        tmp_path / ".skill-eval" / "my-skill" / "suite.json",
        {"schema_version": 1, "kind": "suite", "id": "nested", "groups": ["../../shared/g.json"]},
    )
    suite = load_suite(suite_path, tmp_path)
    assert suite.groups[0].path == tmp_path / "shared" / "g.json"


def test_a_suite_in_skill_eval_may_list_groups_beside_it(tmp_path: Path) -> None:
    # where `skill-eval init` writes a suite: its groups live in .skill-eval/<name>/ too
    write_json(tmp_path / ".skill-eval" / "my-skill" / "groups" / "g.json", spec_doc("body"))
    suite_path = write_json(
        tmp_path / ".skill-eval" / "my-skill" / "suite.json",
        {"schema_version": 1, "kind": "suite", "id": "nested", "groups": ["groups/g.json"]},
    )
    suite, groups = load_suite_groups(load_suite(suite_path, tmp_path), tmp_path)
    assert suite.groups[0].path == tmp_path / ".skill-eval" / "my-skill" / "groups" / "g.json"
    assert [g.id for g in groups] == ["retained-artifact-behavior"]


def test_relative_root_and_paths_work_from_the_current_directory(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    group = load_group(Path("spec-body.json"), Path("."))
    assert group.path == Path("spec-body.json")


def _facts(group: Group) -> dict[str, Any]:
    """The loaded fields the variations below change."""
    env = group.runtime.environment
    return {
        "id": group.id, "prompts": group.prompts, "input_kind": group.input_kind, "fixture": group.fixture,
        "tools": group.tools, "baseline": (group.baseline.skills, group.baseline.target, group.baseline.context),
        "candidate": (group.candidate.skills, group.candidate.target, group.candidate.context),
        "host": group.runtime.host, "session": group.runtime.session,
        "extensions": [(x.entry, x.resources) for x in group.runtime.extensions],
        "literal": env.literal, "inherit": env.inherit,
        "model": group.model, "expectation0": (group.expectations[0].expect, group.expectations[0].turn),
    }


VARIATIONS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("runtime-only group: neither variant declares a skill",
     {"/variants/candidate/skills": [], "/variants/candidate/target": None, "/variants/baseline/skills": [],
      "/variants/baseline/target": None},
     {"baseline": ((), None, ("context/base-guidance.md",)), "candidate": ((), None, ("context/contract.md",))}),
    ("no-target baseline beside a targeted candidate", {"/variants/baseline/target": None},
     {"baseline": (("skills/target", "skills/support"), None, ("context/base-guidance.md",)),
      "candidate": (("skills/support", "skills/target"), 1, ("context/contract.md",))}),
    ("no tools at all, in a body group", {"/tools": []}, {"tools": ()}),
    ("custom tools of a declared bundle, several of them", {"/tools": ["read", "probe", "probe-two"]},
     {"tools": ("read", "probe", "probe-two")}),
    ("repeated natural turns are allowed", {"/input/turns": ["Again.", "Again."]},
     {"prompts": ("Again.", "Again."), "input_kind": "turns"}),
    ("non-escaping dot segments, a file fixture, and a directory context item",
     {"/fixture": "./fixtures/task/../task/input.txt", "/variants/candidate/context": ["context"]},
     {"fixture": "./fixtures/task/../task/input.txt",  # declared paths are kept as written
      "candidate": (("skills/support", "skills/target"), 1, ("context",))}),
    ("a piflow host with a session and inherited credentials",
     {"/runtime/host": "piflow", "/runtime/session": True, "/runtime/environment/inherit": ["OPENAI_API_KEY", "AUTH_TOKEN"]},
     {"host": "piflow", "session": True, "inherit": ("OPENAI_API_KEY", "AUTH_TOKEN"),
      "literal": (("PROBE_MODE", "injection-test"),)}),
    ("a runtime with only the host; everything else defaults", {"/runtime": {"host": "pi"}, "/tools": ["read"]},
     {"host": "pi", "session": False, "extensions": [], "literal": (), "inherit": (), "tools": ("read",)}),
    ("every thinking level and a model name with further slashes",
     {"/model": {"model": "openrouter/anthropic/claude-x", "thinking": "xhigh"}},
     {"model": ModelSpec("openrouter/anthropic/claude-x", "xhigh")}),
    ("kind-specific fields are not checked at load time (grading owns them)",
     {"/expectations/0/expect": "sometimes", "/expectations/0/surprise": [1, 2]},
     {"expectation0": ("sometimes", 2)}),
    ("turn given as an integral float is still a JSON Schema integer", {"/expectations/0/turn": 2.0},
     {"expectation0": ("exists", 2)}),
    ("an id of exactly 64 characters", {"/id": "a" * 64}, {"id": "a" * 64}),
    ("non-secret literal names that merely look close to reserved ones",
     {"/runtime/environment/literal": {"PATHS_FILE": "x", "HOMEPAGE": "y", "PIPELINE": "z"}},
     {"literal": (("HOMEPAGE", "y"), ("PATHS_FILE", "x"), ("PIPELINE", "z"))}),
]


@pytest.mark.parametrize(("edits", "changed"), [pytest.param(e, c, id=name) for name, e, c in VARIATIONS])
def test_valid_variations_load(tmp_path: Path, edits: dict[str, object], changed: dict[str, Any]) -> None:
    """Each variation loads, with exactly the edited fields changed from the unedited example."""
    base = _facts(load_group(write_json(tmp_path / "base.json", spec_doc("runtime")), tmp_path))
    doc = apply_edits(spec_doc("runtime"), edits)
    group = load_group(write_json(tmp_path / "g.json", doc), tmp_path)
    facts = _facts(group)
    assert {k: v for k, v in facts.items() if k in changed} == changed
    assert {k: v for k, v in facts.items() if k not in changed} == {k: v for k, v in base.items() if k not in changed}
    assert group.raw == doc
    assert type(group.expectations[0].turn) is int


def test_integral_float_turn_becomes_an_int(tmp_path: Path) -> None:
    path = write_json(tmp_path / "g.json", apply_edits(spec_doc("body"), {"/expectations/0/turn": 2.0, "/variants/baseline/target": 1.0}))
    group = load_group(path, tmp_path)
    assert group.expectations[0].turn == 2 and type(group.expectations[0].turn) is int
    assert group.baseline.target == 1 and type(group.baseline.target) is int


def test_literal_environment_is_sorted_by_name(tmp_path: Path) -> None:
    path = write_json(tmp_path / "g.json", apply_edits(spec_doc("runtime"), {"/runtime/environment/literal": {"B": "2", "A": "1"}}))
    assert load_group(path, tmp_path).runtime.environment.literal == (("A", "1"), ("B", "2"))


@pytest.mark.parametrize("name", ["group", "suite"])
def test_shipped_schemas_are_valid_draft_2020_12(name: str) -> None:
    text = resources.files("pytest_skill_eval").joinpath("schemas", f"{name}.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("example", sorted(p.name for p in VALID.glob("*.json")))
def test_spec_examples_validate_against_the_bare_schemas(example: str) -> None:
    """Editors using only the schema files accept every spec example."""
    doc = json.loads((VALID / example).read_text())
    kind = doc["kind"]
    schema = json.loads(resources.files("pytest_skill_eval").joinpath("schemas", f"{kind}.schema.json").read_text(encoding="utf-8"))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(doc)) == []
    if kind == "group":
        assert check_group_document(doc) == []
