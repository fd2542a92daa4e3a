"""What a failed "contains" says it found: an empty text, or the start of the text and how much more."""

from __future__ import annotations

import pytest

from pytest_skill_eval.grading.judging import judge_text


@pytest.mark.parametrize(("text", "found"), [
    ("", "(0 characters); it is empty"),
    ("a" * 120, f'(120 characters); it reads "{"a" * 120}"'),
    ("a" * 121, f'(121 characters); it reads "{"a" * 120}"… (+1 more characters)'),
    ("a" * 122, f'(122 characters); it reads "{"a" * 120}"… (+2 more characters)'),
])
def test_a_missing_text_shows_the_start_of_what_was_there(text: str, found: str) -> None:
    assert judge_text("contains", text, "x", "the response") == (
        False, f"the response does not contain the text {found}")
