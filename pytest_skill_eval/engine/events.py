"""``events.jsonl`` as pi writes it: the driver's sink, streaming each record to disk."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from pytest_skill_eval.evidence import store
from pytest_skill_eval.host.protocol import Record
from pytest_skill_eval.redaction import EventLines, Redactor

__all__ = ["EventsFile"]


class EventsFile:
    """``events.jsonl`` written as pi runs: each record redacted (:class:`EventLines`) and
    appended to a file in the variant's scratch directory, moved into the run's evidence
    directory whole (:func:`~pytest_skill_eval.evidence.store.move_atomic`) when the run is
    persisted. The evidence tree never holds a part of it, even after a SIGKILL: the
    scratch directory is the one the next session sweeps.

    It is the driver's sink: it runs on the reader thread and never raises there; a failed
    write is raised by :meth:`commit`. Nothing unredacted reaches the disk: every secret's
    spellings are known before pi starts, and a streamed block is held back until it closes.
    """

    def __init__(self, scratch: Path, run_dir: Path, redactor: Redactor) -> None:
        self.path = run_dir / "events.jsonl"
        self.lines = EventLines(redactor)
        self.error: BaseException | None = None
        fd, tmp = tempfile.mkstemp(prefix="events.", suffix=".jsonl", dir=scratch)
        self._tmp = Path(tmp)
        self._file: Any = os.fdopen(fd, "wb")
        self._done = False

    def __call__(self, rec: Record) -> None:
        if self.error is not None:
            return
        try:
            self._write(self.lines.feed(rec.data, rec.raw))
        except Exception as exc:  # the reader thread must keep reading: raised by commit
            self.error = exc

    def _write(self, lines: list[str]) -> None:
        if lines:
            self._file.write("".join(line + "\n" for line in lines).encode("utf-8"))

    def commit(self) -> int:
        """Write what was held back and move the file into place; the number of redactions."""
        try:
            if self.error is not None:
                raise self.error
            self._write(self.lines.finish())
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            store.move_atomic(self._tmp, self.path, sync_dir=False)
            self._done = True
        except OSError as exc:
            raise store._disk_full(exc, self.path) from None
        finally:
            self.discard()
        return self.lines.count

    def discard(self) -> None:
        """Remove the unfinished file (a run that was never persisted); a no-op after commit."""
        if not self._file.closed:
            self._file.close()
        if not self._done:
            try:
                os.unlink(self._tmp)
            except FileNotFoundError:
                pass
