"""The evidence layout: result ids, directory and file names, and the only code that parses them."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from pytest_skill_eval.errors import EvidenceError, EvidenceRefusedError, Problem, json_text, show
from pytest_skill_eval.evidence import safe_io
from pytest_skill_eval.evidence.store import write_atomic
from pytest_skill_eval.jsonpointer import child
from pytest_skill_eval.paths import shown

RUNS_DIR = Path(".skill-eval") / "runs"
SELECTION_FILE = "selection.json"
GRADE_FILE = "grade.json"
GRADE_FALLBACK = "grade-fallback.json"
GROUP_FILE = "group.json"
GROUP_FALLBACK = "group-fallback.json"
AGGREGATE_FILE = "aggregate.json"
AGGREGATE_FALLBACK = "aggregate-fallback.json"
#: what --skill-eval-stop looked at in a group run with trials (evidence/stop_records.py)
STOPPING_FILE = "stopping.json"
#: what --skill-eval-reuse-baseline reused in a group, or why not (evidence/reuse_records.py)
REUSE_FILE = "reuse.json"
TRIALS_DIR = "trials"
_GROUP_DIR = re.compile(r"(\d{3,})-(.+)")

# tempfile's names: a prefix we choose, then 8 random characters from [a-z0-9_]
_STAGING_DIR = re.compile(r"\..+\.[a-z0-9_]{8}")
_TEMP_FILE = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")


def ensure_runs_dir(root: Path) -> Path:
    """``<root>/.skill-eval/runs``, given a ``.gitignore`` of ``*`` when it has none.

    Evidence holds workspaces and transcripts that do not belong in the skill's repository.
    A ``.gitignore`` already there (the user's own) is left alone.
    """
    runs = root / RUNS_DIR
    ignore = runs / ".gitignore"
    if not ignore.exists():
        write_atomic(ignore, b"# evidence written by pytest-skill-eval; not for version control\n*\n")
    return runs


def new_result_id(now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> str:
    """``YYYYmmddHHMMSS-<8 hex>``."""
    return f"{now().strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(4)}"


def group_dirs(result_dir: Path) -> list[Path]:
    """The ``groups/NNN-<id>`` directories of a result, in position order; hidden staging never counts.

    Nothing is followed: a ``groups`` or ``NNN-<id>`` entry that is a link or not a
    directory is an EvidenceError naming it (a stored result is untrusted input).
    """
    root = result_dir / "groups"
    found: list[tuple[int, Path]] = []
    for name, kind in safe_io.list_dir(root, result_dir):
        match = _GROUP_DIR.fullmatch(name)
        if match is None:
            continue
        if kind != safe_io.DIRECTORY:
            _refuse(root / name, result_dir, kind, "a group directory")
        found.append((int(match.group(1)), root / name))
    return [p for _, p in sorted(found, key=lambda item: (item[0], item[1].name))]


def _refuse(path: Path, root: Path, kind: str, expected: str) -> NoReturn:
    link = "; a stored result is never followed through a link" if kind == safe_io.SYMLINK else ""
    raise EvidenceRefusedError(f"{shown(path, root)}: expected {expected}, found {kind}{link}")


def group_record_file(group_dir: Path, entries: Mapping[str, str] | None = None) -> Path | None:
    """``group.json``, else its ``group-fallback.json``, else None (the group never finished).

    The first of them that is a regular file wins: the engine publishes the fallback exactly
    when something (a directory, a link) stood where ``group.json`` had to be written. When
    neither is a regular file, an entry that is there all the same (a link, a FIFO) is
    returned, so its reader names it as a problem instead of reading past it. *entries*: the
    group directory's listing (``safe_io.list_dir``), when the caller has it.
    """
    kinds = {name: _kind(group_dir, name, entries) for name in (GROUP_FILE, GROUP_FALLBACK)}
    for name, kind in kinds.items():
        if kind == safe_io.FILE:
            return group_dir / name
    for name, kind in kinds.items():
        if kind is not None:
            return group_dir / name
    return None


def trial_grade_file(trial_dir: Path, entries: Mapping[str, str] | None = None) -> Path:
    """The grade in *trial_dir* (a trial's directory, or a group's without trials):
    ``grade.json``, or ``grade-fallback.json`` when only that was published (*entries*: the
    directory's listing, when the caller has it)."""
    if _kind(trial_dir, GRADE_FILE, entries) is None and _kind(trial_dir, GRADE_FALLBACK, entries) is not None:
        return trial_dir / GRADE_FALLBACK
    return trial_dir / GRADE_FILE


def _kind(directory: Path, name: str, entries: Mapping[str, str] | None) -> str | None:
    """What *name* in *directory* is (not followed): from its listing when given, else asked."""
    if entries is not None:
        return entries.get(name)
    return safe_io.entry_kind(directory / name, directory.parent)


def sweep_staging(result_dir: Path) -> list[Path]:
    """Remove hidden staging directories and temporary files a killed writer left in *result_dir*.

    Only the levels the writers use are looked at (the result, ``groups/``, each group,
    variant and ``turns/<n>`` directory, each ``objects/<xx>`` directory); workspace copies keep the subject's own dot files.
    Call it only when no writer of this result can still be running.
    """
    levels = [result_dir, result_dir / "groups"]
    objects = result_dir / "objects"
    if objects.is_dir():
        levels.extend(p for p in objects.iterdir() if p.is_dir() and len(p.name) == 2)
    for gdir in group_dirs(result_dir):
        levels.append(gdir)
        for run_dir in (p for p in gdir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            levels.append(run_dir)
            turns = run_dir / "turns"
            if turns.is_dir():
                levels.extend(p for p in turns.iterdir() if p.is_dir() and p.name.isdigit())
    removed: list[Path] = []
    for level in levels:
        if not level.is_dir():
            continue
        for entry in level.iterdir():
            if entry.is_dir() and not entry.is_symlink() and _STAGING_DIR.fullmatch(entry.name):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
            elif entry.is_file() and _TEMP_FILE.fullmatch(entry.name):
                entry.unlink(missing_ok=True)
                removed.append(entry)
    return removed


def group_dir_name(position: int, group_id: str) -> str:
    """``NNN-<id>``: a group's directory under ``groups/`` (the position keeps suite order)."""
    return f"{position:03d}-{group_id}"


def trial_dir(group_dir: Path, number: int) -> Path:
    """``trials/NNN``: the directory of trial *number* of a group run with several trials."""
    return group_dir / TRIALS_DIR / f"{number:03d}"


def trial_dirs(group_dir: Path) -> list[Path]:
    """The trial directories of a group, in trial order (none for a single run); a numbered
    entry that is a link or not a directory is an EvidenceError naming it."""
    root = group_dir / TRIALS_DIR
    found: list[Path] = []
    for name, kind in safe_io.list_dir(root, group_dir.parent):
        if name.isascii() and name.isdigit():
            if kind != safe_io.DIRECTORY:
                _refuse(root / name, group_dir.parent, kind, "a trial directory")
            found.append(root / name)
    return sorted(found, key=lambda p: int(p.name))


def attempt_dir(group_dir: Path, variant: str, attempt: int) -> Path:
    """``<variant>-attempts/N``: an earlier, infrastructure-failed attempt of a rerun variant
    (``--skill-eval-rerun-infra``); the last attempt stays at ``<variant>/``."""
    return group_dir / f"{variant}-attempts" / str(attempt)


def run_files(group_dir: Path, variant: str) -> list[Path]:
    """Every ``run.json`` of *variant* in a group directory, each a pi run (or a variant that
    never started one): the single run or every trial, and the earlier attempts of reruns.
    Nothing is followed: a link on the way is an EvidenceError naming it."""
    bases = [group_dir, *trial_dirs(group_dir)]
    found: list[Path] = []
    for base in bases:
        attempts = base / f"{variant}-attempts"
        numbered = [name for name, _kind in safe_io.list_dir(attempts, group_dir.parent) if name.isascii() and name.isdigit()]
        found += [attempts / name / "run.json" for name in sorted(numbered, key=int)]
        found.append(base / variant / "run.json")
    return [p for p in found if safe_io.entry_kind(p, group_dir.parent) is not None]


def group_dir_id(dir_name: str) -> str:
    """The group id a ``NNN-<id>`` directory name carries (the name itself when it is not one)."""
    match = _GROUP_DIR.fullmatch(dir_name)
    return match.group(2) if match else dir_name


def group_position(dir_name: str) -> int:
    """The one-based position a ``NNN-<id>`` directory name carries (0 when it is not one)."""
    match = _GROUP_DIR.fullmatch(dir_name)
    return int(match.group(1)) if match else 0


def manifest_file(tree: Path) -> Path:
    """``<tree>.manifest.json`` beside a snapshotted tree (``workspace`` -> ``workspace.manifest.json``)."""
    return tree.with_name(tree.name + ".manifest.json")


#: the longest name one directory entry can hold, and the longest path, in UTF-8 bytes (Linux)
NAME_MAX = 255
PATH_MAX = 4096


def path_problem(text: Any, *, single: bool = False) -> str | None:
    """Why *text*, a path read from inside a result, is not a relative path of plain names
    (None when it is one): what was expected and what was found.

    The one rule for every path a result names (snapshot and manifest keys, group directory
    names in records): a non-empty string of ``/``-separated names, none empty, ``.`` or
    ``..``, without NUL, each name at most 255 UTF-8 bytes and the whole at most 4096.
    *single* asks for one name (no ``/`` at all). A backslash or a ``C:`` is an ordinary
    character of a name on the POSIX systems the tool runs on (a subject may write such a
    file), so ``..\\x`` is one name and lands inside its directory like any other.
    """
    expected = "a file name" if single else "a relative path of plain names separated by /"
    if not isinstance(text, str):
        return f"expected {expected}, found {json_text(text) if text is None else type(text).__name__}"
    found = show(text, 120)
    reason = None
    if not text:
        reason = "an empty path"
    elif "\x00" in text:
        reason = "a NUL byte, which no file name can hold"
    elif text.startswith("/"):
        reason = "an absolute path"
    elif single and "/" in text:
        reason = "a path of several names"
    else:
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:
            return f"expected {expected}, found a lone surrogate, which no file name can hold: {json.dumps(text)[:120]}"
        parts = text.split("/")
        if "" in parts:
            reason = "an empty name (a doubled or trailing /)"
        elif ".." in parts:
            reason = "a '..' name, which leaves the directory"
        elif "." in parts:
            reason = "a '.' name"
        elif len(encoded) > PATH_MAX:
            reason = f"a path of {len(encoded)} bytes (at most {PATH_MAX})"
        elif any(len(p.encode("utf-8")) > NAME_MAX for p in parts):
            reason = f"a name of more than {NAME_MAX} bytes"
    return None if reason is None else f"expected {expected}, found {reason}: {found}"


def parse_path(text: Any, where: str, pointer: str, *, single: bool = False) -> tuple[str, ...]:
    """The names of the path *text* read at *pointer* of the result file *where*;
    EvidenceError ``where: pointer: expected ..., found ...`` when it is not a plain relative path."""
    problem = path_problem(text, single=single)
    if problem is not None:
        raise EvidenceError(Problem(pointer, problem).render(where))
    return tuple(str(text).split("/"))


def record_path_problems(schema: str, data: Any) -> list[Problem]:
    """Every path in the stored record *data* (of evidence schema *schema*, already checked
    by it) that :func:`path_problem` refuses, located by its JSON pointer."""
    found: list[Problem] = []

    def keys(mapping: Any, pointer: str) -> None:
        if isinstance(mapping, dict):
            for key in mapping:
                problem = path_problem(key)
                if problem is not None:
                    found.append(Problem(child(pointer, key), problem))

    def dirs(entries: Any, pointer: str) -> None:
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            name = entry.get("dir") if isinstance(entry, dict) else None
            if name is not None:
                problem = path_problem(name, single=True)
                if problem is not None:
                    found.append(Problem(child(pointer, i, "dir"), problem))

    if not isinstance(data, dict):
        return found
    if schema == "evidence-run" and isinstance(data.get("snapshot"), dict):
        keys(data["snapshot"].get("files"), "/snapshot/files")
    elif schema == "evidence-manifest":
        keys(data.get("files"), "/files")
    elif schema in ("evidence-result", "evidence-selection"):
        dirs(data.get("groups"), "/groups")
    return found


def inside(dest: Path, names: tuple[str, ...]) -> Path:
    """``dest/names...``, checked after resolution to land under *dest*: EvidenceError when a
    link already in *dest* (or anything else) would take a write outside it."""
    target = dest.joinpath(*names)
    real_dest = Path(os.path.realpath(dest))
    real = Path(os.path.realpath(target))
    if real != real_dest and not real.is_relative_to(real_dest):
        raise EvidenceError(f"{target}: a write there would land outside {dest} (at {real}); nothing was written")
    return target
