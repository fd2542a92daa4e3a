"""The per-process skill-eval session: declared paths, selection, one result id, reporting.

Registered as a plugin only when a run declares skill-eval paths, so a plain pytest run
pays nothing. Nothing here starts a host or a model server until the first group runs,
so ``--collect-only`` never does.

Under xdist every worker shares the controller's result id and writes its groups into the
one result directory; only the controller (or a run without xdist) prints the summary,
writes the JUnit entries and writes the batch summary ``result.json``.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import stat
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from . import evidence
from .definitions import VARIANTS, Group, GroupRef, Suite, definition_kind, file_kind
from .errors import DefinitionError, EvidenceError
from .policy import (
    DEFAULT_FAIL_ON,
    ENTRY_PROPERTY,
    STATUS_PROPERTY,
    Entry,
    FailOn,
    Verdict,
    judge,
    parse_fail_on,
    stand_in_notes,
    summary_table,
)

#: user property set by an item whose evidence could not be written (crosses xdist in reports)
PERSISTENCE_FAILED = "skill_eval.persistence_failed"
SESSION_KEY = pytest.StashKey["SkillEvalSession"]()
RESULT_ID_KEY = "skill_eval_result_id"


@dataclass(frozen=True, slots=True)
class Reported:
    """What the session remembers of one group item's report."""

    nodeid: str
    location: tuple[str, int | None, str]
    outcome: str
    verdict: Verdict | None


