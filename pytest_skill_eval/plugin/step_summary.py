"""A Markdown summary of the batch for a CI job page (GitHub Actions' ``GITHUB_STEP_SUMMARY``).

When the environment variable names a file, the process that writes ``result.json`` appends
one section to it: the groups (outcome, variants, comparisons), the transitions counted, the
cost pi reported, and where the evidence and the HTML report are, relative to the rootdir.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pytest_skill_eval.policy import Judgement, count_words

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def run_usage(result_dir: Path) -> tuple[float, float, int]:
    """Cost, total tokens and number of runs over every ``run.json`` of the result (trials too)."""
    cost = tokens = 0.0
    runs = 0
    for path in sorted((result_dir / "groups").rglob("run.json")):
        try:
            usage = json.loads(path.read_text(encoding="utf-8")).get("usage")
        except (OSError, ValueError, AttributeError):
            continue
        if not isinstance(usage, dict):
            continue
        runs += 1
        cost += float(usage.get("cost") or 0)
        tokens += float(usage.get("totalTokens") or 0)
    return cost, tokens, runs


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
        lines += ["| # | group | outcome | baseline | candidate | comparisons |", "| --- | --- | --- | --- | --- | --- |"]
        for nodeid, outcome, verdict in rows:
            position, baseline, candidate, comparisons = verdict.summary_row() if verdict else ("", "-", "-", "-")
            lines.append(f"| {position} | `{_cell(nodeid)}` | {outcome} | {_cell(baseline)} | {_cell(candidate)} "
                         f"| {_cell(comparisons)} |")
        lines.append("")
    transitions = count_words(t for _n, _o, v in rows if v is not None for t in v.transitions())
    lines.append(f"**Transitions:** {transitions or 'none'}")
    cost, tokens, runs = run_usage(result_dir)
    lines.append(f"**Cost:** ${cost:.4f} for {tokens:.0f} tokens over {runs} run{'s' if runs != 1 else ''} "
                 "(as pi reports it)")
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
