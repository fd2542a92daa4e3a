"""Atomic writes (a record redacted, :func:`write_record`) and safe copies into the evidence tree
(:mod:`.trees` reads a tree back as bytes and fingerprints)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pytest_skill_eval.codec import Encodable
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence.run_records import ManifestEntry
from pytest_skill_eval.redaction import Redactor


def write_atomic(path: Path, data: bytes, *, sync_dir: bool = True, shared: bool = False) -> None:
    """Write *data* to *path* so a reader sees the old file or the new one, never a torn one.

    The file is fsynced before the rename. ``sync_dir=False`` leaves the directory fsync
    (which makes the rename itself durable) to a later write into the same directory:
    one directory fsync covers every rename before it. Evidence is private to its owner
    (0600); a file made to be shared (``shared``: the HTML report) gets the permissions the
    process umask gives a new file, as any other tool's output would.
    """
    def fill(handle: BinaryIO) -> None:
        if shared:
            os.fchmod(handle.fileno(), shared_mode())
        handle.write(data)

    _replace_with(path, fill, sync_dir=sync_dir)


def shared_mode() -> int:
    """``0o666`` less the process umask: the mode ``open()`` gives a new file (0644 under umask 022).

    Read from ``/proc/self/status`` where Linux has it (setting the umask to read it back is
    not thread-safe); else set and restored at once.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return 0o666 & ~mask


