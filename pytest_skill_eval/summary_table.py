"""The terminal summary (pure): one row per judged group, the total tokens and cost, and the
transitions counted (the table ``skill-eval merge`` prints too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_skill_eval.policy_terms import count_words, one_line
from pytest_skill_eval.usage import UNAVAILABLE, VariantUsage, cost_text, tokens_text

if TYPE_CHECKING:
    from pytest_skill_eval.policy import Judgement

__all__ = ["summary_table"]


def summary_table(rows: Sequence[tuple[str, str, Judgement | None]]) -> list[str]:
    """The terminal summary: one row per group (node id, pytest outcome, verdict)."""
    header = ("#", "group", "outcome", "baseline", "candidate", "tokens", "cost", "comparisons")
    body: list[tuple[str, ...]] = []
    overall = VariantUsage()
    for nodeid, outcome, verdict in rows:
        if verdict is None:
            body.append(("", nodeid, outcome, "-", "-", "-", "-", "-"))
            continue
        position, baseline, candidate, comparisons = verdict.summary_row()
        usage = verdict.usage
        if usage is not None:
            overall = overall + usage
        tokens = tokens_text(usage.total) if usage is not None else UNAVAILABLE
        cost = cost_text(usage.total) if usage is not None else UNAVAILABLE
        body.append((position, nodeid, outcome, baseline, candidate, tokens, cost, comparisons))
    body.append(("", "total", "", "", "", tokens_text(overall.total), cost_text(overall.total), ""))
    body = [tuple(one_line(cell) for cell in row) for row in body]  # escaped before the widths are measured
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *body]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    transitions = count_words(t for _n, _o, v in rows if v for t in v.transitions())
    if transitions:
        lines.append(f"transitions: {transitions}")
    return lines
