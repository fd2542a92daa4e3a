"""Making untrusted text safe to print: one path per line, no terminal control sequences."""

from __future__ import annotations

import re
import unicodedata


def escape_path(path: str) -> str:
    """Escape a path cell: backslash first, then tab, CR and LF, so it stays one line."""
    return path.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")


def neutralise(text: str) -> str:
    """*text* with every control, format and separator character but newline and tab as ``\\uXXXX``.

    Applied to everything a view prints: prompts and responses are shown as written, but
    nothing the subject wrote can move the cursor, recolour or retitle the terminal, or
    reorder a line (bidi controls).
    """
    # printable ASCII, newline and tab are never escaped: only the runs of other characters
    # are looked at one by one (most text is ASCII, so this is one regex pass in C)
    return _CANDIDATES.sub(_neutralise_run, text)


_CANDIDATES = re.compile(r"[^\x20-\x7e\n\t]+")


def _neutralise_run(match: re.Match[str]) -> str:
    return "".join(
        c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp") else f"\\u{ord(c):04x}"
        for c in match.group()
    )
