"""The look-ahead of ``--skill-eval-jobs`` on its own: lanes, order, stops (no host involved).

The jobs here are plain functions that block on events, so every interleaving the test
relies on is forced, not timed.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_skill_eval.errors import EvidenceError, GroupNotGradedError
from pytest_skill_eval.plugin.jobs import Job, LookAhead
from pytest_skill_eval.plugin.runner import start_order

WAIT = 30.0


def _lookahead(lanes: int, shown: list[str] | None = None) -> LookAhead:
    return LookAhead(lanes, show=(shown.append if shown is not None else lambda _m: None))


def test_jobs_run_at_once_up_to_the_lanes_and_start_in_order() -> None:
    started: list[int] = []
    release = threading.Event()
    both = threading.Barrier(2, timeout=WAIT)
    lock = threading.Lock()

    def work(n: int) -> Path:
        with lock:
            started.append(n)
        if n < 2:
            both.wait()  # the first two jobs run at the same time, or this times out
            release.wait(WAIT)
        return Path(f"/groups/{n}")

    lookahead = _lookahead(2)
    lookahead.start([Job(n, f"item{n}", functools.partial(work, n)) for n in range(4)])
    release.set()
    # results are taken in item order, whichever finished first
    assert [lookahead.result(f"item{n}") for n in range(4)] == [Path(f"/groups/{n}") for n in range(4)]
    assert sorted(started[:2]) == [0, 1] and started[2:] == [2, 3]
    lookahead.stop(cancel=False)


def test_progress_reaches_the_waiting_thread_only() -> None:
    shown: list[str] = []
    lookahead = _lookahead(1, shown)
    posted_from: list[str] = []

    def work() -> Path:
        posted_from.append(threading.current_thread().name)
        lookahead.post("g [baseline] preparing")
        return Path("/g")

    lookahead.start([Job(0, "g", work)])
    assert lookahead.result("g") == Path("/g")
    assert shown == ["g [baseline] preparing"]
    assert posted_from == ["skill-eval-job-1"]
    lookahead.stop(cancel=False)


def test_a_persistence_failure_starts_no_later_group() -> None:
    ran: list[int] = []
    first_running = threading.Event()
    release = threading.Event()

    def work(n: int) -> Path:
        ran.append(n)
        if n == 0:
            first_running.set()
            release.wait(WAIT)  # an earlier group, still running when group 1 fails
        if n == 1:
            raise EvidenceError("disk full")
        return Path(f"/groups/{n}")

    lookahead = _lookahead(2)
    lookahead.start([Job(n, f"item{n}", functools.partial(work, n)) for n in range(4)])
    assert first_running.wait(WAIT)
    with pytest.raises(EvidenceError):
        lookahead.result("item1")
    release.set()
    assert lookahead.result("item0") == Path("/groups/0")  # earlier groups are not stopped
    lookahead.stop(cancel=False)
    assert sorted(ran) == [0, 1], "no group queued after the failing one starts"
    with pytest.raises(GroupNotGradedError, match="not started"):
        lookahead.result("item2")


def test_stop_starts_nothing_queued_and_waits_for_running_groups() -> None:
    running = threading.Event()
    release = threading.Event()
    finished: list[int] = []

    def work(n: int) -> Path:
        running.set()
        release.wait(WAIT)
        finished.append(n)
        return Path(f"/groups/{n}")

    lookahead = _lookahead(1)
    lookahead.start([Job(n, f"item{n}", functools.partial(work, n)) for n in range(3)])
    assert running.wait(WAIT)
    stopper = threading.Thread(target=lookahead.stop, kwargs={"cancel": False})
    stopper.start()
    release.set()
    stopper.join(WAIT)
    assert not stopper.is_alive()
    assert finished == [0], "the running group finished; the queued ones never started"
    assert not lookahead.cancel_event.is_set(), "-x is not a cancellation"


def test_ctrl_c_cancels_running_groups_through_the_event() -> None:
    running = threading.Event()

    def work() -> Path:
        running.set()
        # what the driver does: the event arrives as the KeyboardInterrupt a Ctrl-C raises
        if not lookahead.cancel_event.wait(WAIT):
            return Path("/never-cancelled")
        raise KeyboardInterrupt

    lookahead = _lookahead(2)
    lookahead.start([Job(0, "a", work), Job(1, "b", lambda: Path("/b")), Job(2, "c", lambda: Path("/c"))])
    assert running.wait(WAIT)
    lookahead.cancel()
    with pytest.raises(KeyboardInterrupt):
        lookahead.result("a")
    lookahead.stop(cancel=True)
    assert lookahead.cancel_event.is_set()


def test_a_job_that_never_started_after_ctrl_c_raises_keyboard_interrupt() -> None:
    block = threading.Event()
    running = threading.Event()

    def work() -> Path:
        running.set()
        block.wait(WAIT)
        return Path("/a")

    lookahead = _lookahead(1)
    lookahead.start([Job(0, "a", work), Job(1, "b", lambda: Path("/b"))])
    assert running.wait(WAIT)
    lookahead.cancel()
    block.set()
    lookahead.stop(cancel=True)
    with pytest.raises(KeyboardInterrupt):
        lookahead.result("b")


def _items(*turns: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(group=SimpleNamespace(prompts=("p",) * n)) for n in turns]


def test_groups_start_longest_first_ties_in_item_order() -> None:
    assert start_order(_items(1, 2, 1, 3, 2), stop_early=False) == [3, 1, 4, 0, 2]
    assert start_order(_items(1, 1, 1), stop_early=False) == [0, 1, 2]
    assert start_order([], stop_early=False) == []


def test_with_exitfirst_groups_start_in_item_order() -> None:
    assert start_order(_items(1, 2, 1, 3), stop_early=True) == [0, 1, 2, 3]
