"""The HTML report at session end: ``--skill-eval-html`` / ``skill_eval_html``, after ``result.json``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_skill_eval.safe_text import neutralise

if TYPE_CHECKING:
    from pytest_skill_eval.plugin.session import SkillEvalSession


def html_report_path(session: SkillEvalSession) -> Path | None:
    """``--skill-eval-html`` (from the invocation directory), else ``skill_eval_html`` (from the ini file)."""
    option = session.config.getoption("skill_eval_html", None)
    if option:
        return Path(session.config.invocation_params.dir) / str(option)
    ini = str(session.config.getini("skill_eval_html") or "")
    if not ini:
        return None
    base: Path = session.config.inipath.parent if session.config.inipath is not None else session.config.rootpath
    return base / ini


def write_html_report(session: SkillEvalSession) -> None:
    """The HTML report, after ``result.json``, when one was asked for (controller only)."""
    target = html_report_path(session)
    if target is None:
        return
    from pytest_skill_eval.services.report import write_report

    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    try:
        outcomes = {r.verdict.position: r.outcome for r in session.reported.values() if r.verdict is not None}
        written, warnings = write_report(session.result_dir, target, outcomes)
    except Exception as exc:  # a report that cannot be made must not hide the run's own outcome
        session.html_report = None
        if reporter is not None:
            reporter.write_line(f"skill-eval: the HTML report could not be written to {target}: "
                                f"{type(exc).__name__}: {neutralise(str(exc), one_line=True)}", red=True)
        return
    session.html_report = written
    if reporter is not None:
        for warning in warnings:
            reporter.write_line(f"skill-eval: {neutralise(warning, one_line=True)}", yellow=True)
