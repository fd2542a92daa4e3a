"""Copying a directory out of a stored result (untrusted input), for ``skill-eval merge`` and baseline reuse.

Every directory is listed and every file opened through :mod:`.safe_io` (nothing followed); a
link, FIFO, socket or device anywhere below is an EvidenceError naming it. A file with other
hard links is copied only inside a snapshot tree whose manifest records its digest, and only
when its bytes hash to it: a hard link could name a file outside the result.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import objects, safe_io
from pytest_skill_eval.evidence.reader import load_tree
from pytest_skill_eval.observation import FileTree
from pytest_skill_eval.paths import shown
from pytest_skill_eval.safe_text import escape_path

__all__ = ["TREES", "copy_stored_tree"]

#: the snapshot trees of a run: their files may share an inode with an object or an earlier
#: snapshot (the writers link unchanged files), checked against the tree's manifest instead
TREES = ("workspace", "workspace-initial")


def copy_stored_tree(source: Path, dest: Path, result: Path, tree: tuple[Path, FileTree] | None = None) -> None:
    """Copy the directory *source* of the stored result *result* to *dest*, reading nothing outside it.

    Every directory is listed and every file opened through :mod:`..evidence.safe_io`
    (nothing followed); a link, FIFO, socket or device anywhere in the group is an
    EvidenceError naming it, since no writer of a result makes one and copying one could
    publish what lies outside the result (or block forever). A file with other hard links
    is copied only inside a snapshot tree whose manifest records its digest, and only when
    its bytes hash to it: a hard link could name a file outside the result.
    """
    dest.mkdir()
    for name, kind in safe_io.list_dir(source, result):
        here = source / name
        if kind == safe_io.DIRECTORY:
            inner = tree if tree is not None or name not in TREES else (here, load_tree(here, result))
            copy_stored_tree(here, dest / name, result, inner)
        elif kind == safe_io.FILE:
            data = safe_io.read_bytes(here, result, limit=objects.MAX_OBJECT_BYTES, single_link=tree is None)
            if tree is not None and os.lstat(here).st_nlink > 1:
                rel = here.relative_to(tree[0]).as_posix()
                if rel not in tree[1] or hashlib.sha256(data).hexdigest() != tree[1].digest(rel):
                    raise EvidenceError(f"{escape_path(str(result))}: {shown(here, result)}: expected a file "
                                        "of its own or the bytes its manifest records, found a hard link to other "
                                        "bytes: nothing was copied")
            fd = os.open(dest / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.chmod(dest / name, stat.S_IMODE(os.lstat(here).st_mode) & 0o777 | stat.S_IRUSR)
        else:
            link = "; a stored result is never followed through a link" if kind == safe_io.SYMLINK else ""
            raise EvidenceError(f"{escape_path(str(result))}: {shown(here, result)}: expected a regular "
                                f"file or directory, found {kind}{link}: nothing was copied")


