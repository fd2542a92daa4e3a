"""The pytest hooks: options, configuration, collection, reporting. They only orchestrate."""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.definitions.model import VARIANTS
from pytest_skill_eval.errors import (
    SkillEvalError,
)
from pytest_skill_eval.plugin.finish import FinishGuard
from pytest_skill_eval.plugin.items import (
    STRICT_REFUSED,
    BrokenGroupItem,
    SkillEvalFile,
    SkillEvalItem,
    preflight_context,
    shown_path,
)
from pytest_skill_eval.plugin.junit import JUnitEntries
from pytest_skill_eval.plugin.session import (
    RESULT_ID_KEY,
    SEED_KEY,
    SESSION_KEY,
    SkillEvalSession,
)
from pytest_skill_eval.policy import FAIL_ON_CHOICES
from pytest_skill_eval.safe_text import neutralise


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("skill-eval", "skill evaluation through the pi host")
    group.addoption("--skill-eval", action="append", default=[], metavar="PATH",
                    help="Suite or group definition (or a directory of suites) to run; repeatable; "
                         "replaces the skill_eval_paths ini setting")
    group.addoption("--skill-eval-group", metavar="ID|POSITION", default=None,
                    help="Run one group of the declared suite, by id or one-based position")
    group.addoption("--skill-eval-variant", choices=VARIANTS, default=None,
                    help="Run only this variant; the other is recorded as not-selected")
    group.addoption("--skill-eval-shard", metavar="K/N", default=None,
                    help="Run shard K of N: a stable, balanced share of the selected groups "
                         "(by definition path and group id); combine the shards with skill-eval merge")
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
    group.addoption("--skill-eval-provider-timeout", default=None, metavar="SECONDS",
                    help="pi's request timeout for the model provider (default: 14400, the emergency ceiling; "
                         "pi's own default of 300 s would end a long thinking turn)")
    group.addoption("--skill-eval-repeat-limit", default=None, metavar="K",
                    help="Stop a subject that makes the same tool call(s) with the same results and an unchanged "
                         "workspace K times in a row (default: 5; 0: never)")
    group.addoption("--skill-eval-rerun-infra", default=None, metavar="K",
                    help="Run an infrastructure-failed variant again from scratch up to K times; every attempt's "
                         "evidence is kept (default: 0, never)")
    group.addoption("--skill-eval-trials", default=None, metavar="N",
                    help="Run each selected variant N times, each trial from scratch (default: 1)")
    group.addoption("--skill-eval-seed", default=None, metavar="SEED",
                    help="Seed of the scripted stand-in's weighted choices (default: random, recorded in result.json)")
    group.addoption("--skill-eval-pass-rate", default=None, metavar="RATE",
                    help="With trials: the pass rate below which a candidate expectation fails the group (default: 1.0)")
    group.addoption("--skill-eval-alpha", default=None, metavar="ALPHA",
                    help="With trials: the significance level of a regression (default: 0.05)")
    group.addoption("--skill-eval-adjust", default=None, metavar="holm|bh|none",
                    help="The multiplicity adjustment of the comparisons' p-values: holm (default, the family-wise "
                         "error rate), bh (the false discovery rate) or none")
    group.addoption("--skill-eval-min-effect", default=None, metavar="D",
                    help="The rate difference a decision's power is computed for; below power 0.8 a difference "
                         "not found is 'underpowered', never 'no difference' (default: 0.2, at most 0.5)")
    group.addoption("--skill-eval-require-power", action="store_true", default=None,
                    help="Make underpowered and indecisive decisions errors (for CI gates)")
    group.addoption("--skill-eval-aa", action="store_true", default=None,
                    help="A/A calibration: run the candidate against itself (both arms the candidate, every other "
                         "input equal) and report the observed false-flip rates")
    group.addoption("--skill-eval-stop", choices=("off", "curtail", "sequential"), default=None,
                    help="With trials: stop a group early when its answer is known. curtail: when no remaining "
                         "trial can change a verdict (exact); sequential: a group-sequential test per comparison "
                         "(O'Brien-Fleming alpha spending) (default: off)")
    group.addoption("--skill-eval-reuse-baseline", metavar="RESULT", default=None,
                    help="Take each group's baseline runs from this stored result (id, prefix, 'latest' or directory) "
                         "instead of running the baseline again, only where its inputs are provably the same; "
                         "otherwise the first differing field is named and the baseline runs")
    group.addoption("--skill-eval-rerun", metavar="RESULT_DIR", default=None, help=argparse.SUPPRESS)
    group.addoption("--skill-eval-jobs", default=None, metavar="K",
                    help="Run up to K groups at once in this pytest process (threads waiting on pi); reports stay "
                         "in item order (default: 1, one after another; not with pytest-xdist: use -n 0)")
    group.addoption("--skill-eval-html", metavar="PATH", default=None,
                    help="Write the self-contained HTML report of the result to PATH at session end "
                         "(a copy is stored as report.html in the result directory)")
    group.addoption("--skill-eval-confinement", choices=("auto", "required", "off"), default=None,
                    help="Kernel confinement of every pi run (Landlock for files, a private network namespace "
                         "whose only way out is the model's endpoint): auto uses what the machine has and "
                         "warns once where not; required refuses to start a variant it cannot confine; off runs "
                         "with the path guard alone (default: auto)")
    group.addoption("--skill-eval-allow-read", action="append", default=[], metavar="PATH",
                    help="Let every confined pi run also read PATH (repeatable; never from a definition)")
    group.addoption("--skill-eval-allow-net", action="append", default=[], metavar="HOST:PORT",
                    help="Let every confined pi run also reach HOST:PORT (repeatable; through the relay out of "
                         "pi's network namespace, or by port where no namespace can be made; never from a definition)")
    parser.addini("skill_eval_confinement", "Default for --skill-eval-confinement", default="")
    parser.addini("skill_eval_allow_read", "Paths added to --skill-eval-allow-read, relative to the ini file",
                  type="paths", default=[])
    parser.addini("skill_eval_allow_net", "HOST:PORT endpoints added to --skill-eval-allow-net", type="linelist",
                  default=[])
    parser.addini("skill_eval_html", "Default for --skill-eval-html, relative to the ini file", default="")
    parser.addini("skill_eval_paths", "Suites or groups collected by plain pytest (like testpaths)", type="paths", default=[])
    parser.addini("skill_eval_fail_on", "Default for --skill-eval-fail-on", default="candidate")
    parser.addini("skill_eval_host", "Default for --skill-eval-host", default="")
    parser.addini("skill_eval_strict", "Default for --skill-eval-strict", type="bool", default=False)
    parser.addini("skill_eval_trials", "Default for --skill-eval-trials", default="")
    parser.addini("skill_eval_rerun_infra", "Default for --skill-eval-rerun-infra", default="")
    parser.addini("skill_eval_repeat_limit", "Default for --skill-eval-repeat-limit", default="")
    parser.addini("skill_eval_provider_timeout", "Default for --skill-eval-provider-timeout", default="")
    parser.addini("skill_eval_pass_rate", "Default for --skill-eval-pass-rate", default="")
    parser.addini("skill_eval_alpha", "Default for --skill-eval-alpha", default="")
    parser.addini("skill_eval_stop", "Default for --skill-eval-stop", default="")
    parser.addini("skill_eval_jobs", "Default for --skill-eval-jobs", default="")
    parser.addini("skill_eval_adjust", "Default for --skill-eval-adjust", default="")
    parser.addini("skill_eval_min_effect", "Default for --skill-eval-min-effect", default="")
    parser.addini("skill_eval_require_power", "Default for --skill-eval-require-power", type="bool", default=False)
    parser.addini("skill_eval_aa", "Default for --skill-eval-aa", type="bool", default=False)


