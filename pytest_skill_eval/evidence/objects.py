"""The result's content-addressed store: ``objects/<sha256[:2]>/<sha256>``, one file per content.

Every input a variant got (its initial workspace, skills, context, extension bundles and the
scripted model's script) is stored here once per content hash, shared by every variant,
trial and group of the result, and named from ``run.json`` ``snapshot`` by the path the
variant got it at. An object's name is the sha256 of the bytes it holds, so a reader can
check it with ``sha256sum``.

Under pytest-xdist several workers store into one result at once. An object is written to
a private temporary file, fsynced, then linked into place: ``link`` never replaces, so two
writers of the same content both succeed and the file a reader opens is always whole.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import safe_io
from pytest_skill_eval.evidence.layout import inside, parse_path
from pytest_skill_eval.evidence.store import fsync_dir
from pytest_skill_eval.jsonpointer import child

OBJECTS_DIR = "objects"

#: rewrites one file's bytes on its way into the store (redaction); returns the bytes and a count
Transform = Callable[[bytes], "tuple[bytes, int]"]


def object_path(result_dir: Path, digest: str) -> Path:
    """Where the object *digest* lives in *result_dir*."""
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise EvidenceError(f"expected a sha256 object name (64 lowercase hex digits), found {digest!r}")
    return result_dir / OBJECTS_DIR / digest[:2] / digest


def put(result_dir: Path, data: bytes) -> str:
    """Store *data* once; return its sha256. Safe against concurrent writers of the same content."""
    digest = hashlib.sha256(data).hexdigest()
    path = object_path(result_dir, digest)
    if path.is_file():
        return digest
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{digest[:8]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o444)  # an object never changes: its name is its content
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another writer stored the same bytes first
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            os.replace(tmp, path)  # no hard links here: a rename of identical bytes is as safe
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    fsync_dir(path.parent)
    return digest


def put_link(result_dir: Path, source: Path, digest: str) -> str:
    """Store the evidence file *source*, whose bytes hash to *digest*, by hard-linking it.

    For inputs an evidence snapshot already holds byte for byte (the initial workspace): the
    object then costs no second copy of the fixture. The object shares the evidence file's
    inode and so its permission bits (the run's ``snapshot`` records the mode the variant
    got either way); neither is ever written again. Where links are not possible the bytes
    are stored by :func:`put`, checked against *digest* first.
    """
    path = object_path(result_dir, digest)
    if path.is_file():
        return digest
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, path)
    except FileExistsError:
        return digest  # another writer stored the same bytes first
    except OSError:
        data = source.read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise EvidenceError(f"{source} no longer holds the bytes its snapshot recorded") from None
        return put(result_dir, data)
    fsync_dir(path.parent)
    return digest


#: the largest object read back (each is read whole to check it against its name): 2 GiB
MAX_OBJECT_BYTES = 2 << 30


def read(result_dir: Path, digest: str) -> bytes:
    """The bytes of object *digest*, checked against their name before anyone uses them.

    The object is opened as :mod:`.safe_io` opens everything in a stored result: never
    through a link, a regular file only (objects may have other hard links: the writers
    share evidence files so, and the digest check makes any name safe).
    """
    path = object_path(result_dir, digest)
    shown = f"{OBJECTS_DIR}/{digest[:2]}/{digest}"
    try:
        data = safe_io.read_bytes(path, result_dir, limit=MAX_OBJECT_BYTES, single_link=False)
    except FileNotFoundError:
        raise EvidenceError(f"{shown}: expected the stored object {digest}, found no such file in "
                            f"{result_dir / OBJECTS_DIR}") from None
    except OSError as exc:
        raise EvidenceError(f"{shown}: cannot read the stored object: {exc.strerror or exc}") from None
    found = hashlib.sha256(data).hexdigest()
    if found != digest:
        raise EvidenceError(f"{shown}: expected bytes whose sha256 is its name, found bytes whose sha256 is {found}: "
                            "the object does not hold the content its name says (it was changed); nothing is used "
                            "from it")
    return data


def regular_files(base: Path, top: str) -> Iterator[tuple[str, bytes, str]]:
    """``(path under base, bytes, mode)`` of every regular file under ``base/top``, in sorted order.

    The mode is the permission bits in octal (``"644"``, ``"755"``); symlinks, FIFOs and other
    entries are not inputs a snapshot can hold and are left out.
    """
    start = base / top
    if not start.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(start):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            info = path.lstat()
            if stat.S_ISREG(info.st_mode):
                yield path.relative_to(base).as_posix(), path.read_bytes(), f"{stat.S_IMODE(info.st_mode):o}"


def store_tree(result_dir: Path, base: Path, top: str, transform: Transform | None = None,
               ) -> tuple[dict[str, tuple[str, str]], dict[str, int]]:
    """Store every regular file under ``base/top`` (:func:`regular_files`): ``{path under base:
    (sha256, mode)}`` and redaction counts."""
    files: dict[str, tuple[str, str]] = {}
    counts: dict[str, int] = {}
    for rel, data, mode in regular_files(base, top):
        if transform is not None:
            data, n = transform(data)
            if n:
                counts[rel] = n
        files[rel] = (put(result_dir, data), mode)
    return files, counts


def materialise(result_dir: Path, files: Mapping[str, tuple[str, str]], prefix: str, dest: Path,
                where: str = "run.json") -> int:
    """Write the stored files under *prefix* (a file, or a directory of files) to *dest*; how many.

    ``prefix`` names a path as the variant got it; a file stored at exactly that path is
    written to *dest* itself, files below it keep their relative paths under *dest*. Every
    key goes through :func:`..layout.parse_path` (*where* names the record it came from),
    every target is checked after resolution to land under *dest*, every object is checked
    against its digest before a byte is written, and only the permission bits of the
    recorded mode are applied.
    """
    written = 0
    depth = len(prefix.split("/"))
    for rel, (digest, mode) in sorted(files.items()):
        names = parse_path(rel, where, child("/snapshot/files", rel))
        if rel == prefix:
            target = dest
        elif rel.startswith(prefix + "/"):
            target = inside(dest, names[depth:])
        else:
            continue
        data = read(result_dir, digest)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target != dest:
                inside(dest, names[depth:])  # once more, now that its directories exist
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                os.fchmod(out.fileno(), (int(mode, 8) & 0o777) | stat.S_IRUSR | stat.S_IWUSR)
        except OSError as exc:
            raise EvidenceError(f"{where}: {child('/snapshot/files', rel)}: cannot materialise it at {target}: "
                                f"{exc.strerror or exc}") from None
        written += 1
    return written