def move_atomic(source: Path, path: Path, *, sync_dir: bool = True) -> None:
    """Move the finished file *source* to *path* as :func:`write_atomic` writes one.

    A rename when both are on one file system; else *source* is copied (in bounded chunks)
    to a temporary file beside *path*, fsynced and renamed, and *source* is removed. A file
    written elsewhere while it grows (the scratch directory) so reaches the evidence tree
    whole, and a killed evaluator never leaves a part of it there.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(source, path)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise _disk_full(exc, path) from None

        def copy(handle: BinaryIO) -> None:
            with open(source, "rb") as src:
                shutil.copyfileobj(src, handle, 1 << 20)

        _replace_with(path, copy, sync_dir=False)
        os.unlink(source)
    if sync_dir:
        fsync_dir(path.parent)


def _replace_with(path: Path, fill: Callable[[BinaryIO], object], *, sync_dir: bool) -> None:
    """A temporary file beside *path*, filled by *fill*, fsynced and renamed over *path*;
    removed again on any failure (a full disk is an :class:`EvidenceError`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _disk_full(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
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


def write_record(path: Path, record: Encodable, redactor: Redactor | None = None, *, sync_dir: bool = True) -> int:
    """*record*'s stored JSON (the codec's) written to *path* atomically, every key and string
    redacted by *redactor* first; returns how many replacements that made."""
    value, n = record.to_json(), 0
    if redactor is not None:
        value, n = redactor.json(value)
    write_json(path, value, sync_dir=sync_dir)
    return n


def read_json(path: Path) -> Any:
    """The bounded JSON document of the evidence file *path* (a regular file, not followed
    through a link; see :mod:`.safe_io`)."""
    from pytest_skill_eval.evidence.safe_io import read_json as read_bounded

    return read_bounded(path, label=str(path))


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


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What :func:`copy_tree_atomic` stored: every regular file (by slash-separated relative
    path), the redaction count of each file the transform changed, and how many were shared."""

    files: dict[str, ManifestEntry]
    counts: dict[str, int]
    linked: int = 0


@dataclass(frozen=True, slots=True)
class _Kept:
    """An evidence file already stored, that a later snapshot may hard-link instead of writing again."""

    path: str  # absolute path of the stored evidence file
    ino: int
    dev: int
    entry: ManifestEntry
    count: int


#: the lstat fields whose equality means "not touched since": a write, truncate, chmod, rename
#: over or re-creation changes ``st_ctime_ns`` (which nothing but the clock can set back)
_Signature = tuple[int, int, int, int, int, int]


#: sha256 of the source bytes, mode, mtime, transform key
_ContentKey = tuple[str, int, int, object]


def _signature(st: os.stat_result) -> _Signature:
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(slots=True)
class SnapshotCache:
    """What earlier snapshots of one group stored, so a later snapshot stores only what changed.

    Two ways a file is found unchanged, both ending in a hard link between two *evidence*
    files (never into a live workspace, which the host may write in place):

    * by source: the live file's lstat signature (device, inode, mode, size, mtime, ctime)
      equals the one it had when an earlier snapshot read it, and that read came after the
      file's last change by the file system's own clock (a probe file touched beside the
      source at the start of each snapshot), so a write in the same clock tick cannot hide;
    * by content: the sha256 of its source bytes, its mode and mtime, and the transform
      (redactor) equal those of a file stored before.

    Anything else is read, transformed and written afresh. A stored file is linked only while
    its inode is still the one recorded, so a moved or replaced evidence tree is never reused.
    """

    by_source: dict[tuple[str, object], tuple[_Signature, _Kept]] = field(default_factory=dict)
    by_content: dict[_ContentKey, _Kept] = field(default_factory=dict)


#: bytes read at a time when a file is copied without a transform
_CHUNK = 1 << 20


def _fs_now(directory: Path) -> int | None:
    """The file system's clock beside *directory* (ctime of a probe touched now), or None."""
    probe = directory / ".skill-eval-clock"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    try:
        os.write(fd, b"")
        os.utime(fd)
        return os.fstat(fd).st_ctime_ns
    except OSError:
        return None
    finally:
        os.close(fd)
        try:
            os.unlink(probe)
        except OSError:
            pass


def copy_tree_atomic(src: Path, dest: Path, transform: Transform | None = None,
                     cache: SnapshotCache | None = None, transform_key: object = None) -> Snapshot:
    """Copy a directory into evidence: built beside *dest*, then renamed into place.

    Directories, regular files and symlinks (as links) are copied with their mode and times;
    FIFOs, sockets and devices are left out, since reading one could block forever. With
    *transform* every regular file passes through it as it is written (redaction); the
    result maps each slash-separated relative path it changed to its count, and lists every
    regular file stored with its size and the sha256 of its stored bytes.

    With *cache* a file an earlier snapshot already stored unchanged (see
    :class:`SnapshotCache`) is hard-linked to that stored file instead of written again;
    *transform_key* names the transform (equal keys, equal transforms).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    copier = _TreeCopier(src, staging, dest, transform, cache, transform_key)
    try:
        try:
            copier.run()
        except _CopyAbortedError as aborted:
            raise EvidenceError(str(aborted)) from None
        if copier.errors:
            raise EvidenceError(_copy_failures(src, dest, shutil.Error(copier.errors))) from None
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if cache is not None:
        copier.remember(cache)
    return Snapshot(dict(sorted(copier.files.items())), dict(sorted(copier.counts.items())), copier.linked)


class _TreeCopier:
    """One snapshot walk: plain syscalls per file (no per-file ``copystat`` xattr probing)."""

    def __init__(self, src: Path, staging: Path, dest: Path, transform: Transform | None,
                 cache: SnapshotCache | None, transform_key: object) -> None:
        self.src, self.staging, self.dest = str(src), str(staging), dest
        self.transform, self.cache, self.key = transform, cache, transform_key
        self.files: dict[str, ManifestEntry] = {}
        self.counts: dict[str, int] = {}
        self.errors: list[tuple[str, str, str]] = []
        self.linked = 0
        # what this snapshot read, to remember once its tree is in place: (rel, source,
        # trusted signature, content key)
        self._stored: list[tuple[str, str, _Signature | None, _ContentKey | None]] = []
        self._now = _fs_now(src.parent) if cache is not None else None

    def run(self) -> None:
        src_root = os.stat(self.src)
        self._walk(self.src, self.staging, "")
        self._copy_stat(self.staging, src_root)

    def _walk(self, source_dir: str, target_dir: str, prefix: str) -> None:
        try:
            with os.scandir(source_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.errors.append((source_dir, target_dir, str(exc)))
            return
        for entry in entries:
            source = entry.path
            target = os.path.join(target_dir, entry.name)
            rel = prefix + entry.name
            try:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    os.symlink(os.readlink(source), target)
                elif stat.S_ISDIR(st.st_mode):
                    os.mkdir(target)
                    self._walk(source, target, rel + "/")
                    self._copy_stat(target, st)
                elif stat.S_ISREG(st.st_mode):
                    self._file(source, target, rel, st)
            except _CopyAbortedError:
                raise
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    # one full disk is one error, not one per remaining file
                    raise _CopyAbortedError(disk_full_message(self.dest / rel)) from None
                self.errors.append((source, target, str(exc)))

    @staticmethod
    def _copy_stat(target: str, st: os.stat_result) -> None:
        os.chmod(target, stat.S_IMODE(st.st_mode))
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))

    def _link(self, kept: _Kept, target: str) -> bool:
        """Make *target* a hard link to the stored evidence file *kept*, if it is still that
        file (built under a temporary name, then renamed over whatever *target* holds)."""
        temporary = os.path.join(os.path.dirname(target), f".skill-eval-link-{os.getpid()}")
        try:
            os.link(kept.path, temporary, follow_symlinks=False)
        except OSError:
            return False
        st = os.lstat(temporary)
        if (st.st_ino, st.st_dev) != (kept.ino, kept.dev):
            os.unlink(temporary)  # the recorded path now holds another file: never share it
            return False
        os.replace(temporary, target)
        return True

    def _file(self, source: str, target: str, rel: str, st: os.stat_result) -> None:
        cache = self.cache
        if cache is not None:
            known = cache.by_source.get((source, self.key))
            if known is not None and known[0] == _signature(st) and self._link(known[1], target):
                self._keep(rel, known[1])
                return
        data: bytes | None = None
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        try:
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                return  # swapped for something that is not a regular file: not evidence
            digest = hashlib.sha256()
            if self.transform is None and before.st_size > _CHUNK:
                # a large file is written as it is read, never held whole in memory
                size = self._stream(fd, target, digest)
            else:
                # one read when it returns the size fstat gave; to the end of the file otherwise
                # (a short read, or a file that grew: then it is not steady and never shared)
                data = os.read(fd, before.st_size + 1)
                if len(data) != before.st_size:
                    data += b"".join(iter(lambda: os.read(fd, _CHUNK), b""))
                digest.update(data)
                size = len(data)
            after = os.fstat(fd)
        finally:
            os.close(fd)
        source_digest = digest.hexdigest()
        steady = _signature(before) == _signature(after)
        trusted = steady and self._now is not None and after.st_ctime_ns < self._now
        content = (source_digest, stat.S_IMODE(after.st_mode), after.st_mtime_ns, self.key)
        if cache is not None and steady:
            kept = cache.by_content.get(content)
            if kept is not None and self._link(kept, target):
                self._keep(rel, kept)
                self._stored.append((rel, source, _signature(after) if trusted else None, None))
                return
        n = 0
        stored_digest = source_digest
        if data is not None:
            if self.transform is not None:
                data, n = self.transform(data)
                if n:
                    stored_digest = hashlib.sha256(data).hexdigest()
            self._write(target, data, after)
            size = len(data)
        else:
            self._copy_stat(target, after)
        self.files[rel] = ManifestEntry(size, stored_digest)
        if n:
            self.counts[rel] = n
        if steady:
            self._stored.append((rel, source, _signature(after) if trusted else None, content))

    @staticmethod
    def _write(target: str, data: bytes, st: os.stat_result) -> None:
        """*data* into a new file *target* with the mode and times of *st* (set on the open descriptor)."""
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
            os.fchmod(out, stat.S_IMODE(st.st_mode))
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(out)

    @staticmethod
    def _stream(fd: int, target: str, digest: Any) -> int:
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        size = 0
        try:
            while chunk := os.read(fd, _CHUNK):
                digest.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
                size += len(chunk)
        finally:
            os.close(out)
        return size

    def _keep(self, rel: str, kept: _Kept) -> None:
        self.linked += 1
        self.files[rel] = kept.entry
        if kept.count:
            self.counts[rel] = kept.count

    def remember(self, cache: SnapshotCache) -> None:
        """Record what this snapshot stored, now that its tree is in place under *dest*."""
        for rel, source, sig, content in self._stored:
            path = os.path.join(str(self.dest), *rel.split("/"))
            try:
                st = os.lstat(path)
            except OSError:
                continue
            kept = _Kept(path, st.st_ino, st.st_dev, self.files[rel], self.counts.get(rel, 0))
            if content is not None:
                cache.by_content[content] = kept
            if sig is not None:
                cache.by_source[(source, self.key)] = (sig, kept)


class _CopyAbortedError(Exception):
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
