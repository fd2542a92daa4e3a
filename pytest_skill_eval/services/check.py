"""Pre-run checks of definitions: ``skill-eval check <suite-or-group-path>``.

Running a subject costs time (and, with a real model, money), and the spec puts the
kind-specific expectation checks at grade time, after the run. ``check`` answers the
same questions up front, without starting anything:

- does the suite or group load (every :class:`~pytest_skill_eval.errors.DefinitionError`);
- which expectations and comparisons would become ``grade-error`` evidence;
- does each ``scripted/<name>`` model have a script that parses, does each other
  provider get a credential, and what an omitted model will mean;
- can every inherited variable be passed (set, and redactable);
- do the fixture, bundles and every variant's skills and context snapshot as a run
  snapshots them (the same code: containment, symlinks, Git refs resolved to commits).

The findings come from :mod:`~pytest_skill_eval.engine.preflight` (I/O), then are rendered by the pure
:func:`render_report`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_skill_eval.definitions.loading import load_definition, load_group
from pytest_skill_eval.definitions.model import Group, Suite
from pytest_skill_eval.definitions.plan import plan_line
from pytest_skill_eval.engine.preflight import Finding, PreflightContext, preflight_group
from pytest_skill_eval.errors import DefinitionError
from pytest_skill_eval.paths import shown as shown_path

__all__ = ["Finding", "GroupReport", "check_group", "check_path", "render_report"]


@dataclass(frozen=True, slots=True)
class GroupReport:
    """Everything checked about one group (or why it could not be loaded)."""

    label: str
    findings: tuple[Finding, ...] = ()
    load_error: str | None = None


@dataclass(frozen=True, slots=True)
class _Report:
    title: str
    groups: tuple[GroupReport, ...] = ()
    errors: tuple[str, ...] = field(default_factory=tuple)
    #: the groups that load: what a run would start
    loaded: tuple[Group, ...] = ()



def check_group(group: Group, root: Path, label: str, ctx: PreflightContext | None = None) -> GroupReport:
    """Check one loaded group as a run would: expectations, model and credentials, environment, sources."""
    return GroupReport(label, tuple(preflight_group(group, ctx or PreflightContext(root))))


def _check_suite(suite: Suite, root: Path, ctx: PreflightContext) -> _Report:
    from pytest_skill_eval.definitions.loading import check_suite_group_ids

    reports: list[GroupReport] = []
    loaded: list[Group] = []
    for ref in suite.groups:
        label = f"group {ref.position} {ref.ref}"
        try:
            group = load_group(ref.path, root)
        except DefinitionError as exc:
            reports.append(GroupReport(label, load_error=str(exc)))
            continue
        loaded.append(group)
        reports.append(check_group(group, root, f"group {ref.position} {group.id} ({ref.ref})", ctx))
    errors: tuple[str, ...] = ()
    if len(loaded) == len(suite.groups):
        try:
            check_suite_group_ids(suite, loaded)
        except DefinitionError as exc:
            errors = (str(exc),)
    count = len(suite.groups)
    return _Report(f"suite {suite.id} ({count} group{'s' if count != 1 else ''})", tuple(reports), errors,
                   tuple(loaded))


def check_path(path: Path, root: Path, *, env: Mapping[str, str] | None = None, auth_file: Path | None = None,
               user_models: Path | None = None, variants: int = 2, trials: int = 1) -> tuple[str, bool]:
    """Check the suite or group definition at *path* (relative to the definition *root*).

    *env* is the environment a run would inherit from (default: this process's);
    *auth_file* and *user_models* are what ``--skill-eval-auth``/``--skill-eval-models``
    would give; *variants* and *trials* what a run would select (for the plan line).
    Returns the report text and whether nothing would stop or spoil a run.
    """
    ctx = PreflightContext(root, dict(os.environ) if env is None else env, auth_file, user_models)
    full = path if path.is_absolute() else root / path
    shown = shown_path(full, root)
    try:
        definition = load_definition(full, root)
    except DefinitionError as exc:
        report = _Report("does not load", errors=(str(exc),))
        return render_report(shown, report.title, report.groups, report.errors)
    if isinstance(definition, Suite):
        report = _check_suite(definition, root, ctx)
    else:
        report = _Report(f"group {definition.id}", (check_group(definition, root, f"group {definition.id}", ctx),),
                         loaded=(definition,))
    plan = plan_line(report.loaded, variants, trials)
    unloaded = sum(g.load_error is not None for g in report.groups)
    if unloaded:
        plan += f" ({unloaded} group(s) that do not load are not counted)"
    return render_report(shown, report.title, report.groups, report.errors, plan=plan)


def render_report(target: str, title: str, groups: Sequence[GroupReport], errors: Sequence[str] = (),
                  plan: str | None = None) -> tuple[str, bool]:
    """The check report and its ok flag (pure); *plan* (:func:`.plan_line`) is what a run would start."""
    lines = [f"check {target}: {title}"]
    if plan is not None:
        lines.append(f"plan: {plan}")
    # a DefinitionError lists one problem per line
    problems = sum(len(message.split("\n")) for message in errors)
    warnings = 0
    for message in errors:
        lines += [f"  error {line}" for line in message.split("\n")]
    for group in groups:
        lines.append("")
        lines.append(group.label)
        if group.load_error is not None:
            problems += len(group.load_error.split("\n"))
            lines += [f"  error {line}" for line in group.load_error.split("\n")]
            continue
        width = max((len(f.subject) for f in group.findings), default=0)
        for finding in group.findings:
            mark = "ok   " if finding.ok else "error" if finding.ok is False else "warn " if finding.warning else "skip "
            problems += finding.ok is False
            warnings += finding.warning
            detail = finding.detail
            if finding.ok is False and finding.pointer and finding.pointer not in detail:
                detail = f"{finding.pointer}: {detail}"  # where to fix it, as definition errors say
            lines.append(f"  {mark} {finding.subject:<{width}}  {detail}")
    lines.append("")
    verdict = "no problems found" if problems == 0 else f"{problems} problem{'s' if problems != 1 else ''} found"
    if warnings:
        verdict += f", {warnings} warning{'s' if warnings != 1 else ''} (warn lines)"
    lines.append(verdict)
    return "\n".join(lines) + "\n", problems == 0
