"""The evidence layout: result ids, directory and file names, and the only code that parses them."""

from __future__ import annotations

import re
import secrets
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_skill_eval.evidence.store import write_atomic

if TYPE_CHECKING:
    from pytest_skill_eval.evidence.records import GroupRecord, InvalidGroupRecord

RUNS_DIR = Path(".skill-eval") / "runs"
SELECTION_FILE = "selection.json"
GRADE_FILE = "grade.json"
GRADE_FALLBACK = "grade-fallback.json"
GROUP_FILE = "group.json"
GROUP_FALLBACK = "group-fallback.json"
AGGREGATE_FILE = "aggregate.json"
AGGREGATE_FALLBACK = "aggregate-fallback.json"
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
    """The ``groups/NNN-<id>`` directories of a result, in position order; hidden staging never counts."""
    root = result_dir / "groups"
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if p.is_dir() and (m := _GROUP_DIR.fullmatch(p.name))]
    return [p for _, p in sorted(found, key=lambda item: (item[0], item[1].name))]


def group_record_file(group_dir: Path) -> Path | None:
    """``group.json``, else its ``group-fallback.json``, else None (the group never finished)."""
    for name in (GROUP_FILE, GROUP_FALLBACK):
        if (group_dir / name).is_file():
            return group_dir / name
    return None


def grade_file(group_dir: Path, record: GroupRecord | InvalidGroupRecord) -> Path:
    """The grade a group record points at (``grade.json`` unless a fallback was published)."""
    from pytest_skill_eval.evidence.records import GroupRecord  # the records stay out of pytest start-up

    name = record.grade_file if isinstance(record, GroupRecord) else GRADE_FILE
    if isinstance(record, GroupRecord) and record.trials is not None and name != AGGREGATE_FALLBACK:
        name = AGGREGATE_FILE
    return group_dir / Path(name).name


def trial_grade_file(trial_dir: Path) -> Path:
    """The grade in *trial_dir* (a trial's directory, or a group's without trials):
    ``grade.json``, or ``grade-fallback.json`` when only that was published."""
    if not (trial_dir / GRADE_FILE).is_file() and (trial_dir / GRADE_FALLBACK).is_file():
        return trial_dir / GRADE_FALLBACK
    return trial_dir / GRADE_FILE


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


def attempt_dir(group_dir: Path, variant: str, attempt: int) -> Path:
    """``<variant>-attempts/N``: an earlier, infrastructure-failed attempt of a rerun variant
    (``--skill-eval-rerun-infra``); the last attempt stays at ``<variant>/``."""
    return group_dir / f"{variant}-attempts" / str(attempt)


def trial_dirs(group_dir: Path) -> list[Path]:
    """The trial directories of a group, in trial order (none for a single run)."""
    root = group_dir / TRIALS_DIR
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir() and p.name.isascii() and p.name.isdigit()),
                  key=lambda p: int(p.name))


def run_files(group_dir: Path, variant: str) -> list[Path]:
    """Every ``run.json`` of *variant* in a group directory, each a pi run (or a variant that
    never started one): the single run or every trial, and the earlier attempts of reruns."""
    bases = [group_dir, *trial_dirs(group_dir)]
    found: list[Path] = []
    for base in bases:
        attempts = base / f"{variant}-attempts"
        if attempts.is_dir():
            found += sorted((p / "run.json" for p in attempts.iterdir() if p.name.isdigit()),
                            key=lambda p: int(p.parent.name))
        found.append(base / variant / "run.json")
    return [p for p in found if p.is_file()]


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
