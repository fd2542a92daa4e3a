"""Problems are listed in document order: pointer segments compare as numbers where they are indexes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_skill_eval.definitions.loading import load_definition
from pytest_skill_eval.errors import DefinitionError, Problem

from .support import spec_doc


def test_pointer_segments_sort_numerically() -> None:
    problems = [Problem("/expectations/10/id", "b"), Problem("/tools/0", "a"), Problem("/expectations/2/id", "c"),
                Problem("", "root"), Problem("/expectations/2", "d"), Problem("/expectations/10/id", "a")]
    error = DefinitionError("f.json", problems)
    assert [(p.pointer, p.message) for p in error.problems] == [
        ("", "root"), ("/expectations/2", "d"), ("/expectations/2/id", "c"), ("/expectations/10/id", "a"),
        ("/expectations/10/id", "b"), ("/tools/0", "a"),
    ]


def test_a_definition_with_many_broken_expectations_lists_them_in_order(tmp_path: Path) -> None:
    doc = spec_doc("body")
    good = doc["expectations"][0]
    doc["expectations"] = [dict(good, id=f"e{i}") for i in range(12)]
    for i in (2, 10, 11):
        doc["expectations"][i]["variant"] = "neither"
    (tmp_path / "g.json").write_text(json.dumps(doc))
    with pytest.raises(DefinitionError) as info:
        load_definition(tmp_path / "g.json", root=tmp_path)
    pointers = [p.pointer for p in info.value.problems]
    assert pointers == ["/expectations/2/variant", "/expectations/10/variant", "/expectations/11/variant"]
