"""Opening and listing inside a stored result, which is untrusted input (docs/security.md).

A result travels (CI artifacts, shards from other jobs, a colleague's directory), so every
byte and every file type in it may be hostile. Every command that reads one goes through
this module:

* a path inside a result is walked from the result's root one component at a time with
  ``O_NOFOLLOW``: a symbolic link anywhere below the root (a linked group, trial, variant
  or workspace directory, a linked file) is an :class:`EvidenceError` naming it, never
  followed;
* a file is opened ``O_NOFOLLOW | O_NONBLOCK`` only after ``lstat`` says it is a regular
  file, checked again with ``fstat`` on the open descriptor, and read up to a bound: a FIFO,
  socket, device or directory where a file is expected is refused without opening it, and
  no open can block;
* a record or text file (not a snapshot tree file or an object, which the writers link on
  purpose) must have exactly one link: a hard link can name a file outside the result;
* a directory is listed through a descriptor, each entry typed by ``lstat``, never followed.

``root=None`` is for the evaluator's own evidence while it runs (paths it built itself):
only the last component is then checked.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from pytest_skill_eval import jsonbounds
from pytest_skill_eval.definitions.document import file_kind
from pytest_skill_eval.errors import EvidenceError, EvidenceRefusedError, JSONBoundsError
from pytest_skill_eval.paths import shown

#: the largest single evidence file read whole (a record, a transcript, events, stderr): 256 MiB
MAX_FILE_BYTES = 256 << 20

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK

FILE, DIRECTORY, SYMLINK = "a regular file", "a directory", "a symbolic link"

def kind_of(mode: int) -> str:
    """How messages name an entry of ``st_mode`` *mode*: a regular file, a symbolic link, or what
    :func:`~pytest_skill_eval.definitions.document.file_kind` names (a directory, a FIFO, ...)."""
    if stat.S_ISREG(mode):
        return FILE
    return SYMLINK if stat.S_ISLNK(mode) else file_kind(mode)


def _components(path: Path, root: Path | None) -> tuple[str, tuple[str, ...]]:
    """The directory to start from and the components below it (string work: a view of
    hundreds of groups opens thousands of files)."""
    if root is None:
        return str(path.parent), (path.name,)
    text, top = str(path), str(root)
    if not text.startswith(top.rstrip(os.sep) + os.sep):
        raise EvidenceRefusedError(f"{path}: expected a path inside the result {root}, found one outside it")
    parts = tuple(text[len(top.rstrip(os.sep)) + 1:].split(os.sep))
    if any(p in ("", ".", "..") for p in parts):
        raise EvidenceRefusedError(f"{path}: expected a path inside the result {root}, found {'/'.join(parts)!r}")
    return top, parts


@contextmanager
def _parent_fd(path: Path, root: Path | None) -> Iterator[tuple[int, str]]:
    """A descriptor of *path*'s directory reached without following any link below *root*, and the last name."""
    start, parts = _components(path, root)
    fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    if len(parts) > 2 and (beneath := _open_beneath(fd, parts[:-1])) is not None:
        os.close(fd)
        fd, parts = beneath, parts[-1:]
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                _explain(exc, fd, part, Path(start, *parts[:i + 1]), root, DIRECTORY)
            os.close(fd)
            fd = child
        yield fd, parts[-1]
    finally:
        os.close(fd)


#: openat2(2), Linux 5.6+: 437 wherever new system calls share one number (alpha and MIPS
#: number theirs otherwise): only these machines take the one-call walk
_SYS_OPENAT2 = 437
_UNIFIED_MACHINES = frozenset({"x86_64", "i686", "i386", "aarch64", "arm64", "armv7l", "armv8l", "riscv64",
                               "ppc64le", "ppc64", "s390x", "loongarch64"})
#: refuse every symbolic link (and /proc magic link) on the way, and any escape from the start
_RESOLVE = 0x02 | 0x04 | 0x08  # RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH


def _open_beneath(dir_fd: int, parts: tuple[str, ...]) -> int | None:
    """The directory *parts* below *dir_fd* opened by one ``openat2`` that follows no link; None
    when that fails for any reason (the component walk then opens it, or says what is wrong).

    The walk and this call succeed on the same trees (every component a directory, none a
    link); this one costs one system call instead of one per component.
    """
    call = _openat2()
    if call is None:
        return None
    return call(dir_fd, os.fsencode(os.sep.join(parts)))