class SkillEvalSession:
    """State of one pytest process: what is declared and selected, and what was reported."""

    def __init__(self, config: pytest.Config, root: Path, declared: list[Path], *, result_id: str,
                 is_worker: bool, fail_on: FailOn, group_selector: str | None, variant: str | None) -> None:
        self.config = config
        self.root = root
        self.declared = declared
        self.result_id = result_id
        self.is_worker = is_worker
        self.result_dir = root / evidence.RUNS_DIR / result_id
        self.fail_on = fail_on
        self.group_selector = group_selector
        self.selected = frozenset([variant] if variant else ["baseline", "candidate"])
        #: True when the run was narrowed to the declared paths (no positional arguments).
        self.only_declared = False
        self.progress = LiveProgress(config, enabled=not is_worker)
        self._bases: dict[Path, int] = {}
        self._next_base = 0
        self._selected_position: int | None = None
        self._engine_config: Any = None
        self._router: Any = None
        self.reported: dict[str, Reported] = {}
        self.persistence_failure: str | None = None
        #: the selected groups, in collection order, as ``selection.json`` records them
        self.planned: list[dict[str, Any]] = []
        self._selection_written = False
        #: Ctrl-C seen (during the run, or while the session finished)
        self.cancelled = False
        #: why pytest stopped before every selected group ran (-x, --maxfail), if it did
        self.stopped: str | None = None

    @classmethod
    def from_config(cls, config: pytest.Config) -> SkillEvalSession | None:
        """The session for this run, or None when no skill-eval paths are declared."""
        option_paths = [Path(p) for p in config.getoption("skill_eval")]
        ini_paths = [Path(p) for p in config.getini("skill_eval_paths")]
        group_selector: str | None = config.getoption("skill_eval_group")
        variant: str | None = config.getoption("skill_eval_variant")
        if not option_paths and not ini_paths:
            for name, value in (("--skill-eval-group", group_selector), ("--skill-eval-variant", variant)):
                if value is not None:
                    raise pytest.UsageError(f"{name} needs a suite or group: add --skill-eval PATH (or set skill_eval_paths in the ini file)")
            return None
        root = Path(config.invocation_params.dir).resolve()
        # --skill-eval on the command line replaces skill_eval_paths, as arguments replace testpaths
        source = "--skill-eval" if option_paths else "skill_eval_paths"
        declared = resolve_declared(option_paths or ini_paths, root, source, norecurse=config.getini("norecursedirs"))
        raw_fail_on = config.getoption("skill_eval_fail_on") or config.getini("skill_eval_fail_on") or DEFAULT_FAIL_ON
        try:
            fail_on = parse_fail_on(raw_fail_on, "--skill-eval-fail-on" if config.getoption("skill_eval_fail_on") else "skill_eval_fail_on")
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        workerinput = getattr(config, "workerinput", None)
        result_id = workerinput.get(RESULT_ID_KEY) if workerinput else None
        session = cls(config, root, declared, result_id=result_id or evidence.new_result_id(),
                      is_worker=workerinput is not None, fail_on=fail_on,
                      group_selector=group_selector, variant=variant)
        session.check_group_selector()
        return session

    # -- arguments and collection ------------------------------------------------
    def narrow_args(self, args: list[str], args_source: pytest.Config.ArgsSource, *, from_option: bool) -> list[str]:
        """The pytest arguments for this run.

        ``pytest --skill-eval suite.json`` means "run this suite", not "and every test
        too": without positional arguments the declared paths replace ``testpaths`` and
        the invocation directory. With positional arguments, declared paths are added
        unless an argument already names that file (``suite.json::group`` selects one
        group); ``skill_eval_paths`` from the ini file are then only used to recognise
        definition files, as ``testpaths`` is ignored when arguments are given.
        """
        if args_source != pytest.Config.ArgsSource.ARGS:
            if from_option:
                self.only_declared = True
                return [str(p) for p in self.declared]
            return [*args, *(str(p) for p in self.declared if not _named_by(p, args, self.root))]
        if not from_option:
            return args
        return [*args, *(str(p) for p in self.declared if not _named_by(p, args, self.root))]

    def claims(self, path: Path) -> bool:
        """Declared files, and suite files inside declared directories, are ours; nothing else."""
        path = path.resolve()
        if path in self.declared:
            return True
        return path.suffix == ".json" and any(
            declared.is_dir() and path.is_relative_to(declared) for declared in self.declared
        ) and definition_kind(path) == "suite"

    def ignores(self, path: Path) -> bool:
        """Never collect from the evidence tree; with only declared paths, collect nothing else."""
        resolved = path.resolve()
        runs = self.root / evidence.RUNS_DIR
        if resolved == runs or resolved.is_relative_to(runs):
            return True
        return self.only_declared and resolved.is_file() and not self.claims(resolved)

    def position_base(self, path: Path, count: int) -> int:
        """Group positions continue across definition files in collection order (same on every worker)."""
        key = path.resolve()
        if key not in self._bases:
            self._bases[key] = self._next_base
            self._next_base += count
        return self._bases[key]

    def check_group_selector(self) -> None:
        """``--skill-eval-group`` needs exactly one declared suite and must name one of its groups."""
        sel = self.group_selector
        if sel is None:
            return
        if len(self.declared) != 1 or self.declared[0].is_dir():
            what = ", ".join(str(p) for p in self.declared)
            raise pytest.UsageError(
                f"--skill-eval-group selects a group of one suite, but the run declares {what}: "
                "declare one suite file, or select across suites with -k <group-id>"
            )
        path = self.declared[0]
        if definition_kind(path) == "group":
            raise pytest.UsageError(
                f"--skill-eval-group selects a group of a suite; {path} is a group definition: "
                "drop --skill-eval-group, or run a suite that lists it"
            )
        try:
            suite = _load_suite(path, self.root)
        except DefinitionError:
            return  # collection reports the broken suite with every problem in it
        self._selected_position = select_position(suite, sel, self.root)

    def selected_refs(self, suite: Suite) -> tuple[GroupRef, ...]:
        if self._selected_position is None:
            return suite.groups
        return (suite.groups[self._selected_position - 1],)

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
            hosts: list[Any] = []

            def host() -> Any:
                if not hosts:
                    hosts.append(resolve_host(explicit, install_if_missing=not no_install, progress=self.progress.announce))
                return hosts[0]

            stall = opt("skill_eval_stall_timeout")
            self._router = ModelRouter(self.root)
            evidence.ensure_runs_dir(self.root)
            self._engine_config = EngineConfig(
                root=self.root,
                result_dir=self.result_dir,
                host=host,
                models=self._router,
                selected=self.selected,
                safeguards=Safeguards(stall_seconds=stall) if stall else Safeguards(),
                user_models=Path(opt("skill_eval_models")).resolve() if opt("skill_eval_models") else None,
                auth_file=Path(opt("skill_eval_auth")).resolve() if opt("skill_eval_auth") else None,
                progress=self.progress,
            )
        return self._engine_config

    def run_group(self, group: Group, position: int, suite: Suite | None = None) -> Verdict:
        """Run, persist and grade one group, then judge it from its persisted evidence."""
        from .engine import run_group

        self.progress.start()
        config = self.engine_config()
        self.write_selection()
        outcome = run_group(group, position, config, suite=suite)
        return self.judge(Path(outcome.group_dir))

    def write_selection(self) -> None:
        """``selection.json``, before this process writes its first group.

        The batch summary lists every selected group from it, including those that never
        started. Under xdist the controller collects nothing, so each worker writes it
        (the same content: xdist requires every worker to collect the same items).
        """
        if self._selection_written:
            return
        evidence.ensure_runs_dir(self.root)
        evidence.write_json(self.result_dir / evidence.SELECTION_FILE,
                            {"variants": sorted(self.selected), "groups": self.planned})
        self._selection_written = True

    def judge(self, group_dir: Path) -> Verdict:
        record_file = evidence.group_record_file(group_dir)
        if record_file is None:
            raise EvidenceError(f"no group record was persisted in {group_dir} (neither group.json nor group-fallback.json)")
        group = evidence.read_json(record_file)
        grade_file = evidence.grade_file(group_dir, group)
        grade = evidence.read_json(grade_file) if grade_file.is_file() else {"state": "grade-error", "errors": [
            {"scope": "system", "owner": None, "variant": None, "message": f"no grade was persisted at {grade_file}"}]}
        from .readback import RUN, TRANSCRIPT, read_checked

        notes: list[tuple[str, int, str]] = []
        for name in VARIANTS:
            # only adds to the failure text: a run file it cannot read is no reason to fail the judging
            run, _ = read_checked(group_dir / name / "run.json", RUN)
            transcript, _ = read_checked(group_dir / name / "transcript.json", TRANSCRIPT)
            notes += stand_in_notes(name, run, transcript)
        return judge(group, grade, group_dir=str(group_dir), fail_on=self.fail_on, result_id=self.result_id, notes=notes)

    # -- hooks -----------------------------------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.planned = [entry() for item in session.items if callable(entry := getattr(item, "plan_entry", None))]
        if not self.config.option.collectonly or self.config.get_verbosity() < 1:
            return
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        plans = [(item.nodeid, plan()) for item in session.items if callable(plan := getattr(item, "plan_lines", None))]
        if plans:
            reporter.section("skill-eval plan")
            for nodeid, lines in plans:
                reporter.write_line(nodeid)
                for line in lines:
                    reporter.write_line(f"    {line}")

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        props = {str(k): str(v) for k, v in getattr(report, "user_properties", ())}
        if PERSISTENCE_FAILED in props:
            self.persistence_failure = props[PERSISTENCE_FAILED]
        if ENTRY_PROPERTY in props or STATUS_PROPERTY not in props:
            return
        is_error = report.when == "setup" and report.failed
        if not (report.when == "call" or is_error):
            return
        verdict = None
        if "skill_eval.evidence" in props:
            try:
                verdict = self.judge(Path(props["skill_eval.evidence"]))
            except EvidenceError:
                verdict = None
        outcome = "error" if is_error else report.outcome
        self.reported[report.nodeid] = Reported(report.nodeid, report.location, outcome, verdict)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if verdict is not None and reporter is not None and self.config.get_verbosity() >= 1:
            for line in verdict.detail_lines(indent="    "):
                reporter.write_line(line)

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        props = {str(k): str(v) for k, v in getattr(report, "user_properties", ())}
        if ENTRY_PROPERTY in props:
            return "", "", ""  # separate entries are for JUnit; the terminal shows them as detail lines
        words = props.get(STATUS_PROPERTY)
        if not words:
            return None
        if report.when == "setup" and report.failed:
            return "error", "E", (f"ERROR {words}", {"red": True})
        if report.when != "call":
            return None
        if report.passed:
            return "passed", ".", (f"PASSED {words}", {"green": True})
        if report.failed:
            return "failed", "F", (f"FAILED {words}", {"red": True})
        return None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or not self.result_dir.exists():
            return
        tr = terminalreporter
        summary_file = self.result_dir / "result.json"
        state = ""
        if summary_file.exists():
            try:
                state = f" ({evidence.read_json(summary_file).get('state')})"
            except EvidenceError:
                state = ""
        if self.config.get_verbosity() < 0:
            tr.write_line(f"skill-eval result {self.result_id}{state}: skill-eval view {self.result_id}")
            return
        tr.section("skill-eval")
        rows = [(r.nodeid, r.outcome, r.verdict) for r in self.reported.values()]
        rows.sort(key=lambda row: (row[2].position if row[2] else 0, row[0]))
        if rows:
            for line in summary_table(rows):
                tr.line(line)
        tr.line(f"result {self.result_id}{state}: {self.result_dir}")
        tr.line(f"view it with: skill-eval view {self.result_id} [--group <position>] [--variant baseline|candidate]")

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C cancels; pytest's and xdist's own stops arrive here as KeyboardInterrupt too."""
        exc = excinfo.value
        if isinstance(exc, pytest.Session.Interrupted):
            return  # session.shouldstop: collection errors, or evidence that could not be persisted
        if not is_cancellation(exc):
            self.stopped = str(exc)  # xdist's --maxfail/-x: "stopping after 1 failures"
            return
        self.cancelled = True

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._router is not None:
            self._router.close()
        if self.is_worker or not self.result_dir.exists():
            return
        if self.persistence_failure is not None:
            # spec: when evidence cannot be preserved, no completed summary is published
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"skill-eval: no result.json written: {self.persistence_failure}", red=True)
            return
        # every writer of this result is done (xdist tears its workers down first)
        evidence.sweep_staging(self.result_dir)
        stopped = self.stopped or session.shouldfail or session.shouldstop or None
        write_batch_summary(self.result_dir, self.result_id, interrupted=self.cancelled,
                            stopped=str(stopped) if stopped else None)


def resolve_declared(paths: Iterable[Path], root: Path, source: str, *, norecurse: Iterable[str] = ()) -> list[Path]:
    """Resolve declared paths from *root*; each must exist, a file must be a definition,
    and a directory must hold a suite (pytest would silently collect nothing)."""
    patterns = tuple(norecurse)
    resolved: list[Path] = []
    for p in paths:
        full = (p if p.is_absolute() else root / p).resolve()
        if not full.exists():
            raise pytest.UsageError(f"{source} {p}: no such file or directory (resolved from {root}); "
                                    "give a suite or group definition path relative to the directory you run pytest from")
        mode = full.stat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            # pytest would skip it as "not found"; opening it could block (a FIFO).
            raise pytest.UsageError(f"{source} {p}: expected a suite or group definition file or a directory, "
                                    f"found {file_kind(mode)}")
        if full.is_file() and definition_kind(full) is None:
            raise pytest.UsageError(f"{source} {p}: not a suite or group definition (expected a JSON object with "
                                    '"schema_version" and "kind": "suite" or "group")')
        if full.is_dir():
            problem = _suiteless_directory(full, p, root, patterns)
            if problem is not None:
                raise pytest.UsageError(f"{source} {p}: {problem}")
        if full not in resolved:
            resolved.append(full)
    return resolved


def _suiteless_directory(directory: Path, shown: Path, root: Path, norecurse: tuple[str, ...]) -> str | None:
    """Why *directory* would contribute nothing (it holds no suite), or None when it holds one.

    Walks as pytest collects (``norecursedirs`` pruned, the evidence tree skipped) and stops
    at the first suite, so a directory that works costs only the files before it.
    """
    import fnmatch
    import os

    runs = (root / evidence.RUNS_DIR).resolve()
    groups: list[str] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not any(fnmatch.fnmatch(d, pat) for pat in norecurse)
                             and (here / d).resolve() != runs)
        for name in sorted(filenames):
            if not name.endswith(".json"):
                continue
            kind = definition_kind(here / name)
            if kind == "suite":
                return None
            if kind == "group":
                path = here / name
                groups.append(path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path))
    if not groups:
        return ('found no suite or group definition in it (a JSON object with "schema_version": 1 and '
                '"kind": "suite" or "group"): name a suite or group file, or a directory that holds suites')
    listed = ", ".join(groups[:5]) + (f" and {len(groups) - 5} more" if len(groups) > 5 else "")
    count = f"{len(groups)} group definition{'s' if len(groups) != 1 else ''}"
    return (f"a directory contributes the suite files inside it, and {shown} holds none; found {count} "
            f"({listed}): name a group file (--skill-eval {groups[0]}) or a suite that lists them "
            '(a JSON object with "schema_version": 1, "kind": "suite", "id" and "groups": [...])')


def _named_by(path: Path, args: list[str], root: Path) -> bool:
    """Whether a positional argument (``file`` or ``file::name``) names *path* itself."""
    for arg in args:
        head = arg.split("::", 1)[0]
        candidate = Path(head) if Path(head).is_absolute() else root / head
        try:
            if candidate.resolve() == path:
                return True
        except OSError:
            continue
    return False


def _load_suite(path: Path, root: Path) -> Suite:
    from .definitions import load_suite

    return load_suite(path, root)


def select_position(suite: Suite, selector: str, root: Path) -> int:
    """The one-based suite position *selector* names (a group id or a position)."""
    import dataclasses

    from .definitions import SelectionError as DefinitionSelectionError
    from .definitions import load_group, select_group

    if not (selector.isascii() and selector.isdigit()):
        # ids come from the groups that load; a broken one is reported when it is collected
        refs = []
        for ref in suite.groups:
            try:
                refs.append(dataclasses.replace(ref, group_id=load_group(ref.path, root).id))
            except DefinitionError:
                continue
        suite = dataclasses.replace(suite, groups=tuple(refs))
    try:
        return select_group(suite, selector).position
    except DefinitionSelectionError as exc:
        raise pytest.UsageError(str(exc)) from None


# ----------------------------------------------------------------------------- progress


class LiveProgress:
    """Engine progress on the terminal while a group runs.

    ``-v``: one line per event. Default verbosity on a terminal: one status line below
    the progress dots, replaced in place and erased before the result is written. Nothing
    with ``-q``, when output is not a terminal (without ``-v``), or on xdist workers (their
    output cannot reach the controller's terminal). Capture is suspended for each write,
    so progress never lands in a test's captured output.
    """

    def __init__(self, config: pytest.Config, *, enabled: bool) -> None:
        self._config = config
        self._enabled = enabled
        self._lock = threading.Lock()
        self._shown = False
        self._started = time.monotonic()

    def _reporter(self) -> Any:
        return self._config.pluginmanager.get_plugin("terminalreporter") if self._enabled else None

    @property
    def mode(self) -> str:
        reporter = self._reporter()
        if reporter is None:
            return "off"
        verbosity = self._config.get_verbosity()
        if verbosity >= 1:
            return "lines"
        if verbosity == 0 and reporter.isatty() and reporter.hasmarkup:
            return "status"
        return "off"

    def _writing(self) -> Any:
        capman = self._config.pluginmanager.get_plugin("capturemanager")
        return capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext()

    def start(self) -> None:
        self._started = time.monotonic()

    def __call__(self, message: str) -> None:
        mode = self.mode
        if mode == "off":
            return
        text = f"skill-eval: {message} ({time.monotonic() - self._started:.1f}s)"
        reporter = self._reporter()
        with self._lock, self._writing():
            if mode == "lines":
                reporter.write_line(f"    {text}")
                return
            width = shutil.get_terminal_size().columns - 1
            if not self._shown:
                # IND then RI: make sure a line exists below (scrolling now, not later),
                # come back, save the cursor at the end of the dots, move to the line below
                reporter.write_raw("\x1bD\x1bM\x1b7\n")
                self._shown = True
            reporter.write_raw(f"\r\x1b[2K{text[:width]}", flush=True)

    def clear(self) -> None:
        """Erase the status line and put the cursor back where pytest left it."""
        if not self._shown:
            return
        reporter = self._reporter()
        with self._lock, self._writing():
            if reporter is not None:
                reporter.write_raw("\r\x1b[2K\x1b8", flush=True)
            self._shown = False

    def announce(self, message: str) -> None:
        """Messages that must be seen at default verbosity (installing the host takes minutes)."""
        reporter = self._reporter()
        if reporter is None or self._config.get_verbosity() < 0:
            return
        self.clear()
        with self._lock, self._writing():
            reporter.write_line(message)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.clear()


# ----------------------------------------------------------------------------- Ctrl-C while finishing


class FinishGuard:
    """Ctrl-C while the session finishes is noted, not raised, and the run ends as cancelled.

    Without it a SIGINT during session finish (the batch summary, the terminal summary,
    unconfigure) escapes pytest as a raw ``KeyboardInterrupt`` traceback. From the first
    ``pytest_sessionfinish`` hook to the last ``pytest_unconfigure`` one, SIGINT only sets
    a flag: ``result.json`` is written whole (``cancelled`` when the flag was set before
    it), and the exit status becomes pytest's ``INTERRUPTED`` (``skill-eval run``: 2).
    Registered on the controller (or the only process) only.
    """

    def __init__(self, session: SkillEvalSession) -> None:
        self.session = session
        self._pytest_session: pytest.Session | None = None
        self._previous: Any = None
        self._installed = False
        self.interrupted = False

    def _note(self, signum: int, frame: Any) -> None:
        self.interrupted = True
        self.session.cancelled = True

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Any:
        self._pytest_session = session
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._note)
            self._installed = True
        return (yield)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
        if not self.interrupted or self._pytest_session is None:
            return
        session = self._pytest_session
        already = session.exitstatus == pytest.ExitCode.INTERRUPTED
        session.exitstatus = pytest.ExitCode.INTERRUPTED
        if already:
            return  # pytest has reported this cancellation already
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("!", "KeyboardInterrupt", red=True)
            summary = self.session.result_dir / "result.json"
            state = ""
            if summary.is_file():
                try:
                    state = f" ({evidence.read_json(summary).get('state')})"
                except EvidenceError:
                    state = ""
            reporter.write_line(f"skill-eval: Ctrl-C while the session was finishing; result {self.session.result_id}"
                                f"{state} is complete on disk")
        try:
            raise KeyboardInterrupt  # an ExceptionInfo needs a traceback
        except KeyboardInterrupt:
            excinfo = pytest.ExceptionInfo[BaseException].from_current()
        # what pytest does for a Ctrl-C during the run (``skill-eval run`` counts it as cancelled)
        config.hook.pytest_keyboard_interrupt(excinfo=excinfo)


# ----------------------------------------------------------------------------- JUnit entries


class JUnitEntries:
    """Adds one JUnit ``<testcase>`` per variant, expectation, comparison and grade.

    pytest 9's subtests share their test's node id, so JUnit XML folds them into the one
    ``<testcase>`` (passing subtests vanish). These entries get their own node ids,
    ``<group node id>::variant:candidate`` and so on, and are reported at session end,
    after the exit status is settled, so they never count against ``--maxfail`` or change
    the exit code. The terminal does not list them (see the detail lines at ``-v``).
    Registered only on the process that writes the XML.
    """

    def __init__(self, session: SkillEvalSession) -> None:
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        hook = session.config.hook
        for reported in self.session.reported.values():
            if reported.verdict is None:
                continue
            for entry in reported.verdict.entries():
                for report in entry_reports(reported.nodeid, reported.location, entry):
                    hook.pytest_runtest_logreport(report=report)


def entry_reports(nodeid: str, location: tuple[str, int | None, str], entry: Entry) -> list[pytest.TestReport]:
    """The reports of one entry: its outcome, then a teardown that closes its JUnit testcase."""
    entry_id = f"{nodeid}::{entry.name}"
    props: list[tuple[str, object]] = [(ENTRY_PROPERTY, entry.name), *entry.properties]
    where = (location[0], location[1] or 0, f"{location[2]} {entry.name}")
    if entry.outcome == "error":
        first = pytest.TestReport(entry_id, where, {}, "failed", entry.message, "setup", user_properties=props)
    elif entry.outcome == "skipped":
        longrepr = (location[0], (location[1] or 0) + 1, f"Skipped: {entry.message}")
        first = pytest.TestReport(entry_id, where, {}, "skipped", longrepr, "call", user_properties=props)
    else:
        first = pytest.TestReport(entry_id, where, {}, entry.outcome, entry.message if entry.outcome == "failed" else None,
                                  "call", user_properties=props)
    last = pytest.TestReport(entry_id, where, {}, "passed", None, "teardown", user_properties=props)
    return [first, last]


# ----------------------------------------------------------------------------- batch summary


def is_cancellation(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt pytest reports is the user's Ctrl-C.

    pytest stops after collection errors with its own ``Session.Interrupted``, and
    pytest-xdist reports its ``-x``/``--maxfail`` stop as a KeyboardInterrupt of its own
    whose message is not its ``keyboard-interrupt``; neither is a cancellation.
    """
    if isinstance(exc, pytest.Session.Interrupted):
        return False
    return not (type(exc).__module__.startswith("xdist.") and "keyboard-interrupt" not in str(exc))


def write_batch_summary(result_dir: Path, result_id: str, *, interrupted: bool, stopped: str | None = None) -> dict[str, Any]:
    """Write ``result.json`` (last): one entry per selected group, whether or not it ran.

    The selection comes from ``selection.json``; a selected group with no directory never
    started: ``cancelled`` after Ctrl-C, else ``not-run`` with the reason pytest stopped
    (*stopped*, e.g. ``-x``). Group directories not in the selection are listed too.
    """
    selection_file = result_dir / evidence.SELECTION_FILE
    selection: Mapping[str, Any] = evidence.read_json(selection_file) if selection_file.is_file() else {}
    selected_variants = set(selection.get("variants") or ("baseline", "candidate"))
    on_disk = {d.name: d for d in evidence.group_dirs(result_dir)}
    groups: list[dict[str, Any]] = []
    for planned in selection.get("groups", []):
        gdir = on_disk.pop(str(planned.get("dir")), None)
        if gdir is not None:
            groups.append(_persisted_entry(gdir, interrupted))
            continue
        state = "cancelled" if interrupted else "not-run"
        reason = ("cancelled before it started" if interrupted
                  else f"not run: pytest stopped early ({stopped})" if stopped
                  else "not run: no process ran it")
        groups.append({
            "dir": None,
            "id": planned.get("id"),
            "position": planned.get("position"),
            "state": state,
            "reason": reason,
            "grade_state": None,
            "variants": {n: state if n in selected_variants else "not-selected" for n in ("baseline", "candidate")},
            "comparisons": {},
        })
    groups.extend(_persisted_entry(gdir, interrupted) for gdir in on_disk.values())
    groups.sort(key=lambda g: (g["position"] if isinstance(g["position"], int) else 0))
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


def _persisted_entry(gdir: Path, interrupted: bool) -> dict[str, Any]:
    """The summary entry of a group that started, from its group record (or what there is of it)."""
    record_file = evidence.group_record_file(gdir)
    position = int(gdir.name.split("-", 1)[0])
    if record_file is None:
        # started, but the process running it stopped before the group record was written
        runs = {n: evidence.read_json(gdir / n / "run.json") for n in ("baseline", "candidate") if (gdir / n / "run.json").is_file()}
        definition = evidence.read_json(gdir / "definition.json") if (gdir / "definition.json").is_file() else {}
        return {
            "dir": gdir.name,
            "id": (definition.get("definition") or {}).get("id", gdir.name.split("-", 1)[1]),
            "position": position,
            "state": "cancelled" if interrupted else "not-run",
            "reason": "stopped before its group.json was written",
            "grade_state": None,
            "variants": {n: runs[n].get("state") if n in runs else "not-run" for n in ("baseline", "candidate")},
            "comparisons": {},
        }
    group = evidence.read_json(record_file)
    grade_path = evidence.grade_file(gdir, group)
    grade: Mapping[str, Any] = evidence.read_json(grade_path) if grade_path.is_file() else {}
    return {
        "dir": gdir.name,
        "id": group["id"],
        "position": group.get("position", position),
        "state": group["state"],
        "reason": None,
        "grade_state": group.get("grade_state"),
        "variants": {n: v["state"] for n, v in group["variants"].items()},
        "comparisons": {c["id"]: c["transition"] for c in grade.get("comparisons", [])},
    }


__all__ = [
    "RESULT_ID_KEY",
    "SESSION_KEY",
    "FinishGuard",
    "JUnitEntries",
    "LiveProgress",
    "SkillEvalSession",
    "is_cancellation",
    "write_batch_summary",
]
