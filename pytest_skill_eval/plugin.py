"""pytest layer: options, collection, one item per group, outcome policy, reporting.

This module only orchestrates: loading is ``definitions``, running is ``engine``,
judging is ``policy``, the tree on disk is ``evidence``; per-run state and reporting
live in ``session``.
"""

from __future__ import annotations

import os
import shlex
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
from .evidence import group_dir_name
from .policy import FAIL_ON_CHOICES, STATUS_PROPERTY, Verdict
from .session import (
    PERSISTENCE_FAILED,
    RESULT_ID_KEY,
    SESSION_KEY,
    FinishGuard,
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
    group.addoption("--skill-eval-strict", action="store_true", default=None,
                    help="Start no subject when the pre-run check finds a problem (a usage error, exit 4)")
    group.addoption("--skill-eval-stall-timeout", type=float, default=None, metavar="SECONDS",
                    help="Stop a subject that makes no progress for this long (default: 900)")
    parser.addini("skill_eval_paths", "Suites or groups collected by plain pytest (like testpaths)", type="paths", default=[])
    parser.addini("skill_eval_fail_on", "Default for --skill-eval-fail-on", default="candidate")
    parser.addini("skill_eval_host", "Default for --skill-eval-host", default="")
    parser.addini("skill_eval_strict", "Default for --skill-eval-strict", type="bool", default=False)


#: Options whose value is a path: written as a separate argument, pytest's rootdir search
#: (which runs before any plugin adds its options) takes the value for a test path.
PATH_OPTIONS = ("--skill-eval-models", "--skill-eval-auth", "--skill-eval-host")


def separate_path_option_problem(config: pytest.Config, parser: pytest.Parser) -> str | None:
    """Why a separate-argument path option moved the rootdir or ini file, or None.

    pytest chooses its rootdir from the free arguments that exist as paths before plugin
    options are known, so ``--skill-eval-models ../x/models.json`` can move it (and with
    it every node id). Nothing a plugin does can change that choice afterwards; this
    redoes it with and without those values and names the fix when they differ.
    """
    from _pytest.config.findpaths import determine_setup

    # No xdist-worker shortcut: a worker is started with the collected paths, not the
    # command line, so it finds nothing here; and a pytest run inside a worker's test
    # (pytester) must be checked like any other.
    raw = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *config.invocation_params.args]
    found = [(i + 1, raw[i]) for i in range(len(raw) - 1) if raw[i] in PATH_OPTIONS and not raw[i + 1].startswith("-")]
    if not found:
        return None
    ns = parser.parse_known_args([str(a) for a in raw])
    without = [str(a) for a in ns.file_or_dir]
    values = {i for i, _ in found}
    remaining = list(without)
    with_values = []
    for i, token in enumerate(raw):
        if i in values:
            with_values.append(token)
        elif token in remaining:
            remaining.remove(token)
            with_values.append(token)

    def setup(args: list[str]) -> tuple[Path, Path | None]:
        rootpath, inipath, *_ = determine_setup(inifile=ns.inifilename, override_ini=ns.override_ini, args=args,
                                                rootdir_cmd_arg=ns.rootdir or None,
                                                invocation_dir=config.invocation_params.dir)
        return rootpath, inipath

    try:
        seen, meant = setup(with_values), setup(without)
    except (TypeError, pytest.UsageError):
        return None  # another pytest's private API, or an error pytest reports itself
    if seen == meant:
        return None
    given = " ".join(f"{raw[i - 1]} {raw[i]}" for i, _ in found)
    fixed = " ".join(f"{raw[i - 1]}={raw[i]}" for i, _ in found)
    return (f"{given}: pytest took the separate path argument for a test path, which moves its rootdir to "
            f"{seen[0]} (ini file: {seen[1] or 'none'}) instead of {meant[0]} (ini file: {meant[1] or 'none'}) "
            f"and changes every node id. Write it with '=': {fixed}")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser) -> None:
    problem = separate_path_option_problem(early_config, parser)
    if problem:
        raise pytest.UsageError(problem)


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
    if not session.is_worker:
        config.pluginmanager.register(FinishGuard(session), "skill-eval-finish-guard")
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


