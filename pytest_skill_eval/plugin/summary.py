"""What the session prints: each group's status word and the ``skill-eval`` terminal section.

The part of :class:`~pytest_skill_eval.plugin.session.SkillEvalSession` that talks to
pytest's terminal reporter at the end of a run (only the controller, or a run without
xdist, prints the section).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import store
from pytest_skill_eval.evidence.decision_records import DecisionRecord
from pytest_skill_eval.policy import STATUS_PROPERTY
from pytest_skill_eval.safe_text import neutralise
from pytest_skill_eval.sameness import IDENTICAL
from pytest_skill_eval.summary_table import summary_table

if TYPE_CHECKING:
    from pytest_skill_eval.plugin.session import Reported


class TerminalSummary:
    """The session's terminal half (a base of ``SkillEvalSession``, which sets these attributes)."""

    config: pytest.Config
    is_worker: bool
    result_id: str
    result_dir: Path
    reported: dict[str, Reported]
    html_report: Path | None
    gate_lines: list[str]

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        props = {str(k): str(v) for k, v in getattr(report, "user_properties", ())}
        words = props.get(STATUS_PROPERTY)
        if not words:
            return None
        if report.when == "setup" and report.failed:
            return "error", "E", (f"ERROR {words}", {"red": True})
        if report.when != "call":
            return None
        if report.passed:
            return "passed", ".", (f"PASSED {words}", {"green": True})
        if report.failed:
            return "failed", "F", (f"FAILED {words}", {"red": True})
        return None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or not self.result_dir.exists():
            return
        tr = terminalreporter
        summary_file = self.result_dir / "result.json"
        state = ""
        decision: DecisionRecord | None = None
        if summary_file.exists():
            try:
                stored = store.read_json(summary_file)
                state = f" ({stored.get('state')})"
                decision = DecisionRecord.from_json(stored["decision"]) if "decision" in stored else None
            except (EvidenceError, KeyError, TypeError):
                state = ""
        gate = [neutralise(f"skill-eval: {line}", one_line=True) for line in self.gate_lines]
        if self.config.get_verbosity() < 0:
            tr.write_line(f"skill-eval result {self.result_id}{state}: skill-eval view {self.result_id}")
            if self.html_report is not None:
                tr.write_line(f"skill-eval html report: {self.html_report}")
            for line in gate:
                tr.write_line(line, red=True)
            if decision is not None:
                tr.write_line(neutralise(f"decision: {decision.line}", one_line=True), bold=True)
            return
        tr.section("skill-eval")
        rows = [(r.nodeid, r.outcome, r.verdict) for r in self.reported.values()]
        rows.sort(key=lambda row: (row[2].position if row[2] else 0, row[0]))
        if rows:
            for line in summary_table(rows):
                tr.line(neutralise(line, one_line=True))
        for r in self.reported.values():
            if r.identical is not None:
                tr.line(neutralise(f"warning: {r.nodeid}: {IDENTICAL}; {r.identical}", one_line=True), yellow=True)
        tr.line(f"result {self.result_id}{state}: {self.result_dir}")
        if self.html_report is not None:
            tr.line(f"html report: {self.html_report}")
        tr.line(f"view it with: skill-eval view {self.result_id} [--group <position>] [--variant baseline|candidate]")
        if decision is not None:
            for line in decision.lines()[1:]:
                tr.line(neutralise(line, one_line=True))
        for line in gate:
            tr.line(line, red=True)
        if decision is not None:  # the last line of the section: the decision
            tr.line(neutralise(f"decision: {decision.line}", one_line=True), bold=True)
