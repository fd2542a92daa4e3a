"""Finishing a session safely: a Ctrl-C while it finishes is noted, not raised."""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import store
from pytest_skill_eval.plugin.session import SkillEvalSession


class FinishGuard:
    """Ctrl-C while the session finishes is noted, not raised, and the run ends as cancelled.

    Without it a SIGINT during session finish (the batch summary, the terminal summary,
    unconfigure) escapes pytest as a raw ``KeyboardInterrupt`` traceback. From the first
    ``pytest_sessionfinish`` hook to the last ``pytest_unconfigure`` one, SIGINT only sets
    a flag: ``result.json`` is written whole (``cancelled`` when the flag was set before
    it), and the exit status becomes pytest's ``INTERRUPTED`` (``skill-eval run``: 2).
    Registered on the controller (or the only process) only.
    """

    def __init__(self, session: SkillEvalSession) -> None:
        self.session = session
        self._pytest_session: pytest.Session | None = None
        self._previous: Any = None
        self._installed = False
        self.interrupted = False

    def _note(self, signum: int, frame: Any) -> None:
        self.interrupted = True
        self.session.cancelled = True
        self.session.cancel_jobs()  # --skill-eval-jobs: lanes still running are cancelled

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Any:
        self._pytest_session = session
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._note)
            self._installed = True
        return (yield)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
        if not self.interrupted or self._pytest_session is None:
            return
        session = self._pytest_session
        already = session.exitstatus == pytest.ExitCode.INTERRUPTED
        session.exitstatus = pytest.ExitCode.INTERRUPTED
        if already:
            return  # pytest has reported this cancellation already
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("!", "KeyboardInterrupt", red=True)
            summary = self.session.result_dir / "result.json"
            state = ""
            if summary.is_file():
                try:
                    state = f" ({store.read_json(summary).get('state')})"
                except EvidenceError:
                    state = ""
            reporter.write_line(f"skill-eval: Ctrl-C while the session was finishing; result {self.session.result_id}"
                                f"{state} is complete on disk")
        try:
            raise KeyboardInterrupt  # an ExceptionInfo needs a traceback
        except KeyboardInterrupt:
            excinfo = pytest.ExceptionInfo[BaseException].from_current()
        # what pytest does for a Ctrl-C during the run (``skill-eval run`` counts it as cancelled)
        config.hook.pytest_keyboard_interrupt(excinfo=excinfo)
