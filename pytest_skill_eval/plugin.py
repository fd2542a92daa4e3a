"""pytest layer: options, collection, one item per group, outcome policy, reporting.

This module only orchestrates: loading is ``definitions``, running is ``engine``,
judging is ``grading``, the tree on disk is ``evidence``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from .definitions import VARIANTS, Group, definition_kind, load_group, load_suite
from .errors import DefinitionError, SkillEvalError
from .policy import FAIL_ON_CHOICES, ItemVerdict, judge_group
from .session import SESSION_KEY, SkillEvalSession

RESULT_ID_KEY = "skill_eval_result_id"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("skill-eval", "skill evaluation through the pi host")
    group.addoption("--skill-eval", action="append", default=[], metavar="PATH",
                    help="Suite or group definition to collect (repeatable)")
    group.addoption("--skill-eval-group", metavar="ID|POSITION", default=None,
                    help="Select one suite group by id or one-based position")
    group.addoption("--skill-eval-variant", choices=VARIANTS, default=None,
                    help="Run only this variant; the other is recorded as not-selected")
    group.addoption("--skill-eval-fail-on", choices=FAIL_ON_CHOICES, default=None,
                    help="Which expectation failures fail a group item (default: candidate)")
    group.addoption("--skill-eval-host", metavar="PATH", default=None,
                    help="pi host to use: an npm prefix holding pi, or the pi CLI (default: managed install)")
    group.addoption("--skill-eval-no-install", action="store_true", default=False,
                    help="Never install the managed pi host on first use; fail instead")
    group.addoption("--skill-eval-models", metavar="FILE", default=None,
                    help="A pi models.json whose providers are merged into each variant's agent dir")
    group.addoption("--skill-eval-auth", metavar="FILE", default=None,
                    help="A pi auth.json copied into each variant's agent dir (never into evidence)")
    group.addoption("--skill-eval-stall-timeout", type=float, default=None, metavar="SECONDS",
                    help="Stop a subject that makes no progress for this long (default: 900)")
    parser.addini("skill_eval_paths", "Suites or groups collected by plain pytest", type="paths", default=[])
    parser.addini("skill_eval_fail_on", "Default for --skill-eval-fail-on", default="candidate")
    parser.addini("skill_eval_host", "Default for --skill-eval-host", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "skill_eval: a skill evaluation group (added by pytest-skill-eval)")
    config.addinivalue_line("markers", "skill_eval_description: a description group (added by pytest-skill-eval)")
    config.addinivalue_line("markers", "skill_eval_body: a body group (added by pytest-skill-eval)")
    declared = [Path(p) for p in config.getoption("skill_eval")] + list(config.getini("skill_eval_paths"))
    if not declared:
        return
    workerinput = getattr(config, "workerinput", None)
    result_id = workerinput.get(RESULT_ID_KEY) if workerinput else None
    session = SkillEvalSession.from_config(config, declared, result_id=result_id, is_worker=workerinput is not None)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "skill-eval-session")
    if config.getoption("skill_eval") and config.args_source != pytest.Config.ArgsSource.ARGS:
        # `pytest --skill-eval suite.json` means "run this suite", not "and every test too"
        config.args[:] = [str(p) for p in session.declared]
    else:
        config.args.extend(str(p) for p in session.declared if str(p) not in config.args)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: every worker writes into the controller's one result id."""
    session = node.config.stash.get(SESSION_KEY, None)
    if session is not None:
        node.workerinput[RESULT_ID_KEY] = session.result_id


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    session = parent.config.stash.get(SESSION_KEY, None)
    if session is None or file_path.suffix != ".json" or not session.claims(file_path):
        return None
    return SkillEvalFile.from_parent(parent, path=file_path)


class SkillEvalFile(pytest.File):
    """A suite or group definition file: one item per group."""

    def collect(self) -> Iterator[pytest.Item]:
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        kind = definition_kind(self.path)
        if kind == "suite":
            suite = load_suite(self.path, session.root)
            refs = session.select_refs(suite)
            seen: dict[str, str] = {}
            for ref in refs:
                position = session.position_for(ref.path)
                try:
                    group = load_group(ref.path, session.root)
                except DefinitionError as exc:
                    yield BrokenGroupItem.from_parent(self, name=ref.ref, error=exc)
                    continue
                if group.id in seen:
                    err = DefinitionError(str(self.path), [_dup_problem(ref.position, group.id, seen[group.id])])
                    yield BrokenGroupItem.from_parent(self, name=ref.ref, error=err)
                    continue
                seen[group.id] = ref.ref
                yield SkillEvalItem.from_parent(self, name=group.id, group=group, position=position)
        else:
            session.check_direct_group(self.path)
            group = load_group(self.path, session.root)
            yield SkillEvalItem.from_parent(self, name=group.id, group=group, position=session.position_for(self.path))


def _dup_problem(position: int, group_id: str, first: str) -> Any:
    from .errors import Problem

    return Problem(f"/groups/{position - 1}", f"expected unique group ids, found {group_id!r} again (first in {first})")


class SkillEvalItem(pytest.Item):
    """One group: setup runs its variants (infrastructure problems are errors), call judges."""

    def __init__(self, *, group: Group, position: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.group = group
        self.position = position
        self.verdict: ItemVerdict | None = None
        self.add_marker(pytest.mark.skill_eval)
        self.add_marker(getattr(pytest.mark, f"skill_eval_{group.type}"))

    def setup(self) -> None:
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        outcome = session.run_group(self.group, self.position)
        self.verdict = judge_group(outcome, session.fail_on)
        self.user_properties.extend(self.verdict.properties())
        if self.verdict.error:
            raise SkillEvalInfraError(self.verdict.error_text())

    def runtest(self) -> None:
        assert self.verdict is not None
        if self.verdict.failed:
            raise SkillEvalFailure(self.verdict.failure_text())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, (SkillEvalFailure, SkillEvalInfraError, SkillEvalError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"skill-eval group {self.group.id} ({self.group.type})"


class BrokenGroupItem(pytest.Item):
    """A suite entry whose group definition is invalid: an error for that entry only."""

    def __init__(self, *, error: DefinitionError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def setup(self) -> None:
        raise self.error

    def runtest(self) -> None:  # pragma: no cover - setup always raises
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"invalid group definition {self.name}"


class SkillEvalFailure(Exception):
    """Selected expectations failed under the fail-on policy."""


class SkillEvalInfraError(Exception):
    """A variant was invalid, infrastructure failed, or grading errored."""
