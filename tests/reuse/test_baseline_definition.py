"""What of a group definition reaches the baseline: every key but the fields compared on their
own and the candidate-only parts, with the baseline's expectations as they are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.reuse import BaselineInputs, baseline_definition, first_difference

GROUP = Path(__file__).resolve().parents[2] / "example_suites" / "trials" / "groups" / "changelog-activation.json"


def definition() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(GROUP.read_text())
    return found


def test_the_baseline_definition_keeps_every_other_key_and_the_baseline_expectations() -> None:
    seen = baseline_definition(definition())
    assert set(seen) == {"schema_version", "kind", "id", "type", "fixture", "variants", "expectations",
                         "review_questions", "observer"}
    assert [e["id"] for e in seen["expectations"]] == ["baseline-reads-skill"]
    assert seen["observer"] is False


def test_a_differing_review_question_or_baseline_expectation_refuses_as_the_definition() -> None:
    stored = BaselineInputs(definition(), "1.6.0", "0.1.0")
    questions = definition()
    questions["review_questions"] = ["Another question?"]
    found = first_difference(stored, BaselineInputs(questions, "1.6.0", "0.1.0"))
    assert found is not None and (found.field, found.pointer) == ("definition", "/review_questions/0")
    expectation = definition()
    expectation["expectations"][0]["expect"] = "never"
    found = first_difference(stored, BaselineInputs(expectation, "1.6.0", "0.1.0"))
    assert found is not None and (found.field, found.pointer) == ("definition", "/expectations/0/expect")


def test_the_refusal_names_the_place_and_an_absent_value_on_one_line() -> None:
    digest = "60144b06d65c671eb2ed3d4a0461ebcf7198cc4ebcb4e14e503a3568b7fa1610"
    stored = BaselineInputs(definition(), "1.6.0", "0.1.0", {"resources/context/0/AGENTS.md": (digest, "644")})
    found = first_difference(stored, BaselineInputs(definition(), "1.6.0", "0.1.0"))
    assert found is not None
    assert found.text() == ("baseline not reused: context differs at /resources~1context~10~1AGENTS.md: "
                            "stored 60144b06d65c… 644, now nothing")
    hostile = definition()
    hostile["notes\nline"] = "x"
    found = first_difference(stored, BaselineInputs(hostile, "1.6.0", "0.1.0", stored.files))
    assert found is not None
    assert found.text() == "baseline not reused: definition differs at /notes\\nline: stored nothing, now 'x'"


def test_a_whole_value_against_another_type_is_shown_by_its_type_and_size() -> None:
    no_tools = definition()
    tools = no_tools.pop("tools")
    found = first_difference(BaselineInputs(definition(), None, None), BaselineInputs(no_tools, None, None))
    assert found is not None
    assert found.text() == f"baseline not reused: tools differs: stored list of {len(tools)}, now None"
    runtime = definition()
    runtime["runtime"] = {"session": "none"}
    found = first_difference(BaselineInputs(runtime, None, None), BaselineInputs(definition(), None, None))
    assert found is not None and found.text() == "baseline not reused: runtime differs: stored dict of 1, now None"


def test_null_is_not_absent_true_is_not_one_and_a_shorter_list_differs() -> None:
    def differs(stored: dict[str, Any], current: dict[str, Any]) -> str | None:
        found = first_difference(BaselineInputs({**definition(), **stored}, None, None),
                                 BaselineInputs({**definition(), **current}, None, None))
        return found.text() if found is not None else None

    assert differs({"x": None}, {}) == "baseline not reused: definition differs at /x: stored None, now nothing"
    assert differs({}, {"x": None}) == "baseline not reused: definition differs at /x: stored nothing, now None"
    assert differs({"x": 1}, {"x": True}) == "baseline not reused: definition differs at /x: stored 1, now True"
    assert differs({"x": [1, 2]}, {"x": [1]}) == "baseline not reused: definition differs at /x/1: stored 2, now nothing"
    assert differs({"x": [1]}, {"x": [1, 2]}) == "baseline not reused: definition differs at /x/1: stored nothing, now 2"
    assert differs({"x": [1, {"a": None}]}, {"x": [1, {"a": None}]}) is None


def test_a_definition_without_a_model_and_an_unknown_field() -> None:
    no_model = definition()
    del no_model["model"]
    found = first_difference(BaselineInputs(definition(), None, None), BaselineInputs(no_model, None, None))
    assert found is not None and found.field == "model" and found.text().endswith(", now None")
    with pytest.raises(ValueError, match=r"^expected one of model, thinking, host, .*, definition, found 'nope'$"):
        BaselineInputs(no_model, None, None).value("nope")
