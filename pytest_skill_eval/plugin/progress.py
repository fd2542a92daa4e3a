"""Live progress lines while a group runs (a status line on a terminal, plain lines otherwise)."""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from typing import Any

import pytest

from pytest_skill_eval.safe_text import neutralise


class LiveProgress:
    """Engine progress on the terminal while a group runs.

    ``-v``: one line per event. Default verbosity on a terminal: one status line below
    the progress dots, replaced in place and erased before the result is written. Nothing
    with ``-q``, when output is not a terminal (without ``-v``), or on xdist workers (their
    output cannot reach the controller's terminal). Capture is suspended for each write,
    so progress never lands in a test's captured output.

    With trials (*trials* above 1) a line per event would be one per run (345 lines for
    20 trials of two groups), so ``-v`` shows the status line on a terminal, and elsewhere
    one line per group.
    """

    def __init__(self, config: pytest.Config, *, enabled: bool, trials: int = 1) -> None:
        self._config = config
        self._enabled = enabled
        self._trials = trials
        self._announced: set[str] = set()
        self._lock = threading.Lock()
        self._shown = False
        self._started = time.monotonic()

    def _reporter(self) -> Any:
        return self._config.pluginmanager.get_plugin("terminalreporter") if self._enabled else None

    @property
    def mode(self) -> str:
        reporter = self._reporter()
        if reporter is None:
            return "off"
        verbosity = self._config.get_verbosity()
        terminal = reporter.isatty() and reporter.hasmarkup
        if verbosity >= 1:
            return "lines" if self._trials <= 1 else "status" if terminal else "group"
        if verbosity == 0 and terminal:
            return "status"
        return "off"

    def _writing(self) -> Any:
        capman = self._config.pluginmanager.get_plugin("capturemanager")
        return capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext()

    def start(self) -> None:
        self._started = time.monotonic()

    def __call__(self, message: str) -> None:
        mode = self.mode
        if mode == "off":
            return
        # the message may name a tool the subject called: one line, no control sequence
        text = f"skill-eval: {neutralise(message, one_line=True)} ({time.monotonic() - self._started:.1f}s)"
        reporter = self._reporter()
        with self._lock, self._writing():
            if mode == "group":
                group = message.split(" [", 1)[0]  # engine messages start "<group-id> [<variant>]"
                if group not in self._announced:
                    self._announced.add(group)
                    reporter.write_line(f"    skill-eval: {group}: running {self._trials} trials of each selected "
                                        f"variant ({time.monotonic() - self._started:.1f}s)")
                return
            if mode == "lines":
                reporter.write_line(f"    {text}")
                return
            width = shutil.get_terminal_size().columns - 1
            if not self._shown:
                # IND then RI: make sure a line exists below (scrolling now, not later),
                # come back, save the cursor at the end of the dots, move to the line below
                reporter.write_raw("\x1bD\x1bM\x1b7\n")
                self._shown = True
            reporter.write_raw(f"\r\x1b[2K{text[:width]}", flush=True)

    def clear(self) -> None:
        """Erase the status line and put the cursor back where pytest left it."""
        if not self._shown:
            return
        reporter = self._reporter()
        with self._lock, self._writing():
            if reporter is not None:
                reporter.write_raw("\r\x1b[2K\x1b8", flush=True)
            self._shown = False

    def announce(self, message: str) -> None:
        """Messages that must be seen at default verbosity (installing the host takes minutes)."""
        reporter = self._reporter()
        if reporter is None or self._config.get_verbosity() < 0:
            return
        self.clear()
        with self._lock, self._writing():
            reporter.write_line(neutralise(message))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.clear()
