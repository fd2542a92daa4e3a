"""The collected nodes: a definition file, one item per group, and an item for a broken reference."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_skill_eval.definitions.loading import definition_kind, load_group, load_suite, repeated_id_problem
from pytest_skill_eval.definitions.model import VARIANTS, Group, GroupRef, Suite
from pytest_skill_eval.errors import (
    DefinitionError,
    EvidenceError,
    GroupFailedError,
    GroupNotGradedError,
    SkillEvalError,
)
from pytest_skill_eval.evidence.layout import group_dir_name
from pytest_skill_eval.plugin.session import (
    FAMILY_PROPERTY,
    PERSISTENCE_FAILED,
    SESSION_KEY,
    SkillEvalSession,
)
from pytest_skill_eval.policy import STATUS_PROPERTY, Judgement
from pytest_skill_eval.safe_text import neutralise

if TYPE_CHECKING:
    from pytest_skill_eval.engine.preflight import PreflightContext
    from pytest_skill_eval.evidence.records import PlannedGroup

STRICT_REFUSED = "skill_eval.strict_refused"


def _refuse(item: pytest.Item, refusal: str) -> None:
    item.user_properties.append((STRICT_REFUSED, refusal))
    raise GroupNotGradedError(refusal)


def preflight_context(skill_session: SkillEvalSession) -> PreflightContext:
    """What this run's variants would get: environment, auth and models files, selection."""

    from pytest_skill_eval.engine.preflight import PreflightContext

    opt = skill_session.config.getoption
    return PreflightContext(
        root=skill_session.root,
        env=dict(os.environ),
        auth_file=Path(opt("skill_eval_auth")).resolve() if opt("skill_eval_auth") else None,
        user_models=Path(opt("skill_eval_models")).resolve() if opt("skill_eval_models") else None,
        selected=skill_session.selected,
    )


