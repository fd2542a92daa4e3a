"""The per-process skill-eval session: one result id, the host, the model router, summaries.

Registered as a plugin only when a run declares skill-eval paths, so a plain pytest run
pays nothing. Under xdist every worker shares the controller's result id; only the
controller (or a run without xdist) writes the batch summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import pytest

from . import evidence
from .definitions import Group, GroupRef, Suite, definition_kind
from .errors import DefinitionError, SkillEvalError
from .policy import STATUS_PROPERTY

SESSION_KEY = pytest.StashKey["SkillEvalSession"]()


class SelectionError(SkillEvalError, pytest.UsageError):
    """A selector does not fit the collected definitions."""


class SkillEvalSession:
    def __init__(self, config: pytest.Config, root: Path, declared: list[Path], result_id: str, is_worker: bool) -> None:
        self.config = config
        self.root = root
        self.declared = declared
        self.result_id = result_id
        self.is_worker = is_worker
        self.result_dir = root / evidence.RUNS_DIR / result_id
        self.fail_on = config.getoption("skill_eval_fail_on") or config.getini("skill_eval_fail_on") or "candidate"
        self.group_selector: str | None = config.getoption("skill_eval_group")
        variant = config.getoption("skill_eval_variant")
        self.selected = frozenset([variant] if variant else ["baseline", "candidate"])
        self._positions: dict[Path, int] = {}
        self._engine_config: Any = None
        self._router: Any = None
        self._reports: dict[str, list[tuple[str, str]]] = {}
        self._outcomes: dict[str, str] = {}

    @classmethod
    def from_config(cls, config: pytest.Config, declared: Iterable[Path], *, result_id: str | None, is_worker: bool) -> SkillEvalSession:
        root = Path(config.invocation_params.dir).resolve()
        paths: list[Path] = []
        for p in declared:
            full = (root / p).resolve() if not p.is_absolute() else p.resolve()
            if not full.exists():
                raise pytest.UsageError(f"--skill-eval {p}: no such file or directory (resolved from {root})")
            if full not in paths:
                paths.append(full)
        return cls(config, root, paths, result_id or evidence.new_result_id(), is_worker)

    # -- collection ------------------------------------------------------------
    def claims(self, path: Path) -> bool:
        """Only declared files (and suite files inside declared directories) are ours."""
        path = path.resolve()
        for declared in self.declared:
            if path == declared:
                return True
            if declared.is_dir() and path.is_relative_to(declared) and definition_kind(path) == "suite":
                return True
        return False

    def position_for(self, path: Path) -> int:
        """A stable one-based position per group file, in collection order (same on every worker)."""
        key = path.resolve()
        if key not in self._positions:
            self._positions[key] = len(self._positions) + 1
        return self._positions[key]

    def select_refs(self, suite: Suite) -> tuple[GroupRef, ...]:
        if self.group_selector is None:
            return suite.groups
        sel = self.group_selector
        if sel.isdigit():
            pos = int(sel)
            if not 1 <= pos <= len(suite.groups):
                raise SelectionError(f"--skill-eval-group {sel}: {suite.path} has positions 1 to {len(suite.groups)}")
            return (suite.groups[pos - 1],)
        from .definitions import load_group

        for ref in suite.groups:
            try:
                if load_group(ref.path, self.root).id == sel:
                    return (ref,)
            except DefinitionError:
                continue
        raise SelectionError(f"--skill-eval-group {sel}: no group with that id in {suite.path}")

    def check_direct_group(self, path: Path) -> None:
        if self.group_selector is not None:
            raise SelectionError(
                f"--skill-eval-group selects a group of a suite; {path} is a group definition "
                "(select it with -k or its node id instead)"
            )

    # -- running ---------------------------------------------------------------
    def engine_config(self) -> Any:
        """Built on first use, so collection and --collect-only never start anything."""
        if self._engine_config is None:
            from .engine import EngineConfig
            from .host.driver import Safeguards
            from .host.install import resolve_host
            from .models import ModelRouter

            opt = self.config.getoption
            explicit = opt("skill_eval_host") or self.config.getini("skill_eval_host") or None
            no_install = bool(opt("skill_eval_no_install"))
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            hosts: list[Any] = []

            def say(message: str) -> None:
                if reporter is not None and not self.is_worker:
                    reporter.write_line(message)

            def host() -> Any:
                if not hosts:
                    hosts.append(resolve_host(explicit, install_if_missing=not no_install, progress=say))
                return hosts[0]

            stall = opt("skill_eval_stall_timeout")
            self._router = ModelRouter(self.root)
            self._engine_config = EngineConfig(
                root=self.root,
                result_dir=self.result_dir,
                host=host,
                models=self._router,
                selected=self.selected,
                safeguards=Safeguards(stall_seconds=stall) if stall else Safeguards(),
                user_models=Path(opt("skill_eval_models")).resolve() if opt("skill_eval_models") else None,
                auth_file=Path(opt("skill_eval_auth")).resolve() if opt("skill_eval_auth") else None,
            )
        return self._engine_config

    def run_group(self, group: Group, position: int) -> Any:
        from .engine import run_group

        return run_group(group, position, self.engine_config())

    # -- hooks -----------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = [(k, str(v)) for k, v in report.user_properties if str(k).startswith("skill_eval.")]
        if props:
            self._reports[report.nodeid] = props
        if report.when == "setup" and report.failed:
            self._outcomes[report.nodeid] = "error"
        elif report.when == "call":
            self._outcomes[report.nodeid] = report.outcome

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        if report.when != "call":
            return None
        words = dict((k, str(v)) for k, v in report.user_properties).get(STATUS_PROPERTY)
        if not words:
            return None
        if report.passed:
            return "passed", ".", (f"PASSED {words}", {"green": True})
        if report.failed:
            return "failed", "F", (f"FAILED {words}", {"red": True})
        return None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self._reports:
            return
        tr = terminalreporter
        tr.section("skill-eval")
        for nodeid, props in self._reports.items():
            p = dict(props)
            outcome = self._outcomes.get(nodeid, "?")
            tr.write_line(f"{nodeid}: {outcome} [{p.get('skill_eval.group_state', '?')}] {p.get(STATUS_PROPERTY, '')}")
            for key, value in props:
                if key.startswith("skill_eval.variant."):
                    tr.write_line(f"    {key.removeprefix('skill_eval.variant.'):9} {value}")
            for key, value in props:
                if key.startswith("skill_eval.comparison."):
                    tr.write_line(f"    comparison {key.removeprefix('skill_eval.comparison.')}: {value}")
        tr.write_line(f"result {self.result_id}: {self.result_dir}")
        tr.write_line(f"view it with: skill-eval view {self.result_id}")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._router is not None:
            self._router.close()
        if self.is_worker or not self.result_dir.exists():
            return
        write_batch_summary(self.result_dir, self.result_id, interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)


def write_batch_summary(result_dir: Path, result_id: str, *, interrupted: bool) -> dict[str, Any]:
    """Aggregate every persisted group of the result into ``result.json`` (written last)."""
    groups: list[dict[str, Any]] = []
    for gdir in sorted((result_dir / "groups").iterdir()) if (result_dir / "groups").is_dir() else []:
        gfile = gdir / "group.json"
        if not gfile.exists():
            continue
        group = evidence.read_json(gfile)
        grade_file = gdir / "grade.json"
        grade = evidence.read_json(grade_file) if grade_file.exists() else {}
        groups.append({
            "dir": gdir.name,
            "id": group["id"],
            "state": group["state"],
            "grade_state": group.get("grade_state"),
            "variants": {n: v["state"] for n, v in group["variants"].items()},
            "comparisons": {c["id"]: c["transition"] for c in grade.get("comparisons", [])},
        })
    states = [g["state"] for g in groups]
    if interrupted or "cancelled" in states:
        state = "cancelled"
    elif groups and all(s == "invalid" for s in states):
        state = "invalid"
    elif all(s == "complete" for s in states):
        state = "complete"
    else:
        state = "partially-complete"
    summary = {"result_id": result_id, "state": state, "groups": groups}
    evidence.write_json(result_dir / "result.json", summary)
    return summary

