"""A Markdown summary of the batch for a CI job page (GitHub Actions' ``GITHUB_STEP_SUMMARY``).

When the environment variable names a file, the process that writes ``result.json`` appends
one section to it: the result's decision (its line and a table of the comparisons), the groups (outcome, variants, comparisons), the transitions counted, the
cost pi reported, and where the evidence and the HTML report are, relative to the rootdir.

Every cell is neutralised on one line (:func:`~pytest_skill_eval.safe_text.neutralise`) and
then made inert Markdown: node ids in a code span whose fence is longer than any backtick run
in them (nothing in a code span is Markdown or HTML), other cells with every character that
starts Markdown or HTML backslash-escaped, and ``|`` escaped for the table in both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from pytest_skill_eval.evidence.decision_records import DecisionRecord
from pytest_skill_eval.policy import Judgement, count_words
from pytest_skill_eval.safe_text import neutralise
from pytest_skill_eval.usage import Usage, VariantUsage, cost_text, tokens_text

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def result_usage(result_dir: Path, rows: Sequence[tuple[str, str, Judgement | None]] = ()) -> VariantUsage:
    """The result's tokens and cost: ``result.json``'s totals, else the sum of the groups' (as judged)."""
    from pytest_skill_eval.evidence.reader import read_optional
    from pytest_skill_eval.evidence.records import ResultRecord

    summary = read_optional(ResultRecord, result_dir / "result.json")
    if summary is not None and summary.usage is not None:
        return summary.usage
    return sum((v.usage for _n, _o, v in rows if v is not None and v.usage is not None), VariantUsage())


def result_decision(result_dir: Path) -> DecisionRecord | None:
    """The decision ``result.json`` holds (None: none was written, or it predates decisions)."""
    from pytest_skill_eval.evidence.reader import read_optional
    from pytest_skill_eval.evidence.records import ResultRecord

    summary = read_optional(ResultRecord, result_dir / "result.json")
    return summary.decision if summary is not None else None


def _figure(value: float | None, digits: str = ".2g") -> str:
    return "-" if value is None else format(value, digits)


def decision_markdown(decision: DecisionRecord) -> list[str]:
    """The decision line, then a table of every comparison's decision and figures."""
    adjustment = str(decision.rules.get("adjustment"))
    lines = [f"**Decision:** {_cell(decision.line)}", "",
             f"{_cell(decision.test)} over {len(decision.comparisons)} comparisons ({decision.decisive} decisive), "
             f"adjustment {_cell(adjustment)}" + (f"; lost runs: {decision.lost_runs}" if decision.lost_runs else ""),
             ""]
    if decision.flips is not None:
        lines += [f"**A/A false-flip rate:** {_cell(decision.flips.flip_rate.text())}", ""]
    if decision.comparisons:
        lines += ["| comparison | decision | baseline | candidate | p | adjusted p | power | coverage |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for c in decision.comparisons:
            lines.append(f"| {_code(f'{c.group}/{c.comparison}')} | {_cell(c.decision)} "
                         f"| {c.baseline_passes}/{c.baseline_graded} | {c.candidate_passes}/{c.candidate_graded} "
                         f"| {_figure(c.p_value)} | {_figure(c.adjusted_p_value)} | {_figure(c.power, '.2f')} "
                         f"| {c.coverage * 100:.0f} % |")
        lines.append("")
    return lines


#: what would start emphasis, a link or image, HTML, an entity, a heading, math or a table cell
_MARKDOWN = re.compile(r"([\\`*_\[\]<>&!|~#$])")
_BACKTICKS = re.compile(r"`+")


def _cell(text: str) -> str:
    """Plain text in a table cell: one line, every Markdown and HTML character escaped."""
    return _MARKDOWN.sub(r"\\\1", neutralise(text, one_line=True))


def _code(text: str) -> str:
    """*text* as a code span in a table cell: one line, a fence no backtick run in it closes."""
    text = neutralise(text, one_line=True)
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}".replace("|", "\\|")


def _path(path: Path, rootdir: Path) -> str:
    try:
        return path.relative_to(rootdir).as_posix()
    except ValueError:
        return str(path)


def step_summary(rows: Sequence[tuple[str, str, Judgement | None]], *, result_id: str, state: str, result_dir: Path,
                 rootdir: Path, html_report: Path | None) -> str:
    """The Markdown section: *rows* are ``(node id, pytest outcome, verdict)``, in position order."""
    outcomes: dict[str, int] = {}
    for _nodeid, outcome, _verdict in rows:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    counted = ", ".join(f"{n} {word}" for word, n in outcomes.items()) or "no groups"
    lines = [f"## skill-eval result {_code(result_id)} ({_cell(state or 'no result.json')})", ""]
    decision = result_decision(result_dir)
    if decision is not None:
        lines += decision_markdown(decision)
    lines += [f"{len(rows)} group{'s' if len(rows) != 1 else ''}: {_cell(counted)}", ""]
    if rows:
        lines += ["| # | group | outcome | baseline | candidate | tokens | cost | comparisons |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for nodeid, outcome, verdict in rows:
            position, baseline, candidate, comparisons = verdict.summary_row() if verdict else ("", "-", "-", "-")
            group = verdict.usage.total if verdict is not None and verdict.usage is not None else Usage()
            lines.append(f"| {position} | {_code(nodeid)} | {_cell(outcome)} | {_cell(baseline)} | {_cell(candidate)} "
                         f"| {tokens_text(group)} | {cost_text(group)} | {_cell(comparisons)} |")
        lines.append("")
    transitions = count_words(t for _n, _o, v in rows if v is not None for t in v.transitions())
    lines.append(f"**Transitions:** {_cell(transitions or 'none')}")
    usage = result_usage(result_dir, rows)
    runs = usage.runs
    lines.append(f"**Cost:** {cost_text(usage.total)} for {tokens_text(usage.total)} tokens over {runs} "
                 f"pi run{'s' if runs != 1 else ''} (as pi reports it; unavailable: pi reported none)")
    lines += ["", f"- evidence: {_code(_path(result_dir, rootdir))} (view it with {_code(f'skill-eval view {result_id}')})"]
    if html_report is not None:
        lines.append(f"- HTML report: {_code(_path(html_report, rootdir))}")
    lines += ["- upload both as job artifacts to keep them with this run (see docs/usage.md, \"JUnit XML\")", ""]
    return "\n".join(lines) + "\n"


def append_step_summary(environ: Mapping[str, str], text: str) -> Path | None:
    """Append *text* to the file ``GITHUB_STEP_SUMMARY`` names, if it is set; return that file."""
    target = environ.get(STEP_SUMMARY_ENV)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as out:
        out.write(text)
    return path


def write_step_summary(rows: Sequence[tuple[str, str, Judgement | None]], *, result_id: str, state: str,
                       result_dir: Path, rootdir: Path, html_report: Path | None) -> Path | None:
    if not os.environ.get(STEP_SUMMARY_ENV):
        return None
    return append_step_summary(os.environ, step_summary(rows, result_id=result_id, state=state, result_dir=result_dir,
                                                        rootdir=rootdir, html_report=html_report))
