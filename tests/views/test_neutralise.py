"""``neutralise`` escapes exactly the characters the per-character rule names (fast path included)."""

from __future__ import annotations

import unicodedata

from pytest_skill_eval.render.text import neutralise


def _per_character(text: str) -> str:
    return "".join(
        c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp") else f"\\u{ord(c):04x}"
        for c in text
    )


def test_every_code_point_is_treated_as_the_per_character_rule_says() -> None:
    every = "".join(chr(i) for i in range(0x110000))
    assert neutralise(every) == _per_character(every)


def test_mixed_runs_keep_their_order() -> None:
    text = "plain\x1b[31mred\u202eevil\ttab\nline\u2028sep é\x7f\ud800 end"
    assert neutralise(text) == _per_character(text)
    assert neutralise(text) == "plain\\u001b[31mred\\u202eevil\ttab\nline\\u2028sep é\\u007f\ud800 end"
    assert neutralise("") == ""
