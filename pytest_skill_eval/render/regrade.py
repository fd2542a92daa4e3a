"""The ``skill-eval regrade`` summary (pure): per group its definition, new file, transitions, changes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_skill_eval.grading.results import GroupGrade
from pytest_skill_eval.safe_text import escape_path, neutralise


@dataclass(frozen=True, slots=True)
class GroupRegrade:
    """One group's regrade: where its definition came from, and the stored and new grades."""

    dir: str
    group_id: str
    origin: str
    file: str | None
    stored: GroupGrade | None
    new: GroupGrade | None
    identical: bool
    skipped: str | None = None
    #: ``<result-relative file>: expected …, found …`` for each evidence file not as expected
    problems: tuple[str, ...] = ()
    #: grade.json exists but is not what regrade expects, so the new grade is not compared with it
    stored_unusable: bool = False
    #: a group run with trials: the new aggregate's state and what the trials' regrades say
    aggregate_state: str | None = None
    trial_lines: tuple[str, ...] = ()


def describe_changes(stored: GroupGrade, new: GroupGrade) -> list[str]:
    """What changed from the *stored* grade to the *new* one, one line per change."""
    lines: list[str] = []
    if stored.state != new.state:
        lines.append(f"grade state: {stored.state} -> {new.state}")
    old_exp = {e.id: e for e in stored.expectations}
    new_exp = {e.id: e for e in new.expectations}
    for ident, item in new_exp.items():
        before = old_exp.get(ident)
        if before is None:
            lines.append(f"expectation {ident}: new, {item.status}")
        elif before.status != item.status:
            lines.append(f"expectation {ident}: {before.status} -> {item.status}")
        elif before != item:
            lines.append(f"expectation {ident}: still {item.status}, wording or locations changed")
    lines += [f"expectation {ident}: removed (was {item.status})" for ident, item in old_exp.items() if ident not in new_exp]
    old_cmp = {c.id: c for c in stored.comparisons}
    new_cmp = {c.id: c for c in new.comparisons}
    for ident, comparison in new_cmp.items():
        was = old_cmp.get(ident)
        if was is None:
            lines.append(f"comparison {ident}: new, {comparison.transition}")
        elif was.transition != comparison.transition:
            lines.append(f"comparison {ident}: {was.transition} -> {comparison.transition}")
    lines += [f"comparison {ident}: removed (was {c.transition})" for ident, c in old_cmp.items() if ident not in new_cmp]
    old_errors, new_errors = stored.errors, new.errors
    if old_errors != new_errors:
        lines.append(f"grade errors: {len(old_errors)} -> {len(new_errors)}")
    if not lines and stored != new:
        lines.append("same verdicts; the file differs only in order or formatting")
    return lines


def _text(text: str) -> str:
    """A text cell from a stored result: one line, neutralised; its backslashes as they are
    (grading wrote its paths and excerpts escaped already)."""
    return neutralise(text, one_line=True)


def render_regrade(result_path: str, groups: Sequence[GroupRegrade]) -> str:
    """The regrade summary: per group its definition origin, new file, transitions, changes."""
    changed = sum(1 for g in groups if g.skipped is None and not g.identical)
    lines = [f"result    {escape_path(result_path)}"]
    regraded = [g for g in groups if g.skipped is None]
    lines.append(f"regraded  {len(regraded)} of {len(groups)} groups, {changed} differ from grade.json")
    for group in groups:
        index = group.dir.split("-", 1)[0].lstrip("0") or "0"
        lines.append("")
        problems = [f"  problem    {_text(p)}" for p in group.problems]
        if group.skipped is not None:
            lines.append(f"== group {index} {_text(group.group_id)}: not regraded ({_text(group.skipped)})")
            lines += problems
            continue
        if group.aggregate_state is not None:
            verdict = "identical to aggregate.json" if group.identical else "differs from aggregate.json"
            lines.append(f"== group {index} {_text(group.group_id)}: {group.aggregate_state}, {verdict}")
            lines += problems
            lines.append(f"  definition {escape_path(group.origin)}")
            lines.append(f"  wrote      {escape_path(group.file or '')}")
            lines += [f"  {_text(line)}" for line in group.trial_lines]
            continue
        new = group.new
        assert new is not None  # a group that was not skipped has its new grade
        if group.stored_unusable:
            verdict = "not compared with grade.json (it is not what regrade expects)"
        elif group.stored is None:
            verdict = "new grade (there was no grade.json to compare with)"
        elif group.identical:
            verdict = "identical to grade.json"
        else:
            verdict = "differs from grade.json"
        lines.append(f"== group {index} {_text(group.group_id)}: {new.state}, {verdict}")
        lines += problems
        lines.append(f"  definition {escape_path(group.origin)}")
        lines.append(f"  wrote      {escape_path(group.file or '')}")
        for comparison in new.comparisons:
            lines.append(f"  comparison {comparison.id}: {comparison.transition}")
        for error in new.errors:
            owner = f" {error.owner}" if error.owner else ""
            lines.append(f"  grade error {error.scope}{_text(owner)}: {_text(error.message)}")
        if group.stored is not None and not group.identical:
            lines += [f"  changed    {_text(line)}" for line in describe_changes(group.stored, new)]
    # every entry is one line: a newline left in one came from a stored string
    return "\n".join(neutralise(line).replace("\n", "\\n") for line in lines)