def shown_path(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _shard_key(item: pytest.Item, name: str) -> str:
    from pytest_skill_eval.definitions.sharding import group_key

    session: SkillEvalSession = item.config.stash[SESSION_KEY]
    return group_key(shown_path(item.path, session.root), name)


class SkillEvalFile(pytest.File):
    """A suite or group definition file: one item per (selected) group."""

    def collect(self) -> Iterator[pytest.Item]:
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        if session.rerun is not None:
            group, position, suite = session.rerun.load_group(self.path)
            yield SkillEvalItem.from_parent(self, name=group.id, group=group, position=position, lineno=0, suite=suite)
            return
        if definition_kind(self.path) == "group":
            base = session.position_base(self.path, 1)
            group = load_group(self.path, session.root)
            yield SkillEvalItem.from_parent(self, name=group.id, group=group, position=base + 1, lineno=0)
            return
        suite = load_suite(self.path, session.root)
        base = session.position_base(self.path, len(suite.groups))
        ref_lines = _ref_lines(self.path.read_text(encoding="utf-8"))
        first: dict[str, GroupRef] = {}
        for ref in session.selected_refs(suite):
            lineno = ref_lines.get(ref.ref, 0)
            try:
                group = load_group(ref.path, session.root)
            except DefinitionError as exc:
                yield BrokenGroupItem.from_parent(self, name=neutralise(ref.ref, one_line=True), ref=ref.ref, error=exc,
                                                  lineno=lineno, position=base + ref.position)
                continue
            if group.id in first:
                problem = repeated_id_problem(ref, group.id, first[group.id])
                yield BrokenGroupItem.from_parent(self, name=neutralise(ref.ref, one_line=True), ref=ref.ref,
                                                  error=DefinitionError(str(self.path), [problem]),
                                                  lineno=lineno, position=base + ref.position)
                continue
            first[group.id] = ref
            yield SkillEvalItem.from_parent(self, name=group.id, group=group, position=base + ref.position, lineno=lineno,
                                            suite=suite)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, SkillEvalError):
            return neutralise(str(excinfo.value))
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
        self.verdict: Judgement | None = None
        self.add_marker(pytest.mark.skill_eval)
        self.add_marker(getattr(pytest.mark, f"skill_eval_{group.type}"))

    def _variants_text(self) -> str:
        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        return ", ".join(n if n in session.selected else f"{n} (not-selected)" for n in VARIANTS)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.group.type}: {self._variants_text()}>"

    def shard_key(self) -> str:
        """This group's identity for ``--skill-eval-shard``: definition path from the root and group id."""
        return _shard_key(self, self.group.id)

    def plan_entry(self) -> PlannedGroup:
        """This group in ``selection.json``: what the batch summary lists if it never runs."""
        from pytest_skill_eval.evidence.records import PlannedGroup

        return PlannedGroup(self.nodeid, self.position, self.group.id, group_dir_name(self.position, self.group.id))

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
            self.verdict = session.run_item(self, self.group, self.position, self.suite)
        except (EvidenceError, OSError) as exc:
            # evidence that cannot be preserved stops queued work (spec: persistence and states)
            message = f"evidence could not be persisted: {exc}"
            # the full reason is told once, in this item's error; the stop and the summary point at it
            pointer = f"evidence could not be persisted (group {self.group.id}, see its error)"
            self.user_properties += [(STATUS_PROPERTY, "evidence-error"), (PERSISTENCE_FAILED, pointer)]
            self.session.shouldstop = f"skill-eval: {pointer}"
            raise GroupNotGradedError(f"group {self.group.id}: {message}; no queued group starts") from None
        self.user_properties.extend(self.verdict.properties())
        self.user_properties.append((FAMILY_PROPERTY, str(session.family)))
        if self.verdict.error:
            raise GroupNotGradedError(self.verdict.error_text())

    def _check(self, session: SkillEvalSession) -> None:
        """--skill-eval-check: what would become a grade-error or an invalid run, before any run."""
        from pytest_skill_eval.services.check import check_group, render_report

        report = check_group(self.group, session.root, self.nodeid, preflight_context(session))
        text, ok = render_report(str(self.path), "pre-run check", [report])
        self.user_properties.append((STATUS_PROPERTY, "checked" if ok else "check failed"))
        self.check_problems = None if ok else text

    def runtest(self) -> None:
        if self.config.getoption("skill_eval_check"):
            if self.check_problems:
                raise GroupFailedError(self.check_problems)
            return
        assert self.verdict is not None
        if self.verdict.failing:
            raise GroupFailedError(self.verdict.failure_text())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SkillEvalError):
            return neutralise(str(excinfo.value))
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.lineno, f"skill-eval group {self.group.id} ({self.group.type})"


class BrokenGroupItem(pytest.Item):
    """A suite entry whose group definition is invalid: an error for that entry only.

    Its node name is the entry's reference neutralised (pytest prints node ids as they are;
    a file name in a definition may hold a U+2028 or a zero-width character); *ref* is the
    reference as written, which the evidence and the sharding key keep.
    """

    def __init__(self, *, ref: str, error: DefinitionError, lineno: int, position: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ref = ref
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
        from pytest_skill_eval.engine.group import persist_invalid_definition

        session: SkillEvalSession = self.config.stash[SESSION_KEY]
        session.write_selection()
        group_dir = persist_invalid_definition(session.result_dir, self.position, self.ref, self.error)
        self.user_properties.append(("skill_eval.evidence", str(group_dir)))
        raise self.error

    def shard_key(self) -> str:
        """A suite entry that does not load is sharded by its reference (it has no group id)."""
        return _shard_key(self, self.ref)

    def plan_entry(self) -> PlannedGroup:
        from pytest_skill_eval.engine.group import invalid_definition_dir_name
        from pytest_skill_eval.evidence.records import PlannedGroup

        return PlannedGroup(self.nodeid, self.position, None, invalid_definition_dir_name(self.position, self.ref),
                            ref=self.ref)

    def runtest(self) -> None:  # pragma: no cover - setup always raises
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return neutralise(str(excinfo.value))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.lineno, f"invalid group definition {self.name}"
