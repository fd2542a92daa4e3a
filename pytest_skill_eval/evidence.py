"""The canonical evidence tree: result ids, layout, atomic writes, reading back.

    .skill-eval/runs/<result-id>/
        selection.json                       the selected groups, written before the first group
        result.json                          batch summary, written last
        groups/<NNN>-<group-id>/
            definition.json                  the group as loaded
            group.json                       group state and variant states
            grade.json                       expectation results and comparisons
            grade-fallback.json              grade-error fallback when grade.json cannot be written
            group-fallback.json              the group record when group.json cannot be written
            grade-regraded-<stamp>.json      written by `skill-eval regrade`, never replacing grade.json
            <variant>/
                run.json                     state, host, argv, env (redacted), sources, timings, redactions
                events.jsonl                 raw host stdout records, verbatim unless redacted
                transcript.json              normalized per-turn transcript
                final-response.txt
                stderr.txt
                fingerprints.json            resource fingerprints before/after
                workspace/                   final workspace
                workspace-initial/           the fixture copy the subject started from
                turns/<n>/workspace/         snapshot after each settled turn (turn-scoped workspace checks)
                context-observations.json    per-request system prompt and context (context-text checks)
                session/                     the isolated pi session directory (runtime.session)

Every file is written atomically: temp file in the same directory, fsync, rename.
Directories are built in a hidden staging directory beside their final name. A writer
killed mid-write leaves those hidden entries behind: readers never list them
(:func:`group_dirs`), and :func:`sweep_staging` removes them once no writer is left.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import records
from .errors import EvidenceError
from .observation import RunObservation

RUNS_DIR = Path(".skill-eval") / "runs"
SELECTION_FILE = "selection.json"
GRADE_FILE = "grade.json"
GRADE_FALLBACK = "grade-fallback.json"
GROUP_FILE = "group.json"
GROUP_FALLBACK = "group-fallback.json"

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


def write_atomic(path: Path, data: bytes, *, sync_dir: bool = True) -> None:
    """Write *data* to *path* so a reader sees the old file or the new one, never a torn one.

    The file is fsynced before the rename. ``sync_dir=False`` leaves the directory fsync
    (which makes the rename itself durable) to a later write into the same directory:
    one directory fsync covers every rename before it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _disk_full(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise _disk_full(exc, path) from None
        raise
    if sync_dir:
        fsync_dir(path.parent)


def _disk_full(exc: OSError, path: Path) -> Exception:
    """*exc*, or for a full disk one short EvidenceError naming the directory and its free space."""
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return exc
    return EvidenceError(disk_full_message(path))


def disk_full_message(path: Path) -> str:
    """``no space left on device writing <path>: <free> free in <directory>``."""
    directory = path.parent
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    try:
        free = f"{shutil.disk_usage(directory).free / 1024:.0f} KiB"
    except OSError:
        free = "unknown space"
    return f"No space left on device writing {path}: {free} free in {directory}"


def fsync_dir(directory: Path) -> None:
    """Make the renames into *directory* durable."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def dump_json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8")


def write_json(path: Path, value: Any, *, sync_dir: bool = True) -> None:
    write_atomic(path, dump_json(value), sync_dir=sync_dir)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EvidenceError(f"cannot read evidence file {path}: {exc}") from None


#: rewrites one file's bytes on its way into evidence; returns the bytes and a count
Transform = Callable[[bytes], "tuple[bytes, int]"]


def _read_regular(source: str) -> bytes | None:
    """The bytes of *source* if it is a regular file, else ``None``, never blocking.

    Opened with ``O_NONBLOCK | O_NOFOLLOW`` and checked with ``fstat`` on the open
    descriptor, so a FIFO swapped in after the directory was listed cannot hang the copy.
    """
    fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read()


def copy_tree_atomic(src: Path, dest: Path, transform: Transform | None = None) -> dict[str, int]:
    """Copy a directory into evidence: built beside *dest*, then renamed into place.

    Directories, regular files and symlinks (as links) are copied; FIFOs, sockets and
    devices are left out, since reading one could block forever. With *transform* every
    regular file passes through it as it is written (redaction); the result maps each
    slash-separated relative path it changed to its count.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    counts: dict[str, int] = {}

    def copy(source: str, target: str) -> str:
        data = _read_regular(source)
        if data is None:
            return target  # not a regular file: not evidence
        n = 0
        if transform is not None:
            data, n = transform(data)
        try:
            Path(target).write_bytes(data)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                # copytree would note this for every remaining file; one full disk is one error
                raise _CopyAborted(disk_full_message(dest / Path(target).relative_to(staging))) from None
            raise
        shutil.copystat(source, target)
        if n:
            counts[Path(target).relative_to(staging).as_posix()] = n
        return target

    try:
        try:
            shutil.copytree(src, staging, symlinks=True, dirs_exist_ok=True, copy_function=copy)
        except _CopyAborted as aborted:
            raise EvidenceError(str(aborted)) from None
        except shutil.Error as failed:
            raise EvidenceError(_copy_failures(src, dest, failed)) from None
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dict(sorted(counts.items()))


class _CopyAborted(Exception):
    """Stops ``shutil.copytree`` at the first file that cannot be written (not an OSError, so it is not collected)."""


def _copy_failures(src: Path, dest: Path, failed: shutil.Error) -> str:
    """One line for a copy that failed on many entries, not one line per entry."""
    errors = failed.args[0] if failed.args and isinstance(failed.args[0], list) else []
    if not errors:
        return f"cannot copy {src} into {dest}: {failed}"
    first = errors[0]
    reason = first[2] if isinstance(first, tuple) and len(first) == 3 else str(first)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"cannot copy {src} into {dest}: {reason}{more}"


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


def grade_file(group_dir: Path, record: Mapping[str, Any]) -> Path:
    """The grade a group record points at (``grade.json`` unless a fallback was published)."""
    name = record.get("grade_file") if isinstance(record.get("grade_file"), str) else GRADE_FILE
    return group_dir / Path(str(name)).name


def sweep_staging(result_dir: Path) -> list[Path]:
    """Remove hidden staging directories and temporary files a killed writer left in *result_dir*.

    Only the levels the writers use are looked at (the result, ``groups/``, each group,
    variant and ``turns/<n>`` directory); workspace copies keep the subject's own dot files.
    Call it only when no writer of this result can still be running.
    """
    levels = [result_dir, result_dir / "groups"]
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
    return f"{position:03d}-{group_id}"


def read_files(root: Path) -> dict[str, bytes]:
    """All regular files under *root*, keyed by slash-separated relative path."""
    files: dict[str, bytes] = {}
    if not root.is_dir():
        return files
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return dict(sorted(files.items()))


def fingerprint_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under *root* (or of *root* itself when it is a file)."""
    if root.is_file():
        return {".": hashlib.sha256(root.read_bytes()).hexdigest()}
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in read_files(root).items()}


def read_record(kind: type[records.Record], path: Path) -> records.Record:
    """The typed record stored at *path*; :class:`EvidenceError` naming the file when it is not one."""
    return records.parse(kind, read_json(path), path)


def load_observation(run_dir: Path) -> RunObservation:
    """Rebuild what grading sees of a run from its persisted evidence alone."""
    run = read_record(records.RunRecord, run_dir / "run.json")
    transcript_path = run_dir / "transcript.json"
    turns = (
        tuple(t.turn for t in read_record(records.TranscriptRecord, transcript_path).turns)
        if transcript_path.exists() else ()
    )
    turn_files: dict[int, Mapping[str, bytes]] = {}
    turns_dir = run_dir / "turns"
    if turns_dir.is_dir():
        for entry in sorted(turns_dir.iterdir()):
            if entry.name.isdigit():
                turn_files[int(entry.name)] = read_files(entry / "workspace")
    observed = run_dir / "context-observations.json"
    requests = read_record(records.ContextObservations, observed).requests if observed.exists() else ()
    paths = run.paths
    return RunObservation(
        variant=run.variant,
        state=run.state,
        workspace_root=paths.workspace if paths else "",
        skill_roots=paths.skills if paths else (),
        target_file=paths.target_file if paths else None,
        context_roots=paths.context if paths else (),
        turns=turns,
        initial_files=read_files(run_dir / "workspace-initial"),
        final_files=read_files(run_dir / "workspace"),
        turn_files=turn_files,
        context_requests=requests,
        redactions=run.redactions,
    )
