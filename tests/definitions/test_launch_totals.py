"""The literal environment's total against MAX_EXEC_TOTAL, at its exact edge, and a value the
schema refuses does not hide the values after it."""

from __future__ import annotations

from typing import Any

from pytest_skill_eval.definitions.rules import check_group_document
from pytest_skill_eval.execlimits import MAX_EXEC_TOTAL

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