#: Options whose value is a path: written as a separate argument, pytest's rootdir search
#: (which runs before any plugin adds its options) takes the value for a test path.
PATH_OPTIONS = ("--skill-eval-models", "--skill-eval-auth", "--skill-eval-host", "--skill-eval-rerun",
                "--skill-eval-allow-read", "--skill-eval-reuse-baseline")


def separate_path_option_problem(config: pytest.Config, parser: pytest.Parser) -> str | None:
    """Why a separate-argument path option moved the rootdir or ini file, or None.

    pytest chooses its rootdir from the free arguments that exist as paths before plugin
    options are known, so ``--skill-eval-models ../x/models.json`` can move it (and with
    it every node id). Nothing a plugin does can change that choice afterwards; this
    redoes it with and without those values and names the fix when they differ.
    """
    from pytest_skill_eval.plugin.pytest_internals import determine_setup

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
    if session.settings.jobs > 1 and (session.is_worker or xdist_distributes(config)):
        raise pytest.UsageError(
            f"--skill-eval-jobs {session.settings.jobs} runs groups at once in one pytest process and cannot be "
            "combined with pytest-xdist (-n/--tx): an xdist worker only sees the item it runs next. "
            f"Use -n 0 --skill-eval-jobs {session.settings.jobs} (one process, {session.settings.jobs} lanes), "
            "or -n N without --skill-eval-jobs")
    config.stash[SESSION_KEY] = session
    from pytest_skill_eval.services.schema_cache import use_schema_cache

    use_schema_cache()
    # scratch a killed evaluator left behind (workspaces, the auth file copy) goes now
    from pytest_skill_eval.sources.scratch import sweep_stale

    sweep_stale()
    config.pluginmanager.register(session, "skill-eval-session")
    config.pluginmanager.register(session.progress, "skill-eval-progress")
    if config.getoption("xmlpath", None) and not session.is_worker:
        config.pluginmanager.register(JUnitEntries(session), "skill-eval-junit")
    if not session.is_worker:
        config.pluginmanager.register(FinishGuard(session), "skill-eval-finish-guard")
    config.args[:] = session.narrow_args(list(config.args), config.args_source,
                                         from_option=bool(config.getoption("skill_eval") or session.rerun))


