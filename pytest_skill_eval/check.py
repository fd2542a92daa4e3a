"""Pre-run checks of definitions: ``skill-eval check <suite-or-group-path>``.

Running a subject costs time (and, with a real model, money), and the spec puts the
kind-specific expectation checks at grade time, after the run. ``check`` answers the
same questions up front, without starting anything:

- does the suite or group load (every :class:`~pytest_skill_eval.errors.DefinitionError`);
- which expectations and comparisons would become ``grade-error`` evidence;
- does each ``scripted/<name>`` model have a script that parses;
- do the declared working-tree fixture, skill, context and extension paths exist.

Git-sourced skills and context are resolved only when a run snapshots them, so they
are listed as not checked. The findings are collected first (I/O), then rendered by
the pure :func:`render_report`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .definitions import Group, Suite, load_definition, load_group
from .errors import DefinitionError, ScriptError

__all__ = ["Finding", "GroupReport", "check_group", "check_path", "render_report"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One checked thing: ``ok`` is False for a problem, None for something not checked."""

    ok: bool | None
    subject: str
    detail: str


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


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _expectation_findings(group: Group) -> list[Finding]:
    from .grading import check_expectation, grade_group

    findings: list[Finding] = []
    for expectation in group.expectations:
        subject = f"expectation {expectation.id}"
        problems = check_expectation(group, expectation)
        if problems:
            findings += [Finding(False, subject, f"would be grade-error: {p}") for p in problems]
        else:
            findings.append(Finding(True, subject, f"{expectation.variant} {expectation.kind} {expectation.expect}"))
    # Grading with no runs leaves every well-formed expectation not-graded, so the only
    # errors left are the ones no evidence can fix: comparison pairing and the like.
    grade = grade_group(group, {})
    for error in grade.errors:
        if error.scope == "expectation":
            continue  # reported above with its pointer
        subject = f"{error.scope} {error.owner}" if error.owner else error.scope
        findings.append(Finding(False, subject, f"would be grade-error: {error.message}"))
    broken = {e.owner for e in grade.errors if e.scope == "comparison"}
    for comparison in grade.comparisons:
        if comparison.id not in broken:
            findings.append(Finding(True, f"comparison {comparison.id}", f"{comparison.baseline} -> {comparison.candidate}"))
    return findings


def _model_findings(group: Group, root: Path) -> list[Finding]:
    from .models import SCRIPTED, ModelRouter
    from .scripted.format import load_script

    router = ModelRouter(root)
    provider, name = router.model_of(group)
    subject = f"model {provider}/{name}"
    if provider != SCRIPTED:
        return [Finding(None, subject, "not checked: a non-scripted provider is resolved by pi at run time")]
    try:
        path = router.find_script(group, name)
    except ScriptError as exc:
        return [Finding(False, subject, str(exc))]
    try:
        script = load_script(path)
    except ScriptError as exc:
        return [Finding(False, subject, f"script {_shown(path, root)} does not parse: {exc}")]
    turns = len(script.turns)
    return [Finding(True, subject, f"script {_shown(path, root)} parses ({turns} turn{'s' if turns != 1 else ''})")]


def _path_finding(root: Path, subject: str, rel: str, *, skill: bool = False) -> Finding:
    path = root / posixpath.normpath(rel)
    if not path.exists():
        return Finding(False, subject, f"{rel}: not found in the working tree under {root}")
    if skill and not (path / "SKILL.md").is_file():
        return Finding(False, subject, f"{rel}: has no SKILL.md (the variant would be invalid)")
    return Finding(True, subject, rel)


def _path_findings(group: Group, root: Path) -> list[Finding]:
    findings: list[Finding] = []
    if group.fixture is not None:
        findings.append(_path_finding(root, "fixture", group.fixture))
    for name in ("baseline", "candidate"):
        variant = group.variant(name)  # type: ignore[arg-type]
        if variant.source.kind != "working-tree":
            declared = len(variant.skills) + len(variant.context)
            if declared:
                findings.append(
                    Finding(None, f"{name} source", f"git ref {variant.source.ref}: {declared} path(s) resolved when a run snapshots them")
                )
            continue
        findings += [_path_finding(root, f"{name} skill {i}", rel, skill=True) for i, rel in enumerate(variant.skills)]
        findings += [_path_finding(root, f"{name} context {i}", rel) for i, rel in enumerate(variant.context)]
    for i, bundle in enumerate(group.runtime.extensions):
        findings.append(_path_finding(root, f"extension {i} entry", bundle.entry))
        findings += [_path_finding(root, f"extension {i} resource", rel) for rel in bundle.resources]
    return findings


def check_group(group: Group, root: Path, label: str) -> GroupReport:
    """Check one loaded group: expectations, comparisons, its script and declared paths."""
    findings = _expectation_findings(group) + _model_findings(group, root) + _path_findings(group, root)
    return GroupReport(label, tuple(findings))


def _check_suite(suite: Suite, root: Path) -> _Report:
    from .definitions import check_suite_group_ids

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
        reports.append(check_group(group, root, f"group {ref.position} {group.id} ({ref.ref})"))
    errors: tuple[str, ...] = ()
    if len(loaded) == len(suite.groups):
        try:
            check_suite_group_ids(suite, loaded)
        except DefinitionError as exc:
            errors = (str(exc),)
    count = len(suite.groups)
    return _Report(f"suite {suite.id} ({count} group{'s' if count != 1 else ''})", tuple(reports), errors)


def check_path(path: Path, root: Path) -> tuple[str, bool]:
    """Check the suite or group definition at *path* (relative to the definition *root*).

    Returns the report text and whether nothing would stop or spoil a run.
    """
    full = path if path.is_absolute() else root / path
    shown = _shown(full, root)
    try:
        definition = load_definition(full, root)
    except DefinitionError as exc:
        report = _Report("does not load", errors=(str(exc),))
        return render_report(shown, report.title, report.groups, report.errors)
    if isinstance(definition, Suite):
        report = _check_suite(definition, root)
    else:
        report = _Report(f"group {definition.id}", (check_group(definition, root, f"group {definition.id}"),))
    return render_report(shown, report.title, report.groups, report.errors)


def render_report(target: str, title: str, groups: Sequence[GroupReport], errors: Sequence[str] = ()) -> tuple[str, bool]:
    """The check report and its ok flag (pure)."""
    lines = [f"check {target}: {title}"]
    # a DefinitionError lists one problem per line
    problems = sum(len(message.split("\n")) for message in errors)
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
            mark = "ok   " if finding.ok else "error" if finding.ok is False else "skip "
            problems += finding.ok is False
            lines.append(f"  {mark} {finding.subject:<{width}}  {finding.detail}")
    lines.append("")
    lines.append("no problems found" if problems == 0 else f"{problems} problem{'s' if problems != 1 else ''} found")
    return "\n".join(lines) + "\n", problems == 0
