"""How a file differs between two trees, as the HTML report shows it (pure: bytes in, lines out)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pytest_skill_eval.observation import same_file

__all__ = ["DIFF_MAX_BYTES", "DIFF_MAX_LINES", "DiffLine", "FileDiff", "diff_files", "diff_trees"]

#: a file larger than this is not diffed, only named with its sizes
DIFF_MAX_BYTES = 512 * 1024
#: a diff longer than this many lines is cut (the file itself is in the evidence)
DIFF_MAX_LINES = 2000


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a unified diff: ``add``, ``del``, ``ctx`` or ``hunk`` (the ``@@`` header)."""

    tag: Literal["add", "del", "ctx", "hunk"]
    text: str


@dataclass(frozen=True, slots=True)
class FileDiff:
    """How one file differs between two trees; ``note`` says why lines are missing or cut."""

    path: str
    change: Literal["added", "removed", "modified", "unchanged"]
    lines: tuple[DiffLine, ...] = ()
    note: str | None = None


def diff_files(path: str, before: bytes | None, after: bytes | None) -> FileDiff:
    """A unified diff of one file (``None``: absent on that side); binary or huge files get a note."""
    change: Literal["added", "removed", "modified", "unchanged"] = (
        "added" if before is None else "removed" if after is None else "unchanged" if before == after else "modified"
    )
    sizes = f"{len(before) if before is not None else '-'} -> {len(after) if after is not None else '-'} bytes"
    if max(len(before or b""), len(after or b"")) > DIFF_MAX_BYTES:
        return FileDiff(path, change, note=f"not diffed: larger than {DIFF_MAX_BYTES // 1024} KiB ({sizes})")
    try:
        old = (before or b"").decode("utf-8").splitlines()
        new = (after or b"").decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return FileDiff(path, change, note=f"binary file, not diffed ({sizes})")
    lines: list[DiffLine] = []
    for raw in difflib.unified_diff(old, new, lineterm="", n=3):
        if raw.startswith(("---", "+++")):
            continue
        if raw.startswith("@@"):
            lines.append(DiffLine("hunk", raw))
        elif raw.startswith("+"):
            lines.append(DiffLine("add", raw[1:]))
        elif raw.startswith("-"):
            lines.append(DiffLine("del", raw[1:]))
        else:
            lines.append(DiffLine("ctx", raw[1:]))
    note = None
    if len(lines) > DIFF_MAX_LINES:
        note = f"diff cut at {DIFF_MAX_LINES} of {len(lines)} lines; the whole file is in the evidence"
        lines = lines[:DIFF_MAX_LINES]
    if change == "modified" and not lines:
        note = "only line endings or a final newline differ"
    return FileDiff(path, change, tuple(lines), note)


def diff_trees(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> tuple[FileDiff, ...]:
    """Every file added, removed or modified from *before* to *after*, by path (stored trees are
    compared by their manifests' digests, and only the files that differ are read)."""
    return tuple(
        diff_files(rel, before.get(rel), after.get(rel))
        for rel in sorted(set(before) | set(after))
        if rel not in before or rel not in after or not same_file(before, after, rel)
    )
