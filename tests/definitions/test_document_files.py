"""read_document: what it refuses to read, named with the file and the reason, and the size bound's edge."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_skill_eval import jsonbounds
from pytest_skill_eval.definitions.document import read_document
from pytest_skill_eval.errors import DefinitionError


def message(path: Path) -> str:
    with pytest.raises(DefinitionError) as info:
        read_document(path)
    assert info.value.problems[0].pointer == ""  # the whole document (RFC 6901)
    return str(info.value)


def test_a_directory_or_an_unreadable_path_is_a_located_error(tmp_path: Path) -> None:
    assert message(tmp_path) == f"{tmp_path}: /: expected a regular file, found a directory"
    (tmp_path / "file").write_text("{}")
    assert message(tmp_path / "file" / "g.json") == (
        f"{tmp_path}/file/g.json: /: expected a readable file, found an OS error: Not a directory")


def test_a_file_of_exactly_the_bound_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    head = '{"a": "'
    path.write_text(head + "x" * (jsonbounds.MAX_BYTES - len(head) - 2) + '"}')
    assert path.stat().st_size == jsonbounds.MAX_BYTES
    assert len(read_document(path)["a"]) == jsonbounds.MAX_BYTES - len(head) - 2
    path.write_text(head + "x" * (jsonbounds.MAX_BYTES - len(head) - 1) + '"}')
    assert message(path) == (f"{path}: /: expected a regular file, found a file of {jsonbounds.MAX_BYTES + 1} bytes, "
                             f"over the {jsonbounds.MAX_BYTES}-byte limit of a JSON file")
