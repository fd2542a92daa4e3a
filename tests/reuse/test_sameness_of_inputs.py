"""Baseline reuse's "same inputs" comparison: equal inputs reuse; each differing field, in turn, refuses by name.

Built from the trials example's real group definition, so the fields are the ones a stored
``definition.json`` holds.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.reuse import FIELDS, BaselineInputs, baseline_definition, first_difference

GROUP = Path(__file__).resolve().parents[2] / "example_suites" / "trials" / "groups" / "changelog-activation.json"
SKILL = "60144b06d65c671eb2ed3d4a0461ebcf7198cc4ebcb4e14e503a3568b7fa1610"
OTHER = "9" * 64


def files(**changes: tuple[str, str] | None) -> dict[str, tuple[str, str]]:
    found = {"resources/skills/0/changelog/SKILL.md": (SKILL, "644"), "resources/context/0/AGENTS.md": (SKILL, "644"),
             "extensions/0/index.mjs": (SKILL, "644"), "workspace/README.md": (SKILL, "644")}
    for key, value in changes.items():
        path = {"skill": "resources/skills/0/changelog/SKILL.md", "context": "resources/context/0/AGENTS.md",
                "bundle": "extensions/0/index.mjs", "fixture": "workspace/extra.txt"}[key]
        if value is None:
            del found[path]
        else:
            found[path] = value
    return found


def inputs(**changes: Any) -> BaselineInputs:
    definition = json.loads(GROUP.read_text())
    base: dict[str, Any] = {
        "definition": definition, "host": "1.6.0", "version": "0.1.0",
        "files": files(), "script": SKILL, "seed": "trials-example",
    }
    base.update(changes)
    return BaselineInputs(**base)


def edited(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    definition: dict[str, Any] = json.loads(GROUP.read_text())
    change(definition)
    return definition


# one change per field, in FIELDS order; each is the first (and only) difference
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("model", {"definition": edited(lambda d: d["model"].update(model="scripted/other"))}, ""),
    ("thinking", {"definition": edited(lambda d: d["model"].update(thinking="high"))}, ""),
    ("host", {"host": "1.7.0"}, ""),
    ("version", {"version": "0.2.0"}, ""),
    ("tools", {"definition": edited(lambda d: d.update(tools=["read", "write"]))}, "/1"),
    ("runtime", {"definition": edited(lambda d: d.update(runtime={"environment": {"literal": {"A": "1"}}}))}, ""),
    ("skills", {"files": files(skill=(OTHER, "644"))}, "/resources~1skills~10~1changelog~1SKILL.md"),
    ("context", {"files": files(context=None)}, "/resources~1context~10~1AGENTS.md"),
    ("fixture", {"files": files(fixture=(SKILL, "755"))}, "/workspace~1extra.txt"),
    ("bundles", {"files": files(bundle=(SKILL, "755"))}, "/extensions~10~1index.mjs"),
    ("input", {"definition": edited(lambda d: d.update(input={"prompt": "Another prompt."}))}, "/prompt"),
    ("script", {"script": OTHER}, ""),
    ("seed", {"seed": "another"}, ""),
    ("definition", {"definition": edited(lambda d: d["variants"]["baseline"].update(skills=["skills/changelog"]))},
     "/variants/baseline/skills/0"),
]


def test_the_cases_cover_every_field_in_order() -> None:
    assert [name for name, _, _ in CASES] == list(FIELDS)


def test_the_same_inputs_reuse() -> None:
    assert first_difference(inputs(), inputs()) is None


@pytest.mark.parametrize(("name", "change", "pointer"), CASES, ids=[c[0] for c in CASES])
def test_each_differing_field_refuses_by_name(name: str, change: dict[str, Any], pointer: str) -> None:
    found = first_difference(inputs(), inputs(**change))
    assert found is not None
    assert (found.field, found.pointer) == (name, pointer)
    assert found.text().startswith(f"baseline not reused: {name} differs")


def test_a_mode_alone_differs() -> None:
    found = first_difference(inputs(), inputs(files=files(skill=(SKILL, "755"))))
    assert found is not None and found.field == "skills"
    assert found.text().endswith(f"stored {SKILL[:12]}… 644, now {SKILL[:12]}… 755")


def test_the_first_of_several_differences_is_named() -> None:
    found = first_difference(inputs(), inputs(seed="another", host="1.7.0", script=OTHER))
    assert found is not None and found.field == "host"
    assert found.text() == "baseline not reused: host differs: stored '1.6.0', now '1.7.0'"
    digest = first_difference(inputs(), inputs(script=OTHER))
    assert digest is not None and digest.text().endswith(f"stored {SKILL[:12]}…, now {OTHER[:12]}…")


def test_candidate_only_fields_do_not_refuse() -> None:
    def candidate_only(d: dict[str, Any]) -> None:
        d["variants"]["candidate"]["skills"] = ["skills-before/changelog"]
        d["expectations"] = [e for e in d["expectations"] if e["variant"] != "candidate"]
        d["expectations"].append({"id": "new", "kind": "skill-read", "variant": "candidate", "expect": "never"})
    assert first_difference(inputs(), inputs(definition=edited(candidate_only))) is None


def test_a_candidate_context_text_check_switches_the_observer_on_for_the_baseline_too() -> None:
    def observe(d: dict[str, Any]) -> None:
        d["expectations"].append({"id": "sees", "kind": "context-text", "variant": "candidate", "contains": "x"})
    found = first_difference(inputs(), inputs(definition=edited(observe)))
    assert found is not None and (found.field, found.pointer) == ("definition", "/observer")
    assert baseline_definition(edited(observe))["observer"] is True


def test_types_differ_even_when_python_calls_them_equal_and_hostile_text_is_neutralised() -> None:
    found = first_difference(inputs(), inputs(definition=edited(lambda d: d["model"].update(thinking=True)),
                                              host="1.6.0\x1b[2J"))
    assert found is not None and found.field == "thinking"
    one = first_difference(inputs(seed="1"), inputs(seed=1))
    assert one is not None and one.field == "seed"
    shown = first_difference(inputs(), inputs(host="1.6.0\x1b[2J\n"))
    assert shown is not None and "\x1b" not in shown.text() and "\n" not in shown.text()
    deep = copy.deepcopy(inputs().definition)
    assert first_difference(inputs(), inputs(definition=deep)) is None
