"""Untrusted text made safe to print: the one neutralising function every surface uses.

Every string that came from the subject (file names it wrote, tool names and arguments,
response text, error text pi relayed) or from a stored result passes :func:`neutralise`
on its way to a terminal, a log, a JUnit file, a step summary, a view or a report. What
each class of character becomes (docs/security.md, "Subject text on every surface"):

- printable characters, and the ASCII space, stay as they are;
- newline and tab stay in multi-line text and become ``\\n`` and ``\\t`` in one-line text;
  a carriage return is always ``\\r`` (it would overwrite the line it ends);
- every other control (C0, DEL, C1: ``\\u001b``, ``\\u009b``, NEL ``\\u0085``), format
  character (bidi controls ``\\u202e``, zero-width ``\\u200b``, BOM ``\\ufeff``, tags
  ``\\U000e0041``), line and paragraph separator (``\\u2028``), space other than U+0020
  (``\\u3000``, ``\\u00a0``), lone surrogate (``\\ud800``) and unassigned code point becomes
  ``\\uXXXX`` (``\\UXXXXXXXX`` above U+FFFF), the notation JSON excerpts and definition
  errors use.

So nothing the subject wrote can move the cursor, recolour or retitle the terminal, write
the clipboard, reorder a line, start a line of its own in one-line text, or hide. The
backslash is left alone, which makes :func:`neutralise` idempotent: a string neutralised
where it was built (a grade's excerpt) reads the same after every surface neutralises it
again, never ``\\\\n`` for a newline. Path cells, which must read back unambiguously, use
:func:`escape_path`, which escapes the backslash first.
"""

from __future__ import annotations

import re
import unicodedata

#: categories escaped besides the other controls: format, surrogate, unassigned, line and
#: paragraph separators, and spaces (the ASCII space is kept below)
_ESCAPED = frozenset(("Cc", "Cf", "Cs", "Cn", "Zl", "Zp", "Zs"))
_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# printable ASCII (and, in multi-line text, newline and tab) is never escaped: only the runs
# of other characters are looked at one by one (most text is ASCII: one regex pass in C)
_CANDIDATES = re.compile(r"[^\x20-\x7e\n\t]+")
_CANDIDATES_ONE_LINE = re.compile(r"[^\x20-\x7e]+")


def neutralise(text: str, *, one_line: bool = False) -> str:
    """*text* safe to print (see the module docstring); *one_line* also escapes newline and tab."""
    if one_line:
        return _CANDIDATES_ONE_LINE.sub(_one_line_run, text)
    return _CANDIDATES.sub(_multi_line_run, text)


def escaped_char(c: str) -> str:
    """The visible escape of one character :func:`neutralise` escapes."""
    if c in _SHORT:
        return _SHORT[c]
    code = ord(c)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def is_escaped(c: str) -> bool:
    """Whether :func:`neutralise` escapes *c* in one-line text."""
    return c != " " and unicodedata.category(c) in _ESCAPED


def _one_line_run(match: re.Match[str]) -> str:
    return "".join(escaped_char(c) if is_escaped(c) else c for c in match.group())


def _multi_line_run(match: re.Match[str]) -> str:
    return "".join(escaped_char(c) if c not in "\n\t" and is_escaped(c) else c for c in match.group())


def escape_path(path: str) -> str:
    """A path cell: the backslash doubled first, then :func:`neutralise` on one line.

    A path always stays on one line and reads back unambiguously (a literal ``\\t`` in a
    name is ``\\\\t``, a tab ``\\t``); spaces that start or end it show as ``\\u0020``, so a
    name of spaces never looks like no name at all.
    """
    cell = neutralise(path.replace("\\", "\\\\"), one_line=True)
    body = cell.strip(" ")
    if body == cell:
        return cell
    lead = len(cell) - len(cell.lstrip(" "))
    trail = len(cell) - lead - len(body)
    return "\\u0020" * lead + body + "\\u0020" * trail