class SkillEvalCheckWarning(pytest.PytestWarning):
    """The pre-run check found something a run would make invalid or a grade-error."""


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The pre-run check of every selected group, before any subject starts.

    Each problem is a :class:`SkillEvalCheckWarning` naming file and JSON pointer, and
    the run then proceeds as the spec says (a broken variant is invalid, a malformed
    check a grade-error). With ``--skill-eval-strict`` no subject starts at all.
    """
    config = session.config
    skill_session: SkillEvalSession | None = config.stash.get(SESSION_KEY, None)
    if skill_session is None or config.option.collectonly or config.getoption("skill_eval_check"):
        return
    strict = config.getoption("skill_eval_strict")
    strict = bool(config.getini("skill_eval_strict")) if strict is None else bool(strict)
    strict_option = strict
    problems = precheck_items(session.items, skill_session)
    # under xdist every worker collects the same items: one of them speaks for all
    worker = getattr(config, "workerinput", {}).get("workerid") if skill_session.is_worker else None
    for item, text in problems:
        if isinstance(item, SkillEvalItem):
            try:
                if worker in (None, "gw0"):
                    item.warn(SkillEvalCheckWarning(text))
                elif strict is False and warnings_are_errors():
                    raise SkillEvalCheckWarning(text)
            except SkillEvalCheckWarning:
                strict = True  # a warnings filter made the problems errors: start nothing, as strict does
                break
    if problems and strict:
        count = len(problems)
        message = (
            f"{'--skill-eval-strict' if strict_option else 'SkillEvalCheckWarning is an error here'}: "
            f"refusing to start any subject: the pre-run check found {count} "
            f"problem{'s' if count != 1 else ''}:\n" + "\n".join(f"  {text}" for _, text in problems)
            + "\nfix them (skill-eval check <path> lists every check), or run without --skill-eval-strict "
            "to let the run record them as the spec says"
        )
        if not skill_session.is_worker:
            raise pytest.UsageError(message)
        # an xdist worker cannot end the session with a usage error: every item refuses
        # to start instead, and the controller turns the exit status into one (exit 4)
        for item in session.items:
            if isinstance(item, (SkillEvalItem, BrokenGroupItem)):
                item.strict_refusal = message
    if problems and worker is None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and config.get_verbosity() >= 0:
            reporter.write_line(f"skill-eval: the pre-run check found {len(problems)} problem(s); see the warnings "
                                "summary (--skill-eval-strict starts no subject instead)", yellow=True)


STRICT_REFUSED = "skill_eval.strict_refused"


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """xdist controller: remember a worker's strict refusal (see :func:`pytest_collection_finish`)."""
    for name, value in getattr(report, "user_properties", ()):
        if name == STRICT_REFUSED:
            _refusals.append(str(value))


#: refusals reported by xdist workers, seen by the controller (one session per process)
_refusals: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    if getattr(session.config, "workerinput", None) is not None:
        return
    if _refusals:
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"ERROR: {_refusals[0]}", red=True)
    _refusals.clear()  # an in-process pytest.main() may run again


def _refuse(item: pytest.Item, refusal: str) -> None:
    item.user_properties.append((STRICT_REFUSED, refusal))
    raise GroupNotGraded(refusal)


def precheck_items(items: list[pytest.Item], skill_session: SkillEvalSession) -> list[tuple[pytest.Item, str]]:
    """``(item, "<file>: <pointer>: <problem>")`` for every problem of the selected groups."""
    from .preflight import preflight_group, problems_of

    ctx = preflight_context(skill_session)
    found: list[tuple[pytest.Item, str]] = []
    for item in items:
        if isinstance(item, BrokenGroupItem):
            found += [(item, line) for line in str(item.error).splitlines()]
        elif isinstance(item, SkillEvalItem):
            shown = _shown(item.group.path, skill_session.root)
            found += [(item, f.located(shown)) for f in problems_of(preflight_group(item.group, ctx))]
    return found


