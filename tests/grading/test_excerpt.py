"""excerpt: a slice of text as one quoted, escaped line, with a mark at each cut."""

from __future__ import annotations

import pytest

from pytest_skill_eval.grading.jsonvalue import excerpt


@pytest.mark.parametrize(("args", "shown"), [
    (("abcdef",), '"abcdef"'),
    (("abcdef", 0), '"abcdef"'),
    (("abcdef", 1), '…"bcdef"'),
    (("abcdef", 1, 3), '…"bc"…'),
    (("abcdef", -5, 2), '"ab"…'),
    (("abcdef", 0, 99), '"abcdef"'),
    (("a\nb\tc\u2028",), '"a\\nb\\tc\\u2028"'),
])
def test_an_excerpt_marks_each_cut_and_stays_on_one_line(args: tuple[str, int, int], shown: str) -> None:
    assert excerpt(*args) == shown
