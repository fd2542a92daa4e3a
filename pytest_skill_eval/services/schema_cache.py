"""The compiled schema checks kept in the evaluator's cache directory between processes.

Every process that validates documents (a pytest session, each xdist worker, ``skill-eval
view``) would otherwise generate and compile the same Python code for the same packaged
schemas (:mod:`pytest_skill_eval.schemas.fast`): 40-50 ms a process. This module owns
``<cache>/schema-checks/``: one file of marshalled code per check, named by
:func:`~pytest_skill_eval.schemas.fast.code_key` (the schema, the compile options and the
fastjsonschema and Python versions), so a changed schema or an upgrade is a new name.

The files hold code that runs in the evaluator, so a file is taken only when it is what
this user wrote: a regular file (not followed through a link), owned by this user, writable
by no one else, below a size bound. Anything else, and any error, is a miss: the check is
compiled as it would have been. Writes go to a temporary file renamed into place, so
concurrent processes (xdist workers) never see half a file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from pytest_skill_eval import schemas
from pytest_skill_eval.host.install import cache_dir

#: the largest compiled check read (the largest packaged schema's code is ~70 KB)
MAX_BYTES = 4 << 20
_OPEN = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK


class SchemaCodeCache:
    """A :class:`~pytest_skill_eval.schemas.fast.CodeStore` over one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def load(self, key: str) -> bytes | None:
        try:
            fd = os.open(self.directory / f"{key}.code", _OPEN)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid()
                    or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or info.st_size > MAX_BYTES):
                return None
            data = handle.read(MAX_BYTES + 1)
        return data if len(data) <= MAX_BYTES else None

    def save(self, key: str, data: bytes) -> None:
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=self.directory)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, self.directory / f"{key}.code")
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def use_schema_cache() -> None:
    """Keep this process's compiled schema checks in the evaluator's cache directory."""
    schemas.use_code_store(SchemaCodeCache(cache_dir() / "schema-checks"))
