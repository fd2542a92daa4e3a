"""RFC 6901 pointers, JSON equality and strict parsing, tested directly."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_skill_eval.grading.jsonvalue import (
    MalformedJSONError,
    json_equal,
    parse_document,
    parse_pointer,
    resolve_pointer,
)


@pytest.mark.parametrize(
    ("pointer", "tokens"),
    [
        ("", ()),
        ("/", ("",)),
        ("//", ("", "")),
        ("/a~1b", ("a/b",)),
        ("/m~0n", ("m~n",)),
        ("/~01", ("~1",)),  # ~1 is unescaped before ~0, never to "/"
        ("/a/0/-", ("a", "0", "-")),
        ("a", None),
        ("/~", None),
        ("/~2", None),
        ("/a~", None),
    ],
)
def test_parse_pointer(pointer: str, tokens: tuple[str, ...] | None) -> None:
    assert parse_pointer(pointer) == tokens


DOC = {"a": [1, 2], "": {"": "empty"}, "~1": "literal"}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", (True, DOC)),
        ("/a/0", (True, 1)),
        ("/a/00", (False, None)),
        ("/a/-", (False, None)),
        ("/a/-1", (False, None)),
        ("/a/2", (False, None)),
        ("//", (True, "empty")),
        ("/~01", (True, "literal")),
        ("/a/0/x", (False, None)),
    ],
)
def test_resolve_pointer(pointer: str, expected: tuple[bool, Any]) -> None:
    tokens = parse_pointer(pointer)
    assert tokens is not None
    assert resolve_pointer(DOC, tokens) == expected


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (True, True, True),
        (None, None, True),
        (None, False, False),
        ("1", 1, False),
        ({"a": 1, "b": [1]}, {"b": [1.0], "a": 1}, True),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ([1, 2], [2, 1], False),
        ([True], [1], False),
        (0.1 + 0.2, 0.3, False),  # numbers compare exactly, as parsed
        # arrays against non-arrays: never equal, whatever they hold
        (["a", "b"], "ab", False),
        (["a"], "a", False),
        ([], "", False),
        ([], None, False),
        ([], {}, False),
        ([1], 1, False),
        ([[1]], [1], False),
        ({"a": 1}, [["a", 1]], False),
        ({}, None, False),
        ({"a": 1}, "a", False),
        ([1, [2, {"x": None}]], [1.0, [2, {"x": None}]], True),
        ([1, 2], [1, 2, 3], False),
        ([1, 2], [1, 3], False),
        ([], [], True),
        ({}, {}, True),
        ({"a": 1}, {"a": 2}, False),
        ({"a": 1}, {"b": 1}, False),
        ("a", "a", True),
        ("a", "b", False),
        ("", None, False),
        (0, None, False),
        (1, 2, False),
        (False, False, True),
        (True, False, False),
    ],
)
def test_json_equal(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{", "invalid JSON at line 1 column 2: Expecting property name enclosed in double quotes"),
        (b"NaN", "invalid JSON: NaN is not JSON"),
        (b"[-Infinity]", "invalid JSON: -Infinity is not JSON"),
        (b"\xef\xbb\xbf1", "invalid JSON at line 1 column 1: Unexpected UTF-8 BOM (decode using utf-8-sig)"),
        (b"\x80", "not UTF-8 (invalid byte at offset 0)"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply to parse"),
    ],
)
def test_parse_document_rejects(data: bytes, message: str) -> None:
    with pytest.raises(MalformedJSONError) as info:
        parse_document(data)
    assert str(info.value) == message


def test_parse_document_duplicate_keys_last_wins() -> None:
    assert parse_document(b'{"a": 1, "a": 2}') == {"a": 2}


def test_json_equal_of_non_json_values_compares_by_type_and_value() -> None:
    assert json_equal((1, 2), (1, 2)) is True
    assert json_equal((1, 2), (1, 3)) is False
    assert json_equal((1, 2), [1, 2]) is False  # a tuple is not a JSON array


def test_show_and_as_text() -> None:
    from pytest_skill_eval.grading.jsonvalue import as_text, show

    assert show({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    assert show("x" * 100, limit=10) == "\"" + "x" * 8 + "…"
    assert show("x" * 8, limit=10) == '"xxxxxxxx"'
    assert len(show(list(range(100)))) == 80
    assert show(list(range(100))).endswith("…")
    assert show({1, 2}) == "{1, 2}"  # not JSON: its repr
    assert show(float("nan")) == "NaN"
    assert as_text("id") == "id" and as_text(3) == "3" and as_text(["a"]) == '["a"]'
