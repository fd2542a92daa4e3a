"""Finding stored results: by id, unique prefix, ``latest`` or directory, and their group directories."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import layout, safe_io
from pytest_skill_eval.safe_text import escape_path

RESULT_ID = re.compile(r"\d{14}-.+")
_REGRADE_FILE = re.compile(r"grade-regraded-(\d{14})(?:-(\d+))?\.json")

#: the ``view`` target that names the newest stored result
LATEST = "latest"


def _path_like(target: str) -> bool:
    return "/" in target or target.startswith(".") or Path(target).is_absolute()


def _is_result(path: Path) -> bool:
    return (safe_io.entry_kind(path / "result.json", path) is not None
            or safe_io.entry_kind(path / "groups", path) is not None)


def stored_results(cwd: Path) -> list[Path]:
    """The result directories under ``<cwd>/.skill-eval/runs``, oldest first.

    Hidden entries (a killed run's staging, ``.gitignore``) and directories that are not
    results are left out. Results are ordered by the time in their id
    (``YYYYmmddHHMMSS-…``), then by when the directory last changed, then by name.
    """
    runs = cwd / layout.RUNS_DIR
    if not runs.is_dir():
        return []
    # a link among them is never followed (docs/security.md): it is not listed, nor ``latest``
    found = [runs / name for name, kind in safe_io.list_dir(runs, runs)
             if not name.startswith(".") and kind == safe_io.DIRECTORY and _is_result(runs / name)]

    def key(path: Path) -> tuple[str, int, str]:
        stamp = path.name[:14] if RESULT_ID.fullmatch(path.name) else ""
        return stamp, path.stat().st_mtime_ns, path.name

    return sorted(found, key=key)


def _by_prefix(target: str, cwd: Path) -> Path | None:
    """``latest`` or a unique id prefix among the stored results; None when nothing matches."""
    results = stored_results(cwd)
    if target == LATEST:
        if not results:
            raise EvidenceError(f"no stored results in {escape_path(str(cwd / layout.RUNS_DIR))}: run a suite first")
        return results[-1].absolute()
    matches = [p for p in results if p.name.startswith(target)]
    if len(matches) > 1:
        names = ", ".join(escape_path(p.name) for p in matches)
        raise EvidenceError(
            f"result id prefix {target!r} is ambiguous: it matches {len(matches)} stored results: {names}; "
            "give more of the id"
        )
    return matches[0].absolute() if matches else None


def resolve_result(target: str, cwd: Path) -> Path:
    """The result directory *target* names, as an absolute path.

    A bare target is tried as a stored result id (``<cwd>/.skill-eval/runs/<target>``)
    first, then as a directory path from *cwd*, then as ``latest`` (the newest stored
    result) or as a prefix of exactly one stored id; an absolute or path-like target (one
    holding ``/`` or starting with ``.``) is only a directory path. Raises EvidenceError
    naming every place tried, or the candidates of an ambiguous prefix.
    """
    if not target:
        raise EvidenceError("expected a result id or result directory, found an empty target")
    tried: list[Path] = []
    if not _path_like(target):
        tried.append(cwd / layout.RUNS_DIR / target)
    tried.append(Path(target) if Path(target).is_absolute() else cwd / target)
    for candidate in tried:
        if candidate.is_symlink():
            raise EvidenceError(
                f"{escape_path(str(candidate))} is a symbolic link: a stored result is untrusted input and never "
                f"followed through a link; give the directory it names ({escape_path(os.path.realpath(candidate))}) "
                "if you trust it")
        if candidate.is_dir():
            path = candidate.absolute()
            if not _is_result(path):
                raise EvidenceError(f"{escape_path(str(path))} is a directory but not a result: it has neither result.json nor groups/")
            return path
    if not _path_like(target):
        found = _by_prefix(target, cwd)
        if found is not None:
            return found
    shown = " or ".join(f"a directory {escape_path(str(p))}" for p in tried)
    prefix = f", nor a stored result id starting with {target!r}" if not _path_like(target) else ""
    raise EvidenceError(f"no stored result {target!r}: expected {shown}{prefix}, found none")


def regrade_files(gdir: Path, entries: Mapping[str, str] | None = None) -> list[Path]:
    """The group's ``grade-regraded-<stamp>.json`` files, newest first (*entries*: the group
    directory's listing, when the caller has it)."""
    found = []
    # any entry of that name: one that is not a regular file is named as a problem by its reader
    names = entries if entries is not None else dict(safe_io.list_dir(gdir, gdir.parent))  # gdir is never followed
    for name in names:
        match = _REGRADE_FILE.fullmatch(name)
        if match:
            found.append((match.group(1), int(match.group(2) or 1), gdir / name))
    return [path for _stamp, _n, path in sorted(found, reverse=True)]


def regrade_time(path: Path) -> str:
    """``2026-07-20 17:32:09 UTC``: when the regrade that wrote *path* ran."""
    match = _REGRADE_FILE.fullmatch(path.name)
    if not match:
        return "at an unknown time"
    stamp = datetime.strptime(match.group(1), "%Y%m%d%H%M%S")
    return stamp.strftime("%Y-%m-%d %H:%M:%S UTC")


