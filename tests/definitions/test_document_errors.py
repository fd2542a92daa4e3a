"""parse_document's located errors for JSON the loader cannot take, and how a special file is named."""

from __future__ import annotations

import stat

import pytest

from pytest_skill_eval.definitions.document import file_kind, parse_document
from pytest_skill_eval.errors import DefinitionError


def error_of(text: str) -> DefinitionError:
    with pytest.raises(DefinitionError) as info:
        parse_document("g.json", text)
    return info.value


def test_nesting_past_the_bound_names_the_file_and_the_place() -> None:
    error = error_of("[" * 300 + "]" * 300)
    (problem,) = error.problems
    assert error.file == "g.json" and problem.pointer == "/0" * 200
    assert problem.message == "expected JSON this loader can read, found nesting too deep to read (more than 200 levels)"


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": NaN}', "g.json: /: expected standard JSON, found the non-standard constant NaN"),
    ('{"a": [{"k": 1, "k": 2}]}', 'g.json: /a/0/k: expected each field name once, found "k" more than once'),
])
def test_json_the_loader_cannot_take_is_a_located_error(text: str, message: str) -> None:
    error = error_of(text)
    assert str(error) == message
    assert error.problems[0].pointer == message.split(": ")[1].rstrip("/")  # the whole document is "" (RFC 6901)


def test_an_integer_past_the_digit_limit_says_what_python_said() -> None:
    error = error_of('{"a": ' + "1" * 5000 + "}")
    message = str(error)
    assert error.problems[0].pointer == ""
    assert message.startswith("g.json: /: expected JSON this loader can read, found Exceeds the limit")
    assert "5000 digits" in message


def test_a_file_of_no_named_kind_is_a_special_file() -> None:
    assert file_kind(stat.S_IFLNK) == "a special file"
    assert file_kind(stat.S_IFIFO) == "a FIFO (named pipe)"
