"""pytest layer: options, collection, one item per group, outcome policy, reporting.

This module only orchestrates: loading is ``definitions``, running is ``engine``,
judging is ``policy``, the tree on disk is ``evidence``; per-run state and reporting
live in ``session``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from .definitions import VARIANTS, Group, Suite, definition_kind, load_group, load_suite
from .errors import (
    DefinitionError,
    EvidenceError,
    GroupFailed,
    GroupNotGraded,
    Problem,
    SkillEvalError,
)
from .policy import FAIL_ON_CHOICES, STATUS_PROPERTY, Verdict
from .session import (
    PERSISTENCE_FAILED,
    RESULT_ID_KEY,
    SESSION_KEY,
    JUnitEntries,
    SkillEvalSession,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("skill-eval", "skill evaluation through the pi host")
    group.addoption("--skill-eval", action="append", default=[], metavar="PATH",
                    help="Suite or group definition (or a directory of suites) to run; repeatable; "
                         "replaces the skill_eval_paths ini setting")
    group.addoption("--skill-eval-group", metavar="ID|POSITION", default=None,
                    help="Run one group of the declared suite, by id or one-based position")
    group.addoption("--skill-eval-variant", choices=VARIANTS, default=None,
                    help="Run only this variant; the other is recorded as not-selected")
    group.addoption("--skill-eval-fail-on", choices=FAIL_ON_CHOICES, default=None,
                    help="Which failed expectations fail a group: candidate (default), regression, any or never")
    group.addoption("--skill-eval-host", metavar="PATH", default=None,
                    help="Host to run: an npm prefix holding pi, or the pi CLI (default: the managed install)")
    group.addoption("--skill-eval-no-install", action="store_true", default=False,
                    help="Never install the managed pi host on first use; fail instead")
    group.addoption("--skill-eval-models", metavar="FILE", default=None,
                    help="A pi models.json whose providers are merged into each variant's agent dir")
    group.addoption("--skill-eval-auth", metavar="FILE", default=None,
                    help="A pi auth.json copied into each variant's agent dir (never into evidence)")
    group.addoption("--skill-eval-check", action="store_true", default=False,
                    help="Check definitions, expectation shapes, scripts and paths without running any subject")
    group.addoption("--skill-eval-stall-timeout", type=float, default=None, metavar="SECONDS",
                    help="Stop a subject that makes no progress for this long (default: 900)")
    parser.addini("skill_eval_paths", "Suites or groups collected by plain pytest (like testpaths)", type="paths", default=[])
    parser.addini("skill_eval_fail_on", "Default for --skill-eval-fail-on", default="candidate")
    parser.addini("skill_eval_host", "Default for --skill-eval-host", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "skill_eval: a skill evaluation group (added by pytest-skill-eval)")
    config.addinivalue_line("markers", "skill_eval_description: a description group (added by pytest-skill-eval)")
    config.addinivalue_line("markers", "skill_eval_body: a body group (added by pytest-skill-eval)")
    session = SkillEvalSession.from_config(config)
    if session is None:
        return
    config.stash[SESSION_KEY] = session
    # scratch a killed evaluator left behind (workspaces, the auth file copy) goes now
    from .scratch import sweep_stale

    sweep_stale()
    config.pluginmanager.register(session, "skill-eval-session")
    config.pluginmanager.register(session.progress, "skill-eval-progress")
    if config.getoption("xmlpath", None) and not session.is_worker:
        config.pluginmanager.register(JUnitEntries(session), "skill-eval-junit")
    config.args[:] = session.narrow_args(list(config.args), config.args_source,
                                         from_option=bool(config.getoption("skill_eval")))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: every worker writes into the controller's one result id."""
    session = node.config.stash.get(SESSION_KEY, None)
    if session is not None:
        node.workerinput[RESULT_ID_KEY] = session.result_id


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None and session.ignores(collection_path):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    session = parent.config.stash.get(SESSION_KEY, None)
    if session is None or file_path.suffix != ".json" or not session.claims(file_path):
        return None
    return SkillEvalFile.from_parent(parent, path=file_path)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Setup errors of groups read as their own text: pytest would show a traceback of setup()."""
    report = yield
    excinfo = call.excinfo
    if (call.when == "setup" and excinfo is not None and isinstance(item, (SkillEvalItem, BrokenGroupItem))
            and isinstance(excinfo.value, SkillEvalError)):
        report.longrepr = str(excinfo.value)
    return report


class SkillEvalFile(pytest.File):
    """A suite or group definition file: one item per (selected) group."""

    def collect(self) -> Iterator[pytest.Item]:
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        if definition_kind(self.path) == "group":
            base = session.position_base(self.path, 1)
            group = load_group(self.path, session.root)
            yield SkillEvalItem.from_parent(self, name=group.id, group=group, position=base + 1, lineno=0)
            return
        suite = load_suite(self.path, session.root)
        base = session.position_base(self.path, len(suite.groups))
        ref_lines = _ref_lines(self.path.read_text(encoding="utf-8"))
        first: dict[str, str] = {}
        for ref in session.selected_refs(suite):
            lineno = ref_lines.get(ref.ref, 0)
            try:
                group = load_group(ref.path, session.root)
            except DefinitionError as exc:
                yield BrokenGroupItem.from_parent(self, name=ref.ref, error=exc, lineno=lineno,
                                                  position=base + ref.position)
                continue
            if group.id in first:
                problem = Problem(f"/groups/{ref.position - 1}",
                                  f"expected unique group ids, found {group.id!r} again (first in {first[group.id]})")
                yield BrokenGroupItem.from_parent(self, name=ref.ref, error=DefinitionError(str(self.path), [problem]),
                                                  lineno=lineno, position=base + ref.position)
                continue
            first[group.id] = ref.ref
            yield SkillEvalItem.from_parent(self, name=group.id, group=group, position=base + ref.position, lineno=lineno,
                                            suite=suite)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, SkillEvalError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


def _ref_lines(text: str) -> dict[str, int]:
    """Zero-based line of each quoted string in a suite file (for failure locations).

    One pass over the file, so a large suite costs linear time, not one scan per group.
    """
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines()):
        for quoted in line.split('"')[1::2]:
            lines.setdefault(quoted, number)
    return lines


class SkillEvalItem(pytest.Item):
    """One group. Setup runs its selected variants (problems there are errors); call judges."""

    def __init__(self, *, group: Group, position: int, lineno: int, suite: Suite | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.group = group
        self.position = position
        self.suite = suite
        self.check_problems: str | None = None
        self.lineno = lineno
        self.verdict: Verdict | None = None
        self.add_marker(pytest.mark.skill_eval)
        self.add_marker(getattr(pytest.mark, f"skill_eval_{group.type}"))

    def _variants_text(self) -> str:
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        return ", ".join(n if n in session.selected else f"{n} (not-selected)" for n in VARIANTS)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.group.type}: {self._variants_text()}>"

    def plan_lines(self) -> list[str]:
        """What would run, for ``--collect-only -v``; nothing is started to find out."""
        model = self.group.model.model if self.group.model else f"scripted/{self.group.id}"
        tools = ", ".join(self.group.tools) or "none"
        lines = [f"position {self.position}, {self.group.type} group, {len(self.group.prompts)} turn(s), "
                 + f"model {model}, tools: {tools}"]
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        for name in VARIANTS:
            v = self.group.variant(name)
            source = "working tree" if v.source.kind == "working-tree" else f"git {v.source.ref}"
            target = v.skills[v.target] if v.target is not None else "none"
            state = "selected" if name in session.selected else "not-selected"
            lines.append(f"{name:<10} {state}: {len(v.skills)} skill(s) from the {source}, target {target}")
        for e in self.group.expectations:
            pair = f" (comparison {e.comparison})" if e.comparison else ""
            lines.append(f"{e.variant:<10} expects {e.id}: {e.kind} {e.expect}{pair}")
        return lines

    def setup(self) -> None:
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        if self.config.getoption("skill_eval_check"):
            self._check(session)
            return
        try:
            self.verdict = session.run_group(self.group, self.position, self.suite)
        except (EvidenceError, OSError) as exc:
            # evidence that cannot be preserved stops queued work (spec: persistence and states)
            message = f"evidence could not be persisted: {exc}"
            self.user_properties += [(STATUS_PROPERTY, "evidence-error"), (PERSISTENCE_FAILED, message)]
            self.session.shouldstop = f"skill-eval: {message}"
            raise GroupNotGraded(f"group {self.group.id}: {message}; no queued group starts") from None
        self.user_properties.extend(self.verdict.properties())
        if self.verdict.error:
            raise GroupNotGraded(self.verdict.error_text())

    def _check(self, session: SkillEvalSession) -> None:
        """--skill-eval-check: what would become a grade-error or an invalid run, before any run."""
        from .check import check_group, render_report

        report = check_group(self.group, session.root, self.nodeid)
        text, ok = render_report(str(self.path), "pre-run check", [report])
        self.user_properties.append((STATUS_PROPERTY, "checked" if ok else "check failed"))
        self.check_problems = None if ok else text

    def runtest(self) -> None:
        if self.config.getoption("skill_eval_check"):
            if self.check_problems:
                raise GroupFailed(self.check_problems)
            return
        assert self.verdict is not None
        if self.verdict.failing:
            raise GroupFailed(self.verdict.failure_text())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SkillEvalError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.lineno, f"skill-eval group {self.group.id} ({self.group.type})"


class BrokenGroupItem(pytest.Item):
    """A suite entry whose group definition is invalid: an error for that entry only."""

    def __init__(self, *, error: DefinitionError, lineno: int, position: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.lineno = lineno
        self.position = position
        self.add_marker(pytest.mark.skill_eval)

    def setup(self) -> None:
        self.user_properties.append((STATUS_PROPERTY, "invalid"))
        if self.config.getoption("skill_eval_check"):
            raise self.error  # a check writes no evidence
        from .engine import persist_invalid_definition

        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        group_dir = persist_invalid_definition(session.result_dir, self.position, self.name, self.error)
        self.user_properties.append(("skill_eval.evidence", str(group_dir)))
        raise self.error

    def runtest(self) -> None:  # pragma: no cover - setup always raises
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.lineno, f"invalid group definition {self.name}"