@functools.cache
def _openat2() -> Callable[[int, bytes], int | None] | None:
    """``openat2`` through the C library, or None where it cannot be had (not Linux, no C
    library, a kernel or seccomp filter that refuses the call)."""
    if not sys.platform.startswith("linux") or os.uname().machine not in _UNIFIED_MACHINES:
        return None
    try:
        import ctypes

        class OpenHow(ctypes.Structure):
            _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError, ImportError):
        return None
    syscall.restype = ctypes.c_long
    how = OpenHow(_DIR_FLAGS, 0, _RESOLVE)
    number, size = ctypes.c_long(_SYS_OPENAT2), ctypes.c_size_t(ctypes.sizeof(how))

    def call(dir_fd: int, relative: bytes) -> int | None:
        fd = int(syscall(number, ctypes.c_int(dir_fd), ctypes.c_char_p(relative), ctypes.byref(how), size))
        return fd if fd >= 0 else None

    try:
        probe = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        opened = call(probe, b".")
    finally:
        os.close(probe)
    if opened is None:  # ENOSYS, EPERM from a filter, ...: the walk alone
        return None
    os.close(opened)
    return call


def _explain(exc: OSError, dir_fd: int, name: str, path: Path, root: Path | None, expected: str) -> NoReturn:
    """Raise what an entry that could not be opened as *expected* is (FileNotFoundError stays one)."""
    if exc.errno == errno.ENOENT:
        raise FileNotFoundError(errno.ENOENT, "no such file or directory", str(path)) from None
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        raise EvidenceRefusedError(f"{shown(path, root)}: cannot be read: {exc.strerror or exc}") from None
    found = kind_of(mode)
    if found == expected:
        raise EvidenceRefusedError(f"{shown(path, root)}: cannot be read: {exc.strerror or exc}") from None
    if found == SYMLINK:
        raise EvidenceRefusedError(f"{shown(path, root)}: expected {expected}, found a symbolic link; a stored result is "
                      "never followed through a link (it could lead outside the result): replace the link by "
                      "what it names if you trust it") from None
    raise EvidenceRefusedError(f"{shown(path, root)}: expected {expected}, found {found}") from None


