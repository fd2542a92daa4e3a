"""A content digest of a workspace tree, cheap to take again (for no-progress detection).

The digest covers what the subject can change and a grader can see: every entry's path,
its type, its permission bits, a regular file's bytes and a symbolic link's target. It
does not cover times: a write of identical bytes leaves the digest as it was.

Taking it again is cheap: a file whose ``lstat`` (size, times, inode) is unchanged keeps the
hash it had; only a file that was touched is read again. Nothing is followed: a symbolic
link is its target's text, a directory is walked without leaving it, a FIFO, socket or
device is never opened (its type and mode are its content), and a regular file is opened
with ``O_NOFOLLOW | O_NONBLOCK`` and read only if the opened descriptor is still a regular
file (the subject may swap it in between). An entry that vanishes while the tree is walked
is not in it; a file or directory the subject cannot read either (``EACCES``) counts by its
``lstat`` alone (a ``chmod`` that would let anyone change it changes that). Anything else
that cannot be read (a path beyond ``PATH_MAX``, out of file descriptors, an I/O error)
makes the digest unlike every other one: what cannot be seen is never taken for "unchanged",
so it can only keep a run going, never stop one.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import stat
from pathlib import Path

_StatKey = tuple[int, int, int, int, int, int]
_CHUNK = 1 << 20
#: numbers the digests that saw something they could not read (each unlike every other)
_UNSEEN = itertools.count()


def _key(info: os.stat_result) -> _StatKey:
    return (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class TreeDigest:
    """``TreeDigest(root)()``: the content digest of the tree under *root* now."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        #: each regular file's stat key and its whole line, as last taken
        self._files: dict[str, tuple[_StatKey, bytes]] = {}

    def __call__(self) -> str:
        total = hashlib.sha256()
        seen: dict[str, tuple[_StatKey, bytes]] = {}
        stack = [""]
        while stack:
            rel = stack.pop()
            try:
                with os.scandir(self.root / rel if rel else self.root) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                line = f"unreadable-dir\0{rel}\n" if exc.errno == errno.EACCES else f"unseen {next(_UNSEEN)}\n"
                total.update(line.encode("utf-8", "surrogateescape"))
                continue
            lines: list[bytes] = []
            for entry in reversed(entries):  # the stack pops them back in name order
                path = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # vanished while walked
                except OSError:
                    lines.append(f"unseen {next(_UNSEEN)}\n".encode())
                    continue
                lines.append(self._entry(path, info, seen))
                if stat.S_ISDIR(info.st_mode):
                    stack.append(path)
            # the lines in the order they were taken (one update per directory: the same digest)
            total.update(b"".join(lines))
        self._files = seen
        return total.hexdigest()

    def _entry(self, path: str, info: os.stat_result, seen: dict[str, tuple[_StatKey, bytes]]) -> bytes:
        mode = info.st_mode
        if stat.S_ISREG(mode):
            key = _key(info)
            known = self._files.get(path)
            if known is not None and known[0] == key:  # untouched: its line as it was, not re-read
                seen[path] = known
                return known[1]
        head = f"{path}\0{stat.S_IFMT(mode):o}\0{stat.S_IMODE(mode):o}\0"
        if stat.S_ISLNK(mode):
            try:
                return (head + os.readlink(self.root / path) + "\n").encode("utf-8", "surrogateescape")
            except OSError:
                return (head + f"unseen {next(_UNSEEN)}\n").encode("utf-8", "surrogateescape")
        if not stat.S_ISREG(mode):
            return (head + "\n").encode("utf-8", "surrogateescape")
        digest = self._hash(path, key)
        line = (head + digest + "\n").encode("utf-8", "surrogateescape")
        if not digest.startswith("unseen"):  # what could not be read is read again next time
            seen[path] = (key, line)
        return line

    def _hash(self, path: str, key: _StatKey) -> str:
        try:
            fd = os.open(self.root / path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            return f"unreadable:{key}" if exc.errno == errno.EACCES else f"unseen {next(_UNSEEN)}"
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return f"not-regular:{key}"
            h = hashlib.sha256()
            while chunk := os.read(fd, _CHUNK):
                h.update(chunk)
            return h.hexdigest()
        except OSError:
            return f"unseen {next(_UNSEEN)}"
        finally:
            os.close(fd)
