"""Making untrusted text safe to print: one path per line, no terminal control sequences."""

from __future__ import annotations

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
    return "".join(
        c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp") else f"\\u{ord(c):04x}"
        for c in text
    )
