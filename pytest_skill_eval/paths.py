"""Lexical and canonical containment of declared paths.

Definitions name files with slash-separated relative paths. Two layers keep them
inside their root:

* the **lexical** layer (:func:`check_relative`, :func:`normalize_relative`) is pure
  text in, text out: no absolute paths, drive letters, backslashes, empty segments,
  NUL, lone surrogates, control or bidirectional-formatting characters, no segment
  over :data:`MAX_SEGMENT_BYTES` bytes, and no ``..`` that climbs above the root;
* the **canonical** layer (:func:`resolve_within`, :func:`contain_path`) asks the
  file system, resolving symlinks with :func:`os.path.realpath`, so a contained
  name cannot reach outside through a link.

``.`` and ``..`` segments are allowed while they stay below the root
(``skills/./a``, ``skills/x/../a``); a path that names the root itself (``.``,
``a/..``) is rejected because every declared path must name something *inside*
the root: a fixture of ``.`` would copy the whole root, results included.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from pathlib import Path

from pytest_skill_eval.errors import PathEscapeError, json_text

__all__ = [
    "MAX_SEGMENT_BYTES",
    "check_relative",
    "contain_path",
    "normalize_relative",
    "resolve_within",
    "shown",
    "unsafe_character",
]

# Windows drive prefixes (``C:``, ``c:foo``) mean "absolute" to a Windows reader
# even though POSIX would take them as a plain file name.
_DRIVE = re.compile(r"^[A-Za-z]:")

#: The longest file-name component common file systems store (ext4, APFS, NTFS: 255).
MAX_SEGMENT_BYTES = 255

# C0 controls, DEL, C1 controls, and the bidirectional formatting characters that make
# a name display differently from what it is (embeddings, overrides, isolates, marks).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def unsafe_character(text: str) -> str | None:
    """The first control or bidirectional-formatting character of *text*, as ``U+XXXX``."""
    match = _UNSAFE.search(text)
    return f"U+{ord(match.group()):04X}" if match else None


def _cut(text: str, limit: int = 60) -> str:
    """*text* as JSON for a message, cut after *limit* characters."""
    return json_text(text[:limit]) + f"… ({len(text)} characters)" if len(text) > limit else json_text(text)


def check_relative(path_text: str, base: str = "") -> str | None:
    """Return why *path_text* is not a contained relative path, or None when it is.

    *base* is the root-relative, slash-separated directory the path is resolved
    from (``""`` for the root itself); the resolved path must stay below the root.
    The message has the shape ``expected …, found …``.
    """
    found = json_text(path_text)
    if path_text == "":
        return 'expected a non-empty relative path, found ""'
    try:
        path_text.encode("utf-8")
    except UnicodeEncodeError:
        return f"expected a path of valid Unicode text, found {found} with a lone surrogate"
    if "\x00" in path_text:
        return f"expected a path without NUL characters, found {found}"
    unsafe = unsafe_character(path_text)
    if unsafe is not None:
        return (
            "expected a path without control or bidirectional-formatting characters, "
            f"found {json.dumps(path_text)} with {unsafe}"  # ASCII escapes: the text cannot spoof the view
        )
    longest = max(len(segment.encode("utf-8")) for segment in path_text.split("/"))
    if longest > MAX_SEGMENT_BYTES:
        return (
            f"expected path segments of at most {MAX_SEGMENT_BYTES} bytes (UTF-8), "
            f"found {_cut(path_text)} with a segment of {longest} bytes"
        )
    if "\\" in path_text:
        return f'expected a path with "/" separators, found {found} with a backslash'
    if path_text.startswith("/"):
        return f"expected a relative path, found absolute path {found}"
    if _DRIVE.match(path_text):
        return f"expected a relative path, found drive-qualified path {found}"
    if "" in path_text.split("/"):
        return f"expected a path without empty segments, found {found}"
    joined = posixpath.normpath(posixpath.join(base, path_text)) if base else posixpath.normpath(path_text)
    if joined == ".":
        return f"expected a path below the definition root, found {found} naming the root itself"
    if joined == ".." or joined.startswith("../"):
        return f'expected a path inside the definition root, found {found} leaving it through ".."'
    return None


def normalize_relative(path_text: str, base: str = "") -> str:
    """Return the root-relative normal form of *path_text* resolved from *base*.

    Raises PathEscapeError when :func:`check_relative` rejects it.
    """
    problem = check_relative(path_text, base)
    if problem is not None:
        raise PathEscapeError(problem)
    return posixpath.normpath(posixpath.join(base, path_text))


def contain_path(root: Path, path: Path, shown: str | None = None, *, real_root: str | None = None) -> Path:
    """Return the canonical form of *path* after checking it lies strictly inside *root*.

    Symlinks are resolved in both (a dangling link resolves to its target text), so a
    link that points out of the root is caught even when its target does not exist.
    *shown* is how the message names the path (default: *path* itself). *real_root* is
    ``os.path.realpath(root)`` when the caller has it already (one resolution per
    document instead of one per path). Raises PathEscapeError naming where the path really leads.
    """
    found = json_text(shown) if shown is not None else str(path)
    try:
        real_root_path = Path(real_root if real_root is not None else os.path.realpath(root))
        real = Path(os.path.realpath(path))
    except (OSError, ValueError) as exc:
        raise PathEscapeError(f"expected a path that can be resolved, found {found}: {exc}") from None
    if real == real_root_path:
        raise PathEscapeError(f"expected a path below the definition root, found {found} resolving to the root itself")
    if not real.is_relative_to(real_root_path):
        raise PathEscapeError(f"expected a path inside the definition root {real_root_path}, found {found} resolving to {real}")
    return real


def resolve_within(root: Path, rel: str, base: str = "") -> Path:
    """Resolve the declared relative path *rel* (from root-relative *base*) under *root*.

    Applies the lexical checks first, then the canonical one, and returns the
    canonical (symlink-free) path. Existence is not required. Raises PathEscapeError.
    """
    normal = normalize_relative(rel, base)
    return contain_path(root, root / normal, shown=rel)


def shown(path: Path, root: Path | None) -> str:
    """*path* as messages name it: slash-separated and relative to *root* when it lies
    inside it (lexically, nothing resolved), else as given."""
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return str(path)
