"""RFC 6901 JSON pointers: the one place that escapes, joins and splits them.

Definition problems, expectation shapes, script problems and the ``json`` expectation
kind all name locations in JSON documents; they all spell them through this module.
"""

from __future__ import annotations

import re

_BAD_ESCAPE = re.compile(r"~(?![01])")


def escape(token: str) -> str:
    """Escape one reference token: ``~`` → ``~0``, ``/`` → ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def child(pointer: str, *tokens: str | int) -> str:
    """*pointer* extended by *tokens* (object keys are escaped, array indexes written as is)."""
    return pointer + "".join(f"/{escape(str(token))}" for token in tokens)


def parse(pointer: str) -> tuple[str, ...] | None:
    """Split *pointer* into unescaped reference tokens; ``None`` when it is not a pointer.

    ``""`` is the whole document (no tokens); ``"/"`` is the key ``""``.
    """
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        return None
    tokens = []
    for raw in pointer[1:].split("/"):
        if _BAD_ESCAPE.search(raw):
            return None
        # ~1 first, then ~0, so "~01" means "~1" and not "/" (RFC 6901 section 4).
        tokens.append(raw.replace("~1", "/").replace("~0", "~"))
    return tuple(tokens)