def xdist_distributes(config: pytest.Config) -> bool:
    """Whether pytest-xdist will start workers for this run (``-n N`` with N > 0, ``--tx``)."""
    return config.getoption("dist", "no") != "no" and bool(config.getoption("tx", None))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: every worker writes into the controller's one result id."""
    session = node.config.stash.get(SESSION_KEY, None)
    if session is not None:
        node.workerinput[RESULT_ID_KEY] = session.result_id
        node.workerinput[SEED_KEY] = session.settings.seed


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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--skill-eval-shard K/N``: keep this shard's groups, after -k/-m/node ids/--lf selected theirs."""
    skill_session: SkillEvalSession | None = config.stash.get(SESSION_KEY, None)
    if skill_session is None or skill_session.shard is None:
        return
    kept, deselected = skill_session.split_shard(items)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Setup errors of groups read as their own text: pytest would show a traceback of setup()."""
    report = yield
    excinfo = call.excinfo
    if (call.when == "setup" and excinfo is not None and isinstance(item, (SkillEvalItem, BrokenGroupItem))
            and isinstance(excinfo.value, SkillEvalError)):
        report.longrepr = neutralise(str(excinfo.value))
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
    if skill_session.rerun is not None:
        return  # the pre-run check reads today's working tree; a rerun reads none of it
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
            reporter.write_line(f"ERROR: {neutralise(_refusals[0])}", red=True)
    _refusals.clear()  # an in-process pytest.main() may run again


def precheck_items(items: list[pytest.Item], skill_session: SkillEvalSession) -> list[tuple[pytest.Item, str]]:
    """``(item, "<file>: <pointer>: <problem>")`` for every problem of the selected groups."""
    from pytest_skill_eval.engine.preflight import preflight_group, problems_of

    ctx = preflight_context(skill_session)
    found: list[tuple[pytest.Item, str]] = []
    for item in items:
        if isinstance(item, BrokenGroupItem):
            found += [(item, neutralise(line, one_line=True)) for line in str(item.error).splitlines()]
        elif isinstance(item, SkillEvalItem):
            shown = shown_path(item.group.path, skill_session.root)
            found += [(item, neutralise(f.located(shown), one_line=True))
                      for f in problems_of(preflight_group(item.group, ctx))]
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