def entry_kind(path: Path, root: Path | None = None) -> str | None:
    """What *path* is, not following it (``FILE``, ``DIRECTORY``, ``SYMLINK``, ...), or None when absent.

    A link or a non-directory among the components below *root* is an :class:`EvidenceRefusedError`.
    """
    try:
        with _parent_fd(path, root) as (fd, name):
            return kind_of(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return None


def is_dir(path: Path, root: Path | None = None) -> bool:
    """Whether *path* is a directory itself (a link to one is not); a link on the way is an :class:`EvidenceRefusedError`."""
    return entry_kind(path, root) == DIRECTORY


def is_file(path: Path, root: Path | None = None) -> bool:
    """Whether *path* is a regular file itself (a link to one is not)."""
    return entry_kind(path, root) == FILE


def read_bytes(path: Path, root: Path | None = None, *, limit: int = MAX_FILE_BYTES,
               single_link: bool = True) -> bytes:
    """The bytes of the regular file *path*, read without following a link and up to *limit*.

    Raises FileNotFoundError when it is absent and :class:`EvidenceRefusedError` (an EvidenceError)
    naming the file and what it is for anything else: a link, a directory, a FIFO, a socket,
    a device, a file of more than *limit* bytes, or (with *single_link*) a file that has
    other hard links.
    """
    with _parent_fd(path, root) as (dir_fd, name):
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise FileNotFoundError(errno.ENOENT, "no such file", str(path)) from None
        if not stat.S_ISREG(info.st_mode):
            _refuse_kind(path, root, info.st_mode)
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            _explain(exc, dir_fd, name, path, root, FILE)
        try:  # the descriptor itself, unbuffered: no file object, no buffer of the bound's size
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                _refuse_kind(path, root, info.st_mode)
            if single_link and info.st_nlink > 1:
                raise EvidenceRefusedError(f"{shown(path, root)}: expected a file of its own, found a file with {info.st_nlink} "
                              "hard links (a hard link can name a file outside the result); copy the result "
                              "without hard links")
            if info.st_size > limit:
                raise EvidenceRefusedError(f"{shown(path, root)}: expected a file of at most {limit} bytes, "
                              f"found {info.st_size} bytes")
            data = _read_up_to(fd, limit + 1, info.st_size + 1)
            if len(data) > limit:
                raise EvidenceRefusedError(f"{shown(path, root)}: expected a file of at most {limit} bytes, found more")
            return data
        finally:
            os.close(fd)


def _read_up_to(fd: int, most: int, first: int) -> bytes:
    """Up to *most* bytes of *fd*, to its end: the file's size (+1, to see its end) in one read
    when it did not grow since ``fstat``, more reads when it did."""
    chunks: list[bytes] = []
    left, want = most, min(first, most)
    while left > 0:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        want = min(left, 1 << 20)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _refuse_kind(path: Path, root: Path | None, mode: int) -> NoReturn:
    found = kind_of(mode)
    if found == SYMLINK:
        raise EvidenceRefusedError(f"{shown(path, root)}: expected a regular file, found a symbolic link; a stored result is "
                      "never followed through a link (it could lead outside the result): replace the link by "
                      "what it names if you trust it")
    raise EvidenceRefusedError(f"{shown(path, root)}: expected a regular file, found {found}")


#: what :func:`read_json` returns for an absent file when asked to (``missing_ok=True``)
ABSENT: Any = object()


def read_json(path: Path, root: Path | None = None, *, label: str | None = None, missing_ok: bool = False) -> Any:
    """One JSON document from the evidence file *path*, within :mod:`..jsonbounds`' bounds.

    EvidenceError ``<label>: <pointer>: cannot read evidence file <path>: expected ..., found ...``
    (*label* defaults to the path relative to *root*) for a file that is absent, not a
    regular file, not UTF-8 JSON, or too large or too deep; with *missing_ok* an absent
    file (or directory on the way) is :data:`ABSENT` instead.
    """
    where = label if label is not None else shown(path, root)
    try:
        data = read_bytes(path, root, limit=jsonbounds.MAX_BYTES)
    except FileNotFoundError as exc:
        if missing_ok:
            return ABSENT
        raise EvidenceError(f"{where}: /: cannot read evidence file {path}: {exc.strerror or exc}") from None
    except EvidenceRefusedError as exc:
        raise EvidenceError(_relabel(str(exc), path, root, where)) from None
    except OSError as exc:
        raise EvidenceError(f"{where}: /: cannot read evidence file {path}: {exc.strerror or exc}") from None
    return parse_json(data, where, path)


def parse_json(data: bytes, where: str, path: Path | str) -> Any:
    """*data* (the bytes of *path*) as one bounded JSON document; EvidenceError located at *where*."""
    try:
        return jsonbounds.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        pointer, found = "/", f"byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
        expected = "UTF-8 JSON"
    except JSONBoundsError as exc:
        pointer, found, expected = exc.pointer or "/", exc.reason, "JSON this reader can take"
    except ValueError as exc:
        pointer, found, expected = "/", f"invalid JSON: {exc}", "JSON"
    raise EvidenceError(f"{where}: {pointer}: cannot read evidence file {path}: expected {expected}, found {found}")


def _relabel(message: str, path: Path, root: Path | None, where: str) -> str:
    prefix = shown(path, root)
    return where + message[len(prefix):] if message.startswith(prefix) else message


def list_dir(path: Path, root: Path | None = None) -> list[tuple[str, str]]:
    """``(name, kind)`` of every entry of the directory *path*, sorted by name, none followed.

    Empty when *path* is absent; :class:`EvidenceRefusedError` when it (or a component below *root*)
    is a link or not a directory. *path* equal to *root* lists the root itself.
    """
    try:
        if root is not None and path == root:
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the root the user named
        else:
            with _parent_fd(path, root) as (dir_fd, name):
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                except OSError as exc:
                    _explain(exc, dir_fd, name, path, root, DIRECTORY)
    except FileNotFoundError:
        return []
    try:
        with os.scandir(fd) as entries:
            found = [(entry.name, kind_of(entry.stat(follow_symlinks=False).st_mode)) for entry in entries]
    finally:
        os.close(fd)
    return sorted(found)
