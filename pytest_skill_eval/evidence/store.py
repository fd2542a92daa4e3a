"""Atomic writes and safe copies into the evidence tree; reading trees back as bytes and fingerprints."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_skill_eval.errors import EvidenceError


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
