"""paths.py directly: segment limits, default bases, messages of the canonical layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_skill_eval.errors import PathEscapeError
from pytest_skill_eval.paths import (
    MAX_SEGMENT_BYTES,
    _cut,
    check_relative,
    contain_path,
    normalize_relative,
    resolve_within,
)


def test_a_segment_of_exactly_the_limit_is_accepted() -> None:
    assert MAX_SEGMENT_BYTES == 255
    assert check_relative("a/" + "x" * 255) is None
    assert check_relative("é" * 127 + "x") is None  # 255 bytes in UTF-8
    assert check_relative("x" * 256) == (
        f'expected path segments of at most 255 bytes (UTF-8), found "{"x" * 60}"… (256 characters) '
        "with a segment of 256 bytes")
    assert (check_relative("é" * 128) or "").endswith("… (128 characters) with a segment of 256 bytes")


def test_cut_quotes_short_text_whole() -> None:
    assert _cut("abc") == '"abc"'
    assert _cut("x" * 60) == '"' + "x" * 60 + '"'
    assert _cut("x" * 61) == '"' + "x" * 60 + '"… (61 characters)'
    assert _cut("abcdef", limit=3) == '"abc"… (6 characters)'


def test_normalize_relative_defaults_to_the_root() -> None:
    assert normalize_relative("a/./b") == "a/b"
    assert normalize_relative("b/../c", "a") == "a/c"
    assert normalize_relative("../c", "a/b") == "a/c"
    with pytest.raises(PathEscapeError, match=r'^expected a path inside the definition root, found "\.\./c"'):
        normalize_relative("../c")


def test_resolve_within_resolves_from_the_base(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "sub").mkdir()
    assert resolve_within(root, "x.md", "sub") == root / "sub" / "x.md"
    assert resolve_within(root, "../x.md", "sub") == root / "x.md"
    assert resolve_within(root, "x.md") == root / "x.md"


def test_a_path_that_cannot_be_resolved_says_why(tmp_path: Path) -> None:
    with pytest.raises(PathEscapeError) as info:
        contain_path(tmp_path, tmp_path / "a\x00b", shown="a\x00b")
    assert str(info.value) == 'expected a path that can be resolved, found "a\\u0000b": embedded null byte'
    with pytest.raises(PathEscapeError, match=r"^expected a path that can be resolved, found /.*a\x00b: "):
        contain_path(tmp_path, tmp_path / "a\x00b")
