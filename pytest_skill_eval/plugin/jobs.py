"""``--skill-eval-jobs K``: up to K groups of one pytest process at once, reported in item order.

When the first group item runs, every selected group item from it on is queued to K
threads (lanes), longest first (:func:`~pytest_skill_eval.plugin.runner.start_order`). A lane takes the next queued group and runs it through the
engine (:func:`~pytest_skill_eval.engine.group.run_group`: fixture, variants in order, each
persisted before its counterpart starts, grade and group evidence last), then takes the
next. pytest's own run loop is untouched: each item's setup waits for its group and judges
it from its persisted evidence in the main thread, so reports, subtests, JUnit properties
and ``-x`` come in item order exactly as with one job. A lane waits on pi (a subprocess)
nearly all the time, so threads are enough.

The main thread is the only one that writes to the terminal: the lanes' progress messages
are queued and printed while it waits. Stopping (:meth:`LookAhead.stop`):

* Ctrl-C (``cancel=True``): no queued group starts; every running variant is cancelled as
  a Ctrl-C cancels one (its pi tree reaped, what was observed persisted ``cancelled``, the
  group published), and the call returns when every lane has.
* ``-x``, ``--maxfail``, evidence that cannot be persisted (``cancel=False``): no queued
  group starts; running groups finish and are published (their evidence is in the result;
  pytest reports only the items it reached). A group whose evidence cannot be persisted
  stops every group queued after it in item order at once, not only when its item reports.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path

from pytest_skill_eval.errors import EvidenceError, GroupNotGradedError

#: how often the waiting main thread prints the lanes' progress
_POLL_SECONDS = 0.05


@dataclass(slots=True)
class Job:
    """One group's run: *work* returns its group directory."""

    index: int
    key: str
    work: Callable[[], Path]
    future: Future[Path] = field(default_factory=Future)


class LookAhead:
    """K lanes running queued jobs in order; results are taken by key, in any order."""

    def __init__(self, lanes: int, *, show: Callable[[str], None]) -> None:
        self.lanes = lanes
        self._jobs: dict[str, Job] = {}
        self._queue: list[Job] = []
        self._lock = threading.Lock()
        #: no job with this index or a greater one starts (lowered by a stop or a persistence failure)
        self._limit = 0
        self._show = show
        self._messages: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._quiet = False
        #: what the engine checks: set, every running variant is cancelled
        self.cancel_event = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self, jobs: list[Job]) -> None:
        """Queue *jobs* (in the order they start) and start the lanes."""
        with self._lock:
            self._jobs = {job.key: job for job in jobs}
            self._queue = list(jobs)
            self._limit = max((job.index for job in jobs), default=-1) + 1
        self._threads = [threading.Thread(target=self._lane, name=f"skill-eval-job-{n + 1}", daemon=True)
                         for n in range(min(self.lanes, len(jobs)))]
        for thread in self._threads:
            thread.start()

    def post(self, message: str) -> None:
        """The engine's progress callback on the lanes: queued for the main thread."""
        if not self._quiet:
            self._messages.put(message)

    def _drain(self) -> None:
        while not self._quiet:
            try:
                message = self._messages.get_nowait()
            except queue.Empty:
                return
            self._show(message)

    def _next(self) -> Job | None:
        with self._lock:
            while self._queue:
                job = self._queue.pop(0)
                if job.index < self._limit and job.future.set_running_or_notify_cancel():
                    return job
                job.future.cancel()
            return None

    def _lane(self) -> None:
        while (job := self._next()) is not None:
            try:
                job.future.set_result(job.work())
            except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt (cancelled) included: the item re-raises it
                if isinstance(exc, (EvidenceError, OSError)):
                    with self._lock:  # spec: evidence that cannot be preserved stops queued work
                        self._limit = min(self._limit, job.index + 1)
                job.future.set_exception(exc)

    def has(self, key: str) -> bool:
        return key in self._jobs

    def result(self, key: str) -> Path:
        """The group directory of job *key* once its group is published (main thread).

        Re-raises what the group's run raised. A Ctrl-C while waiting cancels every lane
        before it propagates. A job that never started (the look-ahead was stopped) raises
        KeyboardInterrupt when the run was cancelled, else :class:`RuntimeError`.
        """
        future = self._jobs.pop(key).future
        try:
            while True:
                self._drain()
                try:
                    return future.result(timeout=_POLL_SECONDS)
                except FutureTimeout:
                    continue
        except CancelledError:
            if self.cancel_event.is_set():
                raise KeyboardInterrupt from None
            raise GroupNotGradedError(f"{key}: not started: an earlier group stopped the queued groups") from None
        except KeyboardInterrupt:
            self.cancel()
            raise
        finally:
            self._drain()

    def cancel(self) -> None:
        """Ctrl-C: start nothing more and cancel every running variant (returns at once)."""
        with self._lock:
            self._limit = -1
        self.cancel_event.set()

    def stop(self, *, cancel: bool) -> None:
        """Start no queued job; with *cancel*, cancel the running ones; wait for every lane."""
        self._quiet = True
        with self._lock:
            self._limit = -1
        if cancel:
            self.cancel_event.set()
        for thread in self._threads:
            while thread.is_alive():  # in steps: a Ctrl-C meanwhile (FinishGuard) calls cancel()
                thread.join(_POLL_SECONDS)
