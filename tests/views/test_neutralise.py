"""``neutralise`` escapes exactly the characters the per-character rule names (fast path included)."""

from __future__ import annotations

import unicodedata

import pytest

from pytest_skill_eval.safe_text import escape_path, neutralise

ESCAPED = ("Cc", "Cf", "Cs", "Cn", "Zl", "Zp", "Zs")


def _per_character(text: str, *, one_line: bool = False) -> str:
    def one(c: str) -> str:
        if c == " " or (c in "\n\t" and not one_line) or unicodedata.category(c) not in ESCAPED:
            return c
        short = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
        return short.get(c) or (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
    return "".join(one(c) for c in text)


@pytest.mark.parametrize("one_line", [False, True])
def test_every_code_point_is_treated_as_the_per_character_rule_says(one_line: bool) -> None:
    every = "".join(chr(i) for i in range(0x110000))
    shown = neutralise(every, one_line=one_line)
    assert shown == _per_character(every, one_line=one_line)
    assert neutralise(shown, one_line=one_line) == shown, "idempotent: never escaped twice"
    assert len(shown.splitlines()) == (1 if one_line else every.count("\n") + 1)


def test_mixed_runs_keep_their_order() -> None:
    text = "plain\x1b[31mred\u202eevil\ttab\nline\u2028sep é\x7f\ud800 end\r\U000e0041\u3000"
    assert neutralise(text) == _per_character(text)
    assert neutralise(text) == ("plain\\u001b[31mred\\u202eevil\ttab\nline\\u2028sep é\\u007f\\ud800 end\\r"
                                "\\U000e0041\\u3000")
    assert neutralise(text, one_line=True).startswith("plain\\u001b[31mred\\u202eevil\\ttab\\nline")
    assert neutralise("") == ""


def test_a_path_cell_doubles_the_backslash_and_shows_a_name_of_spaces() -> None:
    assert escape_path("a\\tb\tc\u202e") == "a\\\\tb\\tc\\u202e"
    assert escape_path("   ") == "\\u0020\\u0020\\u0020"
    assert escape_path("\u3000") == "\\u3000"
    assert escape_path("") == ""
