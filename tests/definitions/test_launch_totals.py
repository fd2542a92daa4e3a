"""The literal environment's total against MAX_EXEC_TOTAL, at its exact edge, and a value the
schema refuses does not hide the values after it, and the model name's located errors."""

from __future__ import annotations

from typing import Any

from pytest_skill_eval.definitions.rules import check_group_document
from pytest_skill_eval.execlimits import MAX_ARG_STRLEN, MAX_EXEC_TOTAL

from .support import apply_edits, spec_doc

LITERAL = "/runtime/environment/literal"


def problems(literal: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for problem in check_group_document(apply_edits(spec_doc("runtime"), {LITERAL: literal})):
        found.setdefault(problem.pointer, []).append(problem.message)
    return found


def bulk(last: int) -> dict[str, str]:
    # each NAME=value counts its UTF-8, its closing NUL and an 8-byte pointer: 17 bytes more than the value
    values = {f"BULK_{i:02d}": "v" * 120_000 for i in range(52)}
    values["BULK_52"] = "v" * last
    return values


def test_literal_values_of_exactly_the_total_pass_and_one_byte_more_is_refused() -> None:
    edge = MAX_EXEC_TOTAL - 52 * 120_017 - 17
    assert problems(bulk(edge)) == {}
    assert problems(bulk(edge + 1)) == {LITERAL: [
        f"expected literal values of at most {MAX_EXEC_TOTAL} bytes in all (no Linux kernel takes more argv and "
        "environment: three quarters of its 8 MiB stack limit), found "
        f"{MAX_EXEC_TOTAL + 1} bytes; put long texts in fixture files instead"]}


def test_a_value_the_schema_refuses_does_not_hide_the_next_ones() -> None:
    found = problems({"NUMBER": 1, "LATER": "a\x00b"})
    assert f"{LITERAL}/LATER" in found and f"{LITERAL}/NUMBER" in found


def model_problems(model: str) -> list[str]:
    doc = apply_edits(spec_doc("runtime"), {"/model": {"model": model}})
    return [p.message for p in check_group_document(doc) if p.pointer == "/model/model"]


def test_a_model_name_pi_cannot_be_given_says_where_and_why() -> None:
    assert model_problems("open\x00ai/gp\x00t") == [
        "expected a model name without NUL characters (pi gets the provider and the model id as command-line "
        'arguments, which end at their first NUL), found "open\\u0000ai/gp\\u0000t" with a NUL at character 5']
    (long,) = model_problems("openai/" + "x" * MAX_ARG_STRLEN)
    assert long.startswith(f"expected a provider and model id of at most {MAX_ARG_STRLEN - 1} bytes each (pi gets "
                           'each as one command-line argument: Linux MAX_ARG_STRLEN), found "openai/xxx')
    assert long.endswith(f"… ({MAX_ARG_STRLEN + 7} characters) with a part of {MAX_ARG_STRLEN} bytes")
    assert model_problems("scripted/../x") == [
        'expected "scripted/<name>" with <name> a script name below "scripts/" (it names scripts/<name>.json), '
        'found "scripted/../x": expected a path inside the definition root, found "../x" leaving it through ".."']
