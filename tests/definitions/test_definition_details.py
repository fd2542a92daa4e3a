"""Details of the loader that fuzz tests reach but do not pin: exact messages and defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_skill_eval.definitions.loading import definition_kind, load_group
from pytest_skill_eval.errors import DefinitionError

from .support import DELETE, apply_edits, spec_doc, write_json


def problems(tmp_path: Path, edits: dict[str, object]) -> list[str]:
    path = write_json(tmp_path / "g.json", apply_edits(spec_doc("runtime"), edits))
    with pytest.raises(DefinitionError) as info:
        load_group(path, tmp_path)
    return [line.split(": ", 1)[1] for line in str(info.value).splitlines()]


def test_a_long_found_value_is_cut_with_its_length(tmp_path: Path) -> None:
    (message,) = problems(tmp_path, {"/id": "X" * 200})
    assert message.endswith(f'found "{"X" * 60}"… (200 characters)')


def test_environment_literal_that_is_not_an_object(tmp_path: Path) -> None:
    assert problems(tmp_path, {"/runtime/environment/literal": 5}) == [
        "/runtime/environment/literal: expected an object of environment names to string values, found 5"]


def test_tool_problems_go_on_after_a_malformed_name(tmp_path: Path) -> None:
    assert problems(tmp_path, {"/tools": ["Bad Name", "bash", "read"]}) == [
        ('/tools/0: expected a tool name (a letter, then letters, digits, "_" or "-", at most 64 characters), '
        'found "Bad Name"'),
        ('/tools/1: expected one of "read", "write", "edit" or a custom tool of a declared extension bundle, '
        'found "bash" (native "bash" is unsupported)'),
    ]


def test_a_duplicate_top_level_field_is_located(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"kind": "group", "kind": "group"}')
    with pytest.raises(DefinitionError) as info:
        load_group(path, tmp_path)
    assert str(info.value) == f'{path}: /kind: expected each field name once, found "kind" more than once'


def test_a_directory_is_not_a_definition_file(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(DefinitionError) as info:
        load_group(tmp_path / "dir.json", tmp_path)
    assert str(info.value).endswith("expected a regular file, found a directory")
    assert definition_kind(tmp_path / "dir.json") is None


def test_an_expectation_without_expect_loads_with_an_empty_one(tmp_path: Path) -> None:
    path = write_json(tmp_path / "g.json", apply_edits(spec_doc("runtime"), {"/expectations/0/expect": DELETE}))
    assert load_group(path, tmp_path).expectations[0].expect == ""


@pytest.mark.parametrize(("doc", "kind"), [
    ({"schema_version": 1, "kind": "group"}, "group"),
    ({"schema_version": 1, "kind": "suite"}, "suite"),
    ({"kind": "group"}, None),
    ({"schema_version": 1, "kind": "other"}, None),
    ([1], None),
])
def test_definition_kind(tmp_path: Path, doc: object, kind: str | None) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc))
    assert definition_kind(path) == kind