def warnings_are_errors() -> bool:
    """Whether this run's warning filters turn a SkillEvalCheckWarning into an error."""
    import warnings

    # collection runs under pytest's own filters (-W, filterwarnings): probe them, record the rest
    with warnings.catch_warnings(record=True):
        try:
            warnings.warn(SkillEvalCheckWarning("probe"), stacklevel=1)
        except SkillEvalCheckWarning:
            return True
    return False


def preflight_context(skill_session: SkillEvalSession) -> Any:
    """What this run's variants would get: environment, auth and models files, selection."""
    import os

    from .preflight import PreflightContext

    opt = skill_session.config.getoption
    return PreflightContext(
        root=skill_session.root,
        env=dict(os.environ),
        auth_file=Path(opt("skill_eval_auth")).resolve() if opt("skill_eval_auth") else None,
        user_models=Path(opt("skill_eval_models")).resolve() if opt("skill_eval_models") else None,
        selected=skill_session.selected,
    )


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


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
        #: set under xdist when --skill-eval-strict refuses the run (the item starts nothing)
        self.strict_refusal: str | None = None
        self.lineno = lineno
        self.verdict: Verdict | None = None
        self.add_marker(pytest.mark.skill_eval)
        self.add_marker(getattr(pytest.mark, f"skill_eval_{group.type}"))

    def _variants_text(self) -> str:
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        return ", ".join(n if n in session.selected else f"{n} (not-selected)" for n in VARIANTS)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.group.type}: {self._variants_text()}>"

    def plan_entry(self) -> dict[str, Any]:
        """This group in ``selection.json``: what the batch summary lists if it never runs."""
        return {"nodeid": self.nodeid, "position": self.position, "id": self.group.id,
                "dir": group_dir_name(self.position, self.group.id)}

    def plan_lines(self) -> list[str]:
        """What would run, for ``--collect-only -v``; nothing is started to find out."""
        model = self.group.model.model if self.group.model else "pi's default (omitted)"
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
        if self.strict_refusal is not None:
            _refuse(self, self.strict_refusal)
        if self.config.getoption("skill_eval_check"):
            self._check(session)
            return
        try:
            self.verdict = session.run_group(self.group, self.position, self.suite)
        except (EvidenceError, OSError) as exc:
            # evidence that cannot be preserved stops queued work (spec: persistence and states)
            message = f"evidence could not be persisted: {exc}"
            # the full reason is told once, in this item's error; the stop and the summary point at it
            pointer = f"evidence could not be persisted (group {self.group.id}, see its error)"
            self.user_properties += [(STATUS_PROPERTY, "evidence-error"), (PERSISTENCE_FAILED, pointer)]
            self.session.shouldstop = f"skill-eval: {pointer}"
            raise GroupNotGraded(f"group {self.group.id}: {message}; no queued group starts") from None
        self.user_properties.extend(self.verdict.properties())
        if self.verdict.error:
            raise GroupNotGraded(self.verdict.error_text())

    def _check(self, session: SkillEvalSession) -> None:
        """--skill-eval-check: what would become a grade-error or an invalid run, before any run."""
        from .check import check_group, render_report

        report = check_group(self.group, session.root, self.nodeid, preflight_context(session))
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
        self.strict_refusal: str | None = None
        self.add_marker(pytest.mark.skill_eval)

    def setup(self) -> None:
        self.user_properties.append((STATUS_PROPERTY, "invalid"))
        if self.strict_refusal is not None:
            _refuse(self, self.strict_refusal)
        if self.config.getoption("skill_eval_check"):
            raise self.error  # a check writes no evidence
        from .engine import persist_invalid_definition

        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        session.write_selection()
        group_dir = persist_invalid_definition(session.result_dir, self.position, self.name, self.error)
        self.user_properties.append(("skill_eval.evidence", str(group_dir)))
        raise self.error

    def plan_entry(self) -> dict[str, Any]:
        from .engine import invalid_definition_dir_name

        return {"nodeid": self.nodeid, "position": self.position, "id": None, "ref": self.name,
                "dir": invalid_definition_dir_name(self.position, self.name)}

    def runtest(self) -> None:  # pragma: no cover - setup always raises
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.lineno, f"invalid group definition {self.name}"
