"""JUnit XML entries for the per-variant, per-expectation and per-comparison details of each group."""

from __future__ import annotations

import pytest

from pytest_skill_eval.plugin.session import SkillEvalSession
from pytest_skill_eval.policy import (
    ENTRY_PROPERTY,
    Entry,
)


class JUnitEntries:
    """Adds one JUnit ``<testcase>`` per variant, expectation, comparison and grade.

    pytest 9's subtests share their test's node id, so JUnit XML folds them into the one
    ``<testcase>`` (passing subtests vanish). These entries get their own node ids,
    ``<group node id>::variant:candidate`` and so on, and are reported at session end,
    after the exit status is settled, so they never count against ``--maxfail`` or change
    the exit code. The terminal does not list them (see the detail lines at ``-v``).
    Registered only on the process that writes the XML.
    """

    def __init__(self, session: SkillEvalSession) -> None:
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        hook = session.config.hook
        for reported in self.session.reported.values():
            if reported.verdict is None:
                continue
            for entry in reported.verdict.entries():
                for report in entry_reports(reported.nodeid, reported.location, entry):
                    hook.pytest_runtest_logreport(report=report)


def entry_reports(nodeid: str, location: tuple[str, int | None, str], entry: Entry) -> list[pytest.TestReport]:
    """The reports of one entry: its outcome, then a teardown that closes its JUnit testcase."""
    entry_id = f"{nodeid}::{entry.name}"
    props: list[tuple[str, object]] = [(ENTRY_PROPERTY, entry.name), *entry.properties]
    where = (location[0], location[1] or 0, f"{location[2]} {entry.name}")
    if entry.outcome == "error":
        first = pytest.TestReport(entry_id, where, {}, "failed", entry.message, "setup", user_properties=props)
    elif entry.outcome == "skipped":
        longrepr = (location[0], (location[1] or 0) + 1, f"Skipped: {entry.message}")
        first = pytest.TestReport(entry_id, where, {}, "skipped", longrepr, "call", user_properties=props)
    else:
        first = pytest.TestReport(entry_id, where, {}, entry.outcome, entry.message if entry.outcome == "failed" else None,
                                  "call", user_properties=props)
    last = pytest.TestReport(entry_id, where, {}, "passed", None, "teardown", user_properties=props)
    return [first, last]
