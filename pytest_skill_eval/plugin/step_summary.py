"""A Markdown summary of the batch for a CI job page (GitHub Actions' ``GITHUB_STEP_SUMMARY``).

When the environment variable names a file, the process that writes ``result.json`` appends
one section to it: the groups (outcome, variants, comparisons), the transitions counted, the
cost pi reported, and where the evidence and the HTML report are, relative to the rootdir.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pytest_skill_eval.policy import Judgement, count_words
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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


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
    lines = [f"## skill-eval result `{result_id}` ({state or 'no result.json'})", "",
             f"{len(rows)} group{'s' if len(rows) != 1 else ''}: {counted}", ""]
    if rows:
        lines += ["| # | group | outcome | baseline | candidate | tokens | cost | comparisons |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for nodeid, outcome, verdict in rows:
            position, baseline, candidate, comparisons = verdict.summary_row() if verdict else ("", "-", "-", "-")
            group = verdict.usage.total if verdict is not None and verdict.usage is not None else Usage()
            lines.append(f"| {position} | `{_cell(nodeid)}` | {outcome} | {_cell(baseline)} | {_cell(candidate)} "
                         f"| {_cell(tokens_text(group))} | {_cell(cost_text(group))} | {_cell(comparisons)} |")
        lines.append("")
    transitions = count_words(t for _n, _o, v in rows if v is not None for t in v.transitions())
    lines.append(f"**Transitions:** {transitions or 'none'}")
    usage = result_usage(result_dir, rows)
    runs = usage.runs
    lines.append(f"**Cost:** {cost_text(usage.total)} for {tokens_text(usage.total)} tokens over {runs} "
                 f"pi run{'s' if runs != 1 else ''} (as pi reports it; unavailable: pi reported none)")
    lines += ["", f"- evidence: `{_path(result_dir, rootdir)}` (view it with `skill-eval view {result_id}`)"]
    if html_report is not None:
        lines.append(f"- HTML report: `{_path(html_report, rootdir)}`")
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
